"""pooled_passages and write_passage_map on hand-placed passages of one short document: which offsets count as
located (and give the document's text), what is counted as left out, and the side file's text as written."""

from __future__ import annotations

import json
from datetime import timedelta
from pathlib import Path

from transfer_fixture import SPACED_TEXT, T0, make_golden

from assay.pipelines.transfer.spans import pooled_passages, write_passage_map
from assay.types import Passage, Provenance, RelevanceLabel, Unscored

DOC = "notes with space.txt"  # SPACED_TEXT: "Opening hours: Monday to Friday, ..." ending "public holidays."
N = len(SPACED_TEXT)


def label(qid: str, pid: str, grade: int | None) -> RelevanceLabel:
    unscored = Unscored(reason="no JSON") if grade is None else None
    prov = Provenance(source="judge", model="offline", time=T0 + timedelta(minutes=1))
    return RelevanceLabel(query_id=qid, chunk_id=pid, grade=grade, provenance=prov, unscored=unscored)


def passage(pid: str, text: str, start: int | None, end: int | None, doc_id: str | None = DOC) -> Passage:
    return Passage(id=pid, text=text, match="exact", doc_id=doc_id, start=start, end=end)


def test_offsets_inside_the_document_locate_the_passage_and_give_the_documents_text() -> None:
    golden = make_golden()
    passages = [
        passage("first", "Opening", 0, 7),  # starts the document
        passage("last", "holidays.", N - 9, N),  # ends it
        passage("approx", "monday ", 15, 21),  # the run's text differs: the span's text is exported
        passage("empty", "x", 5, 5),  # an empty span is no place
        passage("past", "y", 60, N + 5),
        passage("no-end", "z", 3, None),
        passage("no-start", "w", None, 5),
        passage("ghost", "v", 0, 3, doc_id="missing.md"),
    ]
    golden.add_passage_labels(passages, [label("q0", p.id, 2) for p in passages])
    pooled = {p.id: p for p in pooled_passages(golden).passages}
    located = {pid: (p.text, p.document.id if p.document else None) for pid, p in pooled.items()}
    assert located == {
        "first": ("Opening", DOC),
        "last": ("holidays.", DOC),
        "approx": ("Monday", DOC),
        "empty": ("x", None),
        "past": ("y", None),
        "no-end": ("z", None),
        "no-start": ("w", None),
        "ghost": ("v", None),
    }


def test_each_pair_left_out_is_counted() -> None:
    golden = make_golden()
    one = passage("one", "Opening", 0, 7)
    other = passage("other", "hours", 8, 13)
    labels = [label("q0", "one", None), label("q1", "one", None), label("q0", "other", 1), label("q1", "other", 0)]
    golden.add_passage_labels([one, other], [*labels, label("q2", "other", 3)])
    pooled = pooled_passages(golden, min_grade=2)
    assert (pooled.unscored, pooled.below_min_grade) == (2, 2)
    assert [(p.id, p.grades) for p in pooled.passages] == [("other", (("q2", 3),))]


def test_the_side_file_keeps_text_beyond_ascii_as_it_is(tmp_path: Path) -> None:
    golden = make_golden()
    loose = Passage(id="t:cafe", text="Café crème, 9 to 17.", match="unmatched")
    golden.add_passage_labels([loose], [label("q0", loose.id, 2)])
    path = tmp_path / "passages.jsonl"
    assert write_passage_map(path, pooled_passages(golden).passages, lambda pid: pid.upper()) == 1
    line = path.read_text(encoding="utf-8")
    assert line == '{"id": "T:CAFE", "doc_id": null, "start": null, "end": null, "text": "Café crème, 9 to 17."}\n'
    assert json.loads(line)["text"] == loose.text
