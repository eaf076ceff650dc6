"""The judge's part of ``assay eval``: relevance labels for unlabelled retrieved chunks, and the LLM-judged metrics.

Calls per evaluated sample (one query of one run with an answer, context of k chunks), at most three:

1. ``relevance_listwise``: the retrieved chunks in the top k_max that have no label yet, up to N per call (one call
   per question for k = 5). Labels are per (question, chunk) whatever system retrieved the chunk, cached per pair,
   and added to the golden set, so a second system pays only for chunks never judged.
2. ``support``: the question's reference claims against the top-k context (context recall), one call.
3. ``answer_assessment``: the answer's claims with verdicts and the passages each draws on (faithfulness,
   attribution) plus the answer's relevance (0-3, noncommittal), one call.

The diagnosis (:mod:`~assay.pipelines.evaluate.judging.diagnosis`) adds one ``claim_check`` call per answer, after
these. Nugget recall adds one ``support`` call per answer (the nuggets as statements, the answer as the only passage),
as the TREC 2024 RAG track assigns nuggets. A conversation turn with earlier answers in the same run adds one
``contradiction`` call (:mod:`~assay.pipelines.evaluate.judging.contradiction`). Every call that fails leaves its
metrics unscored with the reason.

Metric definitions (per query; K is the context depth, ``settings["context_k"]`` in the result, 5 by default):

* ``context_recall`` = share of reference claims supported (strict) by the top-K chunks (:func:`rag.context_recall`);
* ``faithfulness`` = share of the answer's claims supported (strict) by the top-K chunks; an answer that asserts
  nothing is unscored ("no_claims"), never 0 or 1;
* ``answer_relevance`` = score / 3 in [0, 1]; a noncommittal answer scores 0 (RAGAS's convention);
* ``attribution_rate`` = share of the distinct top-K chunks the answer cites (run ``citations``) or that a claim
  draws on with verdict supported or partial (:func:`rag.attribution_rate`);
* ``nugget_recall_{all,vital}_{strict,lenient}``: TREC RAG 2024 A/V scores (:func:`rag.nugget_recall`);
* ``contradiction`` = 1 when a turn's answer contradicts an earlier answer of the run in its conversation, else 0.
* ``tool_args_judged`` = the share of the question's reference tool calls paired, one to one, with a tool step of
  the line that the judge found equivalent (same tool, arguments that mean the same; an exact match counts without
  asking): one ``tool_arguments`` call per line whose tool steps do not already match every reference call exactly;
  0 when the line made no tool call, unscored (``no_reference_tool_calls``) for a question without reference calls.

A line with no answer to judge makes no answer, nugget or contradiction call. When the answer is empty (``""``, only
whitespace, or missing in a run that answers other questions) or the system failed on the question, the nugget
recalls are 0 (no nugget is supported: the system's failure, not the judge's) and the other answer measures are
unscored (``empty answer``, ``system_failed``); a run with no answer on any line is retrieval-only and its answer
measures are unscored (``no answers in this run``).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from assay.formats.golden import GoldenSet
from assay.judge import Judge, Judgement, Pair, grade_pairs_detailed
from assay.judge.panel import Grader
from assay.judge.relevance import Graded
from assay.metrics import rag
from assay.metrics.tool_calls import exact_pairs, matched
from assay.pipelines.evaluate.evaluated import SupportRow
from assay.pipelines.evaluate.judging.contradiction import CONTRADICTION_PROMPT, earlier_answers, read_contradiction
from assay.pipelines.evaluate.runs.loaded import EMPTY_ANSWER, NO_ANSWERS, LoadedRun, RunLine
from assay.pipelines.evaluate.runs.read import FAILED
from assay.pipelines.evaluate.scoring.names import ANSWER_METRICS, CONTRADICTION, NUGGET_METRICS, TOOL_ARGS_JUDGED
from assay.pipelines.evaluate.scoring.ranking import QueryValues
from assay.pipelines.evaluate.scoring.trajectory import calls_of
from assay.text import canonical_json, sentences
from assay.types import Question, RelevanceLabel

__all__ = [
    "ANSWER_PROMPT",
    "SUPPORT_PROMPT",
    "Assessed",
    "JudgedPlan",
    "assess_runs",
    "judge_unlabelled",
    "plan_calls",
    "unlabelled_pairs",
    "vital_counts",
]

SUPPORT_PROMPT = "support"
TOOL_ARGS_PROMPT = "tool_arguments"
ANSWER_PROMPT = "answer_assessment"
_LEVEL = {"support": 1.0, "partial": 0.5, "none": 0.0}
_VERDICT = {"supported": 1.0, "partial": 0.5, "unsupported": 0.0}
_NUGGET = {"support": "support", "partial": "partial_support", "none": "not_support"}
OnResult = Callable[[], None]


@dataclass
class Assessed(QueryValues):
    """LLM-judged values of one query of one run, why some are missing (``put`` records NaN as unscored with the
    reason), and its support-matrix rows."""

    rows: list[SupportRow] = field(default_factory=list)
    # (vital nuggets the answer supports, vital nuggets) once the nugget call answered every vital nugget: the
    # conversation coverage (scoring.conversations.vital_coverage) sums them over a conversation's turns
    vital_nuggets: tuple[int, int] | None = None

    def fail(self, names: Sequence[str], reason: str) -> None:
        for name in names:
            self.metrics[name] = None
            self.unscored[name] = reason


def _has_scored_label(golden: GoldenSet) -> set[tuple[str, str]]:
    return {(label.query_id, label.chunk_id) for label in golden.qrels if label.grade is not None}


def unlabelled_pairs(golden: GoldenSet, runs: Sequence[LoadedRun], depth: int) -> list[Pair]:
    """Pairs (question, chunk of the golden set) in some run's top ``depth`` without a scored label, each once."""
    labelled = _has_scored_label(golden)
    seen: set[tuple[str, str]] = set()
    pairs: list[Pair] = []
    for run in runs:
        for qid, line in run.lines.items():
            for cid in line.top(depth):
                key = (qid, cid)
                if key in labelled or key in seen or not golden.has_chunk(cid):
                    continue
                seen.add(key)
                pairs.append(Pair(qid, golden.question(qid).text, cid, golden.chunk(cid).text))
    return pairs


async def judge_unlabelled(
    judge: Grader, pairs: Sequence[Pair], *, listwise: int | None, seed: int, on_label: Callable[[Graded], None]
) -> list[RelevanceLabel]:
    """Grade ``pairs`` (listwise groups of ``listwise`` per question, or pointwise); unscored labels included."""
    if not pairs:
        return []
    graded = await grade_pairs_detailed(judge, pairs, listwise=listwise, seed=seed, on_label=on_label)
    return [g.label for g in graded]


def _context(line: RunLine, golden: GoldenSet, k: int) -> tuple[list[str], list[dict[str, str]]]:
    """The top-k chunk ids (columns) and the passages shown to the judge, with local ids "1".."k"."""
    columns = line.top(k)
    passages = []
    for i, cid in enumerate(columns):
        text = line.text(cid, golden)
        if text:
            passages.append({"id": str(i + 1), "text": text})
    return columns, passages


def _reference_claims(question: Question) -> list[str]:
    if question.claims:
        return [c.text for c in question.claims]
    return sentences(question.reference_answer or "") if question.type != "unanswerable" else []


@dataclass
class _Call:
    """One planned call: which run/query it serves, the prompt, its variables and how to read the answer."""

    run: str
    query_id: str
    prompt: str
    variables: dict[str, Any]
    columns: list[str]
    kind: str  # "context" | "answer" | "nuggets" | "contradiction" | "tool_args"
    citations: list[str] = field(default_factory=list)
    line: RunLine | None = None  # the run's line (read by the tool_args answer)


@dataclass
class JudgedPlan:
    """Every LLM-metric call to make, and the values that need no call (filled in already)."""

    calls: list[_Call]
    assessed: dict[str, dict[str, Assessed]]


def _want(families: set[str], name: str) -> bool:
    return not families or name in families


@dataclass
class _Query:
    """What the planners need about one query of one run."""

    run: str
    question: Question
    line: RunLine
    columns: list[str]
    passages: list[dict[str, str]]
    out: Assessed
    answers_given: bool = True  # some line of the run has an answer (else it is retrieval-only)

    def call(self, prompt: str, variables: dict[str, Any], kind: str) -> _Call:
        columns = [] if kind == "nuggets" else self.columns
        return _Call(self.run, self.question.id, prompt, variables, columns, kind, list(self.line.citations),
                     self.line)  # fmt: skip

    @property
    def answer(self) -> str | None:
        return self.line.answer if self.line.answer and self.line.answer.strip() else None

    @property
    def missing(self) -> str:
        """Why there is no answer to judge: the system failed, the run is retrieval-only, or the answer is empty."""
        if self.line.error is not None:
            return FAILED
        return EMPTY_ANSWER if self.answers_given else NO_ANSWERS

    @property
    def failed_answer(self) -> bool:
        """No answer from a system that answers: an empty one or a failure, which the recall-type measures score 0."""
        return self.answer is None and self.missing != NO_ANSWERS


def plan_calls(
    golden: GoldenSet, runs: Sequence[LoadedRun], *, context_k: int, families: set[str] | None = None
) -> JudgedPlan:
    """Plan the context-recall, answer and nugget calls of every run; ``families`` limits them (None = all)."""
    wanted = families or set()
    calls: list[_Call] = []
    assessed: dict[str, dict[str, Assessed]] = {}
    stepped = any(line.steps for run in runs for line in run.lines.values())  # some system calls tools
    for run in runs:
        per = assessed[run.name] = {}
        earlier = earlier_answers(golden, run) if _want(wanted, CONTRADICTION) else {}
        for qid, line in run.lines.items():
            columns, passages = _context(line, golden, context_k)
            query = _Query(run.name, golden.question(qid), line, columns, passages, Assessed(), run.answers_given)
            per[qid] = query.out
            if _want(wanted, "context_recall"):
                calls += _plan_context(query)
            if _want(wanted, "answer"):
                calls += _plan_answer(query)
            if _want(wanted, "nugget_recall"):
                calls += _plan_nuggets(query)
            if qid in earlier:
                calls += _plan_contradiction(query, earlier[qid])
            if _want(wanted, "tool_args") and stepped:
                calls += _plan_tool_args(query)
    return JudgedPlan(calls, assessed)


def _plan_context(q: _Query) -> list[_Call]:
    name = "context_recall"
    claims = _reference_claims(q.question)
    if not claims:
        q.out.fail([name], "no_reference_claims")
        return []
    if not q.passages:
        q.out.put(name, 0.0)  # nothing retrieved supports nothing
        return []
    statements = [{"id": f"c{i + 1}", "text": text} for i, text in enumerate(claims)]
    return [q.call(SUPPORT_PROMPT, {"statements": statements, "passages": q.passages}, "context")]


def _plan_answer(q: _Query) -> list[_Call]:
    if q.answer is None:
        q.out.fail(ANSWER_METRICS, q.missing)
        return []
    variables = {"question": q.question.text, "answer": q.answer, "passages": q.passages}
    return [q.call(ANSWER_PROMPT, variables, "answer")]


def _plan_nuggets(q: _Query) -> list[_Call]:
    if not q.question.nuggets:
        q.out.fail(NUGGET_METRICS, "no_nuggets")
        return []
    if q.failed_answer:  # no nugget is in an empty answer: every recall 0, as if the judge said so
        _read_nuggets(q.question, {"assignments": [{"statement_id": n.id, "support": "none"}
                                                   for n in q.question.nuggets]}, q.out)  # fmt: skip
        return []
    if q.answer is None:
        q.out.fail(NUGGET_METRICS, q.missing)
        return []
    statements = [{"id": n.id, "text": n.text} for n in q.question.nuggets]
    return [
        q.call(SUPPORT_PROMPT, {"statements": statements, "passages": [{"id": "answer", "text": q.answer}]}, "nuggets")
    ]


def _plan_contradiction(q: _Query, earlier: list[dict[str, Any]]) -> list[_Call]:
    if q.answer is None:
        q.out.fail([CONTRADICTION], q.missing)
        return []
    variables = {"question": q.question.text, "answer": q.answer, "earlier": earlier}
    return [q.call(CONTRADICTION_PROMPT, variables, "contradiction")]


def _plan_tool_args(q: _Query) -> list[_Call]:
    reference, made = calls_of(q.question, q.line)
    if not reference:
        q.out.fail([TOOL_ARGS_JUDGED], "no_reference_tool_calls")
        return []
    if q.line.error is not None:
        q.out.fail([TOOL_ARGS_JUDGED], FAILED)
        return []
    exact = matched(exact_pairs(reference, made))
    if exact == len(reference) or not made:  # every reference call made as given, or no call at all
        q.out.put(TOOL_ARGS_JUDGED, exact / len(reference))
        return []
    variables = {"question": q.question.text, "reference": _calls("r", reference), "calls": _calls("s", made)}
    return [q.call(TOOL_ARGS_PROMPT, variables, "tool_args")]


def _calls(prefix: str, calls: Sequence[tuple[str, Mapping[str, Any]]]) -> list[dict[str, str]]:
    return [{"id": f"{prefix}{i}", "name": name, "arguments": canonical_json(dict(arguments))}
            for i, (name, arguments) in enumerate(calls, start=1)]  # fmt: skip


def read_tool_args(question: Question, line: RunLine, data: dict[str, Any]) -> float:
    """``tool_args_judged`` from the judge's pairs (ids it did not give are ignored) and the exact matches."""
    reference, made = calls_of(question, line)
    pairs = exact_pairs(reference, made)
    ids = {f"r{i + 1}": i for i in range(len(reference))}, {f"s{j + 1}": j for j in range(len(made))}
    for pair in data["equivalent"]:
        i, j = ids[0].get(str(pair["reference"])), ids[1].get(str(pair["call"]))
        if i is not None and j is not None and reference[i][0] == made[j][0]:
            pairs.append((i, j))
    return matched(pairs) / len(reference)


async def assess_runs(
    judge: Judge, golden: GoldenSet, plan: JudgedPlan, *, on_result: OnResult | None = None
) -> dict[str, dict[str, Assessed]]:
    """Make the planned calls (all prompts at once, under the judge's concurrency) and read the answers."""
    stages = {"context": "context_recall", "answer": "answer", "nuggets": "nuggets", "contradiction": CONTRADICTION,
              "tool_args": TOOL_ARGS_JUDGED}  # fmt: skip
    groups: dict[str, list[_Call]] = {}
    for call in plan.calls:
        groups.setdefault(call.kind, []).append(call)

    async def run_group(kind: str, calls: list[_Call]) -> None:
        def done(index: int, j: Judgement[Any]) -> None:
            _read(calls[index], j, plan.assessed[calls[index].run][calls[index].query_id], golden)
            if on_result is not None:
                on_result()

        prompt = calls[0].prompt
        await judge.ajudge_many(prompt, [c.variables for c in calls], stage=stages[kind], on_result=done)

    await asyncio.gather(*(run_group(kind, calls) for kind, calls in groups.items()))
    return plan.assessed


def _read(call: _Call, j: Judgement[Any], out: Assessed, golden: GoldenSet) -> None:
    names = {
        "context": ["context_recall"],
        "answer": ANSWER_METRICS,
        "nuggets": NUGGET_METRICS,
        "contradiction": [CONTRADICTION],
        "tool_args": [TOOL_ARGS_JUDGED],
    }[call.kind]
    if j.output is None:
        out.fail(names, j.unscored.kind if j.unscored is not None else "unscored")
        return
    data = j.output.model_dump()
    if call.kind == "context":
        _read_context(call, data, out)
    elif call.kind == "answer":
        _read_answer(call, data, out)
    elif call.kind == "contradiction":
        out.put(CONTRADICTION, read_contradiction(data))
    elif call.kind == "tool_args" and call.line is not None:
        out.put(TOOL_ARGS_JUDGED, read_tool_args(golden.question(call.query_id), call.line, data))
    else:
        _read_nuggets(golden.question(call.query_id), data, out)


def _columns_of(call: _Call, local_ids: Sequence[str]) -> list[int]:
    """Column indexes (rank positions) of the passages named by local id; unknown ids are ignored."""
    out = []
    for pid in local_ids:
        if str(pid).isdigit() and 1 <= int(pid) <= len(call.columns):
            out.append(int(pid) - 1)
    return out


def _support_row(call: _Call, kind: str, claim: tuple[str, str, str], value: float, cols: list[int]) -> SupportRow:
    """One support-matrix row: a claim (text, verdict, reason) and its support level per top-K chunk (0 where
    unused)."""
    support = {cid: (value if i in cols else 0.0) for i, cid in enumerate(call.columns)}
    text, verdict, reason = claim
    return SupportRow(run=call.run, query_id=call.query_id, kind=kind, claim=text, verdict=verdict, support=support,
                      reason=reason)  # fmt: skip


def _read_context(call: _Call, data: dict[str, Any], out: Assessed) -> None:
    statements = call.variables["statements"]
    by_id = {a["statement_id"]: a for a in data["assignments"]}
    matrix = np.zeros((len(statements), max(len(call.columns), 1)))
    for row, statement in enumerate(statements):
        answer = by_id.get(statement["id"])
        if answer is None:
            matrix[row, :] = np.nan  # the judge skipped this claim: unscored, not unsupported
            continue
        level = _LEVEL[answer["support"]]
        cols = _columns_of(call, answer["passage_ids"])
        if level > 0 and not cols:
            cols = list(range(len(call.columns)))  # supported by the context, passages not named: credit all
        matrix[row, cols] = level
        claim = (statement["text"], answer["support"], answer["reason"])
        out.rows.append(_support_row(call, "reference", claim, level, cols))
    verdicts = rag.claim_support(matrix).tolist()
    out.put("context_recall", float(rag.context_recall([verdicts])[0]), "missing_claim_verdict")


def _read_answer(call: _Call, data: dict[str, Any], out: Assessed) -> None:
    used = set(call.citations)
    verdicts = []
    for claim in data["claims"]:
        value = _VERDICT[claim["verdict"]]
        cols = _columns_of(call, claim["passage_ids"])
        verdicts.append(value)
        if value > 0:
            used |= {call.columns[i] for i in cols}
        said = (claim["claim"], claim["verdict"], claim["reason"])
        out.rows.append(_support_row(call, "answer", said, value, cols))
    out.put("faithfulness", float(rag.faithfulness([verdicts])[0]), "no_claims")
    relevance = 0.0 if data["noncommittal"] else data["relevance"] / 3.0
    out.put("answer_relevance", relevance)
    out.put("attribution_rate", float(rag.attribution_rate([call.columns], [used])[0]), "nothing_retrieved")


def _read_nuggets(question: Question, data: dict[str, Any], out: Assessed) -> None:
    by_id = {a["statement_id"]: a["support"] for a in data["assignments"]}
    importance = [n.importance for n in question.nuggets]
    assignment = [_NUGGET[by_id[n.id]] if n.id in by_id else None for n in question.nuggets]
    for name in NUGGET_METRICS:
        _, _, subset, mode = name.split("_")
        value = rag.nugget_recall([importance], [assignment], subset=subset, mode=mode)[0]  # type: ignore[arg-type]
        reason = "no_vital_nuggets" if subset == "vital" and "vital" not in importance else "missing_nugget_verdict"
        out.put(name, float(value), reason)
    vital = [a for a, i in zip(assignment, importance, strict=True) if i == "vital"]
    if vital and None not in vital:
        out.vital_nuggets = (sum(a == "support" for a in vital), len(vital))


def vital_counts(assessed: Mapping[str, Mapping[str, Assessed]]) -> dict[str, dict[str, tuple[int, int] | None]]:
    """Per run and question, (vital nuggets the answer supports, vital nuggets) where the nugget call answered for
    each, None where a verdict is missing (the conversation coverage is then unscored)."""
    out: dict[str, dict[str, tuple[int, int] | None]] = {}
    for run, found in assessed.items():
        mine = out[run] = {}
        for qid, one in found.items():
            reason = one.unscored.get("nugget_recall_vital_strict")
            if one.vital_nuggets is not None:
                mine[qid] = one.vital_nuggets
            elif reason is not None and reason not in ("no_vital_nuggets", "no_nuggets", FAILED):
                mine[qid] = None
    return out
