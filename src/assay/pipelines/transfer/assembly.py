"""What every importer of :mod:`assay.pipelines.transfer.imports` shares: the parts a reader produced
(:class:`ImportParts`: documents, chunks, questions and qrels pairs) checked against each other and assembled into a
golden set with its manifest (:func:`assemble`), and the pieces readers build parts from (a passage as a whole chunk,
documents rebuilt from chunks, grades checked against assay's scale, assay's own metadata validated).

:func:`assemble` keeps a pair only when its question and its passage are in the files, counts the others (with the
first one as an example) and the questions left without a label, and names the source of every label.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

from pydantic import BaseModel, ValidationError

from assay._version import __version__
from assay.errors import FormatError
from assay.formats.golden import GoldenSet
from assay.formats.jsonl import first_problem
from assay.text import canonical_json, content_hash
from assay.types import Chunk, Document, LabelSource, Manifest, Provenance, Question, RelevanceLabel, utc_now

__all__ = [
    "MAX_GRADE",
    "ImportParts",
    "ImportSummary",
    "QrelsPair",
    "assemble",
    "checked_grade",
    "documents_from_chunks",
    "validated",
    "whole_chunk",
]

MIN_GRADE, MAX_GRADE = -1, 3
M = TypeVar("M", bound=BaseModel)


@dataclass
class ImportSummary:
    """An imported golden set (not yet saved), the counts of what was skipped, and warnings to show the user."""

    golden: GoldenSet
    source_format: str
    skipped: dict[str, int] = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class QrelsPair:
    where: str  # "file:line", for messages
    query_id: str
    doc_id: str
    grade: int


@dataclass
class ImportParts:
    """What a reader produced, before the shared checks."""

    documents: list[Document]
    chunks: list[Chunk]
    questions: list[Question]
    pairs: list[QrelsPair]
    warnings: list[str] = field(default_factory=list)
    skipped: Counter[str] = field(default_factory=Counter)


def whole_chunk(doc_id: str, text: str, title: str | None) -> Chunk:
    return Chunk(
        id=doc_id, doc_id=doc_id, ordinal=0, text=text, heading_path=[title] if title else [], start=0, end=len(text)
    )


def documents_from_chunks(chunks: Iterable[Chunk], infos: dict[str, dict[str, Any]]) -> list[Document]:
    """One :class:`Document` per ``doc_id`` of ``chunks`` (first-seen order), its text rebuilt from the chunks.

    With offsets on every chunk of a document and texts that agree where chunks overlap, each chunk text is put
    back at ``[start:end]`` and gaps are filled with newlines, so ``doc.text[c.start:c.end] == c.text`` holds;
    otherwise the texts are joined by blank lines in ordinal order. ``infos[doc_id]`` may give ``source``,
    ``title`` and ``metadata``.
    """
    groups: dict[str, list[Chunk]] = {}
    for chunk in chunks:
        groups.setdefault(chunk.doc_id, []).append(chunk)
    out = []
    for doc_id, group in groups.items():
        info = infos.get(doc_id, {})
        text = _place(group)
        if text is None:
            text = "\n\n".join(c.text for c in sorted(group, key=lambda c: c.ordinal))
        meta = info.get("metadata")
        title = info.get("title") if isinstance(info.get("title"), str) else None
        doc = Document(id=doc_id, source=str(info.get("source") or doc_id), title=title, text=text,
                       content_hash=content_hash(text), metadata=meta if isinstance(meta, dict) else {})  # fmt: skip
        out.append(doc)
    return out


def _place(group: list[Chunk]) -> str | None:
    """The document text with every chunk at its offsets, or None when offsets are missing or disagree."""
    if any(c.start is None or c.end is None or c.end - c.start != len(c.text) for c in group):
        return None
    text = ""
    for chunk in sorted(group, key=lambda c: (c.start, c.end)):
        start = int(chunk.start or 0)
        text += "\n" * max(0, start - len(text))
        seen = text[start : start + len(chunk.text)]
        if not chunk.text.startswith(seen):
            return None
        text += chunk.text[len(seen) :]
    return text


def checked_grade(path: Path, line: int | None, value: int, clip: bool, skipped: Counter[str]) -> int:
    if MIN_GRADE <= value <= MAX_GRADE:
        return value
    if not clip:
        raise FormatError(
            path, line, f"grade {value} is outside assay's scale", "-1..3 (0-3, -1 junk); pass --clip-grades to cap"
        )
    skipped["grades_clipped"] += 1
    return min(MAX_GRADE, max(MIN_GRADE, value))


def validated(model: type[M], data: dict[str, Any], path: Path, line: int) -> M:
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        raise FormatError(path, line, f"metadata.assay {first_problem(exc)}", f"a {model.__name__}") from None


def assemble(
    fmt: str, parts: ImportParts, source: LabelSource, *, all_queries: bool, settings: dict[str, Any]
) -> ImportSummary:
    """Check the pairs against questions and passages, build labels, the manifest and the summary."""
    qids = {q.id for q in parts.questions}
    chunk_ids = {c.id for c in parts.chunks}
    labels: list[RelevanceLabel] = []
    now = utc_now()
    unknown: dict[str, list[QrelsPair]] = {"query": [], "passage": []}
    for pair in parts.pairs:
        if pair.query_id not in qids:
            unknown["query"].append(pair)
        elif pair.doc_id not in chunk_ids:
            unknown["passage"].append(pair)
        else:
            prov = Provenance(source=source, time=now)
            labels.append(
                RelevanceLabel(query_id=pair.query_id, chunk_id=pair.doc_id, grade=pair.grade, provenance=prov)
            )
    judged = {label.query_id for label in labels}
    questions = parts.questions if all_queries else [q for q in parts.questions if q.id in judged]
    parts.skipped["qrels_unknown_query"] = len(unknown["query"])
    parts.skipped["qrels_unknown_passage"] = len(unknown["passage"])
    parts.skipped["queries_without_qrels"] = len(parts.questions) - len(questions)
    warnings = parts.warnings + _unknown_warnings(unknown)
    if parts.skipped["queries_without_qrels"]:
        warnings.append(
            f"{parts.skipped['queries_without_qrels']} question(s) have no usable qrels and were left out "
            "(pass --all-queries to keep them)."
        )
    if parts.skipped["grades_clipped"]:
        warnings.append(f"{parts.skipped['grades_clipped']} grade(s) outside -1..3 were capped into it.")
    manifest = Manifest(
        assay_version=__version__,
        corpus_hash=content_hash(canonical_json(sorted((d.id, d.content_hash) for d in parts.documents))),
        settings={"source_format": fmt, "import": {**settings, "label_source": source}},
        counts={k: v for k, v in sorted(parts.skipped.items())},
    )
    golden = GoldenSet(manifest, parts.documents, parts.chunks, questions, labels)
    return ImportSummary(golden, fmt, dict(sorted(parts.skipped.items())), warnings)


def _unknown_warnings(unknown: dict[str, list[QrelsPair]]) -> list[str]:
    out = []
    for kind, pairs in unknown.items():
        if pairs:
            first = pairs[0]
            out.append(
                f"{len(pairs)} qrels line(s) name a {kind} that is not in the files and were not imported "
                f"(first: {first.where}: query {first.query_id!r}, passage {first.doc_id!r}); check that ids match."
            )
    return out
