"""The judge card record (``card.json``, format version 1) and the figures it holds, computed from grades.

Every figure carries the number of items behind it (``n``, pairs both graded; ``unscored``, pairs left out because
a grade is missing) and, where it is a mean over items, a 95% bootstrap interval over items. Grades are 0-3 or
``NaN`` for unscored; an unscored grade is never counted as 0.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime

import numpy as np
import numpy.typing as npt
from pydantic import BaseModel, ConfigDict, Field

from assay.metrics.agreement import cohen_kappa_ci, confusion_matrix, weighted_kappa_ci
from assay.metrics.leniency import leniency_ci
from assay.metrics.stats import Interval, bootstrap_ci
from assay.types import utc_now

__all__ = [
    "CARD_FORMAT_VERSION",
    "Agreement",
    "Figure",
    "JudgeCard",
    "KindCost",
    "Section",
    "agreement",
    "change_figures",
    "consistency_figure",
    "figure",
    "position_figures",
    "rise_figure",
    "share_figure",
]

CARD_FORMAT_VERSION = 1
Grades = npt.NDArray[np.float64]


class _Record(BaseModel):
    model_config = ConfigDict(extra="forbid")


class Figure(_Record):
    """One measured figure: its key, what it says, the value with its interval, and the items behind it."""

    key: str
    label: str
    value: float | None
    low: float | None = None
    high: float | None = None
    n: int
    unscored: int = 0


class Section(_Record):
    """A probe's figures and a note on how to read them."""

    name: str
    note: str
    figures: list[Figure]


class Agreement(_Record):
    """Agreement with people: kappas, leniency, the confusion matrix (rows judge 0-3, columns people), the cut."""

    figures: list[Figure]
    confusion: list[list[int]]
    best_cut: int | None
    human_graded: bool


class KindCost(_Record):
    """Calls, cache hits, unscored answers, tokens and money of one kind of probe call."""

    kind: str
    items: int
    calls: int
    cached: int
    unscored: int
    rejected: int = 0  # answers parsed but not taken as grades: an echo of the passage, a listwise id missing
    prompt_tokens: int
    completion_tokens: int
    cost_usd: float | None


class JudgeCard(_Record):
    """What ``assay judge-check`` writes to ``card.json``."""

    format_version: int = CARD_FORMAT_VERSION
    assay_version: str
    created: datetime = Field(default_factory=utc_now)
    model: str
    prompts: dict[str, str]
    source: dict[str, str | int]
    settings: dict[str, int]
    agreement: Agreement | None
    agreement_note: str | None = None
    sections: list[Section]
    missing: list[str] = Field(default_factory=list)  # probes not measured, and why
    costs: list[KindCost]

    def figure(self, key: str) -> Figure | None:
        """The figure ``key`` from any section (agreement included), or None."""
        found = [f for s in self.sections for f in s.figures] + (self.agreement.figures if self.agreement else [])
        return next((f for f in found if f.key == key), None)


def _number(value: float) -> float | None:
    return None if np.isnan(value) else float(value)


def figure(key: str, label: str, interval: Interval) -> Figure:
    """A figure from an :class:`Interval` (NaN becomes None)."""
    return Figure(
        key=key,
        label=label,
        value=_number(interval.mean),
        low=_number(interval.low),
        high=_number(interval.high),
        n=interval.n,
        unscored=interval.n_unscored,
    )


def _joint(before: Sequence[float], after: Sequence[float]) -> tuple[Grades, Grades, int]:
    a, b = np.asarray(before, dtype=np.float64), np.asarray(after, dtype=np.float64)
    keep = ~(np.isnan(a) | np.isnan(b))
    return a[keep], b[keep], int(a.size - keep.sum())


def _ci(values: npt.ArrayLike, dropped: int, seed: int) -> Interval:
    interval = bootstrap_ci(np.asarray(values, dtype=np.float64), seed=seed, n_resamples=2000)
    return Interval(interval.mean, interval.low, interval.high, interval.n, dropped + interval.n_unscored)


def rise_figure(key: str, label: str, before: Sequence[float], after: Sequence[float], seed: int = 0) -> Figure:
    """The share of pairs whose grade rose from ``before`` to ``after`` (pairs both graded)."""
    a, b, dropped = _joint(before, after)
    return figure(key, label, _ci((b > a).astype(np.float64), dropped, seed))


def share_figure(key: str, label: str, hits: Sequence[float], seed: int = 0) -> Figure:
    """The share of 1s among ``hits`` (0/1 per item, NaN unscored and left out)."""
    values = np.asarray(hits, dtype=np.float64)
    keep = ~np.isnan(values)
    return figure(key, label, _ci(values[keep], int(values.size - keep.sum()), seed))


def change_figures(
    prefix: str, what: str, before: Sequence[float], after: Sequence[float], seed: int = 0
) -> list[Figure]:
    """The mean grade change (after - before) and the shares of pairs whose grade rose and fell."""
    a, b, dropped = _joint(before, after)
    return [
        figure(f"{prefix}.change", f"{what}: mean grade change", _ci(b - a, dropped, seed)),
        figure(f"{prefix}.rise", f"{what}: share whose grade rose", _ci((b > a).astype(np.float64), dropped, seed)),
        figure(f"{prefix}.fall", f"{what}: share whose grade fell", _ci((b < a).astype(np.float64), dropped, seed)),
    ]


def consistency_figure(base: Sequence[float], repeats: Sequence[Sequence[float]], seed: int = 0) -> Figure:
    """The share of items whose grade in some repeat differs from the first (items graded every time)."""
    table = np.asarray([base, *repeats], dtype=np.float64)
    keep = ~np.isnan(table).any(axis=0)
    changed = (table[:, keep] != table[0, keep]).any(axis=0).astype(np.float64)
    interval = _ci(changed, int(keep.size - keep.sum()), seed)
    return figure("consistency.changed", f"share of items whose grade changed over {len(repeats)} repeat(s)", interval)


def position_figures(table: Sequence[Sequence[float]], seed: int = 0) -> list[Figure]:
    """From ``table[passage][position]`` (the grade of each passage at each list position, NaN unscored): the mean
    grade at each position, first minus last per passage, and the share of passages whose grade depends on order."""
    grid = np.asarray(table, dtype=np.float64)
    if grid.size == 0:
        return []
    whole = ~np.isnan(grid).any(axis=1)
    out = [
        figure(f"position.at{p + 1}", f"mean grade at position {p + 1}", _ci(grid[:, p], 0, seed))
        for p in range(grid.shape[1])
    ]
    dropped = int(whole.size - whole.sum())
    spread = grid[whole, 0] - grid[whole, -1]
    out.append(figure("position.first_minus_last", "grade first in the list minus last", _ci(spread, dropped, seed)))
    varies = (grid[whole].max(axis=1) > grid[whole].min(axis=1)).astype(np.float64)
    out.append(
        figure("position.changed", "share of passages whose grade depends on the order", _ci(varies, dropped, seed))
    )
    return out


def _binary(values: Grades, cut: int) -> Grades:
    return np.where(np.isnan(values), np.nan, (values >= cut).astype(np.float64))


def agreement(judge: Sequence[float], human: Sequence[float], *, human_graded: bool, seed: int = 0) -> Agreement:
    """Judge grades against people's: binary kappa of judge >= 1 and >= 2 against people's relevant (>= 1), the
    same at >= 2 against people's >= 2 when they graded, linear weighted kappa, leniency (the judge's share graded
    >= 1 minus the people's, in points of share), the confusion matrix, and the cut (1-3) with the best kappa."""
    j, h = np.asarray(judge, dtype=np.float64), np.asarray(human, dtype=np.float64)
    people = _binary(h, 1)
    binary = (0, 1)
    kappas = {cut: cohen_kappa_ci(_binary(j, cut), people, binary, seed=seed, n_resamples=2000) for cut in (1, 2, 3)}
    figures = [
        figure(f"agreement.kappa_at{cut}", f"kappa, judge >= {cut} against people's relevant", kappas[cut])
        for cut in (1, 2)
    ]
    if human_graded:
        strict = cohen_kappa_ci(_binary(j, 2), _binary(h, 2), binary, seed=seed, n_resamples=2000)
        figures.append(figure("agreement.kappa_strict", "kappa, judge >= 2 against people's >= 2", strict))
    weighted = weighted_kappa_ci(j, h, weights="linear", seed=seed, n_resamples=2000)
    figures.append(figure("agreement.weighted_kappa", "weighted kappa (linear), grades 0-3", weighted))
    lenient = leniency_ci(_binary(j, 1), people, binary, seed=seed, n_resamples=2000)
    figures.append(figure("agreement.leniency", "leniency: judge's share >= 1 minus people's", lenient))
    usable = {cut: k.mean for cut, k in kappas.items() if not np.isnan(k.mean)}
    best = max(usable, key=lambda cut: usable[cut]) if usable else None
    confusion = confusion_matrix(j, h).tolist()
    return Agreement(figures=figures, confusion=confusion, best_cut=best, human_graded=human_graded)
