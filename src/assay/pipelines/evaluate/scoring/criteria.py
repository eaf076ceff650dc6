"""The team's own criteria (:mod:`assay.judge.criteria`) per question: ``criterion:NAME`` in each run's rows.

Before any call (:func:`check_criteria`): an input a criterion reads that the golden set or every run lacks is
refused at the file's line, and so is a judged criterion under a model judge, which this version cannot ask yet.
Scoring (:func:`criterion_values`): a deterministic check runs on each question's answer (and question and passages,
the texts of the run's top ``depth`` passages); a question it cannot run on is unscored with the reason, never 0. A
judged criterion with no judge or the offline judge is unscored: ``needs a model judge``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from assay.errors import ConfigError
from assay.formats.golden import GoldenSet
from assay.judge.checks import CannotRun
from assay.judge.criteria import Criterion
from assay.judge.panel import Grader, judges_of
from assay.pipelines.evaluate.runs.loaded import LoadedRun, RunLine
from assay.pipelines.evaluate.scoring.ranking import QueryValues

__all__ = ["NEEDS_MODEL_JUDGE", "check_criteria", "criterion_values"]

NEEDS_MODEL_JUDGE = "needs a model judge"


def check_criteria(criteria: Sequence[Criterion], gold: GoldenSet, runs: Sequence[LoadedRun],
                   judge: Grader | None) -> None:  # fmt: skip
    """Refuse, before any call, an input the data lacks and a judged criterion under a model judge (module doc)."""
    lines = [line for run in runs for line in run.lines.values()]
    has = {
        "answer": any((line.answer or "").strip() for line in lines),
        "passages": any(line.ranked for line in lines),
        "reference_answer": any(q.reference_answer for q in gold.questions),
        "nuggets": any(q.nuggets for q in gold.questions),
        "history": any(len(c.turns) > 1 for c in gold.conversations),
    }
    for criterion in criteria:
        criterion.check_inputs(has)
    modelled = any(one.model != "offline" for one in judges_of(judge))
    judged = next((c for c in criteria if c.judged), None)
    if modelled and judged is not None:
        raise ConfigError(
            f"{judged.path}: criterion {judged.name} is judged by a model, and model-judged criteria are not yet "
            "supported; use a deterministic [check] criterion, or evaluate with the offline judge or --no-judge "
            f"(it is then unscored: {NEEDS_MODEL_JUDGE})"
        )


def passage_texts(line: RunLine, gold: GoldenSet, depth: int) -> list[str]:
    """The texts of the line's top ``depth`` passages, in rank order (a golden chunk's text, else the run's own)."""
    texts = []
    for unit in line.top(depth):
        text = gold.chunk(unit).text if gold.has_chunk(unit) else line.texts.get(unit)
        if text:
            texts.append(text)
    return texts


def criterion_values(
    run: LoadedRun, gold: GoldenSet, criteria: Sequence[Criterion], depth: int
) -> Mapping[str, QueryValues]:
    """Each question's ``criterion:NAME`` values for ``run`` (module doc)."""
    out: dict[str, QueryValues] = {}
    for qid, line in run.lines.items():
        values = out[qid] = QueryValues({}, {})
        question = gold.question(qid).text
        passages = passage_texts(line, gold, depth)
        for criterion in criteria:
            if criterion.check is None:
                values.metrics[criterion.metric] = None
                values.unscored[criterion.metric] = NEEDS_MODEL_JUDGE
                continue
            try:
                values.metrics[criterion.metric] = criterion.check.score(question, line.answer, passages)
            except CannotRun as why:
                values.metrics[criterion.metric] = None
                values.unscored[criterion.metric] = str(why)
    return out
