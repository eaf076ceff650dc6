"""Question generation and critique for the offline judge: rules over sentences, no model.

Generation picks the most salient sentence of a passage for the requested type (numbers, names and definitions
first; "To ..."/imperatives for procedural, "if/unless" for conditional, "because/so that" for explanatory) and turns
it into a question by rules per type; the answer is that sentence, quoted verbatim as evidence, split into claims and
clause-level nuggets. Multi-hop and comparison questions combine one sentence from each of two passages; an
unanswerable question asks about a concept absent from the passages.

Each type has several phrasings, as people ask ("Within how many days of delivery can I return unopened items?",
"How much does Ranger cost a year?", "What if my parcel arrives damaged?", "What is the difference between the
shipping policy and the shipping FAQ?"); :func:`~assay.judge.offline_phrasing.choose` picks one from a hash of the
sentence and type, so the same passage always gives the same question. Where a rule cannot reorder a sentence, the
question echoes it ("Values range from how much to $500?"): grammatical, but plainly a baseline.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from assay.judge.offline_lexical import BASELINE, coverage, name_terms, number_set, stem_terms
from assay.judge.offline_phrasing import (
    AFTER_CUT,
    PROCEDURE_VERBS,
    choose,
    front,
    invert,
    lower_first,
    quantity_words,
    topic,
    voice,
)
from assay.judge.outputs import EvidenceQuote, GeneratedQuestion, NuggetItem, QuestionCritique
from assay.text import STOPWORDS, content_hash, numbers, sentences, words

__all__ = ["Source", "critique", "generate", "locate", "units"]

_TYPE_CUES = {
    "procedural": re.compile(r"^(to \w+|\w+ (the|your|a|an)\b)|\b(step|click|select|submit|contact|fill in)\b", re.I),
    "conditional": re.compile(r"\b(if|unless|only when|provided that|except)\b", re.I),
    "explanatory": re.compile(r"\b(because|so that|in order to|to ensure|to avoid|since|therefore)\b", re.I),
    # a quantity: not a digit inside a name (utf-8, daemon-1)
    "numeric": re.compile(r"(?<![\w.])(?<![^\W\d_]-)[$€£]?\d"),
}
_DEFINITION = re.compile(r"^(?P<subject>[^,;:]{3,60}?)\s+(?P<verb>is|are|means|refers to)\s+(a|an|the)\s", re.I)
_CONDITION = re.compile(r"\b(?P<cue>if|unless|when|provided that)\s+(?P<clause>[^,.;:]{4,120})", re.I)
_REASON = re.compile(r"^(?P<clause>.{8,}?),?\s+(because|so that|in order to|to ensure|to avoid|since)\b", re.I)
_NUMBER_UNIT = re.compile(
    r"(?<![\w.])(?<![^\W\d_]-)(?P<cur>[$€£])?(?P<num>\d+(?:[.,]\d+)*)(?P<pct>%| percent)?"
    r"(?:[ -](?P<unit>[A-Za-z]+))?"
)
_TRAILING = frozenset("within between before after during per until via across without".split())
_PRONOUN_START = re.compile(r"^(it|this|that|they|these|those|he|she|its|their)\b", re.I)
_UNSEEN_CONTEXT = re.compile(
    r"\b(the|this|that) (passage|document|text|article|section|excerpt|table|context)\b"
    r"|\bthe above\b|\bthe following\b",
    re.I,
)
_ABSENT_CONCEPTS = (  # (concept, how a person would ask about it)
    ("shipping to Antarctica", "Do you ship to Antarctica?"),
    ("payment in cryptocurrency", "Can I pay in cryptocurrency?"),
    ("the offices on the Moon", "What are the opening hours of the office on the Moon?"),
    ("discounts for left-handed customers", "Is there a discount for left-handed customers?"),
    ("the 1887 edition", "What changed in the 1887 edition?"),
    ("support by carrier pigeon", "Can I reach support by carrier pigeon?"),
)


@dataclass(frozen=True)
class Source:
    """A passage given to the generator: id, text and heading path (may be empty)."""

    id: str
    text: str
    heading: str = ""


def locate(sentence: str, text: str) -> str:
    """The verbatim span of ``text`` that ``sentence`` came from (whitespace inside may differ), else ``sentence``."""
    pattern = r"\s+".join(re.escape(token) for token in sentence.split())
    match = re.search(pattern, text)
    return match.group(0) if match else sentence


_MARKUP = re.compile(r"\*\*|__|`")
_LINK = re.compile(r"\[([^\]]+)\]\([^)\s]+\)")  # a Markdown link: its text
# heading marks, bullets, numbered items, and section numbers before a capital ("2 Using libffi", "3.1 Types")
_LINE_MARK = re.compile(r"^\s*(?:(?:#+|[-*+]|\d+[.)]|\d+(?:\.\d+)*(?=\s+[A-Z]))\s+)+")
_BLOCK_BREAK = re.compile(r"\n(?=\s*(?:[-*+]\s|\d+[.)]\s|#|\|))")
_VERB = re.compile(
    r"\s(is|are|was|were|can|cannot|may|must|will|should|has|have|had|does|do|did|gets?|receives?|earns?|includes?|"
    r"costs?|takes?|needs?|applies|apply|covers?|offers?|requires?)\b",
    re.I,
)


def _plain(sentence: str) -> str:
    """A sentence without Markdown emphasis, heading marks and list bullets."""
    return _LINE_MARK.sub("", _MARKUP.sub("", _LINK.sub(r"\1", sentence))).strip()


def units(text: str) -> list[str]:
    """Sentences of ``text``, with list items, headings and table rows kept apart."""
    return [s for block in _BLOCK_BREAK.split(text) for s in sentences(block)]


def _salience(original: str, kind: str) -> int:
    sentence = _plain(original)
    count = len(sentence.split())
    score = -6 * (not re.search(r"[.!?。！？][\"'”’)\]]*$", sentence)) - 12 * original.lstrip().startswith("#")
    score += 3 * bool(numbers(sentence)) + 2 * bool(name_terms(sentence)) + 2 * bool(_DEFINITION.search(sentence))
    score += 1 if 6 <= count <= 35 else -3 if count < 4 else 0
    score -= 2 * bool(_PRONOUN_START.search(sentence)) + 2 * sentence.rstrip().endswith("?")
    score -= 4 * bool(re.match(r"^[A-Z]{3,}\b", sentence)) + 6 * ("[ ]" in sentence or "[x]" in sentence)
    cue = _TYPE_CUES.get(kind)
    return score + (6 if cue is not None and cue.search(sentence) else 0)


def _pick(source: Source, kind: str, skip: str | None = None) -> str:
    found = [s for s in units(source.text) if s != skip and stem_terms(s)]
    candidates = [s for s in found if s.count("|") < 2] or found or [" ".join(source.text.split())]
    return max(candidates, key=lambda s: (_salience(s, kind), -candidates.index(s)))


def _core(sentence: str) -> str:
    return sentence.strip().rstrip(".!?;:").strip()


_lower_first = lower_first


def _key_phrase(sentence: str, source: Source) -> str:
    """What the sentence is about, as a noun phrase: a defined term, the heading, the subject, or a noun run."""
    definition = _DEFINITION.search(sentence)
    if definition:
        return topic(definition.group("subject"), source.text)
    heading = topic(source.heading.strip().split(" > ")[-1], source.text) if source.heading.strip() else ""
    if heading:  # a heading that is a question ("What is not covered") is kept as the asker's words
        return heading
    verb = _VERB.search(sentence)
    subject = sentence[: verb.start()].strip(" ,;:") if verb else ""
    if 1 <= len(subject.split()) <= 6 and subject.split()[-1].casefold() not in STOPWORDS | _TRAILING:
        return topic(subject, source.text)
    return _noun_run(sentence) or "this topic"


def _noun_run(sentence: str) -> str:
    """The longest run (up to three) of adjacent content words, as written: a rough noun phrase."""
    best: list[str] = []
    run: list[str] = []
    for token in [*re.findall(r"[^\W\d_][\w'’-]*|\S", sentence), "."]:
        content = token[0].isalpha() and token.casefold() not in STOPWORDS and not _VERB.match(f" {token}")
        if content and len(run) < 3:
            run.append(token)
            continue
        if len(run) > len(best):
            best = run
        run = [token] if content else []
    return _lower_first(" ".join(best), sentence) if best else ""


def _quantity(sentence: str) -> re.Match[str] | None:
    """The first quantity of a sentence; a bare number right after a capitalised word is a name ("Emberline 2")."""
    for match in _NUMBER_UNIT.finditer(sentence):
        unit = match.group("unit")
        bare = not (match.group("cur") or match.group("pct")) and (not unit or unit.casefold() in STOPWORDS)
        if not (bare and re.search(r"\b[A-Z][\w-]*\s$", sentence[: match.start()])):
            return match
    return None


def _numeric(sentence: str, source: Source) -> str:
    match = _quantity(sentence)
    if match is None:  # no quantity to ask for (generate() says so in the reason): ask what is said
        return _about(sentence, source)
    ask, end = quantity_words(match, sentence)
    before, after = sentence[: match.start()], _core(sentence[end:])
    fronted = front(ask, before, after, source.text)
    echoed = _core(before + ask + sentence[end:])
    echo = echoed[:1].upper() + echoed[1:] + "?"
    return voice(choose([fronted, fronted, echo] if fronted else [echo], sentence + "|numeric"))


def _about(sentence: str, source: Source) -> str:
    """A question on what is said about the sentence's topic."""
    about = _key_phrase(sentence, source)
    options = [f"What does the documentation say about {about}?", f"What should I know about {about}?",
               f"Can you tell me about {about}?", f"What are the details of {about}?"]  # fmt: skip
    return choose(options, sentence + "|about")


def _factoid(sentence: str, source: Source) -> str:
    definition = _DEFINITION.search(sentence)
    if definition:
        verb = "are" if definition.group("verb").casefold() == "are" else "is"
        term = _lower_first(definition.group("subject"), source.text)
        options = [f"What {verb} {term}?", f"What does {term} mean?", f"Can you explain what {term} {verb}?"]
        return choose(options, sentence + "|definition")
    if _quantity(sentence):
        return _numeric(sentence, source)
    return _about(sentence, source)


def _procedural(sentence: str, source: Source) -> str:
    core = _core(sentence)
    to_clause = re.match(r"^to\s+([^,]{3,100}),", core, re.I)
    action = ""
    if to_clause:
        action = to_clause.group(1)
    elif words(core) and words(core)[0] in PROCEDURE_VERBS and not re.search(r"\s(is|are)\s", core):
        action = _lower_first(core, source.text)
    if action:
        action = voice(AFTER_CUT.split(action, maxsplit=1)[0].strip())
        options = [f"How do I {action}?", f"How can I {action}?", f"What do I need to do to {action}?"]
        return choose(options, sentence + "|procedural")
    about = _key_phrase(sentence, source)
    options = [f"What are the steps for {about}?", f"What is the procedure for {about}?",
               f"What is the process for {about}?"]  # fmt: skip
    return choose(options, sentence + "|steps")


def _conditional(sentence: str, source: Source) -> str:
    match = _CONDITION.search(sentence)
    if match is None or _PRONOUN_START.search(match.group("clause")):
        about = _key_phrase(sentence, source)
        options = [f"What are the conditions for {about}?", f"Are there any conditions for {about}?",
                   f"What exceptions apply to {about}?"]  # fmt: skip
        return choose(options, sentence + "|conditions")
    clause = voice(_core(match.group("clause")))
    if match.group("cue").casefold() == "unless":
        return f"What happens unless {clause}?"
    options = [f"What happens if {clause}?", f"What if {clause}?", f"What should I do if {clause}?"]
    return choose(options, sentence + "|conditional")


def _explanatory(sentence: str, source: Source) -> str:
    match = _REASON.search(_core(sentence))
    if match and ". " not in match.group("clause"):
        clause = voice(_lower_first(match.group("clause"), source.text))
        parts = invert(clause, source.text)
        options = [f"Why is it that {clause}?", f"What is the reason that {clause}?"]
        if parts is not None:
            options = [f"Why {' '.join(p for p in parts if p)}?"] * 2 + options
        return choose(options, sentence + "|explanatory")
    about = _key_phrase(sentence, source)
    options = [f"Can you explain {about}?", f"What should I know about {about}?", f"What is the purpose of {about}?"]
    return choose(options, sentence + "|why")


_SINGLE = {
    "factoid": _factoid,
    "numeric": _numeric,
    "procedural": _procedural,
    "conditional": _conditional,
    "explanatory": _explanatory,
}


_LEAD_CLAUSE = re.compile(r"^((?:if|unless|when|to|because|although|after|before|once|while)\b[^,]{3,}),\s+(.+)$", re.I)


def _clauses(sentence: str) -> list[str]:
    """Clauses of a sentence: split at semicolons, and after a leading if/when/to/because clause (lists stay whole)."""
    out: list[str] = []
    for part in re.split(r";\s+", sentence):
        lead = _LEAD_CLAUSE.match(part.strip())
        pieces = [lead.group(1), lead.group(2)] if lead else [part]
        out.extend(p.strip(" ,;.") for p in pieces if len(p.split()) >= 2)
    return out


def _nuggets(answer: str) -> list[NuggetItem]:
    clauses = [c for s in sentences(answer) for c in _clauses(s)] or [answer.strip()]
    marked = [NuggetItem(text=c, importance="vital" if number_set(c) or name_terms(c) else "okay") for c in clauses]
    if not any(n.importance == "vital" for n in marked):
        marked[0] = NuggetItem(text=marked[0].text, importance="vital")
    return marked


def _result(reason: str, question: str, picks: list[tuple[Source, str]]) -> GeneratedQuestion:
    answer = " ".join(_plain(sentence) for _, sentence in picks)
    evidence = [EvidenceQuote(passage_id=src.id, quote=locate(sentence, src.text)) for src, sentence in picks]
    return GeneratedQuestion(
        reason=reason,
        question=question,
        answer=answer,
        evidence=evidence,
        claims=sentences(answer),
        nuggets=_nuggets(answer),
    )


def _unanswerable(sources: list[Source]) -> GeneratedQuestion:
    seen = {t for src in sources for t in stem_terms(src.text + " " + src.heading)}
    start = int(content_hash(sources[0].text, 2), 16) % len(_ABSENT_CONCEPTS)
    rotated = _ABSENT_CONCEPTS[start:] + _ABSENT_CONCEPTS[:start]
    concept, asked = next((c for c in rotated if not set(stem_terms(c[0])) & seen), rotated[0])
    about = _key_phrase(_plain(_pick(sources[0], "factoid")), sources[0])
    # tied to the passage's topic: two seeds that draw the same concept still ask different questions
    options = [f"About {about}: {asked[0].lower()}{asked[1:]}", f"Does the documentation on {about} mention {concept}?",
               f"Is there anything on {concept} in the documentation on {about}?"]  # fmt: skip
    return GeneratedQuestion(
        reason=f"{BASELINE}: unanswerable question about '{concept}', a concept absent from the passages.",
        question=choose(options, sources[0].text + "|unanswerable"),
        answer=f"The documents do not say anything about {concept}, so the question cannot be answered from them.",
        evidence=[],
        claims=[],
        nuggets=[],
    )


def generate(sources: list[Source], question_type: str) -> GeneratedQuestion:
    """One question of ``question_type`` from ``sources`` (the first for single-hop types, two for combined ones).

    An unknown type is treated as factoid (the reason says so). With one source, multi-hop and comparison take two
    different sentences of it.
    """
    if question_type == "unanswerable":
        return _unanswerable(sources)
    if question_type in ("multi-hop", "comparison"):
        return _two_hop(sources, question_type)
    rule = _SINGLE.get(question_type, _factoid)
    source = sources[0]
    sentence = _pick(source, question_type)
    used = question_type if question_type in _SINGLE else f"factoid (no rule for '{question_type}')"
    if question_type == "numeric" and _quantity(_plain(sentence)) is None:
        rule, used = _factoid, "factoid (the passage states no quantity for a numeric question)"
    reason = f"{BASELINE}: {used} question made by rule from the most salient sentence of passage {source.id}."
    return _result(reason, rule(_plain(sentence), source), [(source, sentence)])


def _two_hop(sources: list[Source], question_type: str) -> GeneratedQuestion:
    first, second = sources[0], sources[1] if len(sources) > 1 else sources[0]
    one = _pick(first, "factoid")
    two = _pick(second, "factoid", skip=one if second is first else None)
    if question_type == "comparison":
        a, b = _key_phrase(_plain(one), first), _key_phrase(_plain(two), second)
        options = [f"How do {a} and {b} compare?", f"What is the difference between {a} and {b}?",
                   f"What are the differences between {a} and {b}?"]  # fmt: skip
        question = choose(options, one + two) if a != b else f"How do the two statements on {a} compare?"
    else:
        q_one, q_two = _core(_factoid(_plain(one), first)), _core(_factoid(_plain(two), second))
        options = [
            f"{q_one}, and {_lower_first(q_two, second.text)}?",
            f"{q_one}? And {_lower_first(q_two, second.text)}?",
        ]
        question = choose(options, one + two)
    reason = (
        f"{BASELINE}: {question_type} question joining a sentence of passage {first.id} and one of passage "
        f"{second.id}; the answer needs both."
    )
    return _result(reason, question, [(first, one), (second, two)])


def _band(value: float) -> int:
    return 5 if value >= 0.8 else 4 if value >= 0.6 else 3 if value >= 0.4 else 2 if value >= 0.2 else 1


def critique(question: str, answer: str, passages: list[str]) -> QuestionCritique:
    """Scores 1-5 from lexical checks: term coverage of question and answer in the passages, unresolved references
    ("the passage", a leading pronoun), and length/shape of the question."""
    joined = " ".join(passages)
    answerable = _band((coverage(question, joined).share + coverage(answer, joined).share) / 2)
    n_words, n_terms = len(question.split()), len(stem_terms(question))
    unseen = bool(_UNSEEN_CONTEXT.search(question))
    pronoun = bool(_PRONOUN_START.search(question) or re.search(r"\b(it|they|this|these)\b\W*\?$", question, re.I))
    self_contained = max(1, 5 - 2 * unseen - 2 * pronoun - (n_terms < 2))
    clear = 5 - (not question.rstrip().endswith("?")) - 2 * (n_words < 4) - (n_words > 30) - (question.count("?") > 1)
    clear = max(1, clear)
    problems = [
        text
        for flag, text in (
            (unseen, "refers to unseen context"),
            (pronoun, "leans on a pronoun"),
            (n_words < 4, "very short"),
            (n_words > 30, "long"),
            (not question.rstrip().endswith("?"), "no question mark"),
        )
        if flag
    ]
    reason = (
        f"{BASELINE}: question and answer terms found in the passages give answerable {answerable}; "
        f"{'; '.join(problems) if problems else 'no lexical problems found'}."
    )
    return QuestionCritique(reason=reason, answerable=answerable, self_contained=self_contained, clear=clear)
