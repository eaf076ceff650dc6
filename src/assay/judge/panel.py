"""Several judges at once: a :class:`Panel` grades every relevance pair with each of its judges and combines them.

Only relevance labels go to the whole panel (:func:`assay.judge.relevance.grade_pairs_detailed` takes a panel
wherever it takes a judge); every other prompt (question generation, critic, claims, support, the answer checks of
``assay eval``) goes to the panel's first judge, :attr:`Panel.primary`. Each judge keeps its own cache (keyed by its
model), usage and price; the panel spends from one budget, the first judge's ``max_cost``.

Combining rules, over the grades of the judges that scored the pair (a judge's unscored answer is a missing vote,
never a 0):

``majority``
    the grade most judges gave; when grades tie for most votes, the lowest of them (with two judges who disagree,
    the lower grade: name three judges for a real majority);
``mean``
    the mean grade rounded to the nearest grade, a half rounded down (1.5 -> 1, 2.5 -> 2);
``min``
    the lowest grade (a pair is relevant only if every judge says so).

Halves and ties go down as the prompts tell a judge to do when it hesitates between two grades. A pair gets a
combined grade only when more than half of the judges scored it (2 of 2, 2 of 3, 3 of 4); otherwise the combined
label is unscored, kind ``no_quorum``, with each judge's reason. Every combined label keeps each judge's vote
(:class:`assay.types.Vote`), so agreement between judges (:mod:`assay.judge.panel_agreement`) and the audit queue
(pairs where judges disagree first) read them from the golden set.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Literal, get_args

from assay.errors import ConfigError
from assay.judge.accounts import usage_since, usage_sum
from assay.judge.client import Judge
from assay.types import StageUsage

__all__ = [
    "COMBINE_RULES",
    "NO_QUORUM",
    "Combine",
    "Grader",
    "Panel",
    "combine_grades",
    "each_judge",
    "judges_of",
    "merged_usage",
    "primary_of",
    "rule_of",
    "spent_since",
    "usage_now",
]

Combine = Literal["majority", "mean", "min"]
COMBINE_RULES: tuple[str, ...] = get_args(Combine)
NO_QUORUM = "no_quorum"


def combine_grades(grades: Sequence[int | None], rule: str) -> int | None:
    """The combined grade of one pair's votes (None = that judge left it unscored) by ``rule``; None when no more
    than half of the votes are scored (see the module docstring)."""
    if rule not in COMBINE_RULES:
        raise ConfigError(f"unknown combine rule {rule!r}; choose one of: {', '.join(COMBINE_RULES)}")
    scored = [g for g in grades if g is not None]
    if not scored or 2 * len(scored) <= len(grades):
        return None
    if rule == "min":
        return min(scored)
    if rule == "mean":
        twice = 2 * sum(scored)  # round(sum / n) with halves down, in integers: floor((2 sum + n - 1) / 2n)
        return (twice + len(scored) - 1) // (2 * len(scored))
    counts = Counter(scored)
    most = max(counts.values())
    return min(grade for grade, n in counts.items() if n == most)


@dataclass(frozen=True)
class Panel:
    """Judges that grade every relevance pair, combined by ``combine`` (see the module docstring).

    Made, the judges share the first one's budget, so ``max_cost`` bounds what the panel spends in all.
    """

    judges: tuple[Judge, ...]
    combine: Combine = "majority"

    def __post_init__(self) -> None:
        if len(self.judges) < 2:
            raise ConfigError(f"a panel needs at least two judges, got {len(self.judges)}; give --judge twice or more")
        if self.combine not in COMBINE_RULES:
            raise ConfigError(f"unknown combine rule {self.combine!r}; choose one of: {', '.join(COMBINE_RULES)}")
        seen = Counter(judge.cache_model for judge in self.judges)
        twice = [judge.model for judge in self.judges if seen[judge.cache_model] > 1]
        if twice:
            raise ConfigError(
                f"judge {twice[0]} is on the panel twice: it would answer the same from the cache; name different "
                "models (for the same model asked again past the cache, use assay judge-check --repeats)"
            )
        budget = self.judges[0].budget
        for judge in self.judges[1:]:
            judge.budget = budget

    @property
    def primary(self) -> Judge:
        """The first judge: it answers every prompt but relevance."""
        return self.judges[0]

    @property
    def models(self) -> list[str]:
        return [judge.model for judge in self.judges]

    @property
    def model(self) -> str:
        """The name combined labels carry: ``majority(openai/a, openai/b)`` (:func:`rule_of` reads the rule back)."""
        return f"{self.combine}({', '.join(self.models)})"

    @property
    def price_known(self) -> bool:
        return all(judge.price is not None for judge in self.judges)

    @property
    def spent(self) -> float:
        """USD the panel spent (its shared budget)."""
        return self.primary.spent

    async def aclose(self) -> None:
        """Close every judge's connections and cache writer."""
        for judge in self.judges:
            await judge.aclose()


Grader = Judge | Panel


def rule_of(model: str) -> str | None:
    """The combining rule a :attr:`Panel.model` name carries (``majority(a, b)`` -> ``majority``); None for the name
    of a single judge."""
    rule, sep, _ = model.partition("(")
    return rule if sep and rule in COMBINE_RULES and model.endswith(")") else None


def judges_of(grader: Grader | None) -> tuple[Judge, ...]:
    """The judges behind ``grader``: a panel's, or the one judge (none for None)."""
    if grader is None:
        return ()
    return grader.judges if isinstance(grader, Panel) else (grader,)


def primary_of(grader: Grader) -> Judge:
    """The judge that answers every prompt but relevance: a panel's first judge, or the judge itself."""
    return grader.primary if isinstance(grader, Panel) else grader


def each_judge(grader: Grader, stage: str) -> list[tuple[str, Judge]]:
    """(stage name, judge) for a stage every judge of ``grader`` runs, as dry runs list it: ``stage`` for a single
    judge, ``stage MODEL`` per judge of a panel."""
    judges = judges_of(grader)
    return [(stage if len(judges) == 1 else f"{stage} {one.model}", one) for one in judges]


# usage per stage summed over judges (or what each spent in one run): the one sum, beside StageUsage
merged_usage = usage_sum


def usage_now(grader: Grader | None) -> tuple[dict[str, StageUsage], ...]:
    """A reading of each judge's usage per stage (copies), for :func:`spent_since`."""
    return tuple({stage: usage.model_copy() for stage, usage in one.usage.items()} for one in judges_of(grader))


def spent_since(grader: Grader | None, before: Sequence[Mapping[str, StageUsage]]) -> dict[str, StageUsage]:
    """What ``grader`` spent per stage since ``before`` (its :func:`usage_now`; a judge may be reused), summed over
    the judges of a panel (cost None where a judge has no price); stages that made no call are left out."""
    judges = judges_of(grader)
    spent = usage_sum(usage_since(judge.usage, was) for judge, was in zip(judges, before, strict=True))
    return {stage: usage for stage, usage in spent.items() if usage.calls or usage.cached or usage.unscored}
