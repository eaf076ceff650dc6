"""Quotes on relevance labels: the sentences a judge says bear on the question, kept only when they stand in the
passage (judge/quotes.py): paraphrases dropped and counted, grade 0 quoting nothing, the same through the listwise
path and its per-pair cache, and through a panel."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from pathlib import Path

from assay.judge.base import ChatRequest, ChatResponse
from assay.judge.cache import JudgeCache
from assay.judge.client import Judge
from assay.judge.limits import RetryPolicy
from assay.judge.quotes import QUOTES_MAX, checked_quotes, stands_in
from assay.judge.relevance import Pair, grade_pairs
from assay.testing import FakeBackend

PASSAGE = "Returns are free. Customers may return any item within 30 days. Refunds take 5 business days."
KEPT = "customers may return any item  within 30 days"  # case and spacing differ: the same words
PARAPHRASE = "You have a month to send things back."


def test_a_quote_stands_in_its_passage_by_its_words() -> None:
    assert stands_in(KEPT, PASSAGE) and stands_in("Returns are free.", PASSAGE)
    assert not stands_in(PARAPHRASE, PASSAGE) and not stands_in("", PASSAGE)
    assert not stands_in("return any item within 31 days", PASSAGE)  # one word off is not the passage
    assert not stands_in("free Customers", "Returns are freely given. Customers ...")  # whole words only


def test_paraphrases_are_dropped_and_counted_and_grade_0_quotes_nothing() -> None:
    assert checked_quotes([KEPT, PARAPHRASE, KEPT.upper()], PASSAGE, 3) == ([KEPT.strip()], 1)
    assert checked_quotes([KEPT], PASSAGE, 0) == ([], 0)
    many = [f"word{i}" for i in range(QUOTES_MAX + 3)]
    kept, dropped = checked_quotes(many, " ".join(many), 2)
    assert kept == many[:QUOTES_MAX] and dropped == 0


def _answer(request: ChatRequest) -> str:
    if request.prompt_name == "relevance":
        return json.dumps({"reason": "r", "grade": 3, "quotes": [KEPT, PARAPHRASE]})
    return json.dumps({"judgements": [{"id": p["id"], "reason": "r", "grade": 2, "quotes": [PARAPHRASE, KEPT]}
                                      for p in request.variables["passages"]]})  # fmt: skip


def _judge(backend: FakeBackend, cache: Path | None = None) -> Judge:
    return Judge(backend, model="test/judge", cache=JudgeCache(cache) if cache else None,
                 retry=RetryPolicy.immediate(), concurrency=2)  # fmt: skip


def test_pointwise_and_listwise_labels_keep_the_quotes_in_the_passage(tmp_path: Path) -> None:
    pairs = [Pair("q1", "How long do I have to return an item?", "c1", PASSAGE)]
    [point] = asyncio.run(grade_pairs(_judge(FakeBackend(_answer)), pairs))
    assert (point.grade, point.quotes, point.quotes_dropped) == (3, [KEPT.strip()], 1)
    backend = FakeBackend(_answer)
    [listed] = asyncio.run(grade_pairs(_judge(backend, tmp_path / "c"), pairs, listwise=5))
    assert (listed.grade, listed.quotes, listed.quotes_dropped) == (2, [KEPT.strip()], 1)
    again = FakeBackend(_answer)  # a new grouping reads the pair's own cache entry: the same quotes, no call
    [cached] = asyncio.run(grade_pairs(_judge(again, tmp_path / "c"), pairs, listwise=3))
    assert again.calls == 0 and cached.quotes == [KEPT.strip()]


def test_a_judge_that_gives_no_quotes_leaves_the_label_without_any() -> None:
    backend = FakeBackend(lambda r: json.dumps({"reason": "r", "grade": 2}))
    [label] = asyncio.run(grade_pairs(_judge(backend), [Pair("q1", "q?", "c1", PASSAGE)]))
    assert label.grade == 2 and label.quotes is None and label.quotes_dropped == 0
    assert "quotes" not in label.model_dump(mode="json")  # nothing written for a label without quotes


def _cut(content: str) -> Callable[[ChatRequest], ChatResponse]:
    def answer(request: ChatRequest) -> ChatResponse:
        return ChatResponse(content=content, prompt_tokens=100, completion_tokens=512, finish_reason="length")

    return answer


def test_an_answer_cut_while_listing_its_quotes_keeps_its_whole_grade(tmp_path: Path) -> None:
    """A small model loops on its quotes until max_tokens: the reason and grade came whole before them, so the label
    keeps its grade without quotes (counted as ``cut_kept``, cached as a valid answer); an answer cut before its
    grade stays unscored, as before."""
    looping = (
        '{"reason": "it says 30 days", "grade": 2, "quotes": ["Returns are free.", ' + '"Returns are free.", ' * 40
    )
    judge = _judge(FakeBackend(_cut(looping)), tmp_path / "cache")
    [label] = asyncio.run(grade_pairs(judge, [Pair("q1", "How long?", "c1", PASSAGE)]))
    assert (label.grade, label.quotes, label.provenance.rationale) == (2, None, "it says 30 days")
    assert judge.stats.cut_kept == 1 and not judge.stats.unscored_kinds
    again = _judge(FakeBackend(_cut("never called")), tmp_path / "cache")
    [cached] = asyncio.run(grade_pairs(again, [Pair("q1", "How long?", "c1", PASSAGE)]))
    assert cached.grade == 2 and again.stats.calls == 0
    early = _judge(FakeBackend(_cut('{"reason": "it says 30 days and ' + "and " * 200)))
    [lost] = asyncio.run(grade_pairs(early, [Pair("q1", "How long?", "c1", PASSAGE)]))
    assert lost.grade is None and lost.unscored is not None and lost.unscored.kind in ("loop", "truncated")


def test_a_grade_of_1_keeps_its_quotes_and_no_grade_keeps_none() -> None:
    """Grade 1 is relevant: its quotes are kept; a label without a grade (None) or below 0 keeps none. Each quote
    not in the passage is counted. (Boundaries the mutation habit, scripts/mutation.sh, found untested.)"""
    assert checked_quotes([KEPT], PASSAGE, 1) == ([KEPT], 0)
    assert checked_quotes([KEPT], PASSAGE, None) == ([], 0)
    assert checked_quotes([KEPT], PASSAGE, -1) == ([], 0)
    assert checked_quotes([PARAPHRASE, KEPT, "Refunds are instant."], PASSAGE, 2) == ([KEPT], 2)
