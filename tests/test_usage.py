"""The one usage arithmetic (beside ``StageUsage`` in assay.types): a sum over judges and what was spent since a
reading, with the price rules written out by hand."""

from __future__ import annotations

import pytest

from assay.judge.accounts import usage_since, usage_sum
from assay.types import StageUsage


def _u(calls: int, cost: float | None, tokens: int = 0) -> StageUsage:
    return StageUsage(calls=calls, cached=1, unscored=0, prompt_tokens=tokens, completion_tokens=2, cost_usd=cost)


def test_a_sum_keeps_the_order_stages_first_appear_and_loses_the_cost_where_a_price_is_unknown() -> None:
    summed = usage_sum([{"relevance": _u(3, 0.25, 10)}, {"answer": _u(1, 0.5), "relevance": _u(2, None, 5)}])
    assert list(summed) == ["relevance", "answer"]
    relevance = summed["relevance"]
    assert (relevance.calls, relevance.cached, relevance.prompt_tokens, relevance.completion_tokens) == (5, 2, 15, 4)
    assert relevance.cost_usd is None  # one judge has no price: the stage's cost is unknown
    assert summed["answer"].cost_usd == pytest.approx(0.5)


def test_what_was_spent_since_a_reading_counts_an_earlier_unknown_price_as_nothing() -> None:
    now = {"relevance": _u(7, 1.0, 40), "answer": _u(2, None)}
    before = {"relevance": _u(4, None, 30)}
    spent = usage_since(now, before)
    assert (spent["relevance"].calls, spent["relevance"].cached, spent["relevance"].prompt_tokens) == (3, 0, 10)
    assert spent["relevance"].cost_usd == pytest.approx(1.0)  # 1.0 - (None -> 0.0)
    assert spent["answer"].calls == 2 and spent["answer"].cost_usd is None  # a stage new since the reading


def test_a_sum_leaves_its_inputs_as_they_were() -> None:
    first = _u(1, 0.1)
    usage_sum([{"s": first}, {"s": _u(1, 0.1)}])
    assert first.calls == 1 and first.cost_usd == pytest.approx(0.1)
