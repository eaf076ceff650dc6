"""An answer judge card: how far a judge's answer measures follow people's judgements of answers.

``assay judge-check --answers FILE`` reads people's ratings of answers or preferences between two answers
(:mod:`assay.formats.answer_judgements`), puts them through assay as an evaluation would (the questions and
references as a golden set with claims and nuggets drafted from the references by the judge, as ``assay import
ragas --judge`` drafts them; each system's answers as a run, with the passages people saw when the file has them),
and sets every answer measure the judge produced beside the people:

- per measure and criterion, Pearson's r and Spearman's rho with a 95% bootstrap interval over questions
  (:func:`assay.metrics.correlation.correlation`): for a rated answer its measure beside the mean of the people's
  ratings; for a pair the second answer's measure minus the first's beside the mean preference;
- the pairwise agreement rate: over the pairs people did not call even (for ratings, every two answers to the
  same question rated differently), the share the measure orders the same way, in its own direction (a lower
  hallucination is better); pairs the measure ties are counted apart (a measure that ties often cannot agree often);
- the share of answers the measure left unscored (a failed judge call is unscored, never a 0);
- "people": each person against the mean of the others on the same items, the ceiling a judge is read against.

The card is ``answers.json`` and ``answers.md`` in the output folder.
"""

from __future__ import annotations

import json
import math
import tempfile
from collections import defaultdict
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from itertools import combinations
from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field

from assay.formats.answer_judgements import AnswerJudgements
from assay.formats.atomic import atomic_write_text
from assay.formats.golden import GoldenSet
from assay.judge.client import Estimate
from assay.judge.panel import Grader
from assay.metrics._errors import MetricError
from assay.metrics.correlation import Correlation, correlation
from assay.metrics.diagnosis import LOWER_IS_BETTER
from assay.pipelines.bootstrap.references import draft_from_references, estimate_reference_drafts
from assay.pipelines.evaluate.called import evaluate
from assay.pipelines.evaluate.pipeline import estimate_evaluation
from assay.pipelines.evaluate.runs.loaded import EMPTY_ANSWER, NO_ANSWERS, NO_PASSAGES
from assay.pipelines.evaluate.runs.read import FAILED
from assay.pipelines.evaluate.settings import EvalSettings
from assay.pipelines.transfer.imports import import_ragas
from assay.results import QueryResult

__all__ = [
    "ANSWER_MEASURES",
    "AnswerCard",
    "estimate_answers",
    "format_agreement",
    "format_interval",
    "measure_answers",
    "write_answer_card",
]

# assay's per-question answer measures, in the order the card shows them
ANSWER_MEASURES = (
    "nugget_recall_all_strict",
    "nugget_recall_all_lenient",
    "nugget_recall_vital_strict",
    "claim_recall",
    "claim_precision",
    "claim_f1",
    "faithfulness",
    "hallucination",
    "answer_relevance",
    "context_utilization",
    "attribution_rate",
)
PEOPLE = "people"
# reasons a measure is unscored that say nothing about the judge: the answers or the passages are not there
NOT_THE_JUDGE = frozenset({NO_PASSAGES, NO_ANSWERS, EMPTY_ANSWER, FAILED})
Answer = tuple[str, str]  # (system, question id)


class Interval(BaseModel):
    value: float | None
    low: float | None
    high: float | None


class AnswerRow(BaseModel):
    """One measure against one criterion."""

    measure: str
    criterion: str
    pearson: Interval
    spearman: Interval
    agreement: float | None  # share of pairs ordered as people order them, ties of the measure left out
    pairs: int  # pairs people ordered
    ties: int  # of those, pairs the measure ties
    n: int  # items scored
    unscored: float  # share of items the measure left unscored


class AnswerCard(BaseModel):
    """A judge's answer measures against people's judgements of answers."""

    model: str
    source: str  # the file's format: MTRAG, RAGChecker, JSONL
    answers: int
    pairs: int
    questions: int
    criteria: list[str]
    rows: list[AnswerRow] = Field(default_factory=list)


@dataclass(frozen=True)
class _Item:
    """A rated answer (one answer) or a pair (two answers: the second minus the first), with the people's votes."""

    question: str
    answers: tuple[Answer, ...]
    votes: Mapping[str, tuple[float, ...]]


def _items(judgements: AnswerJudgements) -> list[_Item]:
    items = [_Item(a.question_id, ((a.system, a.question_id),), a.ratings) for a in judgements.answers]
    items += [
        _Item(p.question_id, ((p.first[0], p.question_id), (p.second[0], p.question_id)), p.preferences)
        for p in judgements.pairs
    ]
    return items


def _golden_rows(judgements: AnswerJudgements) -> list[dict[str, Any]]:
    rows: dict[str, dict[str, Any]] = {}
    for a in judgements.answers:
        rows.setdefault(
            a.question_id,
            {
                "query_id": a.question_id,
                "user_input": a.question,
                "reference": a.reference,
                "reference_contexts": list(a.passages),
            },
        )
    for p in judgements.pairs:
        rows.setdefault(
            p.question_id,
            {
                "query_id": p.question_id,
                "user_input": p.question,
                "reference": p.reference,
                "reference_contexts": list(p.passages),
            },
        )
    return list(rows.values())


def _runs(judgements: AnswerJudgements) -> dict[str, list[dict[str, Any]]]:
    """One run per system: its answers, with the passages people saw (none: an answer-only run)."""
    lines: dict[str, dict[str, dict[str, Any]]] = defaultdict(dict)

    def add(system: str, qid: str, answer: str, passages: Sequence[str]) -> None:
        retrieved = [{"text": text} for text in passages]
        lines[system].setdefault(qid, {"query_id": qid, "answer": answer, "retrieved": retrieved})

    for a in judgements.answers:
        add(a.system, a.question_id, a.answer, a.passages)
    for p in judgements.pairs:
        add(p.first[0], p.question_id, p.first[1], p.passages)
        add(p.second[0], p.question_id, p.second[1], p.passages)
    return {system: list(by_question.values()) for system, by_question in sorted(lines.items())}


def _golden(judgements: AnswerJudgements, folder: Path) -> GoldenSet:
    path = folder / "testset.jsonl"
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in _golden_rows(judgements)), "utf-8")
    return import_ragas(path).golden


def estimate_answers(judgements: AnswerJudgements, judge: Grader) -> dict[str, Estimate]:
    """What measuring would cost (``--dry-run``): the claims and nuggets drafted from the references, then the
    evaluation's calls per stage (its answer calls counted without the drafts), nothing asked."""
    with tempfile.TemporaryDirectory() as tmp:
        golden = _golden(judgements, Path(tmp))
        drafts = {f"draft {name}": e for name, e in estimate_reference_drafts(golden, judge).items()}
        return drafts | estimate_evaluation(golden, _runs(judgements), judge)


def _mean(values: Sequence[float]) -> float:
    return sum(values) / len(values)


def _interval(c: Correlation | None) -> Interval:
    if c is None or math.isnan(c.value):
        return Interval(value=None, low=None, high=None)
    low, high = (None if math.isnan(v) else v for v in (c.low, c.high))
    return Interval(value=c.value, low=low, high=high)


def _safe(x: list[float], y: list[float], kind: str, clusters: list[str]) -> Correlation | None:
    try:
        return correlation(x, y, kind, clusters=clusters)  # type: ignore[arg-type]
    except MetricError:
        return None


def _agreement(kept: list[tuple[_Item, float, float]]) -> tuple[float | None, int, int]:
    """(share ordered alike, pairs people ordered, of those tied by the measure). A pair item is its own pair (its
    values are differences already); rated answers pair up with the other answers to their question."""
    compared = [(measure, people) for item, measure, people in kept if len(item.answers) == 2]
    by_question: dict[str, list[tuple[float, float]]] = defaultdict(list)
    for item, measure, people in kept:
        if len(item.answers) == 1:
            by_question[item.question].append((measure, people))
    for values in by_question.values():
        compared += [(m2 - m1, p2 - p1) for (m1, p1), (m2, p2) in combinations(values, 2)]
    ordered = [(m, p) for m, p in compared if p != 0]
    ties = sum(1 for m, _ in ordered if m == 0)
    decided = [(m, p) for m, p in ordered if m != 0]
    alike = sum(1 for m, p in decided if (m > 0) == (p > 0))
    return (alike / len(decided) if decided else None), len(ordered), ties


def _row(measure: str, criterion: str, items: list[_Item], values: list[float | None]) -> AnswerRow:
    kept = [
        (item, v, _mean(item.votes[criterion]))
        for item, v in zip(items, values, strict=True)
        if v is not None and criterion in item.votes
    ]
    asked = sum(1 for item in items if criterion in item.votes)
    x, y, clusters = [v for _, v, _ in kept], [p for _, _, p in kept], [i.question for i, _, _ in kept]
    sign = -1.0 if measure in LOWER_IS_BETTER else 1.0  # agreement in the measure's own direction
    ordered = _agreement([(item, sign * v, p) for item, v, p in kept])
    return _answer_row(measure, criterion, (x, y, clusters), ordered, 1 - len(kept) / asked if asked else 0.0)


def _answer_row(
    measure: str,
    criterion: str,
    sides: tuple[list[float], list[float], list[str]],
    ordered: tuple[float | None, int, int],
    unscored: float,
) -> AnswerRow:
    """A row from the two sides (the measure or a person, the people; clusters) and the agreement on pairs."""
    x, y, clusters = sides
    agreement, pairs, ties = ordered
    return AnswerRow(
        measure=measure,
        criterion=criterion,
        pearson=_interval(_safe(x, y, "pearson", clusters)),
        spearman=_interval(_safe(x, y, "spearman", clusters)),
        agreement=agreement,
        pairs=pairs,
        ties=ties,
        n=len(x),
        unscored=unscored,
    )


def _people_row(criterion: str, items: list[_Item]) -> AnswerRow:
    """Each person against the mean of the others on the same item (an item one person judged is left out). The
    agreement is over preference pairs only: a rating is not an ordering of two answers by one person."""
    x, y, clusters = [], [], []
    pairs: list[tuple[_Item, float, float]] = []
    for item in items:
        votes = item.votes.get(criterion, ())
        for i, vote in enumerate(votes):
            rest = votes[:i] + votes[i + 1 :]
            if rest:
                x.append(vote)
                y.append(_mean(rest))
                clusters.append(item.question)
                if len(item.answers) == 2:
                    pairs.append((item, vote, _mean(rest)))
    return _answer_row(PEOPLE, criterion, (x, y, clusters), _agreement(pairs), 0.0)


def _value(scores: Mapping[Answer, Mapping[str, float | None]], item: _Item, measure: str) -> float | None:
    values = [scores.get(answer, {}).get(measure) for answer in item.answers]
    if any(v is None or math.isnan(v) for v in values):
        return None
    found = [float(v) for v in values if v is not None]
    # rounded so equal differences tie (0.6 - 0.2 is not 0.9 - 0.5 in floating point), for ranks and agreement
    return round(found[1] - found[0], 12) if len(found) == 2 else found[0]


def card_rows(
    judgements: AnswerJudgements, per_query: Sequence[QueryResult], measures: Sequence[str] = ANSWER_MEASURES
) -> list[AnswerRow]:
    """Every row of the card from per-query rows (``run`` = the system): per criterion, people first, then each of
    ``measures`` the rows hold a value of, or left unscored for a reason of the judge's (a judge that scored nothing
    shows its measures 100% unscored; a measure the data cannot give, such as faithfulness without passages, is left
    off)."""
    items = _items(judgements)
    scores: dict[Answer, dict[str, float | None]] = {(q.run, q.query_id): q.metrics for q in per_query}
    produced = {m for q in per_query for m, v in q.metrics.items() if v is not None}
    produced |= {m for q in per_query for m, why in q.unscored.items() if why not in NOT_THE_JUDGE}
    rows = []
    for criterion in judgements.criteria:
        rows.append(_people_row(criterion, items))
        for measure in (m for m in measures if m in produced):
            rows.append(_row(measure, criterion, items, [_value(scores, item, measure) for item in items]))
    return rows


def measure_answers(
    judgements: AnswerJudgements, judge: Grader, model: str, *, metrics: Sequence[str] = ()
) -> AnswerCard:
    """Evaluate the judgements' answers with ``judge`` and set its answer measures beside the people. ``metrics``:
    only these (as ``assay eval --metrics``; fewer calls for a slow judge), else every measure the data allows."""
    settings = EvalSettings(metrics=tuple(metrics))
    with tempfile.TemporaryDirectory() as tmp:
        golden = _golden(judgements, Path(tmp))
        draft_from_references(golden, judge=judge)  # claims and nuggets, as assay import ragas --judge drafts them
        _, per_query = evaluate(golden, _runs(judgements), judge=judge, settings=settings)
    questions = {item.question for item in _items(judgements)}
    return AnswerCard(
        model=model,
        source=judgements.source,
        answers=len(judgements.answers),
        pairs=len(judgements.pairs),
        questions=len(questions),
        criteria=list(judgements.criteria),
        rows=card_rows(judgements, per_query),
    )


def _percent(v: float | None) -> str:
    return "-" if v is None else f"{100 * v:.0f}"


def format_agreement(agreement: float | None, pairs: int) -> str:
    """``72% of 187``: the share of ordered pairs alike, or ``-`` when no pair was ordered."""
    return "-" if agreement is None else f"{_percent(agreement)}% of {pairs}"


def format_interval(i: Interval) -> str:
    """``45 [34, 56]``: a correlation x 100 with its interval, the value alone without one, ``-`` without a value."""
    if i.value is None:
        return "-"
    if i.low is None or i.high is None:
        return _percent(i.value)
    return f"{_percent(i.value)} [{_percent(i.low)}, {_percent(i.high)}]"


def render_markdown(card: AnswerCard) -> str:
    what = f"{card.answers} rated answers" if card.answers else f"{card.pairs} preference pairs"
    lines = [
        f"# Answer judge card: {card.model}",
        "",
        f"Against {card.source}: {what} on {card.questions} questions. Pearson r and Spearman rho x 100 with "
        "95% intervals over questions; agreement: the share of pairs people ordered that the measure orders "
        "alike (its ties apart); people: each person against the others' mean.",
        "",
        "| measure | criterion | Pearson | Spearman | agreement | ties | unscored |",
        "|---|---|---|---|---|---|---|",
    ]
    for r in card.rows:
        lines.append(
            f"| {r.measure} | {r.criterion} | {format_interval(r.pearson)} | {format_interval(r.spearman)} | "
            f"{format_agreement(r.agreement, r.pairs)} | {r.ties} | {r.unscored:.0%} |"
        )
    return "\n".join(lines) + "\n"


def write_answer_card(card: AnswerCard, folder: Path) -> list[Path]:
    """``answers.json`` and ``answers.md`` in ``folder`` (each written whole, then renamed)."""
    folder.mkdir(parents=True, exist_ok=True)
    written = [folder / "answers.json", folder / "answers.md"]
    atomic_write_text(written[0], card.model_dump_json(indent=1) + "\n")
    atomic_write_text(written[1], render_markdown(card))
    return written


def headline(card: AnswerCard, measures: Callable[[str], bool] = lambda m: m != PEOPLE) -> list[str]:
    """One line per criterion: the measure that follows people best (by Pearson), beside the people's ceiling."""
    out = []
    for criterion in card.criteria:
        rows = [r for r in card.rows if r.criterion == criterion]
        people = next((r for r in rows if r.measure == PEOPLE), None)
        scored = [r for r in rows if measures(r.measure) and r.pearson.value is not None]
        if not scored:
            out.append(f"{criterion}: no answer measure scored")
            continue
        best = max(scored, key=lambda r: abs(r.pearson.value or 0.0))
        ceiling = f" (people: {format_interval(people.pearson)})" if people is not None else ""
        out.append(
            f"{criterion}: {best.measure} r = {format_interval(best.pearson)}, agreement "
            f"{format_agreement(best.agreement, best.pairs)}{' pairs' if best.agreement is not None else ''}{ceiling}"
        )
    return out
