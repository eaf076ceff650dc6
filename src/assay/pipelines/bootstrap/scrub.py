"""Mask personal data in a user's questions, and in every field written beside them (ids), before any judge sees
them (``assay build --queries``; ``--no-scrub``).

Kinds, masked in this order (a masked span is never matched again), each replaced by its placeholder:

1. ``[EMAIL]``  ``name@domain.tld``.
2. ``[TOKEN]``  API-token-like strings: known prefixes (``sk-``, ``sk_live_``, ``ghp_``, ``github_pat_``, ``xoxb-``,
   ``AKIA`` + 16, ``AIza`` + 35, ``glpat-``, JWTs ``eyJ..``.``..``.``..``), and any run of 32 or more
   letters, digits, ``_`` or ``-`` holding both letters and digits (a generic secret; a 32-hex trace id is masked
   too: it cannot be told from a 32-hex API key).
3. ``[IBAN]``   two letters, two check digits and 11 to 30 letters or digits (spaces allowed every four), whose
   ISO 13616 mod-97 check holds.
4. ``[CARD]``   13 to 19 digits (spaces or dashes allowed between groups) that pass the Luhn check: Visa's 13 and
   16, Diners' 14, Amex's 15 (``3782 822463 10005``), up to 19.
5. ``[PHONE]``  9 to 15 digits written as a phone number: after a leading ``+`` (``+34 612 345 678``), or as digit
   groups of 2 to 4 joined by single spaces, dots or dashes, the first maybe in parentheses (``(415) 555-0132``,
   ``612 345 678``, ``01 234 5678``). Left alone, as ordinary numbers: a bare run of digits (``612345678``: more
   often an order or a version number), fewer than 9 digits (dates, times, short codes), groups that continue a
   number already begun (``1 234 567 890``: the match would start after a 1-digit group), and a list of years
   (every group of four digits from 1900 to 2099: ``2024 2025 2026``). A 9-digit amount grouped by spaces
   (``123 456 789``) is masked: it cannot be told from a national phone number, and a phone kept is the worse
   mistake.

The checksums (Luhn, mod-97) keep ordinary numbers in questions (amounts, years, order numbers) unmasked; the bench
(``bench/traffic.py --part scrub``) measures recall on planted personal data and how many clean questions change.

A text left with nothing but placeholders (``"[EMAIL]"``, ``"[PHONE] [EMAIL]"``: no letter or digit besides them)
is :func:`only_masks`: the build drops its line and counts it (it is no question, only someone's data).
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field

__all__ = ["KINDS", "Scrubbed", "luhn_ok", "only_masks", "scrub", "scrub_one"]

KINDS = ("email", "token", "iban", "card", "phone")

_EMAIL = re.compile(r"[A-Za-z0-9._%+-]+@[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)*\.[A-Za-z]{2,}")
_TOKEN = re.compile(
    r"\b(?:sk-[A-Za-z0-9_-]{16,}|(?:sk|pk|rk)_(?:live|test)_[A-Za-z0-9]{10,}|gh[pousr]_[A-Za-z0-9]{30,}"
    r"|github_pat_[A-Za-z0-9_]{30,}|xox[abpr]-[A-Za-z0-9-]{10,}|AKIA[0-9A-Z]{16}|AIza[0-9A-Za-z_-]{35}"
    r"|glpat-[A-Za-z0-9_-]{20}|eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,})"
    r"|(?<![A-Za-z0-9_-])(?=[A-Za-z0-9_-]*\d)(?=[A-Za-z0-9_-]*[A-Za-z])[A-Za-z0-9_-]{32,}(?![A-Za-z0-9_-])"
)
_IBAN = re.compile(r"\b[A-Z]{2}\d{2}(?: ?[A-Z0-9]){11,30}\b")
_CARD = re.compile(r"(?<![\d-])\d(?:[ -]?\d){12,18}(?![\d-])")
_PHONE = re.compile(
    r"(?<![\w+])(?<!\d[ .-])(?:\+\d[\d().\s-]{7,20}\d|\(?\d{2,4}\)?(?:[\s.-]\(?\d{2,4}\)?){2,5})(?![\w])"
)


@dataclass
class Scrubbed:
    """Scrubbed texts and how many spans of each kind were masked (``masked``), and in how many texts."""

    texts: list[str]
    masked: Counter[str] = field(default_factory=Counter)
    altered: int = 0


def luhn_ok(digits: str) -> bool:
    """The Luhn check of a string of digits (payment card numbers pass it)."""
    total = 0
    for i, ch in enumerate(reversed(digits)):
        d = int(ch) * (2 if i % 2 else 1)
        total += d - 9 if d > 9 else d
    return total % 10 == 0


def _iban_ok(text: str) -> bool:
    compact = text.replace(" ", "")
    moved = compact[4:] + compact[:4]
    return int("".join(str(int(ch, 36)) for ch in moved)) % 97 == 1


def _digits(text: str) -> str:
    return re.sub(r"\D", "", text)


def _card(text: str) -> bool:
    return luhn_ok(_digits(text))


def _phone(text: str) -> bool:
    groups = re.findall(r"\d+", text)
    years = all(len(g) == 4 and 1900 <= int(g) <= 2099 for g in groups)
    return 9 <= len(_digits(text)) <= 15 and not years


_RULES: tuple[tuple[str, re.Pattern[str], Callable[[str], bool] | None], ...] = (
    ("email", _EMAIL, None),
    ("token", _TOKEN, None),
    ("iban", _IBAN, _iban_ok),
    ("card", _CARD, _card),
    ("phone", _PHONE, _phone),
)


def scrub_one(text: str, masked: Counter[str] | None = None) -> str:
    """``text`` with every span of each kind replaced by ``[KIND]``; counts added to ``masked``."""
    for kind, pattern, check in _RULES:

        def replace(found: re.Match[str], kind: str = kind, check: Callable[[str], bool] | None = check) -> str:
            if check is not None and not check(found.group(0)):
                return found.group(0)
            if masked is not None:
                masked[kind] += 1
            return f"[{kind.upper()}]"

        text = pattern.sub(replace, text)
    return text


_PLACEHOLDER = re.compile(r"\[(?:" + "|".join(kind.upper() for kind in KINDS) + r")\]")


def only_masks(text: str) -> bool:
    """Whether ``text`` holds no letter or digit besides its placeholders (nothing but masked personal data)."""
    return not any(ch.isalnum() for ch in _PLACEHOLDER.sub(" ", text))


def scrub(texts: list[str]) -> Scrubbed:
    """Each of ``texts`` scrubbed (see the module docstring), with the counts by kind."""
    out = Scrubbed(texts=[])
    for text in texts:
        clean = scrub_one(text, out.masked)
        out.altered += clean != text
        out.texts.append(clean)
    return out
