"""Which metric names exist for one golden set and its runs, and why the others do not.

Every name of :func:`~assay.pipelines.evaluate.scoring.names.catalogue` is a metric ``assay eval`` can compute, but
not from every golden set and run: nugget recall needs nuggets and answers, a ranking measure needs passages, a
judged metric a judge. :class:`Available` says which, so that the names a reader is offered (the close names of a
misspelt one, the metrics of a family, the metrics a ``--primary`` or a gate could take instead) are names the
evaluation at hand would report, and a name it cannot compute is refused before any work with the reason. The rules
are those the steps follow; one place holds them so the offers cannot drift from what is computed:

* judged names (:data:`~.names.NEEDS_JUDGE`): a judge;
* ranking, budget and span measures, coverage recall, RAGAS context precision: a run with passages; budget and span
  measures also documents with text, coverage recall nugget support;
* the answer measures (faithfulness, answer relevance, attribution rate), the diagnosis and nugget recall: a run
  with an answer; context recall and the diagnosis also reference answers or claims; nugget recall nuggets; the
  measures of an answer against its passages (:data:`~.names.PASSAGE_BOUND`) a run with passages too;
* ``contradiction``: a conversation of two turns or more and an answer; the rewrite measures: a run line that
  carries its own rewrite of a conversation turn; the measures of a trajectory: a run line with steps, and
  ``hop_coverage`` a question with hops, the tool-call measures a question with reference tool calls.

Without runs (names checked before a ``--target`` is asked) only the golden set and the judge are read.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from assay.formats.golden import GoldenSet
from assay.metrics.diagnosis import DIAGNOSIS_METRICS
from assay.pipelines.evaluate.runs.loaded import LoadedRun
from assay.pipelines.evaluate.scoring.names import (
    AT_K,
    CONTRADICTION,
    DIAGNOSIS_NAMES,
    NEEDS_JUDGE,
    PASSAGE_BOUND,
    TOOL_ARGS_JUDGED,
    family,
    kind_of,
)
from assay.pipelines.evaluate.scoring.trajectory import hops_of

__all__ = ["Available"]

_ANSWERED = {"faithfulness", "answer_relevance", "attribution_rate", "nugget_recall", *DIAGNOSIS_NAMES}
_REFERENCED = {"context_recall", *DIAGNOSIS_NAMES}
_OVERALL = set(DIAGNOSIS_METRICS["overall"])  # the answer against the reference: no passage read


@dataclass(frozen=True)
class Available:
    """What a golden set and its runs (None: not read yet) hold that metrics are computed from, and whether a judge
    is there; :meth:`why_not` reads a name against it."""

    judged: bool
    nuggets: bool  # some question has nuggets
    support: bool  # some nugget has supporting chunks (coverage recall)
    references: bool  # some question has a reference answer or claims
    text: bool  # some document has text (budget and span measures)
    turns: bool  # some conversation has two turns or more
    passages: bool | None  # some run line retrieved a passage (None: no run read yet)
    answers: bool | None  # some run line has an answer
    rewrites: bool | None  # some run line carries its own rewrite
    steps: bool | None = None  # some run line carries steps (a system that searches several times)
    hops: bool = False  # some question has hops (multi-hop and comparison questions)
    tool_calls: bool = False  # some question has reference tool calls

    @classmethod
    def of(cls, gold: GoldenSet, runs: Sequence[LoadedRun] | None, *, judged: bool) -> Available:
        lines = None if runs is None else [line for run in runs for line in run.lines.values()]
        return cls(
            judged=judged,
            nuggets=any(q.nuggets for q in gold.questions),
            support=bool(gold.nuggets),
            references=any(q.claims or q.reference_answer for q in gold.questions),
            text=any(doc.text.strip() for doc in gold.documents),
            turns=any(len(c.turns) > 1 for c in gold.conversations),
            passages=None if lines is None else any(line.ranked for line in lines),
            answers=None if lines is None else any((line.answer or "").strip() for line in lines),
            rewrites=None if lines is None else any(line.rewrite for line in lines),
            steps=None if lines is None else any(line.steps for line in lines),
            hops=any(hops_of(q) for q in gold.questions),
            tool_calls=any(q.tool_calls for q in gold.questions),
        )

    def why_not(self, name: str) -> str | None:
        """Why ``name`` cannot be computed here (one phrase), or None when it can."""
        kind, fam = kind_of(name), family(name)
        if kind == "criterion":  # given by its file: EvalSettings.checked refuses a name with no file
            return None
        if kind == "rewrite":
            return self._runs(self.rewrites, "no run line carries its own rewrite of a conversation turn")
        if kind == "trajectory":
            if name == "hop_coverage" and not self.hops:
                return "no question of the golden set has hops (multi-hop or comparison questions)"
            if name.startswith("tool_") and name != "tool_calls" and not self.tool_calls:
                return "no question of the golden set has reference tool calls"
            return self._runs(self.steps, "no run line carries steps (a system that searches several times)")
        if fam in NEEDS_JUDGE and not self.judged:
            return "it is LLM-judged and there is no judge (--judge MODEL)"
        if fam == TOOL_ARGS_JUDGED:
            if not self.tool_calls:
                return "no question of the golden set has reference tool calls"
            return self._runs(self.steps, "no run line carries steps (a system that searches several times)")
        needs_passages = kind != "llm" or fam in AT_K or (fam in PASSAGE_BOUND and fam not in _OVERALL)
        missing = [
            (kind in ("budget", "span") and not self.text, "the golden documents have no text"),
            (fam == "coverage_recall" and not self.support, "the golden set has no nugget support"),
            (fam == "nugget_recall" and not self.nuggets, "the golden set has no nuggets"),
            (fam in _REFERENCED and not self.references, "the golden set has no reference answers or claims"),
            (fam == CONTRADICTION and not self.turns, "the golden set has no conversation of two turns or more"),
        ]
        reason = next((why for lacking, why in missing if lacking), None)
        if reason is not None:
            return reason
        if fam in _ANSWERED or fam == CONTRADICTION:
            answered = self._runs(self.answers, "no run has an answer")
            if answered is not None:
                return answered
        return self._runs(self.passages, "no run has passages") if needs_passages else None

    def keep(self, name: str) -> bool:
        """Whether ``name`` exists here: the filter of the names offered (:data:`~.names.Keep`)."""
        return self.why_not(name) is None

    @staticmethod
    def _runs(has: bool | None, why: str) -> str | None:
        return why if has is False else None
