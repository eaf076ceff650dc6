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

The rules live beside it: :mod:`assay.formats.golden_files` names the files and reads each one, checked line by line;
:mod:`assay.formats.golden_checks` checks the references between them; :mod:`assay.formats.golden_labels` decides
which label stands for a pair and where the labels came from. Their public names are importable from here too.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol, TypeVar

from pydantic import BaseModel

from assay.errors import DatasetError
from assay.formats import golden_checks
from assay.formats.atomic import atomic_dir, atomic_files, atomic_write_text, finish_pending
from assay.formats.golden_files import (
    CONVERSATIONS,
    FILES,
    FIX,
    MANIFEST,
    PASSAGES,
    Part,
    carry_over,
    read_conversations,
    read_manifest,
    read_part,
    read_passages_file,
    read_unique,
)
from assay.formats.golden_labels import (
    SOURCE_PRECEDENCE,
    LabelOrigin,
    label_origin,
    merge_labels,
    standing_labels,
)
from assay.formats.jsonl import write_jsonl
from assay.types import (
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

    def has_question(self, query_id: str) -> bool:
        return query_id in self._questions

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

    def standing_qrels(self) -> dict[tuple[str, str], RelevanceLabel]:
        """``{(query_id, chunk_id): label}``: the label that stands for each pair (as for :meth:`qrels_map`), with its
        quotes."""
        return self._chosen(None)

    def _chosen(self, source: LabelSource | None) -> dict[tuple[str, str], RelevanceLabel]:
        return standing_labels(label for label in self.qrels if source is None or label.provenance.source == source)

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
        return merge_labels(self.qrels, labels)

    def passage_labels(self) -> dict[tuple[str, str], RelevanceLabel]:
        """``{(query_id, passage_id): label}`` of the judged passages (the label that stands, as for qrels)."""
        return standing_labels(label for passage in self.passages for label in passage.labels)

    def add_passage_labels(self, passages: Iterable[Passage], labels: Iterable[RelevanceLabel]) -> int:
        """Keep ``labels`` (their ``chunk_id`` is a passage id) with their passages, adding passages not yet kept;
        one label per (question, source) per passage, the newest (as :meth:`add_labels`). Returns how many labels
        were new or replaced one."""
        kept = {p.id: p for p in self.passages}
        for passage in passages:
            if passage.id not in kept:
                kept[passage.id] = passage.model_copy(update={"labels": []})
                self.passages.append(kept[passage.id])
        return sum(merge_labels(kept[label.chunk_id].labels, [label]) for label in labels)

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
            raise DatasetError(f"golden set {folder} {what}: {FIX}")
        finish_pending(folder)  # files written together (formats.atomic.atomic_files) and cut short: finished first
        missing = [name for name in (MANIFEST, *FILES.values()) if not (folder / name).is_file()]
        if missing:
            raise DatasetError(f"golden set {folder} is incomplete: missing {', '.join(missing)}. {FIX} (again)")
        golden = cls(
            manifest=read_manifest(folder / MANIFEST),
            documents=read_unique(folder, "documents", Document),
            chunks=read_unique(folder, "chunks", Chunk),
            questions=read_unique(folder, "questions", Question),
            qrels=read_part(folder, "qrels", RelevanceLabel),
            nuggets=read_part(folder, "nuggets", NuggetSupport),
            passages=[],
        )
        golden.passages = read_passages_file(folder / PASSAGES, golden)
        golden.conversations = read_conversations(folder / CONVERSATIONS)
        golden.check(folder)
        return golden

    def check(self, where: str | Path = "golden set") -> None:
        """Raise :class:`DatasetError` if qrels or nugget support name questions, chunks or nuggets that are absent
        (the rules of :mod:`assay.formats.golden_checks`)."""
        golden_checks.check(self, where)

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
                carry_over(target, tmp)
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
            raise DatasetError(f"{target} is not a golden set (no {MANIFEST}): {FIX}, or use save()")
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


def read_passages(folder: str | Path) -> list[Passage]:
    """The passages of a golden folder's ``passages.jsonl`` alone (none when the file is absent): for a writer that
    changes only them (the audit adds people's grades of spans) without loading the whole set."""
    return read_passages_file(Path(folder) / PASSAGES)


def write_passages(folder: str | Path, passages: Sequence[Passage]) -> None:
    """Rewrite ``passages.jsonl`` of an existing golden folder atomically (the other files are left as they are)."""
    target = Path(folder)
    if not (target / MANIFEST).is_file():
        raise DatasetError(f"{target} is not a golden set (no {MANIFEST}): {FIX}")
    write_jsonl(target / PASSAGES, "passages", passages)


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
