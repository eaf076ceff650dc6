"""Scrubbing personal data from logged questions: each kind masked, checksums keep ordinary numbers."""

from __future__ import annotations

import pytest

from assay.pipelines.bootstrap.scrub import luhn_ok, only_masks, scrub


@pytest.mark.parametrize(
    ("text", "want", "kind"),
    [
        ("mail john.doe@example.co.uk now", "mail [EMAIL] now", "email"),
        ("call +44 20 7946 0958 today", "call [PHONE] today", "phone"),
        ("call (415) 555-0132", "call [PHONE]", "phone"),
        ("card 4111 1111 1111 1111 declined", "card [CARD] declined", "card"),
        ("pay to GB82 WEST 1234 5698 7654 32", "pay to [IBAN]", "iban"),
        ("my key sk-abcdefghijklmnop1234 leaked", "my key [TOKEN] leaked", "token"),
        ("ghp_abcdefghijklmnopqrstuvwxyz0123456789 works?", "[TOKEN] works?", "token"),
    ],
)
def test_each_kind_masked(text: str, want: str, kind: str) -> None:
    out = scrub([text])
    assert out.texts == [want]
    assert out.masked == {kind: 1}
    assert out.altered == 1


@pytest.mark.parametrize(
    "text",
    [
        "card 4111 1111 1111 1112 declined",  # fails Luhn
        "price on 2024-01-15 was 1,299.99 for order 123456789",
        "what changed in version 3.2.1 of 2023?",
    ],
)
def test_clean_text_left_alone(text: str) -> None:
    out = scrub([text])
    assert out.texts == [text]
    assert out.altered == 0


def test_luhn() -> None:
    assert luhn_ok("79927398713") and not luhn_ok("79927398710")


@pytest.mark.parametrize(
    ("text", "want", "kind"),
    [
        # generic secrets: 32 and 39 letters and digits (the rule starts at 32), not only 40+
        ("key q7Xw2Lp9Rt4Kz8Nm3Bv6Hc1Jd5Fg0Ysa fails", "key [TOKEN] fails", "token"),
        ("key Zr3Kp8Qw1Lm6Nx4Tv9Bc2Hd7Fj0Gs5Yu8Ei3Ao7 fails", "key [TOKEN] fails", "token"),
        # cards of 13 to 15 digits: Visa 13, Diners 14, Amex 15 (plain and grouped 4-6-5)
        ("card 4222222222222 declined", "card [CARD] declined", "card"),
        ("card 3056 930902 5904 declined", "card [CARD] declined", "card"),
        ("card 378282246310005 declined", "card [CARD] declined", "card"),
        ("card 3782 822463 10005 declined", "card [CARD] declined", "card"),
        # 9-digit phone numbers: national forms, and international ones
        ("call 612 345 678 today", "call [PHONE] today", "phone"),
        ("call 612-345-678 today", "call [PHONE] today", "phone"),
        ("call 01 234 5678 today", "call [PHONE] today", "phone"),
        ("call +34612345678 today", "call [PHONE] today", "phone"),
    ],
)
def test_the_edges_of_each_kind_are_masked(text: str, want: str, kind: str) -> None:
    out = scrub([text])
    assert out.texts == [want]
    assert out.masked == {kind: 1}


@pytest.mark.parametrize(
    "text",
    [
        "key q7Xw2Lp9Rt4Kz8Nm3Bv6Hc1Jd5Fg0Ys fails",  # 31 characters: under the generic rule
        "order 612345678 arrived",  # a bare run of digits is an order number more often than a phone
        "order 12 345 678 arrived",  # 8 digits
        "the fund holds 1 234 567 890 EUR",  # a thousands-grouped amount: no match starts inside it
        "compare 2024 2025 2026 models",  # a list of years
        "card 3782 822463 10006 declined",  # 15 digits failing Luhn
    ],
)
def test_ordinary_numbers_near_the_edges_are_left_alone(text: str) -> None:
    assert scrub([text]).texts == [text]


def test_only_masks() -> None:
    assert only_masks("[EMAIL]") and only_masks(" [PHONE], [EMAIL]! ") and only_masks("")
    assert not only_masks("call [PHONE]") and not only_masks("[EMAIL] 2")


@pytest.mark.parametrize(
    ("text", "want"),
    [
        ("compare 1900 2099 2000 models", "compare 1900 2099 2000 models"),  # years, the range's ends included
        ("compare 2000 2100 2050 models", "compare [PHONE] models"),  # 2100 is no year of the list rule
        ("call 1234 5678 9012 now", "call [PHONE] now"),  # groups of four digits that are not years
        ("call +123 456 789 012 345 now", "call [PHONE] now"),  # 15 digits: the longest phone number
        ("call +123 456 789 012 3456 now", "call +123 456 789 012 3456 now"),  # 16 digits: no phone
    ],
)
def test_the_phone_rules_edges(text: str, want: str) -> None:
    assert scrub([text]).texts == [want]


def test_counts_add_up_over_texts_and_spans() -> None:
    out = scrub(["mail a@example.com or b@example.org", "nothing here", "or c@example.net"])
    assert out.masked == {"email": 3} and out.altered == 2
