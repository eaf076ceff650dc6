"""What a judge's calls count and cost: usage per stage (calls, cached, unscored, tokens, USD), the judge's
:class:`~assay.judge.results.JudgeStats`, the cost budget it shares with a panel's other judges, and the
:class:`~assay.judge.results.Judgement` record of each answer priced at its tokens.

:class:`~assay.judge.client.Judge` inherits these, as it inherits its cache access; the batch runner and listwise
relevance count through them too (:meth:`Accounts.account` takes the batch price). :func:`usage_sum` and
:func:`usage_since` are the one usage arithmetic: several judges' usage summed (a panel, a build), and what a judge
spent between two readings (an evaluation).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from assay.errors import BudgetExceeded
from assay.judge.base import ChatResponse, TokenLogprob
from assay.judge.limits import Budget
from assay.judge.pricing import Price
from assay.judge.results import Judgement, JudgeStats
from assay.judge.workers import Prepared
from assay.types import StageUsage, Unscored

__all__ = ["Accounts", "usage_since", "usage_sum"]


class Accounts:
    """The counts and costs of one judge's calls, kept in ``usage`` (by stage) and ``stats``."""

    model: str
    price: Price | None
    budget: Budget
    usage: dict[str, StageUsage]
    stats: JudgeStats

    @property
    def max_cost(self) -> float | None:
        """The USD this judge may spend (its budget's, shared with the other judges of a panel); None: no limit."""
        return self.budget.max_cost

    @property
    def spent(self) -> float:
        """USD spent from this judge's budget (by every judge sharing it: :func:`assay.judge.panel.Panel`)."""
        return self.budget.spent

    @spent.setter
    def spent(self, value: float) -> None:
        self.budget.spent = value

    @property
    def cost(self) -> float | None:
        """USD this judge's own calls cost, over every stage; None without a price."""
        if self.price is None:
            return None
        return sum(usage.cost_usd or 0.0 for usage in self.usage.values())

    def _stage(self, stage: str) -> StageUsage:
        usage = self.usage.get(stage)
        if usage is None:
            usage = self.usage[stage] = StageUsage(cost_usd=0.0 if self.price is not None else None)
        return usage

    def record_cache_hit(self, stage: str) -> None:
        """Count a result served from the cache by a caller that derives its own keys (listwise relevance)."""
        self.stats.cache_hits += 1
        self._stage(stage).cached += 1

    def record_repeat(self, stage: str) -> None:
        """Count an item answered by another item's call (the same key in flight or in the same list)."""
        self.stats.deduped += 1
        self._stage(stage).cached += 1

    def judgement(
        self,
        prepared: Prepared,
        output: Any,
        unscored: Unscored | None,
        *,
        cached: bool,
        tokens: tuple[int, int],
        logprobs: tuple[TokenLogprob, ...] | None = None,
    ) -> Judgement[Any]:
        """The record of one answer (``output``) or failure (``unscored``) of ``prepared``, priced at ``tokens``,
        with the answer's token probabilities when the server gave them."""
        cost = self.price.cost(*tokens) if self.price is not None else None
        return Judgement(
            output=output,
            unscored=unscored,
            cached=cached,
            model=self.model,
            prompt=prepared.prompt.ref,
            prompt_hash=prepared.prompt.content_hash,
            prompt_tokens=tokens[0],
            completion_tokens=tokens[1],
            cost_usd=cost,
            logprobs=logprobs,
        )

    def check_budget(self) -> None:
        """Raise :class:`BudgetExceeded` once the shared budget is spent (the caller is about to pay for a call)."""
        if self.max_cost is not None and self.spent >= self.max_cost:
            raise BudgetExceeded(
                f"the cost budget of ${self.max_cost:g} is spent (${self.spent:.4f}); what was judged is cached, "
                "rerun with a higher --max-cost to resume without paying twice"
            )

    def account(self, stage: str, response: ChatResponse, price: Price | None = None) -> float | None:
        """Count one answer the provider charged for: calls and tokens of ``stage``, and its cost at ``price`` (the
        judge's own by default; a batch passes the batch price) in the stage and the budget. The cost, or None
        without a price."""
        usage = self._stage(stage)
        usage.calls += 1
        usage.prompt_tokens += response.prompt_tokens
        usage.completion_tokens += response.completion_tokens
        self.stats.calls += 1
        price = price or self.price
        if price is None:
            return None
        cost = price.cost(response.prompt_tokens, response.completion_tokens)
        self.spent += cost
        usage.cost_usd = (usage.cost_usd or 0.0) + cost
        return cost

    def record_unscored(
        self, prepared: Prepared, stage: str, unscored: Unscored, tokens: Sequence[int] = (0, 0)
    ) -> Judgement[Any]:
        """Count ``prepared`` as unscored (by its kind) and return its record."""
        self.stats.unscored_kinds[unscored.kind] += 1
        self._stage(stage).unscored += 1
        return self.judgement(prepared, None, unscored, cached=False, tokens=(tokens[0], tokens[1]))

    def retract_unscored(self, stage: str, kind: str) -> None:
        """Take back one unscored count: the caller recovered the item another way (a listwise group split in two)."""
        self.stats.unscored_kinds[kind] -= 1
        if not self.stats.unscored_kinds[kind]:
            del self.stats.unscored_kinds[kind]
        self._stage(stage).unscored -= 1


def usage_sum(usages: Iterable[Mapping[str, StageUsage]]) -> dict[str, StageUsage]:
    """Usage per stage summed over ``usages`` (each a judge's, or what it spent in one run), in the order the stages
    first appear; the cost is None for a stage where one of them has no price."""
    out: dict[str, StageUsage] = {}
    for usage_of in usages:
        for stage, usage in usage_of.items():
            out[stage] = out[stage].plus(usage) if stage in out else usage.model_copy()
    return out


def usage_since(now: Mapping[str, StageUsage], before: Mapping[str, StageUsage]) -> dict[str, StageUsage]:
    """What was spent per stage between ``before`` and ``now`` (two readings of one judge's usage)."""
    return {stage: usage.minus(before.get(stage, StageUsage())) for stage, usage in now.items()}
