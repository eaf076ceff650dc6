"""What ``assay eval`` is asked to do: :class:`EvalSettings` (frozen, checked once with :meth:`EvalSettings.checked`)
and the metrics they select for a golden set and its runs (:func:`split_metrics`, :func:`applicable`).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path

from assay.errors import ConfigError
from assay.formats.golden import GoldenSet
from assay.judge.criteria import Criterion, load_criteria
from assay.metric_names import is_criterion
from assay.metrics.close import close_names
from assay.pipelines.evaluate.judging.asking import JudgingSettings
from assay.pipelines.evaluate.judging.pair_checks import DEFAULT_MODE, DIAGNOSIS_MODES
from assay.pipelines.evaluate.runs.carry import SpanIndex
from assay.pipelines.evaluate.runs.loaded import LoadedRun
from assay.pipelines.evaluate.scoring.available import Available
from assay.pipelines.evaluate.scoring.names import (
    ANSWER_METRICS,
    CONTRADICTION,
    DIAGNOSIS_NAMES,
    LLM_FAMILIES,
    NUGGET_METRICS,
    TOOL_ARGS_JUDGED,
    budget_measures,
    catalogue,
    check_names,
    default_measures,
    family,
    joined_k,
    kind_of,
    parse_budget,
)
from assay.pipelines.evaluate.scoring.spans import default_span_names
from assay.pipelines.evaluate.statistics.compare import CORRECTIONS
from assay.pipelines.evaluate.statistics.stats import StatSettings
from assay.results import QueryResult, headline_k

__all__ = ["ANSWER_LEADS", "EvalSettings", "Selected", "answer_notes", "answer_primary", "applicable", "split_metrics"]

# the primary of an evaluation with a run that has no passages, first that is scored: nugget recall when the questions
# have nuggets, else claim recall (reference claims, or the reference answer's sentences), else answer relevance
ANSWER_LEADS = ("nugget_recall_all_strict", "claim_recall", "answer_relevance")


@dataclass(frozen=True)
class EvalSettings:
    """What to evaluate and how.

    ``threshold``: relevant = grade >= it for ranking measures (trec_eval: 1). ``cp_threshold``: relevant for
    ``ragas_context_precision@k`` (2: the chunk at least partly answers). ``context_k``: the chunks treated as the
    answer's context for context recall, faithfulness and attribution (None: 5 when 5 is a k value, else the largest).
    ``listwise``: chunks per relevance call (None: one call per chunk). ``add_labels``: write labels judged now back
    into the golden folder. ``strata``: question fields to stratify by, besides type and difficulty. ``metrics``:
    only these (ranking names, or LLM metric families such as ``faithfulness``); empty = all. A named metric is
    computed whatever ``k_values`` say: :meth:`checked` joins its cut-off to them (``k_values=(10,)``,
    ``metrics=("P@5",)`` evaluates at k = 5 and 10), see :mod:`~assay.pipelines.evaluate.scoring.names`. ``also``:
    metrics computed besides ``metrics`` (besides the defaults when it is empty), such as the ``--fail-under`` ones;
    ``primary`` is computed so too, and checked with the other names.
    Comparisons (:mod:`~assay.pipelines.evaluate.statistics.compare`): ``correction`` ``holm`` | ``tukey`` | ``none``
    within each metric's family of run pairs, ``baseline`` (each run against it; None: all pairs), ``primary`` (the
    metric leading the verdict; None: ndcg@10, or nDCG at the first budget when the runs cut their text differently,
    or an answer measure when a run has no passages (:func:`answer_primary`), else the first compared), ``alpha``
    the family-wise significance level. ``budgets``: the context budgets of the budget measures (``1000t`` tokens
    of 4 characters, ``4000c`` characters; :mod:`~.scoring.budget`).
    ``cluster_by``: how questions are grouped for intervals and tests (``doc``, ``none`` or a question field;
    :mod:`~assay.pipelines.evaluate.statistics.clustering`). ``judge_repeats``: re-ask the judge this many times
    on at most ``judge_repeats_max`` labels of the runs' top k to measure its noise
    (:mod:`~assay.pipelines.evaluate.judging.noise`; 0: not measured).
    ``detect``: the differences on the primary metric that
    ``planning`` sizes the evaluation for (:mod:`~assay.pipelines.evaluate.statistics.planning`).
    ``criteria``: the team's own criteria, each a :class:`~assay.judge.criteria.Criterion`, a criterion file or a
    folder of them (:meth:`checked` loads them); each adds ``criterion:NAME`` per question
    (:mod:`~assay.pipelines.evaluate.scoring.criteria`), a name ``primary``, ``metrics`` and ``also`` may give.
    ``pairwise``: compare the runs' answers in pairs, each pair judged in both orders
    (:mod:`~assay.pipelines.evaluate.judging.pairwise`): a criterion file, a loaded criterion, or ``"builtin"``
    (which answer better answers the question, given the reference); None: not asked. ``pairs``: ``all`` pairs of
    runs, or ``baseline`` (each run with ``baseline``, else the first run).
    ``diagnosis``: how the diagnosis gets its claim x chunk entailment
    (:mod:`~assay.pipelines.evaluate.judging.pair_checks`): ``answers`` (default: each answer claim checked against each
    chunk, the reference claims read off the context call), ``exact`` (both sides checked per pair, as RAGChecker does)
    or ``approx`` (both read off the calls).
    """

    k_values: tuple[int, ...] = (1, 3, 5, 10)
    metrics: tuple[str, ...] = ()
    also: tuple[str, ...] = ()
    seed: int = 0
    n_boot: int = 2000
    confidence: float = 0.95
    threshold: int = 1
    cp_threshold: int = 2
    context_k: int | None = None
    listwise: int | None = 10
    add_labels: bool = True
    strata: tuple[str, ...] = ()
    min_audited: int = 10
    correction: str = "holm"
    baseline: str | None = None
    primary: str | None = None
    budgets: tuple[str, ...] = ("1000t",)
    alpha: float = 0.05
    diagnosis: str = DEFAULT_MODE
    cluster_by: str = "doc"
    judge_repeats: int = 0
    judge_repeats_max: int = 300
    detect: tuple[float, ...] = (0.02, 0.05)
    criteria: tuple[Criterion | str | Path, ...] = ()
    pairwise: Criterion | str | Path | None = None
    pairs: str = "all"

    def checked(self) -> EvalSettings:
        """Raise :class:`ConfigError` for values that cannot work (an unknown metric name among them, with the
        close names); return the settings with the cut-offs of the named metrics joined to ``k_values``."""
        if not self.k_values or min(self.k_values) < 1:
            raise ConfigError(f"k values must be whole numbers >= 1, e.g. -k 1,3,5,10; got {list(self.k_values)}")
        if self.listwise is not None and self.listwise < 1:
            raise ConfigError(f"--listwise must be >= 1 (chunks per call), got {self.listwise}")
        if self.n_boot < 100:
            raise ConfigError(f"n_boot must be at least 100 resamples, got {self.n_boot}")
        if self.correction not in CORRECTIONS:
            raise ConfigError(f"--correction {self.correction}: use one of {', '.join(CORRECTIONS)}")
        if not 0.0 < self.alpha < 1.0:
            raise ConfigError(f"alpha must be between 0 and 1 (e.g. 0.05), got {self.alpha}")
        if self.judge_repeats < 0 or self.judge_repeats_max < 1:
            raise ConfigError(
                f"--judge-repeats must be >= 0 and --judge-repeats-max >= 1, got {self.judge_repeats} and "
                f"{self.judge_repeats_max}"
            )
        if not self.cluster_by.strip():
            raise ConfigError("--cluster-by needs doc, none or a question field name, e.g. --cluster-by product")
        if not all(0 < effect < math.inf for effect in self.detect):
            raise ConfigError(
                f"--detect takes differences on the metric's scale above 0, e.g. 0.02; got {list(self.detect)}"
            )
        if self.diagnosis not in DIAGNOSIS_MODES:
            raise ConfigError(f"--diagnosis {self.diagnosis}: use one of {', '.join(DIAGNOSIS_MODES)}")
        for budget in self.budgets:
            parse_budget(budget)
        criteria = load_criteria(self.criteria)
        _check_criterion_names(self.named, criteria)
        if self.pairs not in ("all", "baseline"):
            raise ConfigError(f"--pairs {self.pairs}: use all or baseline")
        pairwise = self.pairwise
        if pairwise is not None and not isinstance(pairwise, Criterion) and str(pairwise) != "builtin":
            (pairwise,) = load_criteria([pairwise])
        k_values = joined_k(self.k_values, check_names(self.named, self.k_values, self.budgets))
        if k_values == tuple(self.k_values) and criteria == tuple(self.criteria) and pairwise == self.pairwise:
            return self
        return replace(self, k_values=k_values, criteria=criteria, pairwise=pairwise)

    @property
    def pairwise_criterion(self) -> Criterion | None:
        """The loaded ``pairwise`` criterion (None for the built-in one, or before :meth:`checked`)."""
        return self.pairwise if isinstance(self.pairwise, Criterion) else None

    @property
    def loaded_criteria(self) -> tuple[Criterion, ...]:
        """The criteria as loaded by :meth:`checked` (files and folders read); empty before it."""
        return tuple(c for c in self.criteria if isinstance(c, Criterion))

    @property
    def named(self) -> tuple[str, ...]:
        """Every metric named: ``metrics``, ``also`` and ``primary``."""
        return (*self.metrics, *self.also, *([self.primary] if self.primary else []))

    def check_available(self, available: Available) -> None:
        """Check the names against what the golden set and runs hold (:class:`~.scoring.available.Available`), before
        any judge is called: a misspelt name is offered only the close names that exist here, and the ``primary``,
        which must lead the verdict, is refused with the reason when it cannot be computed here. (A ``metrics`` or
        ``also`` name that cannot is reported unscored with the reason, or not at all; a ``--fail-under`` gate on it
        fails and says so.)"""
        check_names(self.named, self.k_values, self.budgets, keep=available.keep)
        gated = self.primary in self.also  # the first --fail-under metric stands in for --primary: a gate's rule
        why = None if self.primary is None or gated else available.why_not(self.primary)
        if self.primary is not None and why is not None:
            near = close_names(self.primary, catalogue(self.k_values, self.budgets, keep=available.keep))
            offer = f"close names that exist here: {', '.join(near)}" if near else "no close name exists here"
            raise ConfigError(f"{self.primary} cannot be computed for this golden set and these runs: {why}; {offer}")

    @property
    def depth(self) -> int:
        return max(self.k_values)

    @property
    def k_head(self) -> int:
        """The headline cut-off (:func:`~assay.results.headline_k`: 10 when evaluated, else the largest k)."""
        return headline_k(self.k_values) or self.depth

    @property
    def ctx_k(self) -> int:
        if self.context_k is not None:
            return self.context_k
        return 5 if 5 in self.k_values else max(self.k_values)

    def stat(self) -> StatSettings:
        return StatSettings(n_boot=self.n_boot, seed=self.seed, confidence=self.confidence, alpha=self.alpha,
                            correction=self.correction, baseline=self.baseline, primary=self.primary)  # fmt: skip

    def judging(self) -> JudgingSettings:
        """How the judge is asked: the settings every step that calls it reads."""
        return JudgingSettings(depth=self.depth, context_k=self.ctx_k, listwise=self.listwise, seed=self.seed,
                               add_labels=self.add_labels, diagnosis=self.diagnosis)  # fmt: skip


def _check_criterion_names(named: Sequence[str], criteria: Sequence[Criterion]) -> None:
    """A ``criterion:NAME`` named (``--primary``, ``--fail-under``, ``-m``) needs its criterion given."""
    known = {metric for c in criteria for metric in c.metrics}
    for name in named:
        if is_criterion(name) and name not in known:
            given = ", ".join(sorted(known)) or "none"
            raise ConfigError(f"{name}: no criterion of that name was given (given: {given}); add its file with "
                              "-c FILE (criteria=[...] in the API)")  # fmt: skip


@dataclass(frozen=True)
class Selected:
    """The metrics an evaluation computes, by the part that computes them: ranking measure names, LLM families,
    span metric names, budget measure names."""

    ranking: list[str]
    families: set[str]
    spans: list[str]
    budgets: list[str]


def _named(names: Sequence[str], kind: str) -> list[str]:
    return list(dict.fromkeys(m for m in names if kind_of(m) == kind))


def split_metrics(settings: EvalSettings, gold: GoldenSet, runs: Sequence[LoadedRun], index: SpanIndex) -> Selected:
    """Those of ``metrics``, else the defaults (budget measures when the documents have text to measure) and every
    family that ``gold`` and ``runs`` can give (:func:`applicable`); then those of ``also``. The names were checked
    by :meth:`EvalSettings.checked`."""
    if settings.metrics:
        ranking, spans = _named(settings.metrics, "ranking"), _named(settings.metrics, "span")
        families = {family(m) for m in settings.metrics if kind_of(m) == "llm"}
        budgets = _named(settings.metrics, "budget")
    else:
        ranking, families = default_measures(settings.k_values), applicable(set(LLM_FAMILIES), gold, runs)
        spans = default_span_names(settings.k_values, gold, index)
        has_text = any(doc.text.strip() for doc in gold.documents)
        budgets = budget_measures(settings.budgets) if has_text else []
    also = (*settings.also, *([settings.primary] if settings.primary else []))
    ranking += [m for m in _named(also, "ranking") if m not in ranking]
    spans += [m for m in _named(also, "span") if m not in spans]
    budgets += [m for m in _named(also, "budget") if m not in budgets]
    families |= {family(m) for m in also if kind_of(m) == "llm"}
    return Selected(ranking, families, spans, budgets)


def applicable(families: set[str], gold: GoldenSet, runs: Sequence[LoadedRun]) -> set[str]:
    """The judged ``families`` something in ``gold`` and ``runs`` can be computed from. Without named metrics, those
    left out are shown nowhere rather than unscored for every query: answer metrics when no run has an answer,
    ``context_recall`` without reference answers or claims, ``nugget_recall`` without nuggets or answers,
    ``coverage_recall`` without nugget support (a golden set imported from BEIR or TREC has none of these),
    ``contradiction`` without a conversation of two turns or more, ``tool_args_judged`` without reference tool calls
    or a run line with steps."""
    answers = any(run.counts.with_answer for run in runs)
    has = {
        "coverage_recall": bool(gold.nuggets),
        "context_recall": any(q.claims or q.reference_answer for q in gold.questions),
        "nugget_recall": answers and any(q.nuggets for q in gold.questions),
        **dict.fromkeys(ANSWER_METRICS, answers),
        CONTRADICTION: answers and any(len(c.turns) > 1 for c in gold.conversations),
        TOOL_ARGS_JUDGED: any(q.tool_calls for q in gold.questions)
        and any(line.steps for run in runs for line in run.lines.values()),
    }
    return {f for f in families if has.get(f, True)}


def answer_primary(runs: Sequence[LoadedRun], rows: Mapping[str, Mapping[str, QueryResult]]) -> str | None:
    """The metric the verdict leads with, unless one is named, when some run has no passage at all (its ranking
    measures unscored): the first of :data:`ANSWER_LEADS` that some run scored (``rows``: each run's per-query
    values); None when every run has passages."""
    if not any(run.passage_free for run in runs):
        return None
    scored = {name for per in rows.values() for row in per.values() for name, v in row.metrics.items() if v is not None}
    return next((name for name in ANSWER_LEADS if name in scored), None)


def answer_notes(
    runs: Sequence[LoadedRun], rows: Mapping[str, Mapping[str, QueryResult]], lead: str | None
) -> list[str]:
    """One sentence per run with no passage, one per retrieval-only run whose rows carry answer measures (``rows``:
    each run's per-query values), and the primary an answer-only evaluation leads with (``lead``, from
    :func:`answer_primary`)."""
    notes = [
        f"{run.name}: no passages in this run (every line's retrieved is empty): its ranking, budget and passage "
        'measures are unscored ("no passages in this run"), never 0; it is scored on its answers.'
        for run in runs
        if run.passage_free
    ]
    answer_measures = {*ANSWER_METRICS, *NUGGET_METRICS, CONTRADICTION, *DIAGNOSIS_NAMES}
    for run in runs:
        measured = any(answer_measures & row.metrics.keys() for row in rows.get(run.name, {}).values())
        if measured and not run.answers_given:
            notes.append(f"{run.name}: no line has an answer: a retrieval-only run, its answer measures are unscored "
                         "(\"no answers in this run\").")  # fmt: skip
    if lead is not None:
        notes.append(f"The primary metric is {lead}: with a run that has no passages the verdict leads on an answer "
                     "measure (nugget recall when the questions have nuggets, else claim recall, else answer "
                     "relevance).")  # fmt: skip
    return notes
