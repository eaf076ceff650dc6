"""The panel's small parts by hand: stage names per judge, usage readings and what was spent since one, the
names and prices a panel reports, and its refusals naming the fix."""

from __future__ import annotations

import asyncio

import pytest

from assay.errors import ConfigError
from assay.judge import Judge, Price
from assay.judge.panel import Panel, each_judge, rule_of, spent_since, usage_now
from assay.testing import FakeBackend
from assay.types import StageUsage


def judge(model: str, price: Price | None = None) -> Judge:
    return Judge(FakeBackend(name=model), model=model, price=price)


def test_each_judge_names_the_stage_per_judge_only_for_a_panel() -> None:
    a, b = judge("m/a"), judge("m/b")
    assert each_judge(a, "relevance") == [("relevance", a)]
    assert each_judge(Panel((a, b)), "relevance") == [("relevance m/a", a), ("relevance m/b", b)]


def test_spent_since_sums_the_judges_and_leaves_out_stages_without_calls() -> None:
    a, b = judge("m/a"), judge("m/b")
    panel = Panel((a, b))
    a.usage["relevance"] = StageUsage(calls=2, prompt_tokens=10, cost_usd=0.5)
    a.usage["critic"] = StageUsage(calls=1, cost_usd=0.1)
    before = usage_now(panel)
    a.usage["relevance"].calls += 1  # the reading is a copy: it keeps 2
    assert before == (
        {"relevance": StageUsage(calls=2, prompt_tokens=10, cost_usd=0.5), "critic": a.usage["critic"]},
        {},
    )
    a.usage["relevance"] = StageUsage(calls=5, prompt_tokens=30, cost_usd=1.25)
    b.usage["relevance"] = StageUsage(calls=1, prompt_tokens=4, cost_usd=0.25)
    b.usage["answer"] = StageUsage(cached=2)
    b.usage["claims"] = StageUsage(unscored=1)
    b.usage["support"] = StageUsage(prompt_tokens=7)  # no call, nothing cached or unscored: left out
    spent = spent_since(panel, before)
    assert list(spent) == ["relevance", "answer", "claims"]  # critic: nothing since the reading
    relevance = spent["relevance"]
    assert (relevance.calls, relevance.prompt_tokens) == (3 + 1, 20 + 4)
    assert relevance.cost_usd == pytest.approx(0.75 + 0.25)
    assert spent["answer"].cached == 2 and spent["claims"].unscored == 1
    assert usage_now(None) == () and spent_since(None, ()) == {}
    with pytest.raises(ValueError):  # a reading of one judge cannot stand for a panel of two
        spent_since(panel, before[:1])


def test_a_panel_reports_its_models_and_knows_its_price_only_when_every_judge_has_one() -> None:
    price = Price(1e-6, 1e-6)
    panel = Panel((judge("m/a", price), judge("m/b", price)), combine="min")
    assert panel.models == ["m/a", "m/b"] and panel.model == "min(m/a, m/b)" and panel.price_known
    assert not Panel((judge("m/a", price), judge("m/b"))).price_known
    assert not Panel((judge("m/a"), judge("m/b", price))).price_known
    asyncio.run(panel.aclose())


def test_the_rule_is_read_only_from_a_whole_panel_name() -> None:
    assert rule_of("majority(m/a, m/b)") == "majority"
    assert rule_of("mean(m/a (v2), m/b)") == "mean"  # a model name with brackets of its own
    assert rule_of("majority(m/a, m/b") is None and rule_of("majority") is None and rule_of("min m/a)") is None


def test_the_refusals_say_what_to_do() -> None:
    a = judge("m/a")
    with pytest.raises(ConfigError, match=r"^a panel needs at least two judges, got 1; give --judge twice or more$"):
        Panel((a,))
    with pytest.raises(ConfigError, match=r"unknown combine rule 'median'; choose one of: majority, mean, min$"):
        Panel((a, judge("m/b")), combine="median")  # type: ignore[arg-type]
    with pytest.raises(ConfigError, match=r"^judge m/a is on the panel twice: .* use assay judge-check --repeats\)$"):
        Panel((a, judge("m/b"), judge("m/a"), judge("m/b")))  # the first model named twice
