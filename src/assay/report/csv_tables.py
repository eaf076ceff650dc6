"""The judged criteria's verdicts and the pairwise outcomes as CSV, for spreadsheets and pandas: ``criteria.csv`` and
``pairwise.csv`` in the report folder, beside ``results.json`` (which holds the same records).

``criteria.csv``: one row per judged criterion, question and run: the label, its declared score, or the reason it
is unscored (the score cell then empty, never 0), the audit item it is (``item``: the key ``assay audit --criteria``
and ``assay agreement --criteria`` use), and each judge's vote as ``model: label (reason)`` (a decision tree's
walk as ``id=yes/no`` steps). ``pairwise.csv``: one row per question and pair of runs: the outcome (a run's name,
``tie``, or empty when unscored with the reason) and each order's preferred position, winner and reason.

UTF-8, comma-separated, one header line, as ``assay export --to csv``; free-text cells that a spreadsheet would run
as a formula get a leading ``'`` (:func:`assay.formats.tabular.neutralize`).
"""

from __future__ import annotations

import csv
import io
from collections.abc import Iterable, Sequence

from assay.formats.tabular import neutralize
from assay.results import CriterionVerdictRecord, CriterionVote, EvalResult, OrderVerdict, PairJudgement

__all__ = ["CRITERIA_COLUMNS", "PAIRWISE_COLUMNS", "criteria_csv", "pairwise_csv"]

CRITERIA_COLUMNS = ("run", "query_id", "criterion", "ref", "label", "score", "unscored", "item", "votes")
PAIRWISE_COLUMNS = (
    "query_id", "run_a", "run_b", "criterion", "winner", "unscored",
    "a_first_preferred", "a_first_winner", "a_first_reason", "b_first_preferred", "b_first_winner", "b_first_reason",
)  # fmt: skip
_TEXT = frozenset({"votes", "a_first_reason", "b_first_reason"})


def criteria_csv(result: EvalResult) -> str | None:
    """``criteria.csv`` as text; None when the evaluation judged no criterion."""
    if not result.criterion_verdicts:
        return None
    return _table(CRITERIA_COLUMNS, (_criterion_row(v) for v in result.criterion_verdicts))


def _criterion_row(v: CriterionVerdictRecord) -> dict[str, object]:
    return {"run": v.run, "query_id": v.query_id, "criterion": v.criterion, "ref": v.ref, "label": v.label,
            "score": v.score, "unscored": v.unscored, "item": v.item,
            "votes": " | ".join(_vote(x) for x in v.votes)}  # fmt: skip


def _vote(vote: CriterionVote) -> str:
    said = vote.label if vote.label is not None else f"unscored: {vote.unscored}"
    walk = "; ".join(f"{step.id}={step.answer}" for step in vote.steps)
    why = f" ({vote.reason})" if vote.reason else ""
    return f"{vote.model}: {said}{f' [{walk}]' if walk else ''}{why}"


def pairwise_csv(result: EvalResult) -> str | None:
    """``pairwise.csv`` as text; None without ``--pairwise``."""
    found = result.preferences
    if found is None:
        return None
    return _table(PAIRWISE_COLUMNS, (_pair_row(found.criterion, one) for one in found.judgements))


def _pair_row(criterion: str, pair: PairJudgement) -> dict[str, object]:
    row: dict[str, object] = {"query_id": pair.query_id, "run_a": pair.run_a, "run_b": pair.run_b,
                              "criterion": criterion, "winner": pair.winner, "unscored": pair.unscored}  # fmt: skip
    for side, shown in (("a_first", pair.run_a), ("b_first", pair.run_b)):
        order = _order(pair.orders, shown)
        if order is not None:
            row[f"{side}_preferred"] = order.preferred if order.preferred is not None else f"unscored: {order.unscored}"
            row[f"{side}_winner"], row[f"{side}_reason"] = order.winner, order.reason
    return row


def _order(orders: Sequence[OrderVerdict], shown_first: str) -> OrderVerdict | None:
    return next((one for one in orders if one.shown_first == shown_first), None)


def _table(columns: Sequence[str], rows: Iterable[dict[str, object]]) -> str:
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(columns)
    for row in rows:
        writer.writerow([_cell(name, row.get(name)) for name in columns])
    return out.getvalue()


def _cell(column: str, value: object) -> str:
    text = "" if value is None else str(value)
    return neutralize(text) if column in _TEXT else text
