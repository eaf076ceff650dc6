"""Conversations for the offline judge: follow-up turns written and checked by rules, no model.

Writing (``conversation`` prompt). Each turn's standalone **rewrite** is a question the offline generator writes
(:func:`~assay.judge.offline_questions.generate`) from the passage the plan names, skipping sentences earlier turns
used; a pronoun or ellipsis follow-up asks about a sentence that names something the history names (a capitalised
word after a sentence's start), else one that shares two content terms with it, else any, so the follow-up is about
what the conversation is about. The **anchor** is the run of the rewrite's words found in the history that names
something, else the longest (a run of numbers or of dates is none; a word inside an e-mail address or a file name
is none). The **utterance** is made from the rewrite by one rule per dependency kind:

===============  ====================================================================================================
none             the rewrite itself (the first turn, or a later one the plan says is standalone)
pronoun          the anchor (with its article) replaced by "it" ("them" for a plural word)
ellipsis         "And " + the rewrite with "PREPOSITION + anchor" dropped ("How long does delivery take for the
                 Ranger tent?" -> "And how long does delivery take?"); no preposition before the anchor: pronoun
comparison       a comparison question over the first passage and the one the plan names, anchor replaced by "that"
topic_shift      "And " + a question about the passage the plan names (standalone; the marker is a stop word, so a
                 retriever asked the raw turn sees the rewrite's words and no others)
unanswerable     a question about a concept the passages never mention (standalone)
===============  ====================================================================================================

A follow-up whose rewrite shares no content word with the history cannot lean on it: it is written as a standalone
turn and its ``dependency`` says ``none`` (the reason says why), so a turn is never labelled as depending on the
history when it does not.

Checking (``rewrite_check`` prompt): answerable, self-contained and clear are the offline critic's scores of the
rewrite (:func:`~assay.judge.offline_questions.critique`), self-contained lowered by 2 when the rewrite still holds
"it", "they" or "them"; faithful is the share of the utterance's content terms
the rewrite keeps, lowered when the rewrite adds terms found neither in the utterance nor in the history (a
rewrite may only spell out what the history says).

Consistency (``contradiction`` prompt): an answer contradicts an earlier answer of the conversation when a sentence
of each gives a different number for the same unit and the same thing: a quantity is a number and the word after
it ("30 days", "14 days"; a percent sign counts as the word), the two sentences share the unit but no number for it,
and at least two other content terms (the thing: "refunds are paid within 30 days" against "refunds are paid within
14 days"), and, when either names something (a capitalised word inside the sentence), a name ("the Alder kettle's
warranty lasts 14 days" does not clash with "the Birch lantern's warranty lasts 30 days"). Only numeric
disagreements are seen; a contradiction in words ("free" against "costs a fee") is missed.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

from assay.judge.offline_lexical import BASELINE, name_terms, stem_terms
from assay.judge.offline_phrasing import lower_first
from assay.judge.offline_questions import Source, critique, generate, units
from assay.judge.outputs import (
    ContradictionCheck,
    GeneratedConversation,
    GeneratedQuestion,
    GeneratedTurn,
    RewriteCheck,
)
from assay.text import STOPWORDS, sentences, words

__all__ = ["check_contradiction", "check_rewrite", "write_conversation"]

_QUANTITY = re.compile(r"(\d[\d,]*(?:\.\d+)?)\s*(%|[A-Za-z]+)")
_SAME_THING = 2  # content terms two sentences share besides the unit to be about the same thing

_PREPOSITIONS = ("for", "of", "about", "on", "in", "with", "to", "at", "from", "under")
_ARTICLE = r"(?:(?:the|a|an|your|our|its|their)\s+)?"
# words of a question's frame, never an anchor's first or last word ("on what date" is no antecedent)
_FRAME = frozenset(
    "date number much many long know tell details say said mean what how which documentation version within between "
    "before after during per until via across without about".split()
)
_CALENDAR = frozenset(
    "January February March April May June July August September October November December "
    "Monday Tuesday Wednesday Thursday Friday Saturday Sunday".split()
)  # capitalised, but a date names nothing a pronoun could stand for
_DANGLING = re.compile(r"\b(it|they|them)\b", re.I)
_TYPES = {"none": "factoid", "pronoun": "factoid", "ellipsis": "numeric", "topic_shift": "factoid"}


def _content(word: str) -> bool:
    lowered = word.lower()
    return lowered not in STOPWORDS and lowered not in _FRAME and any(ch.isalnum() for ch in word)


def _anchor(rewrite: str, history: str) -> str | None:
    """The run of consecutive words of ``rewrite`` that starts and ends with a content word and occurs in
    ``history`` (case-insensitive, as whole words): one that names something (a capitalised word after the first,
    or a number: "the Skerry 2", "Rental Care") before one that does not, then the longest; None when no content
    word of the rewrite is in the history."""
    tokens = re.findall(r"[\w'-]+", rewrite)
    seen = history.lower()
    best: tuple[bool, int, str] | None = None
    for i, first in enumerate(tokens):
        if not _content(first):
            continue
        for j in range(len(tokens), i, -1):
            if not _content(tokens[j - 1]):
                continue
            phrase = " ".join(tokens[i:j])
            alpha = [t for t in tokens[i:j] if t.isalpha() and t.lower() not in STOPWORDS]
            if not alpha or all(t in _CALENDAR for t in alpha):  # a number or a date is no referent
                continue
            named = any(k > 0 and t[:1].isupper() and t not in _CALENDAR for k, t in enumerate(tokens[i:j], start=i))
            rank = (named, len(phrase), phrase)
            if (best is None or rank[:2] > best[:2]) and re.search(rf"{_EDGE}{re.escape(phrase.lower())}{_END}", seen):
                best = rank
                break
    return best[2] if best is not None else None


def _phrase_pattern(anchor: str) -> str:
    return _ARTICLE + r"\s+".join(re.escape(w) for w in anchor.split())


_EDGE, _END = r"(?<![\w@.-])", r"(?![\w@-]|\.\w)"  # whole words, not inside an address, a file name or a time


def _pronoun(rewrite: str, anchor: str, pronoun: str = "it") -> str:
    out = re.sub(rf"{_EDGE}{_phrase_pattern(anchor)}{_END}", pronoun, rewrite, count=1, flags=re.I)
    return out[0].upper() + out[1:] if out else out


def _ellipsis(rewrite: str, anchor: str) -> str | None:
    pattern = rf"\s*,?\s*\b(?:{'|'.join(_PREPOSITIONS)})\s+{_phrase_pattern(anchor)}\b"
    cut, n = re.subn(pattern, "", rewrite, count=1, flags=re.I)
    if n == 0 or len([w for w in words(cut) if _content(w)]) < 2:
        return None
    cut = re.sub(r"\s+([?.!,])", r"\1", cut).strip()
    return "And " + cut[0].lower() + cut[1:]


def _focus(source: Source, history: str) -> Source:
    """``source`` cut to its sentences that share a name with ``history`` (module docstring), else those that share
    two content terms with it, else whole: a follow-up then asks about what the conversation is about."""
    names, known = name_terms(history), set(stem_terms(history))
    found = units(source.text)
    chosen = [s for s in found if name_terms(s) & names] or [s for s in found if len(set(stem_terms(s)) & known) >= 2]
    return Source(source.id, "\n\n".join(chosen), source.heading) if chosen else source


def _without(source: Source, used: Sequence[str]) -> Source:
    """``source`` with the sentences earlier turns quoted taken out (so a follow-up asks about something new)."""
    text = source.text
    for quote in used:
        text = text.replace(quote, " ")
    return Source(source.id, text if text.strip() else source.text, source.heading)


def _turn(dependency: str, utterance: str, g: GeneratedQuestion, reason: str) -> GeneratedTurn:
    return GeneratedTurn(
        reason=f"{BASELINE}: {reason}",
        dependency=dependency,
        utterance=utterance,
        rewrite=g.question,
        answer=g.answer,
        evidence=g.evidence,
        claims=g.claims,
        nuggets=g.nuggets,
    )


def _follow_up(kind: str, sources: dict[str, Source], passage: str, history: str, used: list[str]) -> GeneratedTurn:
    """One later turn of ``kind`` (module docstring) about ``passage``; ``history``: earlier utterances, rewrites
    and answers as one text; ``used``: quotes earlier turns rest on."""
    first = next(iter(sources.values()))
    target = sources.get(passage, first)
    if kind == "unanswerable":
        g = generate([target], "unanswerable")
        return _turn("unanswerable", g.question, g, "a question on a concept the passages never mention.")
    if kind == "topic_shift":
        g = generate([_without(target, used)], "factoid")
        shifted = f"And {lower_first(g.question, target.text)}"
        return _turn("topic_shift", shifted, g, f"a new subject, from passage {target.id}.")
    if kind == "comparison":
        g = generate([_without(first, used), target], "comparison")
    else:
        g = generate([_focus(_without(target, used), history)], _TYPES.get(kind, "factoid"))
    if kind == "none":  # planned standalone: asked as written, never leaning on the history through a pronoun
        return _turn("none", g.question, g, "planned standalone, asked as written.")
    anchor = _anchor(g.question, history)
    if anchor is None:
        return _turn("none", g.question, g, f"planned {kind}, but the rewrite shares no words with the history.")
    if kind == "ellipsis":
        cut = _ellipsis(g.question, anchor)
        if cut is not None:
            return _turn("ellipsis", cut, g, f"'{anchor}' and its preposition left out, as said before.")
        kind = "pronoun"
    plural = anchor.endswith("s") and not anchor.endswith("ss") and " " not in anchor
    pronoun = "that" if kind == "comparison" else "them" if plural else "it"
    utterance = _pronoun(g.question, anchor, pronoun)
    return _turn(kind, utterance, g, f"'{anchor}', named earlier, replaced by '{pronoun}'.")


def write_conversation(sources: Sequence[Source], plan: Sequence[Mapping[str, Any]]) -> GeneratedConversation:
    """A conversation following ``plan`` (``[{number, dependency, passage?}]``) over ``sources`` (module docstring)."""
    by_id = {s.id: s for s in sources}
    turns: list[GeneratedTurn] = []
    used: list[str] = []
    for step in plan:
        kind, passage = str(step.get("dependency", "none")), str(step.get("passage") or "")
        if not turns:
            g = generate([by_id.get(passage, sources[0])], "factoid")
            turn = _turn("none", g.question, g, "a standalone opening question.")
        else:
            history = " ".join(f"{t.utterance} {t.rewrite} {t.answer}" for t in turns)
            turn = _follow_up(kind, by_id, passage, history, used)
        used.extend(e.quote for e in turn.evidence)
        turns.append(turn)
    subject = turns[0].rewrite if turns else ""
    return GeneratedConversation(
        reason=f"{BASELINE}: follow-ups written by rule from the passages (pronoun, ellipsis, comparison, shift).",
        scenario=f"A user asks: {subject}",
        turns=turns,
    )


def _faithful(utterance: str, rewrite: str, history: str) -> tuple[int, str]:
    said = set(stem_terms(utterance))
    rewritten = set(stem_terms(rewrite))
    known = said | set(stem_terms(history))
    kept = len(said & rewritten) / len(said) if said else 1.0
    added = sorted(rewritten - known)
    score = 5 if kept >= 0.8 else 4 if kept >= 0.6 else 3 if kept >= 0.4 else 2 if kept >= 0.2 else 1
    score = max(1, score - min(2, len(added)))
    note = f"keeps {kept:.0%} of the utterance's terms"
    return score, note + (f"; adds terms found nowhere before: {', '.join(added[:5])}" if added else "")


def check_rewrite(
    history: Sequence[Mapping[str, str]], utterance: str, rewrite: str, answer: str, passages: list[str]
) -> RewriteCheck:
    """The ``rewrite_check`` scores of one turn (module docstring)."""
    base = critique(rewrite, answer, passages)
    past = " ".join(f"{h.get('utterance', '')} {h.get('answer', '')}" for h in history)
    faithful, note = _faithful(utterance, rewrite, past)
    dangling = bool(_DANGLING.search(rewrite))  # a pronoun the rewrite kept points into the history
    if dangling:
        note += "; the rewrite keeps a pronoun (it, they, them), so it is not standalone"
    return RewriteCheck(
        reason=f"{base.reason} Rewrite vs utterance: {note}.",
        answerable=base.answerable,
        self_contained=max(1, base.self_contained - 2) if dangling else base.self_contained,
        faithful=faithful,
        clear=base.clear,
    )


def check_contradiction(answer: str, earlier: Sequence[Source]) -> ContradictionCheck:
    """The consistency rule of the module docstring: the earlier answers (``id``: the turn number) ``answer``
    contradicts, with the clashing quantities in the reason."""
    clashes: list[tuple[int, str]] = []
    for source in earlier:
        clash = _clash(answer, source.text)
        if clash and source.id.isdigit():
            clashes.append((int(source.id), clash))
    if not clashes:
        return ContradictionCheck(reason=f"{BASELINE}: no number differs for the same thing", contradicts=False,
                                  earlier_turns=[])  # fmt: skip
    said = "; ".join(f"turn {turn}: {clash}" for turn, clash in clashes)
    return ContradictionCheck(reason=f"{BASELINE}: {said}", contradicts=True, earlier_turns=[t for t, _ in clashes])


def _clash(answer: str, before: str) -> str | None:
    """The first pair of sentences (answer, earlier) that give different numbers for the same unit and thing."""
    for now in sentences(answer):
        mine = _quantities(now)
        for then in sentences(before) if mine else []:
            theirs = _quantities(then)
            for unit in sorted(mine.keys() & theirs.keys()):
                if mine[unit] & theirs[unit]:
                    continue
                shared = (set(stem_terms(now)) & set(stem_terms(then))) - {unit}
                names = name_terms(now), name_terms(then)
                if len(shared) >= _SAME_THING and (names[0] & names[1] or not names[0] | names[1]):
                    now_said, then_said = " or ".join(sorted(mine[unit])), " or ".join(sorted(theirs[unit]))
                    return f"{now_said} {unit} now, {then_said} {unit} before"
    return None


def _quantities(sentence: str) -> dict[str, set[str]]:
    """Per unit (the stemmed word after a number, or ``%``), the numbers the sentence gives for it."""
    out: dict[str, set[str]] = {}
    for number, unit in _QUANTITY.findall(sentence):
        key = unit if unit == "%" else (stem_terms(unit) or [unit.lower()])[0]
        out.setdefault(key, set()).add(number.replace(",", "").removesuffix(".0"))
    return out
