"""How full each context budget is, and how much of its text is judged: per run and question, for the verdict's
caveats and for the rule that withholds a verdict without a judge (:mod:`assay.report.verdict`).

A budget measure reads a run's first B characters of text (:mod:`~.budget`); a run whose passages hold less is
scored on what it retrieved, and a run whose text the pool of labelled spans barely grades is scored mostly on
unjudged text (counted not relevant). Both are said, never hidden. The rule, per run, question and budget B (each
budget of the evaluation's budget measures):

1. the run's passages in rank order make the text stream (:func:`assay.metrics.budget.fill`): ``shown`` = its
   characters within B, ``filled`` = shown / B (a B above the corpus's characters is the corpus's count:
   :meth:`~.budget.SpanPool.cap`);
2. ``judged`` = the characters of ``shown`` that have a grade in the pool (:meth:`~.budget.SpanPool.grades`: any
   grade, 0 included) / shown; a passage found in no document is unjudged text; None when nothing was shown;
3. ``k`` = the rank of the passage whose text reached B; when the stream never reaches it, the passages retrieved
   scaled to the budget, ceil(n B / shown) (the new text per passage this run gave, overlaps counted once); None
   when nothing was shown;
4. a question the system failed on (an ``error`` line) is left out: its metrics are unscored, not empty;
5. per run (:func:`fill_summary`): the medians of ``filled`` and ``judged`` over its questions, the median ``k``
   rounded up, and ``under`` = the share of its questions filled below :data:`~assay.results.FILLED_SHARE`.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Mapping, Sequence

from assay.metrics.budget import fill
from assay.pipelines.evaluate.runs.loaded import LoadedRun
from assay.pipelines.evaluate.scoring.budget import SpanPool, passage_chars
from assay.pipelines.evaluate.scoring.names import parse_budget_name
from assay.results import FILLED_SHARE, BudgetFill

__all__ = ["budget_cuts", "budget_fill", "fill_summary"]


def budget_cuts(names: Sequence[str]) -> dict[str, int]:
    """The budgets of the budget measures ``names``, in order: ``{"1000t": 4000}`` for ``ndcg@1000t``."""
    parsed = [parse_budget_name(name) for name in names]
    return {spec.budget: spec.chars for spec in parsed}


def budget_fill(run: LoadedRun, pool: SpanPool, names: Sequence[str]) -> dict[str, dict[str, BudgetFill]]:
    """Per question of ``run`` (failed ones left out), each budget of the measures ``names`` (steps 1-4)."""
    cuts = {budget: pool.cap(chars) for budget, chars in budget_cuts(names).items()}  # none above the corpus
    out: dict[str, dict[str, BudgetFill]] = {}
    for qid, line in run.lines.items():
        if line.error is not None:
            continue
        passages, grades = passage_chars(line, pool.chars), pool.grades(qid)
        out[qid] = {}
        for budget, chars in cuts.items():
            got = fill(passages, grades, chars)
            k = got.used or (math.ceil(len(passages) * chars / got.shown) if got.shown else None)
            judged = got.judged / got.shown if got.shown else None
            out[qid][budget] = BudgetFill(chars=chars, filled=got.shown / chars, judged=judged, k=k)
    return out


def fill_summary(rows: Sequence[Mapping[str, BudgetFill]]) -> dict[str, BudgetFill]:
    """Per budget, the run's medians over its questions' rows (step 5)."""
    out: dict[str, BudgetFill] = {}
    for budget in dict.fromkeys(name for row in rows for name in row):
        ones = [row[budget] for row in rows if budget in row]
        judged = [one.judged for one in ones if one.judged is not None]
        ks = [one.k for one in ones if one.k is not None]
        out[budget] = BudgetFill(
            chars=ones[0].chars, filled=statistics.median(one.filled for one in ones),
            judged=statistics.median(judged) if judged else None, k=math.ceil(statistics.median(ks)) if ks else None,
            under=sum(one.filled < FILLED_SHARE for one in ones) / len(ones), questions=len(ones),
        )  # fmt: skip
    return out
