"""The heavy data of ``report.html``, in the lazy blocks the page decompresses on first use (:mod:`assay.report.html`
says how): the per-query table (:func:`query_data`) and the per-question explorer (:func:`explorer_data`), each
packed as compact JSON, gzip without a timestamp and base64 (:func:`packed`), so the same result gives the same bytes.

The explorer stores each passage text once, whatever the number of questions and runs that retrieved it, and one
block per question, so opening a question decompresses that question only.
"""

from __future__ import annotations

import base64
import gzip
import json
from collections.abc import Sequence
from typing import Any

from assay.report import _format as fmt
from assay.report.verdict import build_verdict
from assay.results import EvalResult, QueryResult, QuestionView, StepView, metric_group, summary_metrics

__all__ = ["explorer_data", "packed", "query_data"]


def packed(data: object) -> str:
    """``data`` as the page's lazy blocks hold it: compact JSON, gzip (no timestamp: the same bytes every time),
    base64."""
    raw = json.dumps(data, ensure_ascii=False, separators=(",", ":")).encode("utf-8")
    return base64.b64encode(gzip.compress(raw, compresslevel=9, mtime=0)).decode("ascii")


def query_data(rows: Sequence[QueryResult]) -> dict[str, object]:
    """The per-query table as data: columns (label, numeric) and rows; an unscored cell holds its reason (a string)."""
    strata = list(dict.fromkeys(k for row in rows for k in row.strata))
    metrics = list(dict.fromkeys(k for row in rows for k in row.metrics))
    columns = [("run", False), ("query", False), *((s, False) for s in strata), *((m, True) for m in metrics)]
    table = []
    for row in rows:
        cells: list[object] = [row.run, row.query_id, *(row.strata.get(s, "") for s in strata)]
        for m in metrics:
            value = row.metrics.get(m)
            reason = row.unscored.get(m, "not computed" if m not in row.metrics else "no reason given")
            cells.append(reason if value is None else round(float(value), 4))
        table.append(cells)
    return {"columns": columns, "rows": table}


def explorer_data(
    result: EvalResult, per_query: Sequence[QueryResult] | None, questions: Sequence[QuestionView]
) -> dict[str, Any]:
    """The explorer's data: an index (question ids and texts, the metrics shown), the passage texts (each stored once,
    for every question: the same chunk comes back in many) and one block per question, decompressed only when the
    question is opened; there each run's passages refer to their text by index, and each run carries its values of
    the metrics shown for that question."""
    metrics = summary_metrics(fmt.headline_metrics(result), build_verdict(result).metric)
    diagnosis = [m for m in fmt.all_metrics(result) if metric_group(m) == "diagnosis"]
    wanted = [*metrics, *diagnosis]
    values = {(row.run, row.query_id): row for row in per_query or ()}
    texts: dict[str, int] = {}
    judged = _judged(result)
    blocks = [packed(_question_block(q, wanted, values, texts) | judged.get(q.query_id, {})) for q in questions]
    index = {"questions": [[q.query_id, q.text] for q in questions], "metrics": metrics, "diagnosis": diagnosis}
    return {"index": packed(index), "texts": packed(list(texts)), "blocks": blocks}


def _question_block(
    q: QuestionView, wanted: list[str], values: dict[tuple[str, str], QueryResult], texts: dict[str, int]
) -> dict[str, Any]:
    sides = []
    for side in q.runs:
        passages = [[p.rank, p.unit, texts.setdefault(p.text, len(texts)), p.grade, p.how] for p in side.passages]
        claims = [[c.kind, c.text, c.verdict, c.reason, c.ranks] for c in side.claims]
        row = values.get((side.run, q.query_id))
        shown = {} if row is None else {m: _value(row, m) for m in wanted if m in row.metrics}
        steps = [_step(step, texts) for step in side.steps]
        sides.append({"run": side.run, "p": passages, "a": side.answer, "e": side.error, "c": claims, "m": shown,
                      "s": steps, "h": side.hops, "d": side.path, "t": side.references})  # fmt: skip
    return {"id": q.query_id, "text": q.text, "type": q.type, "difficulty": q.difficulty, "ref": q.reference_answer,
            "nuggets": q.nuggets, "runs": sides}  # fmt: skip


def _judged(result: EvalResult) -> dict[str, dict[str, Any]]:
    """Per question, what the page shows of the team's criteria and the pairwise preferences: ``k``, each judged
    criterion's verdict per run (run, criterion, label, score, why unscored, and each vote: model, label, reason,
    the answered tree steps); ``pw``, each pair of runs with both orders (run shown first, position preferred, the
    run that is, reason, why unscored), side by side on the page."""
    out: dict[str, dict[str, Any]] = {}
    for v in result.criterion_verdicts:
        votes = [[one.model, one.label, one.reason, [[s.id, s.question, s.answer, s.reason] for s in one.steps],
                  one.unscored] for one in v.votes]  # fmt: skip
        out.setdefault(v.query_id, {}).setdefault("k", []).append([v.run, v.criterion, v.label, v.score, v.unscored,
                                                                   votes])  # fmt: skip
    if result.preferences is not None:
        for j in result.preferences.judgements:
            orders = [[o.shown_first, o.preferred, o.winner, o.reason, o.unscored] for o in j.orders]
            out.setdefault(j.query_id, {}).setdefault("pw", []).append([j.run_a, j.run_b, j.winner, j.unscored,
                                                                        orders])  # fmt: skip
    return out


def _step(step: StepView, texts: dict[str, int]) -> dict[str, Any]:
    """One step for the page: a search's passages as the context's are (text by index), the rest as given."""
    out: dict[str, Any] = {"n": step.number, "k": step.kind}
    if step.kind == "retrieval":
        recall = None if step.recall is None else round(step.recall, 4)
        passages = [[p.rank, p.unit, texts.setdefault(p.text, len(texts)), p.grade, p.how] for p in step.passages]
        out |= {"q": step.query, "p": passages, "r": recall, "add": step.added, "lost": step.lost}
    elif step.kind == "tool":
        out |= {"name": step.name, "args": step.arguments, "out": step.output, "err": step.error}
    else:
        out |= {"model": step.model, "tokens": step.tokens}
    return out


def _value(row: QueryResult, metric: str) -> float | str:
    """A metric value rounded for the page, or the reason it is unscored."""
    value = row.metrics.get(metric)
    return row.unscored.get(metric, "unscored") if value is None else round(float(value), 4)
