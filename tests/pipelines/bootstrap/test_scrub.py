"""Scrubbing personal data from logged questions: each kind masked, checksums keep ordinary numbers."""

from __future__ import annotations

import pytest

from assay.pipelines.bootstrap.scrub import luhn_ok, scrub


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
