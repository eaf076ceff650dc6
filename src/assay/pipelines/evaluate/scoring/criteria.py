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
from assay.pipelines.evaluate.scoring.available import Available
from assay.pipelines.evaluate.scoring.ranking import QueryValues

__all__ = ["NEEDS_MODEL_JUDGE", "check_criteria", "criterion_values"]

NEEDS_MODEL_JUDGE = "needs a model judge"


def check_criteria(criteria: Sequence[Criterion], available: Available, gold: GoldenSet,
                   judge: Grader | None) -> None:  # fmt: skip
    """Refuse, before any call, an input the data lacks (``available``: what the golden set and the runs hold) and a
    judged criterion under a model judge (module doc)."""
    has = {
        "answer": bool(available.answers),
        "passages": bool(available.passages),
        "reference_answer": any(q.reference_answer for q in gold.questions),  # claims alone are not one
        "nuggets": available.nuggets,
        "history": available.turns,
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
    return [text for unit in line.top(depth) if (text := line.text(unit, gold))]


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
