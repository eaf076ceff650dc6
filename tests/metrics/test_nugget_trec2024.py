"""Nugget recall against an independent scorer written from the TREC 2024 RAG track's definitions.

Pradeep et al. 2024, "Initial Nugget Evaluation Results for the TREC 2024 RAG Track with the AutoNuggetizer
Framework": each nugget is vital or okay and is assigned support, partial_support or not_support for an answer.
A nugget's score s is 1 for support; partial_support is 0.5 in the lenient variant and 0 in the strict one;
not_support is 0. All (A) = mean of s over all nuggets of the query; Vital (V) = mean of s over its vital nuggets.
A run's score is the mean of the per-query scores. The scorer below uses exact fractions and shares no code with
``assay.metrics.rag``; the hand cases are worked out in the comments.
"""

from __future__ import annotations

import math
import random
from fractions import Fraction
from typing import Any

import pytest

from assay.metrics.rag import nugget_recall
from assay.pipelines.evaluate.judging.calls import Assessed, _read_nuggets
from assay.pipelines.evaluate.scoring.names import NUGGET_METRICS
from assay.types import Nugget, Provenance, Question

Query = list[tuple[str, str]]  # (importance, assignment) per nugget


def trec_score(query: Query, subset: str, lenient: bool) -> Fraction | None:
    """A or V of one query; None when the subset is empty (the track's queries all have a vital nugget)."""
    total, count = Fraction(0), 0
    for importance, assignment in query:
        if subset == "vital" and importance != "vital":
            continue
        count += 1
        if assignment == "support":
            total += 1
        elif assignment == "partial_support" and lenient:
            total += Fraction(1, 2)
    return total / count if count else None


def trec_run_score(queries: list[Query], subset: str, lenient: bool) -> Fraction:
    """The run's score: the mean over the queries that have a score."""
    scores = [s for q in queries if (s := trec_score(q, subset, lenient)) is not None]
    return sum(scores, Fraction(0)) / len(scores)


def assay_scores(queries: list[Query], subset: str, lenient: bool) -> list[float]:
    importance = [[level for level, _ in q] for q in queries]
    assignment: list[list[str | None]] = [[label for _, label in q] for q in queries]
    mode = "lenient" if lenient else "strict"
    return nugget_recall(importance, assignment, subset=subset, mode=mode).tolist()  # type: ignore[arg-type]


V, OK = "vital", "okay"
S, P, N = "support", "partial_support", "not_support"
HAND: list[tuple[Query, dict[tuple[str, bool], Fraction]]] = [
    # 3 vital (S, P, N), 2 okay (S, P). A strict 2/5, A lenient (1+.5+1+.5)/5 = 3/5; V strict 1/3, V lenient 1.5/3.
    ([(V, S), (V, P), (V, N), (OK, S), (OK, P)],
     {("all", False): Fraction(2, 5), ("all", True): Fraction(3, 5),
      ("vital", False): Fraction(1, 3), ("vital", True): Fraction(1, 2)}),
    # only partial support: strict 0 everywhere, lenient 1/2 everywhere.
    ([(V, P), (OK, P)],
     {("all", False): Fraction(0), ("all", True): Fraction(1, 2),
      ("vital", False): Fraction(0), ("vital", True): Fraction(1, 2)}),
    # okay nuggets all supported, the vital one not: A = 2/3 (both modes), V = 0.
    ([(OK, S), (V, N), (OK, S)],
     {("all", False): Fraction(2, 3), ("all", True): Fraction(2, 3),
      ("vital", False): Fraction(0), ("vital", True): Fraction(0)}),
    # 4 vital: S, S, P, P -> V strict 2/4, V lenient 3/4; A the same (no okay nugget).
    ([(V, S), (V, S), (V, P), (V, P)],
     {("all", False): Fraction(1, 2), ("all", True): Fraction(3, 4),
      ("vital", False): Fraction(1, 2), ("vital", True): Fraction(3, 4)}),
]  # fmt: skip
VARIANTS = [("all", False), ("all", True), ("vital", False), ("vital", True)]


@pytest.mark.parametrize(("query", "expected"), HAND)
def test_hand_cases_per_query(query: Query, expected: dict[tuple[str, bool], Fraction]) -> None:
    for (subset, lenient), value in expected.items():
        assert trec_score(query, subset, lenient) == value  # the independent scorer agrees with the hand figure
        assert assay_scores([query], subset, lenient)[0] == pytest.approx(float(value), abs=1e-12)


def test_hand_cases_averaged_over_queries() -> None:
    queries = [query for query, _ in HAND]
    # V strict: (1/3 + 0 + 0 + 1/2) / 4 = 5/24; A lenient: (3/5 + 1/2 + 2/3 + 3/4) / 4 = 151/240.
    assert trec_run_score(queries, "vital", False) == Fraction(5, 24)
    assert trec_run_score(queries, "all", True) == Fraction(151, 240)
    for subset, lenient in VARIANTS:
        mean = sum(assay_scores(queries, subset, lenient)) / len(queries)
        assert mean == pytest.approx(float(trec_run_score(queries, subset, lenient)), abs=1e-12)


def _random_query(rng: random.Random) -> Query:
    return [(rng.choice([V, OK]), rng.choice([S, P, N])) for _ in range(rng.randint(1, 12))]


@pytest.mark.parametrize("seed", range(5))
def test_random_runs_match_the_independent_scorer(seed: int) -> None:
    rng = random.Random(seed)
    queries = [_random_query(rng) for _ in range(300)]
    for subset, lenient in VARIANTS:
        got = assay_scores(queries, subset, lenient)
        for query, value in zip(queries, got, strict=True):
            want = trec_score(query, subset, lenient)
            assert math.isnan(value) if want is None else value == pytest.approx(float(want), abs=1e-12), query
        scored = [v for v in got if not math.isnan(v)]
        assert sum(scored) / len(scored) == pytest.approx(float(trec_run_score(queries, subset, lenient)), abs=1e-12)


def test_the_evaluator_maps_support_answers_to_the_same_scores() -> None:
    # the support prompt answers support / partial / none per nugget; eval names the four TREC variants
    rng = random.Random(7)
    to_prompt = {S: "support", P: "partial", N: "none"}
    for _ in range(50):
        query = _random_query(rng)
        nuggets = [Nugget(id=f"n{i}", text=f"fact {i}", importance=level) for i, (level, _) in enumerate(query)]  # type: ignore[arg-type]
        question = Question(id="q", text="?", nuggets=nuggets, provenance=Provenance(source="judge"))
        data: dict[str, Any] = {
            "assignments": [
                {"statement_id": f"n{i}", "support": to_prompt[label]} for i, (_, label) in enumerate(query)
            ]
        }
        out = Assessed()
        _read_nuggets(question, data, out)
        for name in NUGGET_METRICS:
            _, _, subset, mode = name.split("_")
            want = trec_score(query, subset, mode == "lenient")
            got = out.metrics[name]
            assert got is None if want is None else got == pytest.approx(float(want), abs=1e-12), (name, query)
