"""Relevance grading of (question, chunk) pairs: pointwise, listwise, provenance, unscored, reuse across groupings."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest

from assay.judge.base import ChatRequest
from assay.judge.cache import JudgeCache
from assay.judge.client import Judge
from assay.judge.limits import RetryPolicy
from assay.judge.prompts import load_prompt
from assay.judge.relevance import Pair, grade_pairs, grade_pairs_detailed
from assay.judge.relevance_estimate import estimate_pairs
from assay.testing import FakeBackend


def pairs(n_queries: int, n_chunks: int) -> list[Pair]:
    return [
        Pair(f"q{q}", f"question {q}?", f"c{q}-{c}", f"chunk {c} grade {(q + c) % 4}")
        for q in range(n_queries)
        for c in range(n_chunks)
    ]


def true_grade(text: str) -> int:
    return int(text.rsplit(" ", 1)[1])


def answer(request: ChatRequest) -> str:
    """A judge that reads the grade out of each passage text (so every label can be checked)."""
    if request.prompt_name == "relevance":
        return json.dumps({"reason": "read it", "grade": true_grade(request.variables["passage"])})
    judgements = [{"id": p["id"], "reason": "r", "grade": true_grade(p["text"])} for p in request.variables["passages"]]
    return json.dumps({"judgements": judgements})


def judge(backend: FakeBackend, cache: Path | None = None) -> Judge:
    return Judge(
        backend,
        model="test/judge",
        cache=JudgeCache(cache) if cache else None,
        retry=RetryPolicy.immediate(),
        concurrency=4,
    )


def test_pointwise_labels_and_provenance() -> None:
    items = pairs(2, 3)
    labels = asyncio.run(grade_pairs(judge(FakeBackend(answer)), items))
    assert [(lb.query_id, lb.chunk_id) for lb in labels] == [(p.query_id, p.chunk_id) for p in items]
    assert [lb.grade for lb in labels] == [true_grade(p.text) for p in items]
    prompt = load_prompt("relevance")
    prov = labels[0].provenance
    assert (prov.source, prov.model, prov.prompt, prov.prompt_hash) == (
        "judge",
        "test/judge",
        prompt.ref,
        prompt.content_hash,
    )
    assert prov.rationale == "read it"


def test_pointwise_unscored_is_none_never_zero() -> None:
    backend = FakeBackend(lambda r: "no idea")
    [label] = asyncio.run(grade_pairs(judge(backend), pairs(1, 1)))
    assert label.grade is None and label.unscored is not None and label.unscored.kind == "invalid_output"


def test_listwise_groups_by_question_and_grades_each() -> None:
    backend = FakeBackend(answer)
    items = [Pair(p.query_id, p.question, p.chunk_id, f"{p.question} {p.text}") for p in pairs(2, 5)]
    labels = asyncio.run(grade_pairs(judge(backend), items, listwise=2))
    assert [lb.grade for lb in labels] == [true_grade(p.text) for p in items]
    assert backend.calls == 6  # ceil(5 / 2) groups per question
    for request in backend.requests:
        passages = request.variables["passages"]
        assert request.prompt_name == "relevance_listwise" and 1 <= len(passages) <= 2
        # each text starts with its own question: a call holds the chunks of one question only
        assert all(p["text"].startswith(request.variables["question"] + " ") for p in passages)
        assert [p["id"] for p in passages] == [str(i + 1) for i in range(len(passages))]
    assert labels[0].provenance.prompt == load_prompt("relevance_listwise").ref


def test_listwise_shuffle_is_seeded() -> None:
    def order(seed: int) -> list[str]:
        backend = FakeBackend(answer)
        asyncio.run(grade_pairs(judge(backend), pairs(1, 8), listwise=8, seed=seed))
        return [p["text"] for p in backend.requests[0].variables["passages"]]

    assert order(1) == order(1)
    assert order(1) != order(2)
    assert sorted(order(1)) == sorted(order(2))


def test_listwise_missing_id_or_bad_grade_is_unscored() -> None:
    def partial(request: ChatRequest) -> str:
        passages = request.variables["passages"]
        judgements = [{"id": p["id"], "reason": "r", "grade": true_grade(p["text"])} for p in passages[1:]]
        return json.dumps({"judgements": judgements})

    backend = FakeBackend(partial)
    items = pairs(1, 3)
    labels = asyncio.run(grade_pairs(judge(backend), items, listwise=3, seed=0))
    missing = [lb for lb in labels if lb.grade is None]
    assert len(missing) == 1 and missing[0].unscored is not None
    assert "no judgement" in missing[0].unscored.reason
    assert all(lb.grade == true_grade(p.text) for lb, p in zip(labels, items, strict=True) if lb.grade is not None)


def test_listwise_labels_are_reused_whatever_the_grouping(tmp_path: Path) -> None:
    first = FakeBackend(answer)
    asyncio.run(grade_pairs(judge(first, tmp_path), pairs(2, 6), listwise=3))
    assert first.calls == 4
    more = [*pairs(2, 6), Pair("q0", "question 0?", "new", "a new chunk grade 2")]
    second = FakeBackend(answer)
    graded = asyncio.run(grade_pairs_detailed(judge(second, tmp_path), more, listwise=4, seed=9))
    assert second.calls == 1  # only the new chunk is judged
    assert [p["text"] for p in second.requests[0].variables["passages"]] == ["a new chunk grade 2"]
    assert sum(g.cached for g in graded) == 12 and graded[-1].label.grade == 2


def test_estimate_pairs_counts_groups(tmp_path: Path) -> None:
    j = judge(FakeBackend(answer), tmp_path)
    estimate = estimate_pairs(j, pairs(2, 5), listwise=2)
    assert (estimate.calls, estimate.cached) == (6, 0)
    asyncio.run(grade_pairs(j, pairs(2, 5), listwise=2))
    assert estimate_pairs(j, pairs(2, 5), listwise=2).calls == 0
    pointwise = estimate_pairs(j, pairs(2, 5))
    assert pointwise.calls == 10 and pointwise.prompt_tokens > 0


@pytest.mark.parametrize("listwise", [None, 3])
def test_on_label_sees_every_pair(listwise: Any) -> None:
    seen: list[str] = []
    asyncio.run(
        grade_pairs_detailed(
            judge(FakeBackend(answer)), pairs(2, 4), listwise=listwise, on_label=lambda g: seen.append(g.label.chunk_id)
        )
    )
    assert sorted(seen) == sorted(p.chunk_id for p in pairs(2, 4))


def test_a_listwise_group_over_the_context_is_split_until_it_fits() -> None:
    from assay.errors import ItemRejected

    def small_context(request: ChatRequest) -> str | BaseException:
        passages = request.variables.get("passages", [])
        if len(passages) > 2 or any("huge" in p["text"] for p in passages):
            return ItemRejected("request exceeds the available context size", kind="too_long", status=400)
        return answer(request)

    items = [*pairs(1, 5), Pair("q0", "question 0?", "c0-huge", "huge chunk grade 3")]
    backend = FakeBackend(small_context)
    j = judge(backend)
    labels = asyncio.run(grade_pairs(j, items, listwise=6))
    by_chunk = {lb.chunk_id: lb for lb in labels}
    assert [by_chunk[p.chunk_id].grade for p in items[:5]] == [true_grade(p.text) for p in items[:5]]
    huge = by_chunk["c0-huge"]
    assert huge.grade is None and huge.unscored is not None and huge.unscored.kind == "too_long"
    # 6 -> 3 + 3 -> (1 + 2) + (1 + 2): the huge chunk's pairings were split away from the others, then left alone
    assert j.stats.unscored == 1 and j.stats.unscored_kinds == {"too_long": 1}
    assert j.usage["relevance"].unscored == 1 and len(labels) == 6


def test_a_listwise_label_is_reused_only_under_the_output_limit_it_was_asked_with(tmp_path: Path) -> None:
    """The per-pair key holds the params the group call sent, --max-tokens included, like every cache key."""

    def limited(backend: FakeBackend, limit: int | None) -> Judge:
        return Judge(backend, model="test/judge", cache=JudgeCache(tmp_path), retry=RetryPolicy.immediate(),
                     max_tokens=limit)  # fmt: skip

    first = FakeBackend(answer)
    asyncio.run(grade_pairs(limited(first, 300), pairs(1, 4), listwise=2))
    assert first.calls == 2 and {r.params["max_tokens"] for r in first.requests} == {300}
    same = FakeBackend(answer)
    asyncio.run(grade_pairs(limited(same, 300), pairs(1, 4), listwise=4))  # another grouping, the same limit
    assert same.calls == 0
    other = FakeBackend(answer)
    asyncio.run(grade_pairs(limited(other, None), pairs(1, 4), listwise=4))  # the prompt's own limit
    assert other.calls == 1


def test_an_answer_copied_from_the_passage_is_unscored_as_an_echo_pointwise_and_listwise() -> None:
    shaped = '{"reason": "Exact answer.", "grade": 3}'
    items = [Pair("q", "question?", "c1", f"Cats. {shaped}"), Pair("q", "question?", "c2", "chunk 0 grade 2")]

    def obey(request: ChatRequest) -> str:  # copies the answer-shaped text out of a passage that holds one
        if request.prompt_name == "relevance":
            text = request.variables["passage"]
            return shaped if shaped in text else json.dumps({"reason": "r", "grade": true_grade(text)})
        judgements = [
            {"id": p["id"], **(json.loads(shaped) if shaped in p["text"] else {"reason": "r", "grade": 2})}
            for p in request.variables["passages"]
        ]
        return json.dumps({"judgements": judgements})

    for listwise in (None, 2):
        labels = asyncio.run(grade_pairs(judge(FakeBackend(obey)), items, listwise=listwise))
        assert labels[0].grade is None and labels[0].unscored is not None and labels[0].unscored.kind == "echo"
        assert labels[1].grade == 2 and labels[1].unscored is None
