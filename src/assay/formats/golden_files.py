"""The golden folder's file names, and reading its files one by one, each checked line by line.

A problem within one file (a duplicate id, a passage's span outside its document, two labels of one span that
disagree, a manifest that is not JSON or is of a newer format) raises :class:`~assay.errors.FormatError` naming the
file, the line and the fix; problems between files (a label naming an absent question) are
:mod:`assay.formats.golden_checks`'s. :func:`carry_over` copies the files the golden set does not own into a new
folder.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Literal, Protocol, TypeVar

from pydantic import BaseModel, ValidationError

from assay.errors import DatasetError, FormatError
from assay.formats.jsonl import first_problem, iter_records, upgrade_advice
from assay.types import FORMAT_VERSION, Conversation, Document, Manifest, Passage

__all__ = [
    "CONVERSATIONS",
    "FILES",
    "FIX",
    "MANIFEST",
    "PASSAGES",
    "Documents",
    "Part",
    "carry_over",
    "read_conversations",
    "read_manifest",
    "read_part",
    "read_passages_file",
    "read_unique",
]

Part = Literal["documents", "chunks", "questions", "qrels", "nuggets", "passages", "conversations"]
FILES: dict[Part, str] = {
    "documents": "documents.jsonl",
    "chunks": "chunks.jsonl",
    "questions": "questions.jsonl",
    "qrels": "qrels.jsonl",
    "nuggets": "nuggets.jsonl",
}
PASSAGES = "passages.jsonl"  # optional: a golden set without evaluated passages has none
CONVERSATIONS = "conversations.jsonl"  # optional: a golden set of single questions has none
MANIFEST = "manifest.json"
FIX = "run `assay build CORPUS -o FOLDER` to create a golden set"
M = TypeVar("M", bound=BaseModel)


class Documents(Protocol):
    """The documents a passage's span is checked against: what :func:`read_passages_file` reads of a
    :class:`~assay.formats.golden.GoldenSet` (named here so that this module needs no import of it)."""

    def has_document(self, doc_id: str) -> bool: ...

    def document(self, doc_id: str) -> Document: ...


def read_part(folder: Path, part: Part, model: type[M]) -> list[M]:
    return [record for _, record in iter_records(folder / FILES[part], model, part)]


def read_conversations(path: Path) -> list[Conversation]:
    """``conversations.jsonl`` (absent: none), each conversation id once (:class:`FormatError` naming the line)."""
    if not path.is_file():
        return []
    seen: dict[str, int] = {}
    out: list[Conversation] = []
    for line, conversation in iter_records(path, Conversation, "conversations"):
        if conversation.id in seen:
            raise FormatError(path, line, f"duplicate conversation id {conversation.id!r} (first on line "
                              f"{seen[conversation.id]})", "one line per conversation")  # fmt: skip
        seen[conversation.id] = line
        out.append(conversation)
    return out


def read_passages_file(path: Path, golden: Documents | None = None) -> list[Passage]:
    """``passages.jsonl`` checked line by line (:class:`FormatError` naming the file, the line and the fix): ids are
    unique; a passage's offsets lie inside its golden document (when ``golden`` is given); the labels of one passage
    for one question from one source (model or annotator) agree, since they are labels of the same span."""
    if not path.is_file():
        return []
    seen: dict[str, int] = {}
    out: list[Passage] = []
    for line, passage in iter_records(path, Passage, "passages"):
        if passage.id in seen:
            raise FormatError(path, line, f"duplicate passage id {passage.id!r} (first on line {seen[passage.id]})",
                              "one line per passage: merge their labels into one line")  # fmt: skip
        seen[passage.id] = line
        if golden is not None:
            check_span(path, line, passage, golden)
        check_agree(path, line, passage)
        out.append(passage)
    return out


def check_span(path: Path, line: int, passage: Passage, golden: Documents) -> None:
    if passage.start is None and passage.end is None:
        return
    fix = "0 <= start < end <= the document's length, with doc_id a golden document (or remove the line)"
    if passage.doc_id is None or passage.start is None or passage.end is None:
        raise FormatError(path, line, f"passage {passage.id!r} needs doc_id, start and end together", fix)
    if not golden.has_document(passage.doc_id):
        raise FormatError(path, line, f"passage {passage.id!r}: unknown doc_id {passage.doc_id!r}", fix)
    size = len(golden.document(passage.doc_id).text)
    if not 0 <= passage.start < passage.end <= size:
        problem = f"passage {passage.id!r}: span {passage.start}-{passage.end} outside document {passage.doc_id!r}"
        raise FormatError(path, line, f"{problem} ({size} characters)", fix)


def check_agree(path: Path, line: int, passage: Passage) -> None:
    grades: dict[tuple[str, str, str], int | None] = {}
    for label in passage.labels:
        who = label.provenance.annotator or label.provenance.model or ""
        key = (label.query_id, label.provenance.source, who)
        if key in grades and grades[key] != label.grade:
            raise FormatError(
                path, line,
                f"passage {passage.id!r} has two {label.provenance.source} labels of {who or 'one source'} for "
                f"{label.query_id!r} that disagree ({grades[key]} and {label.grade}) on the same span",
                "keep one label per question and source on a passage",
            )  # fmt: skip
        grades[key] = label.grade


def read_unique(folder: Path, part: Part, model: type[M]) -> list[M]:
    """Read ``part``; a duplicate id raises :class:`FormatError` naming both lines."""
    seen: dict[str, int] = {}
    out: list[M] = []
    path = folder / FILES[part]
    for line, record in iter_records(path, model, part):
        rid = str(getattr(record, "id", ""))
        if rid in seen:
            raise FormatError(path, line, f"duplicate id {rid!r} (first on line {seen[rid]})", "unique ids")
        seen[rid] = line
        out.append(record)
    return out


def read_manifest(path: Path) -> Manifest:
    try:
        raw = json.loads(path.read_text(encoding="utf-8"))
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise FormatError(path, None, f"not valid JSON ({exc})", "the manifest assay build writes") from None
    version = raw.get("format_version", FORMAT_VERSION) if isinstance(raw, dict) else FORMAT_VERSION
    if isinstance(version, int) and version > FORMAT_VERSION:
        written = raw.get("assay_version")
        by = f"assay {written}" if isinstance(written, str) and written else "a newer assay"
        raise DatasetError(
            f"{path}: golden-set format version {version} was written by {by}; this assay reads up to version "
            f"{FORMAT_VERSION}. {upgrade_advice(version, written if isinstance(written, str) else None)}"
        )
    try:
        return Manifest.model_validate(raw)
    except ValidationError as exc:
        raise FormatError(path, None, first_problem(exc, "manifest"), "a Manifest") from None


def carry_over(old: Path, new: Path) -> None:
    """Copy files of ``old`` that the golden set does not write (e.g. audit.sqlite) into ``new``."""
    if not old.is_dir():
        return
    ours = {MANIFEST, PASSAGES, CONVERSATIONS, *FILES.values()}
    for item in sorted(old.iterdir()):
        if item.name in ours or item.name.startswith("."):
            continue
        if item.is_dir():
            shutil.copytree(item, new / item.name)
        else:
            shutil.copy2(item, new / item.name)
