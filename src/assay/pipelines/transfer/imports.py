"""Import data users already have into a golden set: BEIR folders, TREC qrels + queries + corpus, RAGAS test sets.

Each importer returns an :class:`ImportSummary` holding an in-memory :class:`GoldenSet` (save it with
``summary.golden.save(folder)``, which writes atomically) and what was skipped and why. Each reader produces the
parts; :mod:`~assay.pipelines.transfer.assembly` checks them against each other and assembles the set, by the rules
below.

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
from pathlib import Path
from typing import Any

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
from assay.formats.ragas import RAGAS_SCHEMA, RagasRow, read_ragas
from assay.formats.topics import read_topics
from assay.formats.trec import read_qrels
from assay.pipelines.transfer.assembly import (
    MAX_GRADE,
    MIN_GRADE,
    ImportParts,
    ImportSummary,
    QrelsPair,
    assemble,
    checked_grade,
    documents_from_chunks,
    validated,
    whole_chunk,
)
from assay.pipelines.transfer.conversations_import import conversation_records, read_deepeval, read_ragas_multiturn
from assay.text import content_hash
from assay.types import Chunk, Document, LabelSource, Provenance, Question, ToolCall

__all__ = [
    "import_beir",
    "import_conversations",
    "import_ragas",
    "import_trec",
]

_RUN_COLUMNS = ("retrieved_contexts", "retrieved_context_ids", "response", "multi_responses")


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
    parts = ImportParts([], [], [], [])
    parts.documents, parts.chunks = _beir_passages(base / CORPUS, read_corpus(base / CORPUS), parts.skipped)
    parts.questions = [_question(base / QUERIES, q, source) for q in read_queries(base / QUERIES)]
    for qrel in read_qrels_tsv(qrels_path):
        grade = checked_grade(qrels_path, qrel.line, qrel.score, clip_grades, parts.skipped)
        parts.pairs.append(QrelsPair(f"{qrels_path}:{qrel.line}", qrel.query_id, qrel.doc_id, grade))
    files = {"corpus": str(base / CORPUS), "queries": str(base / QUERIES), "qrels": str(qrels_path)}
    return assemble("beir", parts, source, all_queries=all_queries, settings={"files": files, "split": split})


def _beir_passages(path: Path, docs: list[BeirDoc], skipped: Counter[str]) -> tuple[list[Document], list[Chunk]]:
    chunks: list[Chunk] = []
    infos: dict[str, dict[str, Any]] = {}
    for doc in docs:
        assay = doc.metadata.get("assay")
        if isinstance(assay, dict):
            fields = {k: v for k, v in assay.items() if k != "document"}
            chunk = validated(Chunk, {**fields, "id": doc.id, "text": doc.text}, path, doc.line)
            document = assay.get("document")
            info: dict[str, Any] = document if isinstance(document, dict) else {}
            infos.setdefault(chunk.doc_id, {"source": f"{path.name}:{doc.line}", **info})
        elif not doc.text.strip():
            skipped["passages_empty"] += 1
            continue
        else:
            chunk = whole_chunk(doc.id, doc.text, doc.title or None)
            meta = {"format": "beir", **doc.metadata}
            infos[doc.id] = {"source": f"{path.name}:{doc.line}", "title": doc.title or None, "metadata": meta}
        chunks.append(chunk)
    return documents_from_chunks(chunks, infos), chunks


def _question(path: Path, query: BeirQuery, source: LabelSource) -> Question:
    assay = query.metadata.get("assay")
    if isinstance(assay, dict):
        return validated(Question, {**assay, "id": query.id, "text": query.text}, path, query.line)
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
            line = None if clip_grades or MIN_GRADE <= raw <= MAX_GRADE else _line_of(qrels_path, qid, doc_id)
            grade = checked_grade(qrels_path, line, raw, clip_grades, parts.skipped)
            parts.pairs.append(QrelsPair(str(qrels_path), qid, doc_id, grade))
    files = {"qrels": str(qrels_path), "queries": str(queries), "corpus": str(corpus_path)}
    return assemble("trec", parts, source, all_queries=all_queries, settings={"files": files})


def _trec_corpus(path: Path) -> ImportParts:
    result = ingest(path)
    given = {c.doc_id for c in result.chunks_given}
    whole = [whole_chunk(d.id, d.text, d.title) for d in result.documents if d.id not in given]
    known = {d.id for d in result.documents}
    rebuilt = documents_from_chunks([c for c in result.chunks_given if c.doc_id not in known], {})
    parts = ImportParts([*result.documents, *rebuilt], [*whole, *result.chunks_given], [], [], list(result.warnings))
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
    if not 1 <= grade <= MAX_GRADE:
        raise InputError(f"--grade {grade}: a reference context is relevant, so its grade must be 1, 2 or 3")
    source_path = Path(path)
    rows = read_ragas(source_path)
    parts = ImportParts([], [], [], [])
    chunks: dict[str, tuple[Chunk, int]] = {}
    qids: dict[str, int] = {}
    for row in rows:
        qid = _ragas_question_id(source_path, row, qids)
        parts.questions.append(_ragas_question(row, qid, source))
        for cid in _ragas_contexts(source_path, row, chunks):
            parts.pairs.append(QrelsPair(f"{source_path}:{row.line}", qid, cid, grade))
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
    return assemble("ragas", parts, source, all_queries=True, settings=settings)


def import_conversations(
    path: str | Path, fmt: str, *, grade: int = 2, source: LabelSource = "imported"
) -> ImportSummary:
    """A golden set of conversations from RAGAS multi-turn JSONL (``ragas-multiturn``) or DeepEval conversational
    test cases (``deepeval``), :mod:`.conversations`; DeepEval retrieval contexts become passages graded ``grade``."""
    if not 1 <= grade <= MAX_GRADE:
        raise InputError(f"--grade {grade}: a retrieval context is relevant, so its grade must be 1, 2 or 3")
    source_path = Path(path)
    parsed = read_ragas_multiturn(source_path) if fmt == "ragas-multiturn" else read_deepeval(source_path)
    questions, conversations, chunks, pairs = conversation_records(source_path, parsed)
    parts = ImportParts([], chunks, questions, [QrelsPair(str(source_path), q, c, grade) for q, c in pairs])
    parts.documents = documents_from_chunks(chunks, {c.id: {"source": source_path.name} for c in chunks})
    missing = sum(bool(q.flags.get("rewrite_missing")) for q in questions)
    parts.skipped["rewrites_missing"] = missing
    if missing:
        parts.warnings.append(f"{missing} turn(s) have no standalone rewrite in the file: their text is the utterance "
                              "(flags.rewrite_missing); write the rewrites in assay audit")  # fmt: skip
    settings = {"files": {fmt: str(source_path)}, "grade": grade}
    summary = assemble(fmt, parts, source, all_queries=True, settings=settings)
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
    calls = [ToolCall(name=name, arguments=arguments, provenance=prov) for name, arguments in row.reference_tool_calls]
    return Question(id=qid, text=row.user_input, type=kind, reference_answer=row.reference, metadata=meta,
                    provenance=prov, tool_calls=calls)  # fmt: skip


def _ragas_contexts(path: Path, row: RagasRow, chunks: dict[str, tuple[Chunk, int]]) -> list[str]:
    """Chunk ids of a row's contexts, each once, in order; new contexts are added to ``chunks``."""
    out: dict[str, None] = {}
    ids = row.reference_context_ids or ["ctx-" + content_hash(t) for t in row.reference_contexts]
    for cid, text in zip(ids, row.reference_contexts, strict=True):
        if not text.strip():
            raise FormatError(path, row.line, "an empty reference context", "the text of each reference context")
        known = chunks.get(cid)
        if known is None:
            chunks[cid] = (whole_chunk(cid, text, None), row.line)
        elif known[0].text != text:
            problem = f"context id {cid!r} with a text other than on line {known[1]}"
            raise FormatError(path, row.line, problem, "one text per id")
        out[cid] = None
    return list(out)
