"""Import data users already have into a golden set: BEIR folders, TREC qrels + queries + corpus, RAGAS test sets.

Each importer returns an :class:`ImportSummary` holding an in-memory :class:`GoldenSet` (save it with
``summary.golden.save(folder)``, which writes atomically) and what was skipped and why.

- **Passages.** Corpus entries are passages already, so each becomes one chunk whose id is the entry's id (the id
  that qrels and runs name) and one document with the same id. BEIR entries exported by assay carry their chunk
  fields in ``metadata.assay``; those chunks are restored as they were, and their documents are rebuilt from the
  chunks: chunk texts placed at their character offsets (gaps filled with newlines), or joined by blank lines
  when the chunks have no offsets. Judged passages an assay export wrote (pooled spans) carry chunk fields too and
  come back as chunks of their documents at their offsets (``metadata.assay_passage`` marks them); a passage found
  in no document comes back as a plain entry: a chunk and a document of its own.
- **Questions.** By default only queries with at least one usable qrels line are kept (as BEIR's loader does: a
  ``queries.jsonl`` often holds every split); ``all_queries`` keeps the rest. Imported questions have type
  ``unknown`` unless the file says more (assay's own metadata, or a RAGAS multi-hop synthesizer).
- **Labels.** Every qrels line becomes a :class:`RelevanceLabel` with ``Provenance(source=...)`` (``imported`` by
  default; ``human`` for assessor judgments, which then override judge labels). Grades must be on assay's scale
  -1..3 (-1 junk); ``clip_grades`` caps others into it and counts them. A qrels line naming a query or a passage
  that is not in the files is counted and reported with an example (a golden set cannot hold a dangling label).
- **Manifest.** ``settings["source_format"]`` names the format and ``settings["import"]`` the files and options;
  ``counts`` holds the skip counts; ``corpus_hash`` is a hash over the (id, content hash) pairs of the documents.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

from pydantic import BaseModel, ValidationError

from assay._version import __version__
from assay.corpus.ingest import ingest
from assay.errors import FormatError, InputError
from assay.formats.beir import (
    CORPUS,
    QUERIES,
    BeirDoc,
    BeirQuery,
    find_qrels,
    read_corpus,
    read_qrels_tsv,
    read_queries,
)
from assay.formats.golden import GoldenSet
from assay.formats.jsonl import first_problem
from assay.formats.ragas import RAGAS_SCHEMA, RagasRow, read_ragas
from assay.formats.topics import read_topics
from assay.formats.trec import read_qrels
from assay.pipelines.transfer.conversations import conversation_records, read_deepeval, read_ragas_multiturn
from assay.text import canonical_json, content_hash
from assay.types import Chunk, Document, LabelSource, Manifest, Provenance, Question, RelevanceLabel, utc_now

__all__ = [
    "ImportSummary",
    "documents_from_chunks",
    "import_beir",
    "import_conversations",
    "import_ragas",
    "import_trec",
]

_MIN_GRADE, _MAX_GRADE = -1, 3
M = TypeVar("M", bound=BaseModel)
_RUN_COLUMNS = ("retrieved_contexts", "retrieved_context_ids", "response", "multi_responses")


@dataclass
class ImportSummary:
    """An imported golden set (not yet saved), the counts of what was skipped, and warnings to show the user."""

    golden: GoldenSet
    source_format: str
    skipped: dict[str, int] = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class _Pair:
    where: str  # "file:line", for messages
    query_id: str
    doc_id: str
    grade: int


@dataclass
class _Parts:
    """What a reader produced, before the shared checks."""

    documents: list[Document]
    chunks: list[Chunk]
    questions: list[Question]
    pairs: list[_Pair]
    warnings: list[str] = field(default_factory=list)
    skipped: Counter[str] = field(default_factory=Counter)


# ---------------------------------------------------------------------------------------------------- BEIR


def import_beir(
    folder: str | Path,
    *,
    split: str = "test",
    source: LabelSource = "imported",
    clip_grades: bool = False,
    all_queries: bool = False,
) -> ImportSummary:
    """A golden set from a BEIR folder (``corpus.jsonl``, ``queries.jsonl``, ``qrels/SPLIT.tsv``)."""
    base = Path(folder)
    if not base.is_dir():
        raise InputError(f"{base} is not a folder: give the BEIR dataset folder (with {CORPUS} and {QUERIES})")
    qrels_path = find_qrels(base, split)
    parts = _Parts([], [], [], [])
    parts.documents, parts.chunks = _beir_passages(base / CORPUS, read_corpus(base / CORPUS), parts.skipped)
    parts.questions = [_question(base / QUERIES, q, source) for q in read_queries(base / QUERIES)]
    for qrel in read_qrels_tsv(qrels_path):
        grade = _grade(qrels_path, qrel.line, qrel.score, clip_grades, parts.skipped)
        parts.pairs.append(_Pair(f"{qrels_path}:{qrel.line}", qrel.query_id, qrel.doc_id, grade))
    files = {"corpus": str(base / CORPUS), "queries": str(base / QUERIES), "qrels": str(qrels_path)}
    return _assemble("beir", parts, source, all_queries=all_queries, settings={"files": files, "split": split})


def _beir_passages(path: Path, docs: list[BeirDoc], skipped: Counter[str]) -> tuple[list[Document], list[Chunk]]:
    chunks: list[Chunk] = []
    infos: dict[str, dict[str, Any]] = {}
    for doc in docs:
        assay = doc.metadata.get("assay")
        if isinstance(assay, dict):
            fields = {k: v for k, v in assay.items() if k != "document"}
            chunk = _validate(Chunk, {**fields, "id": doc.id, "text": doc.text}, path, doc.line)
            document = assay.get("document")
            info: dict[str, Any] = document if isinstance(document, dict) else {}
            infos.setdefault(chunk.doc_id, {"source": f"{path.name}:{doc.line}", **info})
        elif not doc.text.strip():
            skipped["passages_empty"] += 1
            continue
        else:
            chunk = _whole_chunk(doc.id, doc.text, doc.title or None)
            meta = {"format": "beir", **doc.metadata}
            infos[doc.id] = {"source": f"{path.name}:{doc.line}", "title": doc.title or None, "metadata": meta}
        chunks.append(chunk)
    return documents_from_chunks(chunks, infos), chunks


def _question(path: Path, query: BeirQuery, source: LabelSource) -> Question:
    assay = query.metadata.get("assay")
    if isinstance(assay, dict):
        return _validate(Question, {**assay, "id": query.id, "text": query.text}, path, query.line)
    return Question(
        id=query.id, text=query.text, type="unknown", metadata=query.metadata, provenance=Provenance(source=source)
    )


# ---------------------------------------------------------------------------------------------------- TREC


def import_trec(
    qrels: str | Path,
    queries: str | Path,
    corpus: str | Path,
    *,
    source: LabelSource = "imported",
    clip_grades: bool = False,
    all_queries: bool = False,
) -> ImportSummary:
    """A golden set from TREC qrels, a queries file (:mod:`assay.formats.topics`) and a corpus: a ``.jsonl`` file
    (documents, BEIR passages or chunks) or a folder of documents, read by :func:`assay.corpus.ingest`.

    A document is one passage (qrels judge whole documents; splitting them would spread one label over chunks that
    were never judged); pre-made chunks in a JSONL corpus pass through, with the qrels naming chunk ids.
    """
    qrels_path, corpus_path = Path(qrels), Path(corpus)
    if corpus_path.is_file() and corpus_path.suffix.lower() != ".jsonl":
        raise InputError(f"{corpus_path}: CORPUS must be a .jsonl file (documents or chunks) or a folder of documents")
    parts = _trec_corpus(corpus_path)
    parts.questions = [
        Question(id=t.id, text=t.text, type="unknown", provenance=Provenance(source=source))
        for t in read_topics(queries)
    ]
    table = read_qrels(qrels_path).to_dict()
    for qid in table:
        for doc_id, raw in table[qid].items():
            # the line is looked up (a scan of the file) only for the error message of an uncapped bad grade
            line = None if clip_grades or _MIN_GRADE <= raw <= _MAX_GRADE else _line_of(qrels_path, qid, doc_id)
            grade = _grade(qrels_path, line, raw, clip_grades, parts.skipped)
            parts.pairs.append(_Pair(str(qrels_path), qid, doc_id, grade))
    files = {"qrels": str(qrels_path), "queries": str(queries), "corpus": str(corpus_path)}
    return _assemble("trec", parts, source, all_queries=all_queries, settings={"files": files})


def _trec_corpus(path: Path) -> _Parts:
    result = ingest(path)
    given = {c.doc_id for c in result.chunks_given}
    whole = [_whole_chunk(d.id, d.text, d.title) for d in result.documents if d.id not in given]
    known = {d.id for d in result.documents}
    rebuilt = documents_from_chunks([c for c in result.chunks_given if c.doc_id not in known], {})
    parts = _Parts([*result.documents, *rebuilt], [*whole, *result.chunks_given], [], [], list(result.warnings))
    parts.skipped["corpus_files_skipped"] = len(result.skipped)
    return parts


def _line_of(path: Path, qid: str, doc_id: str) -> int | None:
    """The line of ``path`` that judges (qid, doc_id), for an error message."""
    with path.open("rb") as handle:
        for number, raw in enumerate(handle, start=1):
            fields = raw.decode("utf-8", "replace").split()
            if len(fields) == 4 and fields[0] == qid and fields[2] == doc_id:
                return number
    return None


# --------------------------------------------------------------------------------------------------- RAGAS


def import_ragas(path: str | Path, *, grade: int = 2, source: LabelSource = "imported") -> ImportSummary:
    """A golden set from a RAGAS test set (JSONL or CSV, :mod:`assay.formats.ragas`).

    Each distinct reference context becomes a passage (id from ``reference_context_ids``, else ``ctx-`` and a hash
    of its text, so equal texts share one passage) and a label of ``grade`` for its question: RAGAS relevance is
    binary, and a reference context holds at least part of the answer (2 on the 0-3 scale; pass 3 when each
    context answers fully). Every row is a question, with or without contexts (an unanswerable one has none).
    """
    if not 1 <= grade <= _MAX_GRADE:
        raise InputError(f"--grade {grade}: a reference context is relevant, so its grade must be 1, 2 or 3")
    source_path = Path(path)
    rows = read_ragas(source_path)
    parts = _Parts([], [], [], [])
    chunks: dict[str, tuple[Chunk, int]] = {}
    qids: dict[str, int] = {}
    for row in rows:
        qid = _ragas_question_id(source_path, row, qids)
        parts.questions.append(_ragas_question(row, qid, source))
        for cid in _ragas_contexts(source_path, row, chunks):
            parts.pairs.append(_Pair(f"{source_path}:{row.line}", qid, cid, grade))
        parts.skipped["rows_with_run_columns"] += any(row.extra.get(k) not in (None, "", []) for k in _RUN_COLUMNS)
    parts.chunks = [c for c, _ in chunks.values()]
    infos = {cid: {"source": f"{source_path.name}:{line}"} for cid, (_, line) in chunks.items()}
    parts.documents = documents_from_chunks(parts.chunks, infos)
    if parts.skipped["rows_with_run_columns"]:
        parts.warnings.append(
            f"{parts.skipped['rows_with_run_columns']} row(s) carry retrieved contexts or responses: those are a "
            "run, not golden data, and were not imported (evaluate them with `assay eval`)."
        )
    settings = {"files": {"testset": str(source_path)}, "schema": RAGAS_SCHEMA, "grade": grade}
    return _assemble("ragas", parts, source, all_queries=True, settings=settings)


def import_conversations(
    path: str | Path, fmt: str, *, grade: int = 2, source: LabelSource = "imported"
) -> ImportSummary:
    """A golden set of conversations from RAGAS multi-turn JSONL (``ragas-multiturn``) or DeepEval conversational
    test cases (``deepeval``), :mod:`.conversations`; DeepEval retrieval contexts become passages graded ``grade``."""
    if not 1 <= grade <= _MAX_GRADE:
        raise InputError(f"--grade {grade}: a retrieval context is relevant, so its grade must be 1, 2 or 3")
    source_path = Path(path)
    parsed = read_ragas_multiturn(source_path) if fmt == "ragas-multiturn" else read_deepeval(source_path)
    questions, conversations, chunks, pairs = conversation_records(source_path, parsed)
    parts = _Parts([], chunks, questions, [_Pair(str(source_path), q, c, grade) for q, c in pairs])
    parts.documents = documents_from_chunks(chunks, {c.id: {"source": source_path.name} for c in chunks})
    missing = sum(bool(q.flags.get("rewrite_missing")) for q in questions)
    parts.skipped["rewrites_missing"] = missing
    if missing:
        parts.warnings.append(f"{missing} turn(s) have no standalone rewrite in the file: their text is the utterance "
                              "(flags.rewrite_missing); write the rewrites in assay audit")  # fmt: skip
    settings = {"files": {fmt: str(source_path)}, "grade": grade}
    summary = _assemble(fmt, parts, source, all_queries=True, settings=settings)
    summary.golden.conversations = conversations
    return summary


def _ragas_question_id(path: Path, row: RagasRow, seen: dict[str, int]) -> str:
    if row.query_id is not None:
        if row.query_id in seen:
            first = seen[row.query_id]
            raise FormatError(path, row.line, f"query_id {row.query_id!r} again (first on line {first})", "unique ids")
        qid = row.query_id
    else:
        base = "q-" + content_hash(row.user_input, 6)
        qid = base if base not in seen else f"{base}-{row.line}"
    seen[qid] = row.line
    return qid


def _ragas_question(row: RagasRow, qid: str, source: LabelSource) -> Question:
    meta = {k: v for k, v in row.extra.items() if isinstance(v, str | int | float | bool) and k not in _RUN_COLUMNS}
    synth = str(row.extra.get("synthesizer_name", ""))
    kind = "multi-hop" if "multi_hop" in synth or "multi-hop" in synth else "unknown"
    prov = Provenance(source=source)
    return Question(
        id=qid, text=row.user_input, type=kind, reference_answer=row.reference, metadata=meta, provenance=prov
    )


def _ragas_contexts(path: Path, row: RagasRow, chunks: dict[str, tuple[Chunk, int]]) -> list[str]:
    """Chunk ids of a row's contexts, each once, in order; new contexts are added to ``chunks``."""
    out: dict[str, None] = {}
    ids = row.reference_context_ids or ["ctx-" + content_hash(t) for t in row.reference_contexts]
    for cid, text in zip(ids, row.reference_contexts, strict=True):
        if not text.strip():
            raise FormatError(path, row.line, "an empty reference context", "the text of each reference context")
        known = chunks.get(cid)
        if known is None:
            chunks[cid] = (_whole_chunk(cid, text, None), row.line)
        elif known[0].text != text:
            problem = f"context id {cid!r} with a text other than on line {known[1]}"
            raise FormatError(path, row.line, problem, "one text per id")
        out[cid] = None
    return list(out)


# -------------------------------------------------------------------------------------------------- shared


def _whole_chunk(doc_id: str, text: str, title: str | None) -> Chunk:
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


def _grade(path: Path, line: int | None, value: int, clip: bool, skipped: Counter[str]) -> int:
    if _MIN_GRADE <= value <= _MAX_GRADE:
        return value
    if not clip:
        raise FormatError(
            path, line, f"grade {value} is outside assay's scale", "-1..3 (0-3, -1 junk); pass --clip-grades to cap"
        )
    skipped["grades_clipped"] += 1
    return min(_MAX_GRADE, max(_MIN_GRADE, value))


def _validate(model: type[M], data: dict[str, Any], path: Path, line: int) -> M:
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        raise FormatError(path, line, f"metadata.assay {first_problem(exc)}", f"a {model.__name__}") from None


def _assemble(
    fmt: str, parts: _Parts, source: LabelSource, *, all_queries: bool, settings: dict[str, Any]
) -> ImportSummary:
    """Check the pairs against questions and passages, build labels, the manifest and the summary."""
    qids = {q.id for q in parts.questions}
    chunk_ids = {c.id for c in parts.chunks}
    labels: list[RelevanceLabel] = []
    now = utc_now()
    unknown: dict[str, list[_Pair]] = {"query": [], "passage": []}
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


def _unknown_warnings(unknown: dict[str, list[_Pair]]) -> list[str]:
    out = []
    for kind, pairs in unknown.items():
        if pairs:
            first = pairs[0]
            out.append(
                f"{len(pairs)} qrels line(s) name a {kind} that is not in the files and were not imported "
                f"(first: {first.where}: query {first.query_id!r}, passage {first.doc_id!r}); check that ids match."
            )
    return out
