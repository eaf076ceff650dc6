"""Claim-level diagnosis of each answer (RAGChecker's metrics, :mod:`assay.metrics.diagnosis`) on top of the calls
:mod:`~assay.pipelines.evaluate.judging.calls` already made.

RAGChecker needs four entailment relations per sample: answer claims x reference, reference claims x answer, answer
claims x chunks and reference claims x chunks. assay has two of them already: the ``answer_assessment`` call gives the
answer's claims with the top-K chunks each draws on (the answer rows of the support matrix) and the ``support`` call
gives the golden set's reference claims against the same chunks (the reference rows). The other two come from one
``claim_check`` call per sample, made after those two: so a sample costs 3 calls (plus relevance labels, shared by
every run). RAGChecker makes 2 extractions and then checks each claim against each text (the reference or the answer,
and each of the k chunks); with its default joint checking of 5 claims per prompt that is about
2 + (ceil(n / 5) + ceil(m / 5))(k + 1) calls for n answer claims and m reference claims, 2 + (n + m)(k + 1) with one
claim per prompt (``bench/diagnose.py`` counts all three).

Conventions: a chunk entails a claim when the claim's support level for it is 1.0 (supported; partial does not
count). Read off the two calls (``--diagnosis approx``), every passage the judge names as supporting a claim counts,
including passages that support it only together, and an answer claim judged supported whose passages the judge did
not name is credited to every top-K chunk (as context recall credits its reference claims); RAGChecker checks each
(claim, chunk) pair alone, which :mod:`~assay.pipelines.evaluate.judging.pair_checks` does for the answer side by
default and for both sides with ``--diagnosis exact``. Reference claims are the golden set's, or the sentences of the
reference answer when a question has none. ``retriever_claim_recall`` is ``context_recall`` and ``faithfulness`` is
the answer call's ``faithfulness`` (same definitions, same verdicts), so neither is written twice, unless that side
was checked per pair: then the diagnosis rewrites it from the per-pair matrix.

An empty answer (or a question the system failed on) makes no call: it entails no reference claim, so
``claim_recall`` and ``claim_f1`` are 0 when the question has reference claims, and every other diagnosis metric is
unscored with the answer's reason (``empty answer``, ``system_failed``).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import numpy.typing as npt

from assay.formats.golden import GoldenSet
from assay.judge import Judge, Judgement
from assay.metrics.diagnosis import LOWER_IS_BETTER, NO_DIRECTION, diagnose
from assay.pipelines.evaluate.evaluated import SupportRow
from assay.pipelines.evaluate.judging.calls import Assessed, _reference_claims
from assay.pipelines.evaluate.runs.loaded import EMPTY_ANSWER, LoadedRun
from assay.pipelines.evaluate.runs.read import FAILED
from assay.pipelines.evaluate.scoring.names import DIAGNOSIS_NAMES, RECALL_TYPE, SHARED_NAMES
from assay.results import Comparison, DiagnosisExample
from assay.text import sentences

__all__ = [
    "CLAIM_CHECK_PROMPT",
    "DiagnosisCall",
    "diagnose_runs",
    "directed",
    "estimate_calls",
    "estimate_variables",
    "plan_diagnosis",
]

CLAIM_CHECK_PROMPT = "claim_check"
EXAMPLES_PER_CATEGORY = 3
_CHUNK_CHARS = 600


@dataclass
class DiagnosisCall:
    """One ``claim_check`` call and what is needed to read it: the support matrices of its query."""

    run: str
    query_id: str
    variables: dict[str, Any]
    columns: list[str]
    answer_support: npt.NDArray[np.float64]
    reference_support: npt.NDArray[np.float64]
    correct: list[float] = field(default_factory=list)
    recalled: list[float] = field(default_factory=list)
    reasons: dict[str, str] = field(default_factory=dict)  # claim_check's, per claim id
    context_reasons: dict[str, str] = field(default_factory=dict)  # the answer and support calls', per claim id
    passages: list[str] = field(default_factory=list)  # the text of each column ("" when it has none)
    checked: tuple[str, ...] = ()  # the sides whose matrix comes from per-(claim, chunk) checks (pair_checks)


def _rows(out: Assessed, kind: str) -> list[SupportRow]:
    return [row for row in out.rows if row.kind == kind]


def _answer_matrix(rows: list[SupportRow], columns: list[str]) -> npt.NDArray[np.float64]:
    matrix = np.zeros((len(rows), len(columns)))
    for i, row in enumerate(rows):
        matrix[i] = [row.support.get(cid, 0.0) for cid in columns]
        if row.verdict == "supported" and not matrix[i].any():
            matrix[i] = 1.0  # supported by the context, passages not named: credit every chunk
    return matrix


def _reference_matrix(rows: list[SupportRow], n_claims: int, columns: list[str]) -> npt.NDArray[np.float64]:
    if not rows or not columns:  # nothing retrieved with text: no chunk entails anything
        return np.zeros((n_claims, len(columns)))
    return np.array([[row.support.get(cid, 0.0) for cid in columns] for row in rows]).reshape(-1, len(columns))


def _why_not(out: Assessed) -> str | None:
    """Why this query cannot be diagnosed (the reason of the metric it needs), or None when it can."""
    for needed in ("answer_relevance", "context_recall"):
        if out.metrics.get(needed) is None:
            return out.unscored.get(needed, "no_answer" if needed == "answer_relevance" else "unscored")
    return None


def plan_diagnosis(
    golden: GoldenSet, runs: Sequence[LoadedRun], assessed: Mapping[str, Mapping[str, Assessed]], *, context_k: int
) -> list[DiagnosisCall]:
    """One ``claim_check`` call per query whose answer and context calls succeeded; the others are marked unscored
    with the reason their answer or context metric has."""
    calls = []
    for run in runs:
        for qid, line in run.lines.items():
            out = assessed[run.name][qid]
            reason = _why_not(out)
            question = golden.question(qid)
            claims = _reference_claims(question)
            if reason is not None:
                out.fail(DIAGNOSIS_NAMES, reason)
                if reason in (EMPTY_ANSWER, FAILED) and claims:  # the answer entails no reference claim
                    for name in [n for n in DIAGNOSIS_NAMES if n in RECALL_TYPE]:
                        out.unscored.pop(name, None)
                        out.put(name, 0.0)
                continue
            columns = line.top(context_k)
            answers = _rows(out, "answer")
            variables = {
                "question": question.text,
                "answer_claims": [{"id": f"a{i + 1}", "text": row.claim} for i, row in enumerate(answers)],
                "reference": question.reference_answer or " ".join(claims),
                "reference_claims": [{"id": f"r{j + 1}", "text": text} for j, text in enumerate(claims)],
                "answer": line.answer or "",
            }
            references = _rows(out, "reference")
            reference = _reference_matrix(references, len(claims), columns)
            call = DiagnosisCall(run.name, qid, variables, columns, _answer_matrix(answers, columns), reference)
            call.passages = [line.text(cid, golden) or "" for cid in columns]
            call.context_reasons = {
                **{f"a{i + 1}": row.reason for i, row in enumerate(answers)},
                **{f"r{j + 1}": row.reason for j, row in enumerate(references)},
            }
            calls.append(call)
    return calls


def estimate_calls(golden: GoldenSet, runs: Sequence[LoadedRun], context_k: int) -> list[DiagnosisCall]:
    """The diagnosis calls for ``--dry-run``, before any answer call: the answer's sentences stand in for the claims
    the answer call will extract (one call per answered query with reference claims); the matrices are zeros."""
    out = []
    for run in runs:
        for qid, line in run.lines.items():
            question = golden.question(qid)
            claims = _reference_claims(question)
            if not claims or not (line.answer and line.answer.strip()):
                continue
            answers = sentences(line.answer)
            variables = {
                "question": question.text,
                "answer_claims": [{"id": f"a{i + 1}", "text": t} for i, t in enumerate(answers)],
                "reference": question.reference_answer or " ".join(claims),
                "reference_claims": [{"id": f"r{j + 1}", "text": t} for j, t in enumerate(claims)],
                "answer": line.answer,
            }
            columns = line.top(context_k)
            zeros = (np.zeros((len(answers), len(columns))), np.zeros((len(claims), len(columns))))
            call = DiagnosisCall(run.name, qid, variables, columns, *zeros)
            call.passages = [line.text(cid, golden) or "" for cid in columns]
            out.append(call)
    return out


def estimate_variables(golden: GoldenSet, runs: Sequence[LoadedRun], context_k: int = 5) -> list[dict[str, Any]]:
    """The ``claim_check`` variables for ``--dry-run`` (see :func:`estimate_calls`)."""
    return [call.variables for call in estimate_calls(golden, runs, context_k)]


def directed(comparisons: Sequence[Comparison]) -> list[Comparison]:
    """The comparisons with the verdict of a lower-is-better metric (:data:`LOWER_IS_BETTER`) reworded: the run
    with less of it wins; and of a metric with no better side (:data:`NO_DIRECTION`: self-knowledge, searches, tool
    calls, model tokens): the run with more of it has more, and nobody wins."""
    out = []
    for c in comparisons:
        interval = f"{c.b} - {c.a} = {c.delta:+.3f} [{c.low:.3f}, {c.high:.3f}], p = {c.p_adjusted:.3g} adjusted"
        if c.metric in LOWER_IS_BETTER and c.significant:
            winner, loser = (c.b, c.a) if c.delta < 0 else (c.a, c.b)
            text = f"{winner} beats {loser} on {c.metric} (lower is better): {interval}: a real difference."
            out.append(c.model_copy(update={"verdict": text}))
        elif c.metric in NO_DIRECTION and c.significant:
            more, less = (c.b, c.a) if c.delta > 0 else (c.a, c.b)
            text = f"{more} has more {c.metric} than {less} (neither side is better): {interval}: a real difference."
            out.append(c.model_copy(update={"verdict": text}))
        else:
            out.append(c)
    return out


_ENTAILED = {"entailed": 1.0, "neutral": 0.0, "contradicted": 0.0}


def _read(call: DiagnosisCall, j: Judgement[Any], out: Assessed) -> None:
    if j.output is None:
        out.fail(DIAGNOSIS_NAMES, j.unscored.kind if j.unscored is not None else "unscored")
        return
    data = j.output.model_dump()
    found = {c["statement_id"]: c for c in [*data["answer_claims"], *data["reference_claims"]]}
    call.reasons = {sid: f"{c['verdict']}: {c['reason']}" for sid, c in found.items()}

    def verdicts(key: str) -> list[float]:
        ids = [s["id"] for s in call.variables[key]]
        return [_ENTAILED[found[sid]["verdict"]] if sid in found else float("nan") for sid in ids]

    call.correct, call.recalled = verdicts("answer_claims"), verdicts("reference_claims")
    values = diagnose([call.correct], [call.recalled], [call.answer_support], [call.reference_support])
    for name in DIAGNOSIS_NAMES:
        value = float(values[name][0])
        out.put(name, value, _nan_reason(name, call))
    for name, shared in SHARED_NAMES.items():  # a checked side rewrites the one-call figure it shares
        side, matrix = (
            ("answer", call.answer_support) if name == "faithfulness" else ("reference", call.reference_support)
        )
        if side in call.checked and matrix.shape[0]:
            out.put(shared, float(values[name][0]), _nan_reason(name, call))


def _nan_reason(name: str, call: DiagnosisCall) -> str:
    if any(np.isnan(v) for v in [*call.correct, *call.recalled]):
        return "missing_claim_verdict"
    if np.isnan(call.answer_support).any() or np.isnan(call.reference_support).any():
        return "pair_check_unscored"  # --diagnosis exact: a (claim, chunk) check failed or skipped the claim
    if name.startswith("retriever") and not call.columns:
        return "nothing_retrieved"
    if name == "context_utilization":
        return "no_reference_claim_in_context"
    if name == "claim_recall":
        return "no_reference_claims"
    return "no_claims"


async def diagnose_runs(
    judge: Judge,
    golden: GoldenSet,
    calls: Sequence[DiagnosisCall],
    assessed: Mapping[str, Mapping[str, Assessed]],
    *,
    on_result: Callable[[], None] | None = None,
) -> list[DiagnosisExample]:
    """Make the ``claim_check`` calls, write the diagnosis metrics into ``assessed``, and return a few examples of
    each failure category per run for the report."""

    def done(index: int, j: Judgement[Any]) -> None:
        _read(calls[index], j, assessed[calls[index].run][calls[index].query_id])
        if on_result is not None:
            on_result()

    if calls:
        variables = [c.variables for c in calls]
        await judge.ajudge_many(CLAIM_CHECK_PROMPT, variables, stage="diagnosis", on_result=done)
    return examples(golden, calls)


def examples(golden: GoldenSet, calls: Sequence[DiagnosisCall]) -> list[DiagnosisExample]:
    """Up to :data:`EXAMPLES_PER_CATEGORY` examples per (run, category), in query order."""
    kept: dict[tuple[str, str], int] = {}
    out = []
    for call in calls:
        for example in _findings(golden, call):
            key = (example.run, example.category)
            if kept.get(key, 0) < EXAMPLES_PER_CATEGORY:
                kept[key] = kept.get(key, 0) + 1
                out.append(example)
    return out


def _chunk(golden: GoldenSet, cid: str | None) -> str | None:
    if cid is None or not golden.has_chunk(cid):
        return None
    text = golden.chunk(cid).text
    return text if len(text) <= _CHUNK_CHARS else text[:_CHUNK_CHARS] + "…"


def _findings(golden: GoldenSet, call: DiagnosisCall) -> list[DiagnosisExample]:
    """The claims of one query that fall into a failure category, each with its evidence."""
    if not call.correct and not call.recalled:
        return []
    relevant: npt.NDArray[np.bool_] = np.asarray((call.reference_support >= 1.0).any(axis=0), dtype=bool)
    question = golden.question(call.query_id).text
    found = []
    for i, claim in enumerate(call.variables["answer_claims"]):
        category, cid = _answer_category(call.correct[i], call.answer_support[i] >= 1.0, relevant, call.columns)
        if category is not None:
            found.append((category, claim, cid, _ANSWER_VERDICT[category]))
    for j, claim in enumerate(call.variables["reference_claims"]):
        entails = np.flatnonzero(call.reference_support[j] >= 1.0)
        if not entails.size:
            found.append(("missed_by_retriever", claim, None, "no retrieved chunk entails this reference claim"))
        elif call.recalled[j] < 1.0:
            verdict = "a retrieved chunk entails this reference claim, the answer does not"
            found.append(("ignored_by_generator", claim, call.columns[int(entails[0])], verdict))
    return [
        DiagnosisExample(
            run=call.run,
            query_id=call.query_id,
            question=question,
            category=category,
            claim=claim["text"],
            verdict=verdict,
            reason=_reason(call, claim["id"], category),
            chunk_id=cid,
            chunk_text=_chunk(golden, cid),
        )
        for category, claim, cid, verdict in found
    ]


def _reason(call: DiagnosisCall, claim_id: str, category: str) -> str:
    """The judge's reasons behind one example: against the chunks (the answer or support call) and against the
    reference or the answer (claim_check), the one that decided the category first."""
    against = "the reference" if claim_id.startswith("a") else "the answer"
    parts = [
        (f"against {against}", call.reasons.get(claim_id)),
        ("against the chunks", call.context_reasons.get(claim_id)),
    ]
    if category in ("missed_by_retriever", "self_knowledge"):
        parts.reverse()
    return "; ".join(f"{where}: {why}" for where, why in parts if why)


_ANSWER_VERDICT = {
    "hallucination": "not entailed by the reference, and no retrieved chunk entails it",
    "relevant_noise": "not entailed by the reference, but a relevant chunk entails it",
    "irrelevant_noise": "not entailed by the reference, but an irrelevant chunk entails it",
    "self_knowledge": "entailed by the reference, but by no retrieved chunk",
}


def _answer_category(
    correct: float, entails: npt.NDArray[np.bool_], relevant: npt.NDArray[np.bool_], columns: list[str]
) -> tuple[str | None, str | None]:
    """(category, the chunk that entails the claim) of one answer claim; (None, None) for a correct, grounded one
    or an unscored one."""
    if np.isnan(correct):
        return None, None
    if not entails.any():
        return ("self_knowledge" if correct >= 1.0 else "hallucination"), None
    if correct >= 1.0:
        return None, None
    from_relevant = np.flatnonzero(entails & relevant)
    if from_relevant.size:
        return "relevant_noise", columns[int(from_relevant[0])]
    return "irrelevant_noise", columns[int(np.flatnonzero(entails)[0])]
