"""A small SMART collection written for the judge-card tests, and the true grades the scripted judges use.

Four questions, each ``library`` + three topic words; two documents per question hold each topic word once (grade 2
for it, listed as relevant), eight neutral documents hold none. Every document says ``library`` once, so BM25 pools
every question with ten documents (2 relevant, 8 not).
"""

from __future__ import annotations

from pathlib import Path

TOPICS = {
    "1": ("maps", "atlas", "cartography"),
    "2": ("manuscripts", "parchment", "binding"),
    "3": ("periodicals", "subscriptions", "serials"),
    "4": ("microfilm", "readers", "archives"),
}
NEUTRAL = (
    "The library opens at nine. Visitors leave umbrellas by the door.",
    "The library cafe sells soup. Tables fill quickly at noon.",
    "The library garden has benches. Pigeons gather near the fountain.",
    "The library car park is small. Cyclists use the racks outside.",
    "The library hosts concerts. Tickets sell out in spring.",
    "The library roof was repaired. Workers came for two weeks.",
    "The library staff wear badges. Volunteers help on weekends.",
    "The library lift is slow. Stairs are faster for most people.",
)


def question(qid: str) -> str:
    a, b, c = TOPICS[qid]
    return f"Library {a} {b} {c}?"


def relevant_docs(qid: str) -> list[tuple[str, str]]:
    a, b, c = TOPICS[qid]
    first = f"The library keeps {a} in a vault. Curators describe {b} and {c} carefully."
    second = f"Our library lends {a} to scholars. Notes on {b} and {c} come with each loan."
    return [(f"{qid}0", first), (f"{qid}1", second)]


def documents() -> dict[str, str]:
    docs = {doc_id: text for qid in TOPICS for doc_id, text in relevant_docs(qid)}
    docs.update({f"9{k}": text for k, text in enumerate(NEUTRAL)})
    return docs


def passage(doc_id: str) -> str:
    """The passage text assay reads for a document: its title and body on two lines."""
    return f"Doc {doc_id}\n{documents()[doc_id]}"


def truth() -> dict[tuple[str, str], int]:
    """(question, passage) -> true grade: 2 for a question's own documents, 0 for any other pair."""
    own = {(qid, doc_id) for qid in TOPICS for doc_id, _ in relevant_docs(qid)}
    return {
        (question(qid), passage(doc_id)): 2 if (qid, doc_id) in own else 0 for qid in TOPICS for doc_id in documents()
    }


def write_collection(folder: Path) -> Path:
    """CISI-shaped files (x.ALL, x.QRY, x.REL) in ``folder``."""
    folder.mkdir(parents=True, exist_ok=True)
    docs = "".join(f".I {doc_id}\n.T\nDoc {doc_id}\n.W\n{text}\n" for doc_id, text in documents().items())
    (folder / "TOY.ALL").write_text(docs)
    (folder / "TOY.QRY").write_text("".join(f".I {qid}\n.W\n{question(qid)}\n" for qid in TOPICS))
    rel = "".join(f"{qid} {doc_id} 0 0.0\n" for qid in TOPICS for doc_id, _ in relevant_docs(qid))
    (folder / "TOY.REL").write_text(rel)
    return folder
