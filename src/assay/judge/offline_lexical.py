"""Lexical evidence for the offline judge: stemmed term overlap, shared numbers and names, support by coverage.

Everything here is a deterministic function of its arguments (no corpus statistics, no state), so a label for a
(question, passage) pair is the same whichever other passages are judged with it, and can be cached per pair.

Relevance score (a BM25-shaped, self-normalised overlap)::

    tf_part(t) = min(1, tf * (k1 + 1) / (tf + k1 * (1 - b + b * dl / avgdl)))     k1 = 1.2, b = 0.3, avgdl = 100
    W = sum_t w(t)          s = sum_t w(t) * tf_part(t) / W          over the question's content terms and numbers
    w = 2.0 for a number, 1.5 for a capitalised name, 0.5 for a generic word (day, time, use, ...), else 1.0;
    a number matches only exactly

``tf_part`` is 1 for a term that occurs once in a passage of average length (``dl`` = its content-term count), less
in a longer passage (the answer is "buried"), and never above 1, so the coverage ``s`` is in [0, 1]. There is no
idf: a label may not depend on the other passages of a corpus (it is cached per pair); the weights stand in for it.

Grades (calibrated against human labels, see bench/agreement.py): a grade needs the coverage
``s >= need(c, cap) = min(cap, c / W ** 0.7)``: the share of the question a passage must cover falls with the
question's total term weight ``W``, since a long question (a paragraph of needs) is rarely covered whole by a
relevant passage, and is capped for short ones (where ``c / W ** 0.7`` would exceed what one passage can cover).
Equivalently the matched weight ``s * W`` must reach ``c * W ** 0.3``.

- 3: ``s >= need(5.0, 0.9)``, at least two weighted terms match, and the passage holds the kind of answer asked
  for (a number for "how many", a name for "who");
- 2: ``s >= need(3.3, 0.8)``;
- 1: ``s >= need(2.9, 0.6)``;
- else 0. A question without content terms gets 0.

For a four-term question that is 0.6 / 0.8 / 0.9 of its weight (grade 1 / 2 / 3); for a ten-term question
0.58 / 0.66 / 0.9; for a twenty-term question 0.36 / 0.41 / 0.61. One general rule, not fitted per query or
document, set on the BM25 top-20 pools of two collections with human labels and checked on a third
(bench/agreement.py; figures in README "How good is the offline judge?"): CISI (library science, 76 queries of ~26
terms), Cranfield (aerodynamics, 225 queries of ~10 terms), CACM held out. The exponent is what lets one rule hold
on both: with ``1 / sqrt(W)`` (rules 1) the rate graded >= 1 matched CISI's people (24.5%) but was 38% on
Cranfield, where people say 15%. The three constants keep the ratios they had (1 : 1.14 : 1.71).

Claims (rules 3): a text's claims are its clauses, not its sentences: each sentence that asserts something is cut at
``,``/``;``/``:`` followed by a space and before a joining word (and, but, or, which, while, because, so, whereas,
although), and a piece with fewer than two distinct content terms joins the piece before it (the first joins the
next). A long sentence holds several facts; a verdict on it whole is all or nothing, and one missing fact sank the
rest. A claim is *entailed* by a text that holds at least half of its weighted content terms and every number in
it: the half that :func:`support` calls partial and attribution calls "uses". Measured in ``bench/answers.py``:
set on MTRAG's human ratings, checked on RAGChecker's human preferences (kept aside); figures in the README.

:data:`RULES` names this rule set; it is part of the offline judge's cache key, so labels cached under older
rules are not served under these.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass
from typing import Literal

from assay.text import STOPWORDS, numbers, sentences, terms, words

__all__ = [
    "BASELINE",
    "RULES",
    "Coverage",
    "Level",
    "answer_relevance",
    "asserts_something",
    "claims",
    "coverage",
    "entails",
    "expected_answer",
    "is_noncommittal",
    "name_terms",
    "need",
    "number_set",
    "quoted_sentences",
    "relevance",
    "stem",
    "stem_terms",
    "support",
]

Level = Literal["support", "partial", "none"]
BASELINE = "Offline lexical baseline, not an LLM"  # opens every reason the offline judge writes
K1, B, AVGDL = 1.2, 0.3, 100.0
# (c, cap) of each grade's required coverage need = min(cap, c / W ** NEED_EXPONENT); see the module docstring.
GRADE_NEEDS = ((3, 5.0, 0.9), (2, 3.3, 0.8), (1, 2.9, 0.6))
NEED_EXPONENT = 0.7
RULES = "rules-3"  # bump when a change to these rules changes any answer the offline judge gives
NUMBER_WEIGHT, NAME_WEIGHT = 2.0, 1.5
# Words that frame a question without naming its topic.
QUESTION_FILLERS = frozenset(
    "many much long often kind type sort please tell explain describe give list name way ways exactly".split()
)
# Courtesy and filler words: a sentence made only of these asserts nothing.
COURTESY_TERMS = frozenset("thanks thank hope helps help hello hi glad sorry welcome great sure okay ok".split())
NUMBER_WORDS = frozenset("one two three four five six seven eight nine ten eleven twelve once twice half".split())
_NUMERIC_Q = re.compile(r"\b(how (many|much|long|often|old|far|soon)|what (percentage|percent|year|date|time)|when)\b")
_NAME = re.compile(r"\b[A-Z][\w'’-]*")
_SENTENCE_START = re.compile(r"(^|[.!?:;]\s+|\n\s*)$")
_NONCOMMITTAL = re.compile(
    r"\b(i (do not|don't|dont) know|not (sure|certain)|(cannot|can't|can not|unable to|could not|couldn't) "
    r"(answer|say|determine|find|provide|tell|help)|no (information|answer|mention|data)|(does|do|did) not "
    r"(say|mention|specify|provide|contain|state)|not (mentioned|specified|provided|stated|available|covered)|"
    r"it depends|i'?m sorry|no idea)\b"
)
_SUFFIXES = (("sses", "ss"), ("ies", "y"), ("ing", ""), ("ed", ""), ("es", ""), ("s", ""))


def stem(word: str) -> str:
    """A light suffix stripper: ``refunds``/``refunded``/``refunding`` -> ``refund``, ``policies`` -> ``policy``.

    Only words of five letters or more lose a suffix (``-s`` from four), never ``-ss``/``-us``/``-is``; a final ``e``
    is dropped so ``issue`` and ``issued`` meet, and a doubled consonant left by ``-ing``/``-ed`` is undoubled
    (``shipped`` -> ``ship``) unless it is l, s or z. Good enough to match inflections, not a linguistic stemmer.
    """
    if word.isdigit() or len(word) < 4:
        return word
    for suffix, replacement in _SUFFIXES:
        if word.endswith(suffix) and len(word) - len(suffix) >= 3:
            if suffix == "s" and word.endswith(("ss", "us", "is")):
                break
            word = word[: -len(suffix)] + replacement
            if suffix in ("ing", "ed") and len(word) > 3 and word[-1] == word[-2] and word[-1] not in "lsz":
                word = word[:-1]
            break
    return word[:-1] if len(word) > 4 and word.endswith("e") else word


# Words so common in any corpus that sharing them says little: a fixed stand-in for a low idf (weight 0.5).
GENERIC_TERMS = frozenset(
    stem(w)
    for w in """day days time times year years people person thing things way use used using make made get got need
    needs new also may might must one first last good well see know like want go going work information""".split()
)
GENERIC_WEIGHT = 0.5


def stem_terms(text: str) -> list[str]:
    """Stemmed content terms of ``text`` without digits (numbers are matched by :func:`number_set`)."""
    return [stem(t) for t in terms(text) if not any(ch.isdigit() for ch in t)]


def asserts_something(sentence: str) -> bool:
    """False for a sentence with no number and no content term beyond courtesy words ("Thanks!", "Hope this helps")."""
    return bool(number_set(sentence)) or any(t not in COURTESY_TERMS for t in terms(sentence))


_CITATION = re.compile(r"\[\s*\d+(?:\s*[,;\u2013-]\s*\d+)*\s*\]")  # [4], [1, 2], [3-5]: a pointer, not a fact


def number_set(text: str) -> set[str]:
    """Numbers written in ``text``, without ``%``, signs or a trailing ``.0``; citation markers (``[4]``, ``[1, 2]``)
    are not numbers of the text."""
    return {n.rstrip("%").lstrip("+").removesuffix(".0") for n in numbers(_CITATION.sub(" ", text))}


def name_terms(text: str) -> set[str]:
    """Stemmed words written with a capital letter somewhere other than the start of a sentence (names, products)."""
    out: set[str] = set()
    for match in _NAME.finditer(text):
        token = match.group(0).casefold()
        if token in STOPWORDS or _SENTENCE_START.search(text[: match.start()]):
            continue
        out.add(stem(token))
    return out


def expected_answer(question: str) -> str | None:
    """``"number"`` for how many/much/long/when-questions, ``"name"`` for who-questions, else None."""
    lowered = question.casefold()
    if _NUMERIC_Q.search(lowered):
        return "number"
    if re.search(r"\b(who|whom|whose)\b", lowered):
        return "name"
    return None


def _has_answer_kind(kind: str | None, passage: str) -> bool:
    if kind == "number":
        return bool(numbers(passage)) or any(p in NUMBER_WORDS for w in words(passage) for p in w.split("-"))
    if kind == "name":
        return bool(name_terms(passage))
    return True


def _query_terms(question: str) -> tuple[list[str], set[str], set[str]]:
    names = name_terms(question)
    unique = list(dict.fromkeys(t for t in stem_terms(question) if t not in QUESTION_FILLERS))
    return unique, number_set(question), names


def _listing(items: list[str], limit: int = 8) -> str:
    shown = ", ".join(items[:limit])
    return shown + (f" (+{len(items) - limit} more)" if len(items) > limit else "")


def relevance(question: str, passage: str) -> tuple[int, str]:
    """Grade 0..3 and a reason for one (question, passage) pair, by the formula in the module docstring."""
    q_terms, q_numbers, q_names = _query_terms(question)
    if not q_terms and not q_numbers:
        return 0, f"{BASELINE}: the question has no content terms to match; grade 0."
    p_terms = stem_terms(passage)
    counts, p_numbers = Counter(p_terms), number_set(passage)
    norm = 1 - B + B * len(p_terms) / AVGDL
    total = score = 0.0
    shared: list[str] = []
    for term in q_terms:
        weight = NAME_WEIGHT if term in q_names else GENERIC_WEIGHT if term in GENERIC_TERMS else 1.0
        tf = counts.get(term, 0)
        total += weight
        if tf:
            shared.append(term)
            score += weight * min(1.0, tf * (K1 + 1) / (tf + K1 * norm))
    shared_numbers = sorted(q_numbers & p_numbers)
    total += NUMBER_WEIGHT * len(q_numbers)
    score += NUMBER_WEIGHT * len(shared_numbers)
    s = score / total
    kind = expected_answer(question)
    kind_ok = _has_answer_kind(kind, passage)
    strong = len(shared) + 2 * len(shared_numbers) >= min(2, len(q_terms) + 2 * len(q_numbers))
    grade = _grade(s, total, top_allowed=strong and kind_ok)
    return grade, _relevance_reason(
        grade,
        s,
        needs=[need(total, c, cap) for _, c, cap in GRADE_NEEDS],
        shared=shared,
        q_terms=q_terms,
        shared_numbers=shared_numbers,
        q_names=q_names,
        kind=kind,
        kind_ok=kind_ok,
    )


QUOTED_MOST = 3  # sentences the offline judge quotes for a passage graded 1 or more


def quoted_sentences(question: str, passage: str) -> list[str]:
    """The passage's sentences that bear on the question, as the offline judge quotes them for a grade of 1 or more:
    each sentence's matched weight (the question's content terms and numbers it holds, weighted as in the module
    docstring, each once); the sentences within half of the best one's weight, at most :data:`QUOTED_MOST`, the
    heaviest first (ties: the earlier sentence), kept in passage order. None when no sentence matches anything."""
    q_terms, q_numbers, q_names = _query_terms(question)
    scored = []
    for at, sentence in enumerate(sentences(passage)):
        held = set(stem_terms(sentence))
        weight = sum(NAME_WEIGHT if t in q_names else GENERIC_WEIGHT if t in GENERIC_TERMS else 1.0
                     for t in q_terms if t in held)  # fmt: skip
        weight += NUMBER_WEIGHT * len(q_numbers & number_set(sentence))
        if weight > 0:
            scored.append((weight, at, sentence))
    if not scored:
        return []
    best = max(weight for weight, _, _ in scored)
    kept = sorted((item for item in scored if item[0] >= best / 2), key=lambda item: (-item[0], item[1]))
    return [sentence for _, _, sentence in sorted(kept[:QUOTED_MOST], key=lambda item: item[1])]


def need(weight: float, c: float, cap: float) -> float:
    """The coverage a grade requires of a question of total term weight ``weight``: ``min(cap, c / weight ** 0.7)``."""
    return min(cap, c / weight**NEED_EXPONENT) if weight > 0 else cap


def _grade(s: float, weight: float, *, top_allowed: bool) -> int:
    for grade, c, cap in GRADE_NEEDS:
        if s >= need(weight, c, cap) and (grade < 3 or top_allowed):
            return grade
    return 0


def _relevance_reason(
    grade: int,
    s: float,
    *,
    needs: list[float],
    shared: list[str],
    q_terms: list[str],
    shared_numbers: list[str],
    q_names: set[str],
    kind: str | None,
    kind_ok: bool,
) -> str:
    parts = [f"{BASELINE}:"]
    if shared:
        parts.append(f"shares terms {_listing(shared)} ({len(shared)} of {len(q_terms)} question terms);")
    else:
        parts.append("shares none of the question's terms;")
    missing = [t for t in q_terms if t not in shared]
    if missing:
        parts.append(f"missing {_listing(missing)};")
    if shared_numbers:
        parts.append(f"number {', '.join(shared_numbers)};")
    if names := sorted(q_names & set(shared)):
        parts.append(f"name {', '.join(names)};")
    if kind and not kind_ok:
        parts.append(f"no {kind} in the passage, which the question asks for;")
    ladder = "/".join(f"{n:.2f}" for n in reversed(needs))
    parts.append(f"BM25-style coverage {s:.2f} (grades 1/2/3 need {ladder}) -> grade {grade}.")
    return " ".join(parts)


@dataclass(frozen=True)
class Coverage:
    """How much of a statement's content a passage holds: ``share`` of its weighted terms, and its numbers."""

    share: float
    matched: tuple[str, ...]
    missing: tuple[str, ...]
    missing_numbers: tuple[str, ...]
    has_content: bool


def coverage(statement: str, passage: str) -> Coverage:
    """Share of the statement's (stemmed, name-weighted) content terms that occur in ``passage``; numbers apart."""
    s_terms = list(dict.fromkeys(stem_terms(statement)))
    names = name_terms(statement)
    p_terms = set(stem_terms(passage))
    matched = tuple(t for t in s_terms if t in p_terms)
    weight = {t: NAME_WEIGHT if t in names else 1.0 for t in s_terms}
    total = sum(weight.values())
    share = sum(weight[t] for t in matched) / total if total else 0.0
    s_numbers = number_set(statement)
    missing_numbers = tuple(sorted(s_numbers - number_set(passage)))
    if not s_terms and s_numbers:
        share = 1.0 - len(missing_numbers) / len(s_numbers)
    missing = tuple(t for t in s_terms if t not in p_terms)
    return Coverage(share, matched, missing, missing_numbers, bool(s_terms or s_numbers))


def _level(cov: Coverage) -> Level:
    if cov.has_content and cov.share >= 0.8 and not cov.missing_numbers:
        return "support"
    return "partial" if cov.has_content and cov.share >= 0.5 else "none"


def support(statement: str, passages: list[tuple[str, str]]) -> tuple[Level, list[str], str]:
    """``(level, passage_ids, reason)`` for a statement against ``(id, text)`` passages.

    ``support``: one passage (or the two best together) covers at least 80% of the statement's content terms and
    every number in it; ``partial``: some passage covers at least 50%; ``none`` otherwise. The ids are the passages
    that reach the level found.
    """
    if not passages:
        return "none", [], f"{BASELINE}: no passages were given; none."
    covs = [(pid, coverage(statement, text)) for pid, text in passages]
    if not any(c.has_content for _, c in covs):
        return "none", [], f"{BASELINE}: the statement has no content terms to check; none."
    levels: tuple[Level, Level] = ("support", "partial")
    for level in levels:
        ids = [pid for pid, c in covs if _level(c) == level]
        if level == "support" and not ids:
            ids = _pair_support(statement, passages, covs)
        if ids:
            best = max((c for pid, c in covs if pid in ids), key=lambda c: c.share)
            return level, ids, _support_reason(level, ids, best)
    best_pid, best = max(covs, key=lambda pc: pc[1].share)
    return "none", [], _support_reason("none", [best_pid], best)


def _pair_support(statement: str, passages: list[tuple[str, str]], covs: list[tuple[str, Coverage]]) -> list[str]:
    ranked = sorted(range(len(covs)), key=lambda i: -covs[i][1].share)[:2]
    if len(ranked) < 2 or covs[ranked[1]][1].share == 0:
        return []
    joined = " ".join(passages[i][1] for i in ranked)
    return [covs[i][0] for i in sorted(ranked)] if _level(coverage(statement, joined)) == "support" else []


def _support_reason(level: str, ids: list[str], cov: Coverage) -> str:
    where = f"passage {', '.join(ids)}" if ids else "no passage"
    text = f"{BASELINE}: {where} covers {cov.share:.0%} of the statement's terms"
    if cov.missing:
        text += f" (missing {_listing(list(cov.missing))})"
    if cov.missing_numbers:
        text += f"; number {', '.join(cov.missing_numbers)} not found"
    return text + f"; {level}."


_CLAUSE_BREAK = re.compile(r"[,;:]\s+|\s+(?=(?:and|but|or|which|while|because|so|whereas|although)\s)")
CLAUSE_TERMS = 2  # a clause needs this many distinct content terms, else it joins its neighbour


def claims(text: str) -> list[str]:
    """The clauses of ``text``'s sentences that assert something (module docstring, "Claims"), as written."""
    out: list[str] = []
    for sentence in sentences(text):
        if not asserts_something(sentence):
            continue
        spans: list[tuple[int, int]] = []
        start = 0
        for end in [m.end() for m in _CLAUSE_BREAK.finditer(sentence)] + [len(sentence)]:
            if len(set(stem_terms(sentence[start:end]))) >= CLAUSE_TERMS:
                spans.append((start, end))
                start = end
        if not spans:
            spans.append((0, len(sentence)))
        elif start < len(sentence):  # a short tail joins the clause before it
            spans[-1] = (spans[-1][0], len(sentence))
        out.extend(sentence[a:b].strip() for a, b in spans)
    return out


def entails(statement: str, text: str) -> tuple[bool, str]:
    """Whether ``text`` holds at least half of ``statement``'s weighted content terms and all its numbers, and why."""
    cov = coverage(statement, text)
    entailed = cov.has_content and cov.share >= 0.5 and not cov.missing_numbers
    reason = f"{BASELINE}: the text holds {cov.share:.0%} of the claim's terms"
    if cov.missing:
        reason += f" (missing {_listing(list(cov.missing))})"
    if cov.missing_numbers:
        reason += f"; number {', '.join(cov.missing_numbers)} not found"
    return entailed, reason + ("; entailed (half or more, every number)." if entailed else "; neutral.")


def is_noncommittal(answer: str) -> bool:
    """True for an evasive answer: "I don't know", "cannot answer", "the documents do not say", "it depends"."""
    return bool(_NONCOMMITTAL.search(answer.casefold().replace("’", "'"))) or not answer.strip()


def answer_relevance(question: str, answer: str) -> tuple[int, bool, str]:
    """``(score 0..3, noncommittal, reason)``: share of the question's terms the answer repeats, and its kind.

    A noncommittal answer scores 0. Otherwise 3 for coverage >= 0.6, 2 for >= 0.35, 1 for any overlap, else 0; a
    short answer (12 words or fewer) that holds the kind of answer asked for (a number, a name) is raised one level,
    and an answer without it is capped at 2.
    """
    if is_noncommittal(answer):
        return 0, True, f"{BASELINE}: the answer is noncommittal (declines or does not know); score 0."
    q_terms, q_numbers, _ = _query_terms(question)
    a_terms, a_numbers = set(stem_terms(answer)), number_set(answer)
    matched = sum(t in a_terms for t in q_terms) + len(q_numbers & a_numbers)
    share = matched / (len(q_terms) + len(q_numbers)) if q_terms or q_numbers else 0.0
    score = 3 if share >= 0.6 else 2 if share >= 0.35 else 1 if matched else 0
    kind = expected_answer(question)
    has_kind = _has_answer_kind(kind, answer)
    if kind and has_kind and len(answer.split()) <= 12:
        score = min(3, score + 1)
    if kind and not has_kind:
        score = min(2, score)
    note = f"; no {kind} in the answer, which the question asks for" if kind and not has_kind else ""
    return score, False, f"{BASELINE}: the answer repeats {share:.0%} of the question's terms{note}; score {score}."
