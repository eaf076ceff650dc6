"""Shared text helpers: hand-checked tokens, sentences and hashes."""

from __future__ import annotations

import hashlib

from assay.text import canonical_json, content_hash, count_tokens, numbers, sentences, terms, words


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
