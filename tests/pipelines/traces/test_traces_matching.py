"""Traces matched to golden questions a typo or two away (assay.pipelines.traces.matching): word edit distance after
the folding of case and punctuation, one edit per four words of the golden question and at most two, ambiguous
matches refused; counted by kind in the import and in watch."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "formats"))
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "evaluate"))
from otlp_fixture import rag_trace, trace_id, write_lines
from passages_fixture import QUESTIONS, chunk_text, make_passages_golden

from assay.formats.golden import GoldenSet
from assay.formats.traces import read_traces
from assay.pipelines.traces.imports import import_traces
from assay.pipelines.traces.matching import QuestionMatcher, allowed_edits, match_traces, misspelt, word_edits
from assay.types import Manifest, Question

GOLDEN = [
    ("g1", "How long do customers have to return an item?"),  # 9 words: 2 edits allowed
    ("g2", "How much does the tent weigh?"),  # 6 words: 1 edit
    ("g3", "How much does the stove weigh?"),  # 6 words: 1 edit
    ("g4", "Is shipping free?"),  # 3 words: exact only
]


def test_word_distance_counts_inserted_deleted_and_replaced_words() -> None:
    assert word_edits("a b c".split(), "a b c".split())[0] == 0
    assert word_edits("a b c".split(), "a x c".split())[0] == 1  # one replaced
    assert word_edits("a b c".split(), "a c".split())[0] == 1  # one deleted
    assert word_edits("a b c".split(), "b c d e".split())[0] == 3  # a deleted, d and e inserted
    assert word_edits([], "a b".split())[0] == 2


def test_a_misspelling_is_a_character_edit_per_four_characters_a_swap_being_one() -> None:
    assert misspelt("tnet", "tent") and misspelt("retrun", "return") and misspelt("weight", "weigh")
    assert misspelt("custmrs", "customers")  # two edits in nine characters
    assert not misspelt("cstmrs", "customers") and not misspelt("lamp", "tent") and not misspelt("stove", "tent")
    assert word_edits("the tnet".split(), "the tent".split()) == (1, 0)
    assert word_edits("the lamp".split(), "the tent".split()) == (1, 1)


def test_edits_allowed_grow_with_the_length_and_stop_at_two() -> None:
    assert [allowed_edits(n) for n in (1, 3, 4, 7, 8, 11, 12, 30)] == [0, 0, 1, 1, 2, 2, 2, 2]


@pytest.mark.parametrize(
    ("asked", "expected"),
    [
        ("how long do customers have to return an item", (("g1",), "question")),
        ("How long do customers have to retrun an item?", (("g1",), "near_question")),  # one typo
        ("How long do custmers have to retrun an item?", (("g1",), "near_question")),  # two typos
        ("How long do custmers hav to retrun an item?", ((), "none")),  # three: too far
        ("How much does the tnet weigh?", (("g2",), "near_question")),
        ("How much does the tent weight?", (("g2",), "near_question")),
        ("How much does the lamp weigh?", (("g2", "g3"), "ambiguous")),  # as near to the tent as to the stove
        ("How much does a tnet weigh?", ((), "none")),  # two edits in six words
        ("Is shipping fre?", ((), "none")),  # three words: no typo allowed
        ("What is the meaning of life?", ((), "none")),
    ],
)
def test_a_question_matches_by_the_stated_rule(asked: str, expected: tuple[tuple[str, ...], str]) -> None:
    assert QuestionMatcher(GOLDEN).match(asked) == expected


def test_the_import_counts_traces_by_match_kind(tmp_path: Path) -> None:
    q1, q2, q3 = (QUESTIONS[q][0] for q in ("q1", "q2", "q3"))
    assert q3 == "How much does express shipping cost?"
    path = write_lines(
        tmp_path / "t.jsonl",
        rag_trace(1, q1.replace("return", "retrun"), [chunk_text("returns#1")], "30 days.", start_ms=0),
        rag_trace(2, q2, [chunk_text("tent#1")], "3.2 kg.", start_ms=100),
        rag_trace(3, "How much does express delivery cost?", [chunk_text("shipping#1")], "$12.", start_ms=200),
        rag_trace(4, "Which colours does the Brackenhow 4 tent come in?", [chunk_text("tent#1")], "?", start_ms=300),
        rag_trace(5, "Where is my parcel?", [chunk_text("shipping#1")], "?", start_ms=400),
    )  # fmt: skip
    result = import_traces(path, make_passages_golden())
    assert [(line["query_id"], line["trace_id"]) for line in result.lines] == [
        ("q1", trace_id(1)), ("q2", trace_id(2)), ("q3", trace_id(3))
    ]  # fmt: skip
    assert result.matched_by == {"near_question": 2, "question": 1}
    assert [t.trace_id for t in result.unmatched] == [trace_id(4), trace_id(5)]  # 4 word edits from q2: too far
    assert not result.ambiguous


def test_a_misspelling_of_a_short_word_is_one_character_edit() -> None:
    """Four letters allow one character edit: "tant" is "tent" misspelt, "tank" (two edits) is another word."""
    assert misspelt("tant", "tent") and not misspelt("tank", "tent")


def test_the_cheapest_path_counts_a_misspelling_then_a_word_deleted_or_inserted() -> None:
    """Going from "tnet x" to "tent": "tnet" replaced by its correct spelling (an edit, a misspelling) and "x"
    deleted (an edit, not one); the other way round "x" is inserted."""
    assert word_edits("tnet x".split(), ["tent"]) == (2, 1)
    assert word_edits(["tent"], "tnet x".split()) == (2, 1)


def test_the_same_words_out_of_order_are_no_typo() -> None:
    """Every word shared, but two swapped: two edits, both misspellings of a neighbour, over the one edit five words
    allow (it is the count of edits that is bounded, misspellings or not)."""
    matcher = QuestionMatcher([("q", "cat cut cot hat hut")])
    assert matcher.match("cut cat cot hat hut") == ((), "none")


def test_a_nearer_question_found_later_replaces_the_one_found_first() -> None:
    """Both one word away; "twoo" is "two" misspelt, not "four": the second question wins alone."""
    matcher = QuestionMatcher([("four", "How heavy is the big green tent for four?"),
                               ("two", "How heavy is the big green tent for two?")])  # fmt: skip
    assert matcher.match("How heavy is the big green tent for twoo?") == (("two",), "near_question")


def test_match_traces_counts_each_kind_and_keeps_the_ambiguous_ids(tmp_path: Path) -> None:
    """Two traces of each kind but ambiguous, whose one trace names both questions it is as near to."""
    golden = GoldenSet(Manifest(assay_version="test"), questions=[Question(id=q, text=t) for q, t in GOLDEN])
    asked = ["How much does the tent weigh?", "How much does the tnet weigh?", "How much does the lamp weigh?",
             "Where is my parcel?", "Is shipping free?", "How long do customers have to retrun an item?",
             "Why?"]  # fmt: skip
    traces = [rag_trace(i + 1, q, ["p"], "a", start_ms=i) for i, q in enumerate(asked)]
    path = write_lines(tmp_path / "t.jsonl", *traces)
    matching = match_traces(read_traces(path).traces, golden)
    assert dict(matching.kinds) == {"question": 2, "near_question": 2, "ambiguous": 1, "none": 2}
    assert [(t.trace_id, ids) for t, ids in matching.ambiguous] == [(trace_id(3), ("g2", "g3"))]
    assert [t.trace_id for t in matching.unmatched] == [trace_id(4), trace_id(7)]
