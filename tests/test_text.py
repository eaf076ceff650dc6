"""Shared text helpers: hand-checked tokens, sentences and hashes."""

from __future__ import annotations

import hashlib

import pytest

from assay.text import (
    canonical_json,
    content_hash,
    count_tokens,
    normalize,
    numbers,
    query_log_key,
    question_key,
    sentences,
    terms,
    words,
)
from assay.types import turn_id


def test_words_keep_inner_punctuation() -> None:
    assert words("Wi-Fi isn't on v2.5, ok?") == ["wi-fi", "isn't", "on", "v2.5", "ok"]


def test_terms_drop_stopwords() -> None:
    assert terms("The refund is issued within 14 days of a return") == [
        "refund",
        "issued",
        "within",
        "14",
        "days",
        "return",
    ]


def test_numbers_strip_thousands() -> None:
    assert numbers("Costs $1,250 or 4.5% (was 20%) in 2024.") == ["1250", "4.5%", "20%", "2024"]


def test_sentences_split_and_abbreviations() -> None:
    text = "Returns are free. Refunds take 5 days, e.g. for cards. Ask Dr. Lee!\n\nNew paragraph without stop"
    assert sentences(text) == [
        "Returns are free.",
        "Refunds take 5 days, e.g. for cards.",
        "Ask Dr. Lee!",
        "New paragraph without stop",
    ]


def test_count_tokens_rough() -> None:
    assert count_tokens("") == 0
    # 44 characters -> 11, 9 words / 0.75 -> 12: the larger
    assert count_tokens("The quick brown fox jumps over the lazy dog.") == 12
    assert count_tokens("x" * 400) == 100  # one long word: the character estimate wins


def test_canonical_json_and_hash_stable() -> None:
    assert canonical_json({"b": 1, "a": [1, "é"]}) == '{"a":[1,"é"],"b":1}'
    assert content_hash("abc") == content_hash(b"abc")
    assert content_hash("abc") == hashlib.blake2b(b"abc", digest_size=8).hexdigest()
    assert content_hash("é", 16) == hashlib.blake2b("é".encode(), digest_size=16).hexdigest()
    assert content_hash("abc") != content_hash("abd")


def test_the_question_keys_agree_on_case_punctuation_and_spacing() -> None:
    text = "What's the  PRICE of a-return?"
    assert question_key(text) == query_log_key(text) == "what s the price of a return"
    assert normalize(text) == "what's the price of a-return?"  # contents keep their punctuation


# the inputs where matching a question and grouping a query log differ on purpose (assay.text's module doc): the log's
# key is hashed into question ids, so it keeps underscores, lower() case, NFKC forms, tag names and line-break hyphens
@pytest.mark.parametrize(
    ("text", "matched", "logged"),
    [
        ("foo_bar", "foo bar", "foo_bar"),
        ("Straße", "strasse", "straße"),
        ("\ufb01le size", "file size", "\ufb01le size"),
        ("<b>Why</b> now?", "why now", "b why b now"),
        ("re-\nturn policy", "return policy", "re turn policy"),
        ("\uff21\uff22", "ab", "\uff41\uff42"),
    ],
)
def test_the_question_keys_differ_where_the_log_key_is_frozen(text: str, matched: str, logged: str) -> None:
    assert (question_key(text), query_log_key(text)) == (matched, logged)


def test_a_turn_id_is_the_conversation_and_the_turn_number() -> None:
    assert turn_id("c7", 3) == "c7-t3"
