"""The team's own criteria (:mod:`assay.judge.criteria`) per question: ``criterion:NAME`` in each run's rows.

Before any call (:func:`check_criteria`): an input a criterion reads that the golden set or every run lacks is
refused at the file's line. Scoring (:func:`criterion_values`): a deterministic check runs on each question's answer
(and question and passages, the texts of the run's top ``depth`` passages); a question it cannot run on is unscored
with the reason, never 0. A judged criterion takes what the judge found (:mod:`~..judging.criteria`); with no judge
or the offline judge it is unscored: ``needs a model judge``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from assay.formats.golden import GoldenSet
from assay.judge.checks import CannotRun
from assay.judge.criteria import Criterion
from assay.pipelines.evaluate.runs.loaded import LoadedRun, RunLine
from assay.pipelines.evaluate.scoring.available import Available
from assay.pipelines.evaluate.scoring.ranking import QueryValues

__all__ = ["NEEDS_MODEL_JUDGE", "check_criteria", "criterion_values"]

NEEDS_MODEL_JUDGE = "needs a model judge"


def check_criteria(criteria: Sequence[Criterion], available: Available, gold: GoldenSet) -> None:
    """Refuse, before any call, an input the data lacks (``available``: what the golden set and the runs hold)."""
    has = {
        "answer": bool(available.answers),
        "passages": bool(available.passages),
        "reference_answer": any(q.reference_answer for q in gold.questions),  # claims alone are not one
        "nuggets": available.nuggets,
        "history": available.turns,
    }
    for criterion in criteria:
        criterion.check_inputs(has)


def passage_texts(line: RunLine, gold: GoldenSet, depth: int) -> list[str]:
    """The texts of the line's top ``depth`` passages, in rank order (a golden chunk's text, else the run's own)."""
    return [text for unit in line.top(depth) if (text := line.text(unit, gold))]


def criterion_values(
    run: LoadedRun, gold: GoldenSet, criteria: Sequence[Criterion], depth: int,
    judged: Mapping[str, QueryValues] | None = None,
) -> Mapping[str, QueryValues]:  # fmt: skip
    """Each question's ``criterion:NAME`` values for ``run`` (module doc); ``judged``: per question what the judge
    found for the judged criteria (none: they need a model judge)."""
    judged = judged or {}
    out: dict[str, QueryValues] = {}
    for qid, line in run.lines.items():
        values = out[qid] = QueryValues({}, {})
        question = gold.question(qid).text
        passages = passage_texts(line, gold, depth)
        for criterion in criteria:
            if criterion.check is None:
                found = judged.get(qid)
                for metric in criterion.metrics:
                    if found is not None and metric in found.metrics:
                        values.metrics[metric] = found.metrics[metric]
                        if metric in found.unscored:
                            values.unscored[metric] = found.unscored[metric]
                    else:
                        values.metrics[metric] = None
                        values.unscored[metric] = NEEDS_MODEL_JUDGE
                continue
            try:
                values.metrics[criterion.metric] = criterion.check.score(question, line.answer, passages)
            except CannotRun as why:
                values.metrics[criterion.metric] = None
                values.unscored[criterion.metric] = str(why)
    return out
