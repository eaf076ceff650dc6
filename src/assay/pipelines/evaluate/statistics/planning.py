"""How many questions would settle it: ``EvalResult.planning``, and the size of a golden set before it is built.

The sample size is :func:`assay.metrics.power.questions_needed` (its docstring has the formula). For the primary
metric of an evaluation (:func:`power_plans`):

1. each compared pair (a, b) of the primary metric's family: ``sd`` = the standard deviation of the per-question
   differences b - a over the questions both runs scored; ``design_effect`` = the pair's (1 when None, and when
   below 1: a plan does not count on clusters that disagree more than chance); the level alpha / m for the family's
   m pairs (Holm tests its first pair at alpha / m; Tukey HSD's level is near it), alpha with ``--correction none``:
   conservative for every pair but the first;
2. the effects: each target of ``--detect`` (default 0.02 and 0.05), and the observed |delta| when the pair is not
   significant (how many questions would confirm a difference of that size, were it real);
3. with one run (no pair): ``sd`` and the design effect of the run's own scores. That plan sizes the test of its
   mean against a fixed value (a ``--fail-under`` threshold, a published score), not a comparison with another
   system on the same questions: the sd of such differences is sqrt(2 (1 - r)) times the scores' sd for their
   per-question correlation r, so a comparison needs fewer questions when the systems agree per question
   (r > 1/2), up to twice as many when they do not;
4. clusters: n / the clustering summary's mean size, when some cluster holds several questions (the design effect
   depends on that size, so the plan assumes new questions come as many per document as now).

Before a build (``assay build --dry-run --detect X``), :func:`pilot_basis` takes the figures from an earlier
evaluation's ``results.json`` (``--pilot``), else :func:`assumed_basis` states the assumption; :func:`build_plan`
turns them into the questions and documents to ask for at the build's questions per document.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from pydantic import ValidationError

from assay.errors import InputError
from assay.metrics import clusters, power
from assay.pipelines.evaluate.statistics.stats import StatSettings
from assay.results import Clustering, Comparison, EvalResult, PowerPlan, QueryResult, rounded

__all__ = [
    "ASSUMED_ICC",
    "ASSUMED_SD",
    "POWER",
    "Basis",
    "assumed_basis",
    "build_plan",
    "pilot_basis",
    "power_plans",
    "read_pilot",
]

POWER = 0.8
ASSUMED_SD = 0.25  # sd of per-question differences of nDCG-like scores between two systems, without a pilot
ASSUMED_ICC = 0.1  # intra-document correlation of those differences, without a pilot
Rows = Mapping[str, QueryResult]
_NO_SPREAD = 1e-9  # an sd at or below it is float noise on equal values: no basis for a plan


@dataclass(frozen=True)
class _Case:
    """What one plan is computed from: the pair (b None: one run), its figures now, and the sentence's opening."""

    a: str
    b: str | None
    sd: float
    deff: float
    now: int
    now_clusters: int | None


def power_plans(
    per_run: Mapping[str, Rows],
    comparisons: Sequence[Comparison],
    primary: str | None,
    clustering: Clustering | None,
    *,
    detect: Sequence[float],
    settings: StatSettings,
) -> list[PowerPlan]:
    """The plans of the module doc for ``primary``: per compared pair, else for the one run."""
    if primary is None:
        return []
    size = clustering.mean_size if clustering is not None and clustering.clusters < clustering.questions else None
    unit = _unit(clustering.by if clustering is not None else "none")
    family = [c for c in comparisons if c.metric == primary and c.primary]
    level_pairs = 1 if settings.correction == "none" else max(len(family), 1)
    plans: list[PowerPlan] = []
    for case, observed in _cases(per_run, family, primary, size):
        effects = [(e, False) for e in sorted(set(detect))]
        if observed is not None and observed not in {e for e, _ in effects}:
            effects.append((observed, True))
        for effect, seen in effects:
            plans.append(
                _plan(
                    case, primary, effect, observed=seen, alpha=settings.alpha, pairs=level_pairs, size=size, unit=unit
                )
            )
    return plans


def _cases(
    per_run: Mapping[str, Rows], family: Sequence[Comparison], primary: str, size: float | None
) -> list[tuple[_Case, float | None]]:
    """Each pair's figures with its observed |delta| when not significant; or the one run's."""
    out = []
    for c in family:
        diffs = _differences(per_run[c.a], per_run[c.b], primary)
        deff = max(c.design_effect or 1.0, 1.0)
        if diffs.size >= 2 and float(np.std(diffs, ddof=1)) > _NO_SPREAD:
            observed = round(abs(c.delta), 3) if not c.significant and round(abs(c.delta), 3) > 0 else None
            case = _Case(c.a, c.b, float(np.std(diffs, ddof=1)), deff, c.n, c.clusters or c.n)
            out.append((case, observed))
    if family or len(per_run) != 1:
        return out
    run, rows = next(iter(per_run.items()))
    scored = [(row.metrics[primary], row.unit) for qid, row in sorted(rows.items())
              if row.metrics.get(primary) is not None]  # fmt: skip
    values = np.array([v for v, _ in scored], dtype=np.float64)
    if values.size < 2 or float(np.std(values, ddof=1)) <= _NO_SPREAD:
        return out
    labels = [label for _, label in scored]
    deff = max(clusters.design_effect(values, labels) or 1.0, 1.0)
    return [(_Case(run, None, float(np.std(values, ddof=1)), deff, values.size, len(set(labels))), None)]


def _differences(a: Rows, b: Rows, metric: str) -> np.ndarray:
    pairs = [(a[q].metrics.get(metric), b[q].metrics.get(metric)) for q in sorted(set(a) & set(b))]
    return np.array([y - x for x, y in pairs if x is not None and y is not None], dtype=np.float64)


def _plan(
    case: _Case, metric: str, effect: float, *, observed: bool, alpha: float, pairs: int, size: float | None, unit: str
) -> PowerPlan:
    need = power.questions_needed(effect, case.sd, alpha=alpha, power=POWER, design_effect=case.deff, pairs=pairs,
                                  cluster_size=size)  # fmt: skip
    if case.b is None:
        opening = f"to tell {case.a}'s mean {metric} from a fixed value {_effect(effect)} away"
    elif observed:
        opening = (
            f"to confirm the observed {_effect(effect)} on {metric} between {case.a} and {case.b} (not significant)"
        )
    else:
        opening = f"to detect {_effect(effect)} on {metric} between {case.a} and {case.b}"
    sentence = f"{opening} you need about {_count(need.questions, need.clusters, unit)}"
    now = f"{case.now:,}" + (f" from {case.now_clusters:,}" if need.clusters is not None else "")
    sentence += f" (now {now})" + (", the fewest with which the test can reach its level" if need.floored else "")
    return PowerPlan(
        metric=metric, a=case.a, b=case.b, effect=effect, sd=rounded(case.sd) or 0.0,
        design_effect=rounded(case.deff) or 1.0, alpha=rounded(need.level) or alpha, power=POWER,
        questions=need.questions, clusters=need.clusters, sentence=sentence,
    )  # fmt: skip


def _effect(value: float) -> str:
    return f"{value:g}" if value >= 0.001 else f"{value:.1e}"


def _count(questions: int, clusters_: int | None, unit: str) -> str:
    text = f"{questions:,} question{'s' if questions != 1 else ''}"
    return text if clusters_ is None else f"{text} from {clusters_:,} {unit}"


def _unit(by: str) -> str:
    return "documents" if by == "doc" else "questions" if by == "none" else f"{by} values"


@dataclass(frozen=True)
class Basis:
    """The figures a golden set's size is planned from: ``sd`` of the per-question differences, ``icc`` (their
    correlation within a document, turned into a design effect at the build's questions per document), the per-test
    ``level``, and ``source``: where they come from, in one sentence."""

    sd: float
    icc: float
    level: float
    source: str


def assumed_basis(alpha: float = 0.05) -> Basis:
    """No pilot: sd 0.25 and correlation 0.1 within a document, stated as the assumptions they are."""
    return Basis(
        ASSUMED_SD, ASSUMED_ICC, alpha,
        f"assumed (no --pilot): sd of the per-question differences {ASSUMED_SD} and design effect 1 + (m - 1) x "
        f"{ASSUMED_ICC} for m questions per document; an earlier evaluation's results.json (--pilot) gives observed "
        "figures",
    )  # fmt: skip


def read_pilot(path: Path) -> EvalResult:
    """The results.json at ``path`` (or in the report folder ``path``); an :class:`InputError` naming the file when
    it is not one."""
    file = path / "results.json" if path.is_dir() else path
    try:
        return EvalResult.model_validate_json(file.read_bytes())
    except OSError as exc:
        reason = exc.strerror or type(exc).__name__
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(part) for part in first["loc"])
        reason = "not JSON" if first["type"] == "json_invalid" else f"{where}: {first['msg']}".strip(": ")
    raise InputError(
        f"--pilot {file}: not a results.json written by assay eval ({reason}); give REPORT_DIR/results.json of an "
        "earlier evaluation"
    )


def pilot_basis(result: EvalResult, where: Path) -> Basis:
    """The figures of one of the pilot's plans: of its closest compared pair (the smallest |delta| on the primary
    metric: plans are for telling similar systems apart, and a pair far apart varies more per question), else of its
    one run. Its sd, its level, and the correlation within a cluster its design effect implies at the pilot's mean
    cluster size (rho = (deff - 1) / (m - 1), kept in [0, 1]); with clusters of one question that correlation is
    unknown and assumed 0.1."""
    if not result.planning:
        raise InputError(
            f"--pilot {where}: this results.json has no planning figures (written before assay recorded them, or no "
            "per-question spread on its primary metric); evaluate again with this version, or leave out --pilot to "
            "plan from stated assumptions"
        )
    gaps = {(c.a, c.b): abs(c.delta) for c in result.comparisons if c.primary}
    plan = min(result.planning, key=lambda p: (gaps.get((p.a or "", p.b or ""), math.inf), p.a or "", p.b or ""))
    size = result.clustering.mean_size if result.clustering is not None else 1.0
    gap = gaps.get((plan.a or "", plan.b or ""))
    what = f"scores of {plan.a}" if plan.b is None else f"differences between {plan.a} and {plan.b}"
    what += f", its closest pair (|delta| {gap:.3f})" if gap is not None else ""
    source = f"from the pilot {where}: sd {plan.sd:.3f} of the per-question {plan.metric} {what}"
    if size > 1:
        icc = min(max((plan.design_effect - 1.0) / (size - 1.0), 0.0), 1.0)
        source += f", design effect {plan.design_effect:.2f} at {size:g} questions per cluster (rho {icc:.3f})"
    else:
        icc = ASSUMED_ICC
        source += f"; its questions were one per cluster, so the correlation within a document is assumed {icc}"
    return Basis(plan.sd, icc, plan.alpha, source + f"; level {plan.alpha:.3g} as the pilot's")


def build_plan(basis: Basis, effects: Sequence[float], *, per_doc: float, documents: int) -> list[str]:
    """The lines of a build's plan: the basis, then per effect the accepted questions and documents needed at
    ``per_doc`` questions per document, and what the corpus's ``documents`` allow."""
    deff = power.design_effect_of(per_doc, basis.icc)
    lines = [
        f"planning: questions to detect a difference at {POWER:.0%} power, two-sided test at level {basis.level:.3g}",
        f"  {basis.source}",
        f"  design effect 1 + ({per_doc:g} - 1) x {basis.icc:.3g} = {deff:.3f} at {per_doc:g} questions per document",
    ]
    most = 0
    for effect in sorted(set(effects)):
        need = power.questions_needed(effect, basis.sd, alpha=basis.level, power=POWER, design_effect=deff,
                                      cluster_size=per_doc)  # fmt: skip
        most = max(most, need.clusters or 0)
        lines.append(f"  to detect {_effect(effect)}: about {need.questions:,} accepted questions from "
                     f"{need.clusters:,} documents")  # fmt: skip
    if most > documents:
        lines.append(
            f"  the corpus has {documents:,} documents: at {per_doc:g} per document that is at most "
            f"{math.floor(documents * per_doc):,} questions; add documents, or raise --per-doc (the design effect "
            "grows with it)"
        )
    lines.append("  these count accepted questions: the filters and the critic drop some, so ask for more")
    return lines
