"""Wording for the offline question generator: topics from headings, questions in the asker's voice, inversion.

Rules, no model: :func:`topic` turns a heading or subject into a noun phrase a person would type ("Shipping policy"
-> "the shipping policy", "How to rent a tent (and other gear)" -> "renting a tent", "3. Create the ticket" -> "create
the ticket"); :func:`voice` puts a customer's "you/your" into the asker's "I/my"; :func:`invert` makes a statement's
subject and verb into question order ("the link is valid" -> ("is", "the link", "valid"); "Ranger costs" -> ("does",
"Ranger", "cost")). :func:`choose` picks one of several phrasings from a blake2b hash of a key, so a question is
the same on every run and machine (never Python's ``hash``, which ``PYTHONHASHSEED`` changes).
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from assay.judge.offline_lexical import name_terms
from assay.text import STOPWORDS, content_hash

__all__ = ["AFTER_CUT", "choose", "front", "gerund", "invert", "lower_first", "quantity_words", "topic", "voice"]

_AUX = r"is|are|was|were|can|cannot|can't|could|must|will|would|should|may|might|has|have|had|does|do|did"
_AUX_CLAUSE = re.compile(rf"^(?P<subject>[^,;:]{{2,60}}?)\s+(?P<aux>{_AUX})\b\s*(?P<rest>.*)$", re.I)
_VERBS = (
    "costs takes lasts needs gets includes covers offers requires applies earns receives runs holds weighs means "
    "charges pays keeps ships arrives returns refunds lets gives allows opens closes starts ends comes goes"
)
_BASE_VERBS = "go take need get include cover offer require earn receive run hold cost last charge pay keep arrive give"


def _clause(verbs: str) -> re.Pattern[str]:
    return re.compile(rf"^(?P<subject>[^,;:]{{2,60}}?)\s+(?P<verb>{'|'.join(verbs.split())})\b\s*(?P<rest>.*)$")


_VERB_CLAUSE, _BASE_CLAUSE = _clause(_VERBS), _clause(_BASE_VERBS)
_NOT_SUBJECT = re.compile(
    r"^(if|when|unless|because|to|for|in|on|at|by|with|from|after|before|once|while|and|or)\b", re.I
)
_DETERMINERS = frozenset("a an the this that these those our your my their its his her every each any some no".split())
_NUMBERING = re.compile(r"^\s*(?:\d+(?:\.\d+)*[.)]?|[A-Z][.)])\s+")
_PARENTHESIS = re.compile(r"\s*[(\[][^)\]\d]*[)\]]\s*$")  # "(and other gear)" goes, "(June 2016)" stays
PROCEDURE_VERBS = frozenset(
    """click open select go contact submit send fill enter call email log sign visit choose press pack attach include
    request complete download install use check add remove update cancel apply book register print create""".split()
)
_HOW_TO = re.compile(r"^how to\s+(?P<verb>[a-z]+)\b(?P<rest>.*)$", re.I)
_WH_HEADING = re.compile(r"^(what|which|who|when|where|why|how|can|do|does|is|are)\b", re.I)
_VOICE = {"you": "I", "your": "my", "yours": "mine", "yourself": "myself", "you're": "I'm", "you've": "I've"}
_VOICE_WORD = re.compile(r"\b(you're|you've|yourself|yours|your|you)\b", re.I)
_PREPOSITION_END = re.compile(
    r"\b(?P<prep>within|for|in|after|before|of|at|from|by|over|under|about|up to|to)\s*$", re.I
)
AFTER_CUT = re.compile(r",|;|:|(?:^|\s)(?:and|but|or|so)\s")
_DATE_PREP = re.compile(r"\b(on|from|until|by|before|after|since)\s*$", re.I)
_YEAR = re.compile(r"\s*,?\s*\d{4}\b")
_MONTHS = frozenset("january february march april may june july august september october november december".split())
_UNIT_PREFIX = frozenset({"business", "working", "calendar", "full", "extra", "square", "cubic"})


def choose(options: Sequence[str], key: str) -> str:
    """One of ``options``, the same for the same ``key`` on every run (blake2b, not ``hash``)."""
    return options[int(content_hash(key, 4), 16) % len(options)]


def lower_first(phrase: str, context: str) -> str:
    """``phrase`` with its first letter lowered, unless that word is an acronym or a name in ``context``."""
    first = phrase.split(" ", 1)[0]
    keep = (first.isupper() and len(first) > 1) or first.casefold() in name_terms(context) or first == "I"
    return phrase if keep or not phrase else phrase[0].lower() + phrase[1:]


def gerund(verb: str) -> str:
    """``rent`` -> ``renting``, ``make`` -> ``making``, ``ship`` -> ``shipping`` (short consonant-vowel-consonant)."""
    low = verb.casefold()
    if low.endswith("e") and not low.endswith(("ee", "ye", "oe")) and len(low) > 2:
        return verb[:-1] + "ing"
    cvc = re.search(r"[^aeiou][aeiou][^aeiouwxy]$", low)
    if cvc and (len(low) <= 3 or low in ("ship", "stop", "plan", "drop", "swap", "trim", "chat", "grip", "shop")):
        return verb + verb[-1] + "ing"
    return verb + "ing"


def topic(phrase: str, context: str) -> str:
    """A heading or subject as a noun phrase to ask about (see the module docstring); "" when nothing is left."""
    text = _PARENTHESIS.sub("", _NUMBERING.sub("", phrase.strip())).split(": ", 1)[0].strip(" .:;-")
    how = _HOW_TO.match(text)
    if how:
        return f"{gerund(how.group('verb').lower())}{how.group('rest')}".strip()
    first = text.split(" ", 1)[0].casefold() if text else ""
    if first in PROCEDURE_VERBS and " " in text:  # "Create the ticket" -> "creating the ticket"
        return f"{gerund(first)}{text[len(first) :]}"
    if not text or _WH_HEADING.match(text):
        return lower_first(text, context)
    lowered = lower_first(text, context)
    one_name = lowered[:1].isupper() and (len(lowered.split()) == 1 or lowered.split()[-1][:1].isupper())
    return lowered if first in _DETERMINERS or one_name or len(text.split()) > 8 else f"the {lowered}"


def voice(text: str) -> str:
    """The asker's voice: "you"/"your" of a customer-facing text as "I"/"my"."""

    def swap(match: re.Match[str]) -> str:
        word = _VOICE[match.group(0).casefold()]
        return word if match.group(0)[0].islower() or word == "I" else word.capitalize()

    return _VOICE_WORD.sub(swap, text)


def invert(clause: str, context: str) -> tuple[str, str, str] | None:
    """``(auxiliary, subject, rest)`` of a statement for question order, or None when its subject is not plain.

    "Refunds are sent to the card" -> ("are", "refunds", "sent to the card"); "Ranger costs $40" -> ("does",
    "Ranger", "cost $40"). The subject is at most eight words and starts with no conjunction or preposition.
    """
    text = clause.strip()
    for pattern in (_AUX_CLAUSE, _VERB_CLAUSE, _BASE_CLAUSE):
        match = pattern.match(text)
        if match is None:
            continue
        subject = match.group("subject").strip()
        if len(subject.split()) > 8 or _NOT_SUBJECT.match(subject):
            return None
        subject = lower_first(subject, context)
        if pattern is _AUX_CLAUSE:
            return match.group("aux").lower(), subject, match.group("rest").strip()
        verb = match.group("verb")
        if pattern is _BASE_CLAUSE:  # a plural subject: "refunds go" -> "do refunds go"
            return "do", subject, f"{verb} {match.group('rest')}".strip()
        base = "have" if verb == "has" else verb[:-2] if verb.endswith(("ches", "shes", "sses")) else verb[:-1]
        base = base[:-1] + "y" if verb.endswith("ies") else base
        return "does", subject, f"{base} {match.group('rest')}".strip()
    return None


def quantity_words(match: re.Match[str], sentence: str) -> tuple[str, int]:
    """The question words for a quantity ("how many days", "how much", "when") and where the quantity ends."""
    unit = match.group("unit")
    if match.group("cur"):
        return "how much", match.end("num")
    if match.group("pct"):
        return "what percentage", match.end("pct")
    if unit and unit.casefold() in _MONTHS:
        year = _YEAR.match(sentence, match.end("unit"))
        ask = "what date" if _DATE_PREP.search(sentence[: match.start()]) else "on what date"
        return ask, year.end() if year else match.end("unit")
    if unit and unit.casefold() in _UNIT_PREFIX:
        following = re.match(r"\s+([A-Za-z]+)", sentence[match.end("unit") :])
        if following:
            return f"how many {unit} {following.group(1)}", match.end("unit") + following.end()
    if unit and unit.casefold() not in STOPWORDS:
        return f"how many {unit if unit.endswith('s') else unit + 's'}", match.end("unit")
    if len(match.group("num")) == 4 and match.group("num").startswith(("19", "20")):
        return "in what year", match.end("num")
    return "what number", match.end("num")


def front(ask: str, before: str, after: str, context: str) -> str:
    """The quantity's question words moved to the front ("For how many minutes is the link valid?"), else ""."""
    prep = _PREPOSITION_END.search(before)
    clause = re.split(r"[;:,]\s", before[: prep.start()] if prep else before)[-1]
    parts = invert(clause.strip(" ,"), context)
    if parts is None or re.search(r"\b(a|an|the)$", parts[2]):
        return ""
    aux, subject, rest = parts
    tail = AFTER_CUT.split(after, maxsplit=1)[0].strip(" .,;:[]()")
    if prep or tail.startswith("of "):  # "within 30 days of delivery": the phrase moves whole
        words = f"{prep.group('prep').lower() if prep else ''} {ask} {tail}".strip()
        body = f"{aux} {subject} {rest}".strip()
    else:
        words, body = ask, f"{aux} {subject} {rest} {tail}".strip()
    question = f"{words} {body}".replace("  ", " ").strip()
    return question[:1].upper() + question[1:] + "?"
