"""The offline judge's ``reference_draft``: a reference answer to a user's question from its graded passages.

The rule: every sentence of the passages is scored by how many of the question's stemmed content terms it holds
(ties: passage order, then sentence order); the answer is the best sentence, plus the second best when it comes
from another passage and holds at least half as many question terms. Evidence quotes the chosen sentences verbatim,
claims are those sentences, and the nuggets are the same sentences (vital when they hold a number or a name, the
first always vital). A question none of whose terms occur gets the best passage's first sentence. A baseline, and its
reason says so.
"""

from __future__ import annotations

from assay.judge.offline_lexical import BASELINE, name_terms, number_set, stem_terms
from assay.judge.offline_questions import Source, locate
from assay.judge.outputs import DraftedReference, EvidenceQuote, NuggetItem
from assay.text import sentences

__all__ = ["draft_reference"]


def _scored(question: str, sources: list[Source]) -> list[tuple[int, int, int, Source, str]]:
    asked = set(stem_terms(question))
    out = []
    for p, source in enumerate(sources):
        for s, sentence in enumerate(sentences(source.text)):
            out.append((-len(asked & set(stem_terms(sentence))), p, s, source, sentence))
    return sorted(out, key=lambda row: row[:3])


def draft_reference(question: str, sources: list[Source]) -> DraftedReference:
    """The drafted answer, evidence, claims and nuggets (see the module docstring)."""
    ranked = _scored(question, sources)
    if not ranked:
        return DraftedReference(reason=f"{BASELINE}: no passage text", answer="", evidence=[], claims=[], nuggets=[])
    best = ranked[0]
    picks = [best]
    second = next((row for row in ranked[1:] if row[3].id != best[3].id), None)
    if second is not None and best[0] < 0 and second[0] * 2 <= best[0]:
        picks.append(second)
    chosen = [(row[3], row[4].strip()) for row in picks]
    nuggets = [
        NuggetItem(text=text, importance="vital" if i == 0 or number_set(text) or name_terms(text) else "okay")
        for i, (_, text) in enumerate(chosen)
    ]
    return DraftedReference(
        reason=f"{BASELINE}: the sentences sharing most terms with the question ({-best[0]} terms)",
        answer=" ".join(text for _, text in chosen),
        evidence=[EvidenceQuote(passage_id=src.id, quote=locate(text, src.text)) for src, text in chosen],
        claims=[text for _, text in chosen],
        nuggets=nuggets,
    )
