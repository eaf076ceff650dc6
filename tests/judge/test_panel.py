"""Several judges at once: the combining rules on hand-worked votes, the panel's checks, grading through real
Judge clients (each with its own cache), unscored votes and the quorum, estimates, the shared budget."""

from __future__ import annotations

import asyncio
import json
import time
from pathlib import Path

import pytest

from assay.errors import BackendError, BudgetExceeded, ConfigError
from assay.judge import Judge, JudgeCache, Pair, Price, estimate_pairs, grade_pairs_detailed
from assay.judge.base import ChatRequest, ChatResponse
from assay.judge.panel import NO_QUORUM, Panel, combine_grades, judges_of, merged_usage, primary_of, rule_of
from assay.judge.relevance_estimate import estimate_each
from assay.testing import FakeBackend

PAIRS = [
    Pair("q1", "What is BM25?", "c1", "BM25 is a ranking function."),
    Pair("q1", "What is BM25?", "c2", "Cats sleep a lot."),
    Pair("q2", "Who wrote trec_eval?", "c3", "trec_eval was written at NIST."),
]


@pytest.mark.parametrize(
    ("grades", "rule", "expected"),
    [
        ([3, 3, 0], "majority", 3),
        ([1, 2], "majority", 1),  # a tie between two grades: the lower
        ([0, 1, 2, 3], "majority", 0),
        ([2, 2, 3, 3, 1], "majority", 2),
        ([0, 3], "mean", 1),  # 1.5: a half goes down
        ([2, 3], "mean", 2),  # 2.5
        ([1, 2, 3], "mean", 2),
        ([0, 0, 3], "mean", 1),  # exactly 1
        ([0, 1, 1, 3], "mean", 1),  # 1.25
        ([1, 3, 3], "mean", 2),  # 2.33
        ([2, 3, 3], "mean", 3),  # 2.67
        ([3, 1, 2], "min", 1),
        ([3, None, 2], "min", 2),  # 2 of 3 scored: a quorum, the unscored vote is missing (not 0)
        ([3, None], "min", None),  # 1 of 2: no quorum
        ([None, None, 3], "majority", None),
        ([2, 2, None, None], "mean", None),  # half is not more than half
        ([2, 2, 1, None], "majority", 2),
    ],
)
def test_combine_grades_by_hand(grades: list[int | None], rule: str, expected: int | None) -> None:
    assert combine_grades(grades, rule) == expected


def test_an_unknown_rule_is_refused() -> None:
    with pytest.raises(ConfigError, match="majority, mean, min"):
        combine_grades([1, 2], "median")


def _grader(grades: dict[str, int | None], name: str) -> FakeBackend:
    """A backend that grades each passage by a fixed table; None answers garbage (unscored after the repair)."""

    def answer(request: ChatRequest) -> str:
        grade = grades[request.variables["passage"]]
        return "no idea" if grade is None else json.dumps({"reason": f"{name} says {grade}", "grade": grade})

    return FakeBackend(answer, name=name)


def _judge(backend: FakeBackend, model: str, cache: Path | None = None, **kwargs: object) -> Judge:
    return Judge(backend, model=model, cache=JudgeCache(cache) if cache else None, **kwargs)  # type: ignore[arg-type]


TEXTS = [p.text for p in PAIRS]


def test_a_panel_needs_two_different_judges_and_a_known_rule() -> None:
    one = _judge(FakeBackend(), "m/a")
    with pytest.raises(ConfigError, match="at least two judges"):
        Panel((one,))
    with pytest.raises(ConfigError, match="twice"):
        Panel((one, _judge(FakeBackend(), "m/a")))
    with pytest.raises(ConfigError, match="unknown combine rule"):
        Panel((one, _judge(FakeBackend(), "m/b")), combine="median")  # type: ignore[arg-type]


def test_each_judge_grades_every_pair_and_the_labels_keep_the_votes(tmp_path: Path) -> None:
    a = _grader(dict(zip(TEXTS, [3, 0, 2], strict=True)), "a")
    b = _grader(dict(zip(TEXTS, [3, 1, 0], strict=True)), "b")
    c = _grader(dict(zip(TEXTS, [2, 0, 0], strict=True)), "c")
    judges = tuple(_judge(x, f"m/{x.name}", tmp_path / "cache") for x in (a, b, c))
    panel = Panel(judges, combine="majority")
    seen = []
    graded = asyncio.run(grade_pairs_detailed(panel, PAIRS, on_label=seen.append))
    assert [g.label.grade for g in graded] == [3, 0, 0]
    assert sorted((g.label.query_id, g.label.chunk_id, g.label.grade) for g in seen) == [
        ("q1", "c1", 3),
        ("q1", "c2", 0),
        ("q2", "c3", 0),
    ]
    first = graded[0].label
    assert first.provenance.model == "majority(m/a, m/b, m/c)" and first.provenance.source == "judge"
    assert (first.provenance.prompt or "").startswith("relevance@")
    assert [(v.model, v.grade) for v in first.votes or []] == [("m/a", 3), ("m/b", 3), ("m/c", 2)]
    assert first.votes[0].rationale == "a says 3"  # type: ignore[index]
    assert "m/a 3, m/b 3, m/c 2" in (first.provenance.rationale or "")
    assert [x.calls for x in (a, b, c)] == [3, 3, 3] and not any(g.cached for g in graded)

    # the same panel again: every vote from each judge's own cache entries, nothing asked
    again = Panel(tuple(_judge(x, f"m/{x.name}", tmp_path / "cache") for x in (a, b, c)), combine="min")
    regraded = asyncio.run(grade_pairs_detailed(again, PAIRS))
    assert [x.calls for x in (a, b, c)] == [3, 3, 3] and all(g.cached for g in regraded)
    assert [g.label.grade for g in regraded] == [2, 0, 0]
    assert regraded[0].label.provenance.model == "min(m/a, m/b, m/c)"


def test_listwise_panels_grade_each_pair_once_per_judge(tmp_path: Path) -> None:
    def listwise(grade: int, name: str) -> FakeBackend:
        def answer(request: ChatRequest) -> str:
            ids = [p["id"] for p in request.variables["passages"]]
            return json.dumps({"judgements": [{"id": i, "reason": name, "grade": grade} for i in ids]})

        return FakeBackend(answer, name=name)

    a, b = listwise(2, "a"), listwise(1, "b")
    panel = Panel((_judge(a, "m/a"), _judge(b, "m/b")), combine="mean")
    graded = asyncio.run(grade_pairs_detailed(panel, PAIRS, listwise=10))
    assert [g.label.grade for g in graded] == [1, 1, 1]  # mean 1.5, a half goes down
    assert a.calls == b.calls == 2  # one group per question, per judge


def test_an_unscored_vote_is_missing_not_zero_and_without_a_quorum_the_label_is_unscored() -> None:
    a = _grader(dict(zip(TEXTS, [3, None, 2], strict=True)), "a")
    b = _grader(dict(zip(TEXTS, [None, None, 2], strict=True)), "b")
    c = _grader(dict(zip(TEXTS, [3, 1, 0], strict=True)), "c")
    panel = Panel((_judge(a, "m/a"), _judge(b, "m/b"), _judge(c, "m/c")), combine="min")
    graded = asyncio.run(grade_pairs_detailed(panel, PAIRS))
    labels = [g.label for g in graded]
    assert labels[0].grade == 3  # min over the two scored votes (3, 3), not 0
    assert labels[1].grade is None and labels[1].unscored is not None and labels[1].unscored.kind == NO_QUORUM
    assert "only 1 of 3 judges" in labels[1].unscored.reason and "m/a:" in labels[1].unscored.reason
    assert [v.grade for v in labels[1].votes or []] == [None, None, 1]
    assert labels[1].votes[0].unscored is not None  # type: ignore[index]
    assert labels[1].votes[0].unscored.kind == "invalid_output"  # type: ignore[index]
    assert labels[2].grade == 0


def test_the_panel_is_one_budget_and_the_rest_goes_to_the_first_judge() -> None:
    price = Price(1e-3, 1e-3)  # 120 tokens a call: $0.12
    a = _judge(_grader(dict.fromkeys(TEXTS, 1), "a"), "m/a", max_cost=0.5, price=price)
    b = _judge(_grader(dict.fromkeys(TEXTS, 2), "b"), "m/b", max_cost=1e9, price=price)
    panel = Panel((a, b))
    assert b.budget is a.budget and b.max_cost == 0.5
    assert primary_of(panel) is a and judges_of(panel) == (a, b) and judges_of(a) == (a,) and judges_of(None) == ()
    many = [Pair("q", "What?", f"c{i}", f"passage {i}") for i in range(40)]
    a.backend = b.backend = FakeBackend(name="both")  # the scripted default answer for any passage
    with pytest.raises(BudgetExceeded):
        asyncio.run(grade_pairs_detailed(panel, many))
    assert a.cost is not None and b.cost is not None
    assert panel.spent == pytest.approx(a.cost + b.cost) and 0.5 <= panel.spent < 0.5 + 0.12 * 16
    calls = a.backend.calls  # type: ignore[attr-defined]
    assert calls * 0.12 == pytest.approx(panel.spent) and calls < 2 * len(many)
    usage = merged_usage(one.usage for one in panel.judges)["relevance"]
    assert usage.calls == calls and usage.cost_usd == pytest.approx(panel.spent)


def test_estimates_are_per_judge_and_summed(tmp_path: Path) -> None:
    a = _grader(dict.fromkeys(TEXTS, 1), "a")
    judge_a = _judge(a, "m/a", tmp_path / "cache", price=Price(1e-6, 1e-6))
    asyncio.run(grade_pairs_detailed(judge_a, PAIRS[:2]))  # judge a has two pairs cached
    panel = Panel((_judge(a, "m/a", tmp_path / "cache"), _judge(FakeBackend(), "m/b", tmp_path / "cache")))
    each = dict(estimate_each(panel, PAIRS))
    assert each["m/a"].calls == 1 and each["m/a"].cached == 2
    assert each["m/b"].calls == 3 and each["m/b"].cached == 0
    total = estimate_pairs(panel, PAIRS)
    assert total.calls == 4 and total.cached == 0  # no pair is cached by every judge
    assert total.prompt_tokens == each["m/a"].prompt_tokens + each["m/b"].prompt_tokens
    assert total.cost_usd is None  # m/b has no price
    b = _grader(dict.fromkeys(TEXTS, 2), "b")
    asyncio.run(grade_pairs_detailed(_judge(b, "m/b", tmp_path / "cache"), PAIRS[1:]))  # b has the last two
    assert estimate_pairs(panel, PAIRS).cached == 1  # PAIRS[1] is the one both judges have
    listwise = estimate_pairs(panel, PAIRS, listwise=5)
    assert listwise.calls == 2 + 2  # one group per question per judge: pointwise answers do not serve listwise


def test_a_judge_that_cannot_go_on_stops_the_panel_and_the_others_are_cancelled() -> None:
    slow_calls: list[str] = []

    async def slow(request: ChatRequest) -> ChatResponse:
        slow_calls.append(request.variables["passage"])
        await asyncio.sleep(10)
        return ChatResponse(content=json.dumps({"reason": "late", "grade": 1}))

    broken = FakeBackend([BackendError("401 Unauthorized: check the API key")] * 10, name="broken")
    sleeper = FakeBackend(name="slow")
    sleeper.complete = slow  # type: ignore[method-assign]
    panel = Panel((_judge(sleeper, "m/slow"), _judge(broken, "m/broken")))
    started = time.perf_counter()
    with pytest.raises(BackendError, match="401"):
        asyncio.run(grade_pairs_detailed(panel, PAIRS))
    assert time.perf_counter() - started < 5  # the slow judge was cancelled, not waited for


def test_the_rule_is_read_back_from_the_panel_name() -> None:
    panel = Panel((_judge(FakeBackend(), "m/a"), _judge(FakeBackend(), "hosted_vllm/b")), combine="mean")
    assert rule_of(panel.model) == "mean"
    assert rule_of("openai/gpt-4o-mini") is None and rule_of("median(a, b)") is None
