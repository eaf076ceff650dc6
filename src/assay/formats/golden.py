"""The golden-set folder: ``manifest.json`` and five versioned JSONL files (DESIGN.md section 3).

::

    golden/
      manifest.json      Manifest: versions, corpus hash, models, prompts, seeds, counts, usage
      documents.jsonl    Document records
      chunks.jsonl       Chunk records
      questions.jsonl    Question records (claims and nuggets inline)
      qrels.jsonl        RelevanceLabel records (graded 0-3, or unscored), every one with provenance
      nuggets.jsonl      NuggetSupport records: the chunks that support each nugget
      passages.jsonl     (optional) Passage records: passages of evaluated runs that are not chunks, located in the
                         documents, with the labels the judge gave them (written by ``assay eval``)
      conversations.jsonl  (optional) Conversation records: turns in order, a judged turn naming its question, a
                         context turn (unjudged, CAsT) naming none and carrying its own rewrite and answer; each
                         conversation has a judged turn (``assay build --conversations``)
      audit.sqlite       (once someone audits; owned by assay.audit, kept across saves)

:meth:`GoldenSet.save` builds the whole folder under a temporary name and swaps it in, so a failure midway leaves
the old folder (or none); files it does not own (``audit.sqlite``) are carried over. :meth:`GoldenSet.update`
rewrites chosen files one at a time, each atomically, for labels added later.
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal, Protocol, TypeVar

from pydantic import BaseModel, ValidationError

from assay.errors import DatasetError, FormatError
from assay.formats.atomic import atomic_dir, atomic_files, atomic_write_text, finish_pending
from assay.formats.jsonl import first_problem, iter_records, write_jsonl
from assay.types import (
    FORMAT_VERSION,
    Chunk,
    Conversation,
    Document,
    LabelSource,
    Manifest,
    NuggetSupport,
    Passage,
    Question,
    RelevanceLabel,
    Turn,
)

__all__ = [
    "CONVERSATIONS",
    "FILES",
    "MANIFEST",
    "PASSAGES",
    "SOURCE_PRECEDENCE",
    "GoldenSet",
    "LabelOrigin",
    "Part",
    "label_origin",
    "read_passages",
    "write_passages",
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
# When a (question, chunk) pair has labels from several sources, qrels use the first source in this order.
SOURCE_PRECEDENCE: tuple[LabelSource, ...] = ("human", "imported", "judge", "generator")
# Where a golden set's labels came from, by their provenance: people (human; imported: brought from elsewhere, e.g.
# assessors' qrels imported without --source human), a machine (judge, generator), both (mixed), or none at all.
LabelOrigin = Literal["human", "imported", "judge", "mixed", "none"]
MACHINE_SOURCES: frozenset[str] = frozenset({"judge", "generator"})
_FIX = "run `assay build CORPUS -o FOLDER` to create a golden set"
M = TypeVar("M", bound=BaseModel)


class _HasId(Protocol):
    @property
    def id(self) -> str: ...


R = TypeVar("R", bound=_HasId)


@dataclass
class GoldenSet:
    """A golden set in memory. Ids of documents, chunks and questions must be unique (checked on creation)."""

    manifest: Manifest
    documents: list[Document] = field(default_factory=list)
    chunks: list[Chunk] = field(default_factory=list)
    questions: list[Question] = field(default_factory=list)
    qrels: list[RelevanceLabel] = field(default_factory=list)
    nuggets: list[NuggetSupport] = field(default_factory=list)
    passages: list[Passage] = field(default_factory=list)
    conversations: list[Conversation] = field(default_factory=list)

    def __post_init__(self) -> None:
        self._documents = _unique("document", self.documents)
        self._chunks = _unique("chunk", self.chunks)
        self._questions = _unique("question", self.questions)

    # ------------------------------------------------------------------ lookups

    def document(self, doc_id: str) -> Document:
        """The document with id ``doc_id``; ``KeyError`` naming it when absent."""
        return _get(self._documents, "document", doc_id)

    def has_document(self, doc_id: str) -> bool:
        return doc_id in self._documents

    def chunk(self, chunk_id: str) -> Chunk:
        """The chunk with id ``chunk_id``; ``KeyError`` naming it when absent."""
        return _get(self._chunks, "chunk", chunk_id)

    def question(self, query_id: str) -> Question:
        """The question with id ``query_id``; ``KeyError`` naming it when absent."""
        return _get(self._questions, "question", query_id)

    def has_chunk(self, chunk_id: str) -> bool:
        return chunk_id in self._chunks

    def turn_of(self, query_id: str) -> tuple[Conversation, int] | None:
        """The conversation whose turn is ``query_id`` (a question, or a context turn's id), and the turn's index;
        None for a single question."""
        for conversation in self.conversations:
            for index, turn in enumerate(conversation.turns):
                if turn.question_id == query_id:
                    return conversation, index
        return None

    def turn_texts(self, turn: Turn) -> tuple[str, str]:
        """A turn's standalone rewrite and reference answer ("" when it has none): its question's for a judged turn,
        its own for a context turn."""
        if not turn.judged:
            return turn.rewrite or "", turn.answer or ""
        question = self.question(turn.question_id)
        return question.text, question.reference_answer or ""

    def qrels_map(self, *, source: LabelSource | None = None) -> dict[str, dict[str, int]]:
        """Graded qrels ``{query_id: {chunk_id: grade}}``; unscored labels are left out (see :meth:`unscored`).

        With ``source`` only that source's labels count; otherwise each pair takes the scored label of the first
        source in :data:`SOURCE_PRECEDENCE` (a human label overrides the judge's). Questions without a scored label
        are absent from the map.
        """
        out: dict[str, dict[str, int]] = {}
        for (qid, cid), label in self._chosen(source).items():
            if label.grade is not None:
                out.setdefault(qid, {})[cid] = label.grade
        return out

    def unscored(self, *, source: LabelSource | None = None) -> list[RelevanceLabel]:
        """Labels of pairs that have no scored label (under the same selection as :meth:`qrels_map`)."""
        return [label for label in self._chosen(source).values() if label.grade is None]

    def standing(self) -> list[RelevanceLabel]:
        """The label that stands for each judged pair, the one :meth:`qrels_map` and :meth:`unscored` read: a scored
        label beats an unscored one, then :data:`SOURCE_PRECEDENCE`, then the newer label. Pairs in qrels order."""
        return list(self._chosen(None).values())

    def _chosen(self, source: LabelSource | None) -> dict[tuple[str, str], RelevanceLabel]:
        return _standing(label for label in self.qrels if source is None or label.provenance.source == source)

    def nugget_support(self, query_id: str) -> dict[str, list[str]]:
        """``{nugget_id: chunk_ids}`` of fully supporting chunks for one question."""
        return {n.nugget_id: list(n.chunk_ids) for n in self.nuggets if n.query_id == query_id}

    def nugget_support_by_query(self) -> dict[str, dict[str, list[str]]]:
        """:meth:`nugget_support` of every question with support records, in one pass over the nuggets."""
        out: dict[str, dict[str, list[str]]] = {}
        for n in self.nuggets:
            out.setdefault(n.query_id, {})[n.nugget_id] = list(n.chunk_ids)
        return out

    # ------------------------------------------------------------------ labels

    def add_labels(self, labels: Iterable[RelevanceLabel]) -> int:
        """Add labels judged later; one label is kept per (query_id, chunk_id, source): the newest by
        ``provenance.time`` (on equal times the one added last). Returns how many labels were new or replaced one.
        """
        return _merge(self.qrels, labels)

    def passage_labels(self) -> dict[tuple[str, str], RelevanceLabel]:
        """``{(query_id, passage_id): label}`` of the judged passages (the label that stands, as for qrels)."""
        return _standing(label for passage in self.passages for label in passage.labels)

    def add_passage_labels(self, passages: Iterable[Passage], labels: Iterable[RelevanceLabel]) -> int:
        """Keep ``labels`` (their ``chunk_id`` is a passage id) with their passages, adding passages not yet kept;
        one label per (question, source) per passage, the newest (as :meth:`add_labels`). Returns how many labels
        were new or replaced one."""
        kept = {p.id: p for p in self.passages}
        for passage in passages:
            if passage.id not in kept:
                kept[passage.id] = passage.model_copy(update={"labels": []})
                self.passages.append(kept[passage.id])
        return sum(_merge(kept[label.chunk_id].labels, [label]) for label in labels)

    def counts(self) -> dict[str, int]:
        """Record counts per file, plus scored and unscored qrels pairs."""
        return {
            "documents": len(self.documents),
            "chunks": len(self.chunks),
            "questions": len(self.questions),
            "qrels": len(self.qrels),
            "qrels_unscored": len(self.unscored()),
            "nuggets": len(self.nuggets),
        }

    def label_sources(self) -> dict[str, int]:
        """Labels per provenance source (scored or not), in :data:`SOURCE_PRECEDENCE` order; absent sources left out."""
        counts = {source: 0 for source in SOURCE_PRECEDENCE}
        for label in self.qrels:
            counts[label.provenance.source] = counts.get(label.provenance.source, 0) + 1
        return {source: n for source, n in counts.items() if n}

    def label_origin(self) -> LabelOrigin:
        """Where the labels came from, derived from their provenance: see :func:`label_origin`."""
        return label_origin(self.label_sources())

    # ------------------------------------------------------------------ disk

    @classmethod
    def load(cls, path: str | Path) -> GoldenSet:
        """Read a golden folder; a missing folder or file, or a dangling reference, raises :class:`DatasetError`."""
        folder = Path(path)
        if not folder.is_dir():
            what = "is a file, not a folder" if folder.exists() else "does not exist"
            raise DatasetError(f"golden set {folder} {what}: {_FIX}")
        finish_pending(folder)  # files written together (formats.atomic.atomic_files) and cut short: finished first
        missing = [name for name in (MANIFEST, *FILES.values()) if not (folder / name).is_file()]
        if missing:
            raise DatasetError(f"golden set {folder} is incomplete: missing {', '.join(missing)}. {_FIX} (again)")
        golden = cls(
            manifest=_read_manifest(folder / MANIFEST),
            documents=_read_unique(folder, "documents", Document),
            chunks=_read_unique(folder, "chunks", Chunk),
            questions=_read_unique(folder, "questions", Question),
            qrels=_read(folder, "qrels", RelevanceLabel),
            nuggets=_read(folder, "nuggets", NuggetSupport),
            passages=[],
        )
        golden.passages = _read_passages(folder / PASSAGES, golden)
        golden.conversations = _read_conversations(folder / CONVERSATIONS)
        golden.check(folder)
        return golden

    def check(self, where: str | Path = "golden set") -> None:
        """Raise :class:`DatasetError` if qrels or nugget support name questions, chunks or nuggets that are absent."""
        problems = list(self._dangling())
        if problems:
            shown = "; ".join(problems[:5]) + (f"; and {len(problems) - 5} more" if len(problems) > 5 else "")
            raise DatasetError(f"{where}: {shown}. Fix: rebuild the golden set, or remove those records")

    def _dangling(self) -> Iterator[str]:
        for i, label in enumerate(self.qrels):
            if label.query_id not in self._questions:
                yield f"qrels.jsonl record {i + 1} names unknown question {label.query_id!r}"
            if label.chunk_id not in self._chunks:
                yield f"qrels.jsonl record {i + 1} names unknown chunk {label.chunk_id!r}"
        for i, sup in enumerate(self.nuggets):
            question = self._questions.get(sup.query_id)
            if question is None:
                yield f"nuggets.jsonl record {i + 1} names unknown question {sup.query_id!r}"
            elif sup.nugget_id not in {n.id for n in question.nuggets}:
                yield f"nuggets.jsonl record {i + 1} names nugget {sup.nugget_id!r}, absent from {sup.query_id!r}"
            for cid in (*sup.chunk_ids, *sup.partial_chunk_ids):
                if cid not in self._chunks:
                    yield f"nuggets.jsonl record {i + 1} names unknown chunk {cid!r}"
        seen: dict[str, str] = {}
        for i, conversation in enumerate(self.conversations):
            where = f"{CONVERSATIONS} record {i + 1}"
            if conversation.turns and not any(turn.judged for turn in conversation.turns):
                yield f"{where}: conversation {conversation.id!r} has no judged turn (only context turns)"
            for turn in conversation.turns:
                yield from self._turn_problems(where, turn)
                if turn.question_id in seen:
                    yield (f"{where}: {turn.question_id!r} is already a turn of conversation "
                           f"{seen[turn.question_id]!r}")  # fmt: skip
                seen[turn.question_id] = conversation.id

    def _turn_problems(self, where: str, turn: Turn) -> Iterator[str]:
        """A judged turn names a question; a context turn names none and carries its rewrite and answer."""
        known = turn.question_id in self._questions
        if turn.judged and not known:
            yield f"{where} names unknown question {turn.question_id!r}"
        if turn.judged:
            return
        if known:
            yield f"{where}: context turn {turn.question_id!r} (judged false) names a question of questions.jsonl"
        if not (turn.rewrite or "").strip() or turn.answer is None:
            yield f"{where}: context turn {turn.question_id!r} (judged false) needs its rewrite and answer"

    def save(self, path: str | Path, *, overwrite: bool = False) -> None:
        """Write the whole folder atomically: built beside ``path`` and swapped in only once complete.

        An existing non-empty folder is replaced only with ``overwrite``; files assay does not write here (the
        audit database) are copied over into the new folder first.
        """
        target = Path(path)
        self.check(target)
        try:
            with atomic_dir(target, overwrite=overwrite) as tmp:
                self._write_parts(tmp, (*FILES, "passages", "conversations"))
                _carry_over(target, tmp)
        except FileExistsError:
            raise DatasetError(
                f"{target} already exists and is not empty: choose another output folder or pass --overwrite"
            ) from None

    def update(self, path: str | Path, parts: Sequence[Part] = ("qrels",)) -> None:
        """Rewrite only ``parts`` (and the manifest, whose counts follow them) of an existing golden folder, the files
        replaced together (:func:`~assay.formats.atomic.atomic_files`: a crash leaves all old or, at the next load,
        all new)."""
        target = Path(path)
        if not (target / MANIFEST).is_file():
            raise DatasetError(f"{target} is not a golden set (no {MANIFEST}): {_FIX}, or use save()")
        self.check(target)
        with atomic_files(target) as stage:
            self._write_parts(target, tuple(parts), stage)

    def _write_parts(self, folder: Path, parts: tuple[Part, ...], place: Callable[[str], Path] | None = None) -> None:
        """Write ``parts`` and the manifest into ``folder``, each file to ``place(name)`` (default: the file)."""
        at = place or (lambda name: folder / name)
        records: dict[Part, Sequence[BaseModel]] = {
            "documents": self.documents,
            "chunks": self.chunks,
            "questions": self.questions,
            "qrels": self.qrels,
            "nuggets": self.nuggets,
        }
        for part in parts:
            if part == "passages":
                if self.passages or (folder / PASSAGES).exists():
                    write_jsonl(at(PASSAGES), "passages", self.passages)
                continue
            if part == "conversations":
                if self.conversations or (folder / CONVERSATIONS).exists():
                    write_jsonl(at(CONVERSATIONS), "conversations", self.conversations)
                continue
            write_jsonl(at(FILES[part]), part, records[part])
        self.manifest.counts.update(self.counts())
        atomic_write_text(at(MANIFEST), self.manifest.model_dump_json(indent=2) + "\n")


def label_origin(sources: Iterable[str]) -> LabelOrigin:
    """``judge`` when every label is a machine's (judge or generator), ``human`` when every one is a person's,
    ``imported`` when every one came from elsewhere (some of them without ``source human``), ``mixed`` when
    machine and other labels meet, ``none`` without a label."""
    present = set(sources)
    machine, other = present & MACHINE_SOURCES, present - MACHINE_SOURCES
    if machine and other:
        return "mixed"
    if machine:
        return "judge"
    if other:
        return "human" if other == {"human"} else "imported"
    return "none"


def read_passages(folder: str | Path) -> list[Passage]:
    """The passages of a golden folder's ``passages.jsonl`` alone (none when the file is absent): for a writer that
    changes only them (the audit adds people's grades of spans) without loading the whole set."""
    return _read_passages(Path(folder) / PASSAGES)


def write_passages(folder: str | Path, passages: Sequence[Passage]) -> None:
    """Rewrite ``passages.jsonl`` of an existing golden folder atomically (the other files are left as they are)."""
    target = Path(folder)
    if not (target / MANIFEST).is_file():
        raise DatasetError(f"{target} is not a golden set (no {MANIFEST}): {_FIX}")
    write_jsonl(target / PASSAGES, "passages", passages)


def _merge(into: list[RelevanceLabel], labels: Iterable[RelevanceLabel]) -> int:
    """Add ``labels`` to ``into``, one per (query_id, chunk_id, source): the newest by ``provenance.time`` (on equal
    times the one added last); how many were new or replaced one."""
    index = {(q.query_id, q.chunk_id, q.provenance.source): i for i, q in enumerate(into)}
    changed = 0
    for label in labels:
        key = (label.query_id, label.chunk_id, label.provenance.source)
        at = index.get(key)
        if at is None:
            index[key] = len(into)
            into.append(label)
            changed += 1
        elif label.provenance.time >= into[at].provenance.time:
            into[at] = label
            changed += 1
    return changed


def _standing(labels: Iterable[RelevanceLabel]) -> dict[tuple[str, str], RelevanceLabel]:
    """The label that stands for each (query_id, chunk_id) among ``labels``: see :meth:`GoldenSet.standing`."""
    rank: dict[str, int] = {name: i for i, name in enumerate(SOURCE_PRECEDENCE)}
    chosen: dict[tuple[str, str], RelevanceLabel] = {}
    for label in labels:
        key = (label.query_id, label.chunk_id)
        old = chosen.get(key)
        if old is None or _better(label, old, rank):
            chosen[key] = label
    return chosen


def _better(new: RelevanceLabel, old: RelevanceLabel, rank: dict[str, int]) -> bool:
    """Whether ``new`` should stand for its pair instead of ``old``: scored beats unscored, then source precedence,
    then the newer label."""
    if (new.grade is None) != (old.grade is None):
        return old.grade is None
    new_rank, old_rank = rank.get(new.provenance.source, 99), rank.get(old.provenance.source, 99)
    if new_rank != old_rank:
        return new_rank < old_rank
    return new.provenance.time >= old.provenance.time


def _unique(kind: str, records: Sequence[R]) -> dict[str, R]:
    out: dict[str, R] = {}
    for record in records:
        if record.id in out:
            raise DatasetError(f"duplicate {kind} id {record.id!r}: ids must be unique (rebuild the golden set)")
        out[record.id] = record
    return out


def _get(index: dict[str, R], kind: str, key: str) -> R:
    try:
        return index[key]
    except KeyError:
        raise KeyError(f"no {kind} with id {key!r} in this golden set") from None


def _read(folder: Path, part: Part, model: type[M]) -> list[M]:
    return [record for _, record in iter_records(folder / FILES[part], model, part)]


def _read_conversations(path: Path) -> list[Conversation]:
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


def _read_passages(path: Path, golden: GoldenSet | None = None) -> list[Passage]:
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
            _check_span(path, line, passage, golden)
        _check_agree(path, line, passage)
        out.append(passage)
    return out


def _check_span(path: Path, line: int, passage: Passage, golden: GoldenSet) -> None:
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


def _check_agree(path: Path, line: int, passage: Passage) -> None:
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


def _read_unique(folder: Path, part: Part, model: type[M]) -> list[M]:
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


def _read_manifest(path: Path) -> Manifest:
    try:
        raw = json.loads(path.read_text(encoding="utf-8"))
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise FormatError(path, None, f"not valid JSON ({exc})", "the manifest assay build writes") from None
    version = raw.get("format_version", FORMAT_VERSION) if isinstance(raw, dict) else FORMAT_VERSION
    if isinstance(version, int) and version > FORMAT_VERSION:
        by = raw.get("assay_version", "a newer assay")
        raise DatasetError(
            f"{path}: golden-set format version {version} was written by assay {by}; this assay reads up to version "
            f"{FORMAT_VERSION}. Upgrade: pip install -U 'assay>={by}'"
        )
    try:
        return Manifest.model_validate(raw)
    except ValidationError as exc:
        raise FormatError(path, None, first_problem(exc, "manifest"), "a Manifest") from None


def _carry_over(old: Path, new: Path) -> None:
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
