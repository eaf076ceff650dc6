"""Relevance grading counted without calling a model (``--dry-run``): the calls, cached pairs, prompt tokens and cost
bound :func:`assay.judge.relevance.grade_pairs` would spend with the same settings.

Pointwise, the estimate is the judge's own over one ``relevance`` call per pair. Listwise, the pairs whose per-pair
key is cached are left out and the rest grouped exactly as grading groups them (same seed, same size), so the count
of calls is exact. For a panel the estimates are summed over its judges; ``cached`` counts the pairs every judge has
cached, and the cost is None when a judge has no price.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from assay.judge.client import Estimate, Judge
from assay.judge.panel import Grader, Panel
from assay.judge.relevance import LISTWISE_PROMPT, POINTWISE_PROMPT, Pair, group_variables, listwise_groups, pair_keys
from assay.judge.workers import looked_up

__all__ = ["estimate_each", "estimate_pairs"]


def estimate_pairs(judge: Grader, pairs: Sequence[Pair], *, listwise: int | None = None, seed: int = 0) -> Estimate:
    """A dry-run estimate (calls, cached, prompt tokens, cost bound) for :func:`grade_pairs` with these settings;
    for a panel, summed over its judges (``cached``: pairs every judge has cached; cost None when a judge has no
    price). :func:`estimate_each` gives one estimate per judge."""
    if isinstance(judge, Panel):
        return _sum_estimates(estimate_each(judge, pairs, listwise=listwise, seed=seed), pairs, judge, listwise)
    if listwise is None:
        return judge.estimate(POINTWISE_PROMPT, [{"question": p.question, "passage": p.text} for p in pairs])
    todo, _ = _uncached(judge, pairs)
    groups = listwise_groups(todo, listwise, seed)
    estimate = judge.estimate(LISTWISE_PROMPT, [group_variables(g) for g in groups])
    return Estimate(estimate.calls, len(pairs) - len(todo), estimate.prompt_tokens, estimate.cost_usd)


def estimate_each(
    grader: Grader, pairs: Sequence[Pair], *, listwise: int | None = None, seed: int = 0
) -> list[tuple[str, Estimate]]:
    """(model, estimate) for each judge of ``grader`` (one for a single judge)."""
    judges = grader.judges if isinstance(grader, Panel) else (grader,)
    return [(j.model, estimate_pairs(j, pairs, listwise=listwise, seed=seed)) for j in judges]


def _uncached(judge: Judge, pairs: Sequence[Pair]) -> tuple[list[tuple[int, Pair]], Mapping[str, str]]:
    keys = pair_keys(judge, pairs)
    stored = judge.cache_get_many(keys)
    return [(i, p) for i, p in enumerate(pairs) if keys[i] not in stored], stored


def _sum_estimates(
    each: list[tuple[str, Estimate]], pairs: Sequence[Pair], panel: Panel, listwise: int | None
) -> Estimate:
    estimates = [e for _, e in each]
    costs = [e.cost_usd for e in estimates]
    cached = _cached_by_all(panel, pairs, listwise)
    return Estimate(
        calls=sum(e.calls for e in estimates),
        cached=cached,
        prompt_tokens=sum(e.prompt_tokens for e in estimates),
        cost_usd=None if any(c is None for c in costs) else sum(c for c in costs if c is not None),
    )


def _cached_by_all(panel: Panel, pairs: Sequence[Pair], listwise: int | None) -> int:
    """How many pairs every judge of the panel has in its cache."""
    if listwise is None:
        variables = [{"question": p.question, "passage": p.text} for p in pairs]
        found = [[hit for _, hit in looked_up(judge, POINTWISE_PROMPT, variables)] for judge in panel.judges]
        return sum(all(hits) for hits in zip(*found, strict=True))
    todo: set[int] = set()
    for judge in panel.judges:
        todo.update(i for i, _ in _uncached(judge, pairs)[0])
    return len(pairs) - len(todo)
