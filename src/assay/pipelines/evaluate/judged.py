"""Step 2 of an evaluation: the judge's part. The runs' own passages are labelled first (carried over by span, the
golden chunks undecided passages reach graded, then the passages still undecided; :mod:`~.judging.passages`), then
the unlabelled golden chunks of each projection's top k_max are graded while the LLM-metric calls run
(:func:`~.judging.drive.judge_runs`). Without a judge only the rule carries labels over. :func:`estimate` counts the
same calls for a dry run, making none."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from assay.aio import run_sync
from assay.judge import Estimate
from assay.judge.panel import Grader, primary_of, usage_now
from assay.pipelines.evaluate.evaluated import SupportRow
from assay.pipelines.evaluate.judging.calls import Assessed
from assay.pipelines.evaluate.judging.criteria import CriteriaJudged
from assay.pipelines.evaluate.judging.drive import Progress, estimate_judging, judge_runs
from assay.pipelines.evaluate.judging.pairwise import estimate_pairwise, judge_pairwise, plan_pairwise, run_pairs
from assay.pipelines.evaluate.judging.passages import label_passages
from assay.pipelines.evaluate.judging.pool_growth import Before
from assay.pipelines.evaluate.prepared import Prepared
from assay.pipelines.evaluate.runs.carry import Carried, carry_labels
from assay.results import DiagnosisExample, PairJudgement
from assay.types import StageUsage

__all__ = ["Judged", "estimate", "judge_all"]


@dataclass(frozen=True)
class Judged:
    """What judging found: the labels of the runs' own passages (``carried``), per run and question what the LLM
    metrics found (``assessed``, with the support-matrix rows), the diagnosis examples, the judged criteria's
    verdicts (``criteria``), the pairs of answers judged in both orders (``pairwise``, with ``--pairwise``); and how
    things stood before
    it: the golden set's labels (``before``, for the pool's growth and shifts) and each judge's usage
    (``usage_before``, so that a reused judge is charged only for this evaluation)."""

    carried: Carried
    assessed: Mapping[str, Mapping[str, Assessed]]
    diagnosed: list[DiagnosisExample]
    before: Before
    usage_before: tuple[dict[str, StageUsage], ...]
    criteria: CriteriaJudged
    pairwise: list[PairJudgement] = field(default_factory=list)

    @property
    def support_rows(self) -> list[SupportRow]:
        """Every claim the judge checked, run by run and question by question."""
        return [row for per in self.assessed.values() for one in per.values() for row in one.rows]


def judge_all(setup: Prepared, judge: Grader | None, progress: Progress | None) -> Judged:
    """Label the runs' passages and judge what the runs need (module doc); the span index then reads the new
    labels."""
    usage_before, before = usage_now(judge), Before(setup.gold)
    asking = setup.config.judging()
    carried = label_passages(setup.gold, setup.index, folder=setup.folder, loaded=setup.loaded, judge=judge,
                             asking=asking, progress=progress)  # fmt: skip
    assessed: dict[str, dict[str, Assessed]] = {}
    diagnosed: list[DiagnosisExample] = []
    criteria = CriteriaJudged()
    if judge is not None:
        assessed, diagnosed, criteria = judge_runs(
            setup.gold, setup.folder, setup.runs, judge, asking=asking, families=setup.chosen.families,
            carried=carried, criteria=setup.config.loaded_criteria, progress=progress,
        )  # fmt: skip
    pairwise = _pairwise(setup, judge, progress) if judge is not None and setup.config.pairwise is not None else []
    setup.index.relabelled()
    return Judged(carried, assessed, diagnosed, before, usage_before, criteria, pairwise)


def _pairwise(setup: Prepared, judge: Grader, progress: Progress | None) -> list[PairJudgement]:
    """Each pair of runs' answers judged in both orders by the judge (a panel's first), and the pairs decided
    without a call."""
    config, runs = setup.config, [one.run for one in setup.runs]
    pairs = run_pairs([run.name for run in runs], config.pairs, config.baseline)
    calls, decided = plan_pairwise(setup.gold, runs, pairs, config.pairwise_criterion)
    done = [0]

    def tick() -> None:
        done[0] += 1
        if progress is not None:
            progress("pairwise", done[0], len(calls))

    async def work() -> list[PairJudgement]:
        one = primary_of(judge)
        try:
            return await judge_pairwise(one, calls, on_result=tick)
        finally:
            await one.aclose()

    return [*run_sync(work), *decided]


def estimate(setup: Prepared, judge: Grader) -> dict[str, Estimate]:
    """Calls, cached items, prompt tokens and a cost bound per stage of :func:`judge_all`; no model is called."""
    carried = carry_labels(setup.gold, setup.loaded, setup.index, setup.config.depth)
    out = estimate_judging(setup.gold, setup.runs, judge, asking=setup.config.judging(),
                           families=setup.chosen.families, carried=carried,
                           criteria=setup.config.loaded_criteria)  # fmt: skip
    if setup.config.pairwise is not None:
        runs = [one.run for one in setup.runs]
        pairs = run_pairs([run.name for run in runs], setup.config.pairs, setup.config.baseline)
        calls, _ = plan_pairwise(setup.gold, runs, pairs, setup.config.pairwise_criterion)
        out.update(estimate_pairwise(primary_of(judge), calls))
    return out
