"""Step 1 of an evaluation, shared by evaluating and estimating (``--dry-run``): the settings checked, the golden set
loaded, the runs read and checked (:mod:`~.runs.read`) and each projected onto the golden chunks
(:mod:`~.runs.units`), and the metrics the settings select for them (:func:`~.settings.split_metrics`)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from assay.errors import ConfigError
from assay.formats.golden import GoldenSet
from assay.judge.panel import Grader, judges_of
from assay.pipelines.evaluate.judging.noise import check_repeatable
from assay.pipelines.evaluate.judging.pairwise import run_pairs
from assay.pipelines.evaluate.runs.carry import SpanIndex
from assay.pipelines.evaluate.runs.loaded import LoadedRun
from assay.pipelines.evaluate.runs.locate import Resolver
from assay.pipelines.evaluate.runs.read import Runs, load_runs, specs_of
from assay.pipelines.evaluate.runs.units import ReadRun, Units, read_runs
from assay.pipelines.evaluate.scoring.available import Available
from assay.pipelines.evaluate.scoring.criteria import check_criteria
from assay.pipelines.evaluate.scoring.names import NEEDS_JUDGE, family
from assay.pipelines.evaluate.settings import EvalSettings, Selected, split_metrics
from assay.pipelines.evaluate.statistics.clustering import question_clusters

__all__ = ["Prepared", "prepare"]


@dataclass(frozen=True)
class Prepared:
    """What every later step reads: the checked settings, the golden set (and its folder, None in memory), the
    questions' clusters, the resolver that locates passages in the documents, the runs (each as read and projected,
    one :class:`~.runs.units.ReadRun`), the index of labelled spans and the metrics selected."""

    config: EvalSettings
    gold: GoldenSet
    folder: Path | None
    clusters: Mapping[str, str | None]
    resolver: Resolver
    runs: list[ReadRun]
    index: SpanIndex
    chosen: Selected

    @property
    def loaded(self) -> list[LoadedRun]:
        """The runs as read, in order."""
        return [one.run for one in self.runs]

    @property
    def projected(self) -> list[LoadedRun]:
        """The runs projected onto the golden chunks, in order."""
        return [one.projected for one in self.runs]


def prepare(
    golden: GoldenSet | Path | str,
    runs: Runs,
    settings: EvalSettings | None,
    *,
    judge: Grader | None,
    dry_run: bool = False,
) -> Prepared:
    """Check the settings (with ``judge``: a judged metric named without one, ``--judge-repeats`` with a panel; a dry
    run skips these, it calls no judge), then read what the evaluation reads, in an order that fails before any
    work: a ``--cluster-by`` field that questions lack fails before the runs are read."""
    config = (settings or EvalSettings()).checked()
    if not dry_run:
        _needs_judge(config, judge)
        check_repeatable(judge, config.judge_repeats)
    gold, folder = _load(golden)
    clusters = question_clusters(gold, config.cluster_by, folder)
    resolver = Resolver(gold, folder)
    loaded = load_runs(specs_of(runs), gold, resolver)
    available = Available.of(gold, loaded, judged=judge is not None)
    config.check_available(available)
    check_criteria(config.loaded_criteria, available, gold)
    if config.pairwise is not None:
        _can_compare(config, judge, [run.name for run in loaded])
    index = SpanIndex(gold, resolver)
    read = read_runs(loaded, Units(gold, resolver))
    chosen = split_metrics(config, gold, loaded, index)
    return Prepared(config, gold, folder, clusters, resolver, read, index, chosen)


def _needs_judge(settings: EvalSettings, judge: Grader | None) -> None:
    """An LLM-judged metric named without a judge cannot be computed: say so rather than leave it out."""
    named = [m for m in (*settings.metrics, *settings.also) if family(m) in NEEDS_JUDGE]
    if judge is None and named:
        raise ConfigError(f"{', '.join(named)}: LLM-judged, needs a judge (--judge MODEL, or judge= in the API)")


def _can_compare(config: EvalSettings, judge: Grader | None, names: list[str]) -> None:
    """``--pairwise`` needs a model judge (the offline judge has no reading of a preference) and pairs to compare."""
    if not any(one.model != "offline" for one in judges_of(judge)):
        raise ConfigError("--pairwise needs a model judge (--judge MODEL): the offline judge and --no-judge have no "
                          "reading of which answer is better")  # fmt: skip
    run_pairs(names, config.pairs, config.baseline)


def _load(golden: GoldenSet | Path | str) -> tuple[GoldenSet, Path | None]:
    if isinstance(golden, GoldenSet):
        return golden, None
    return GoldenSet.load(golden), Path(golden)
