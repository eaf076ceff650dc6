"""Verdicts on the questions both runs scored: runs scored on different questions, where the runs' own means and the
paired difference disagree in sign.

The fixture's twelve questions (no judge; each question its own cluster). Run ``x`` answers all twelve: on q00-q05
it retrieves the question's unlabelled care chunk and another product's answer chunk (nothing relevant: reciprocal
rank 0), on q06-q11 the answer chunk first (reciprocal rank 1); its MRR over its own twelve questions is 6/12 = 0.5.
Run ``y`` has lines for q00-q05 only (it misses the other six) and puts the answer chunk third on each (reciprocal
rank 1/3); its MRR over its own six questions is 1/3. On the six questions both scored, y - x = 1/3 on each, so the
paired difference is +1/3 and the exact sign-flip test over 2^6 sign vectors gives p = 2/64 = 0.03125 (only the
all-plus and all-minus vectors reach |mean| = 1/3), significant at 0.05 with one pair. y leads, though its own mean
is lower; the old verdict said "x leads with 0.500: -0.333 over y".
"""

from __future__ import annotations

from pathlib import Path

import pytest
from evaluate_fixture import answer_id, care_id, qid, save_golden, write_run

from assay.pipelines.evaluate import EvalSettings, evaluate
from assay.report.verdict import build_verdict
from assay.results import EvalResult

SHARED = range(6)


def _x() -> list[dict[str, object]]:
    return [{"query_id": qid(i), "retrieved": [care_id(i), answer_id((i + 1) % 12)] if i in SHARED else
             [answer_id(i), care_id(i)]} for i in range(12)]  # fmt: skip


def _y() -> list[dict[str, object]]:
    return [{"query_id": qid(i), "retrieved": [care_id(i), answer_id((i + 1) % 12), answer_id(i)]} for i in SHARED]


@pytest.fixture(scope="module")
def result(tmp_path_factory: pytest.TempPathFactory) -> EvalResult:
    root = tmp_path_factory.mktemp("shared")
    golden = save_golden(root / "golden")
    runs = {"x": write_run(root / "x.jsonl", _x()), "y": write_run(root / "y.jsonl", _y())}
    settings = EvalSettings(k_values=(10,), primary="mrr", cluster_by="none", n_boot=200)
    done, _ = evaluate(golden, runs, settings=settings)
    return done


def test_the_means_are_over_each_runs_own_questions(result: EvalResult) -> None:
    x, y = (run.metrics["mrr"] for run in result.runs)
    assert (x.mean, x.n_scored) == (pytest.approx(0.5), 12)
    assert (y.mean, y.n_scored) == (pytest.approx(1 / 3, abs=1e-6), 6)


def test_the_comparison_is_paired_over_the_six_shared_questions(result: EvalResult) -> None:
    (comparison,) = [c for c in result.comparisons if c.metric == "mrr"]
    assert (comparison.a, comparison.b, comparison.n, comparison.n_a, comparison.n_b) == ("x", "y", 6, 12, 6)
    assert comparison.delta == pytest.approx(1 / 3, abs=1e-6)
    assert (comparison.mean_a, comparison.mean_b) == (0.0, pytest.approx(1 / 3, abs=1e-6))
    assert comparison.p_value == pytest.approx(2 / 64, abs=1e-6) and comparison.significant
    assert comparison.verdict.startswith("y beats x on mrr on the 6 questions both scored by 0.333 [")


def test_the_verdict_names_the_run_ahead_on_the_shared_questions(result: EvalResult) -> None:
    verdict = build_verdict(result)
    lead = verdict.lead
    assert lead is not None and (lead.leader, lead.other, lead.n, lead.supported) == ("y", "x", 6, True)
    assert lead.delta == pytest.approx(1 / 3, abs=1e-6) and lead.low > 0
    assert verdict.headline.startswith(
        "y leads on mrr on the 6 questions both scored (of 6 and 12): 0.333 against 0.000 for x, +0.333 ["
    )
    assert verdict.headline.endswith("(p adj. 0.031); the evidence supports the lead.")
    assert [(p.run, p.groups, p.place) for p in verdict.places] == [("y", "a", 1), ("x", "b", 2)]
    assert verdict.ranking is not None and verdict.ranking.startswith("Ranking on mrr: y 0.333 (a), x 0.500 (b);")
    assert "the runs scored different questions (y 6, x 12)" in verdict.ranking


def test_every_comparison_says_on_how_many_questions(result: EvalResult) -> None:
    """Every metric's comparison is over the six shared questions, and its sentence says so."""
    compared = [c for c in result.comparisons if c.metric in ("map", "ndcg@10", "P@10")]
    assert len(compared) == 3
    assert all(c.n == 6 and " on the 6 questions both scored" in c.verdict for c in compared)


def test_runs_that_scored_the_same_questions_keep_the_plain_sentences(tmp_path: Path) -> None:
    """y with all twelve lines (the answer chunk first on q06-q11): no shared-question wording anywhere."""
    golden = save_golden(tmp_path / "golden")
    full = _y() + [{"query_id": qid(i), "retrieved": [answer_id(i)]} for i in range(6, 12)]
    runs = {"x": write_run(tmp_path / "x.jsonl", _x()), "y": write_run(tmp_path / "y.jsonl", full)}
    done, _ = evaluate(golden, runs, settings=EvalSettings(k_values=(10,), primary="mrr", cluster_by="none",
                                                            n_boot=200))  # fmt: skip
    verdict = build_verdict(done)
    assert "both scored" not in verdict.headline and "different questions" not in (verdict.ranking or "")
    assert all("both scored" not in c.verdict for c in done.comparisons)
