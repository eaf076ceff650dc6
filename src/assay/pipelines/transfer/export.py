"""Export a golden set to the formats other tools read: BEIR, TREC, RAGAS and CSV.

Every export writes one output folder, built under a temporary name and swapped in only when complete (an
existing non-empty folder is replaced only with ``overwrite``):

=========  ==========================================================================================================
``beir``   ``corpus.jsonl`` (one line per chunk: ``_id`` = chunk id, ``title`` = its document's title, ``text``,
           ``metadata.assay`` = the chunk's other fields and its document's source, title and metadata),
           ``queries.jsonl`` (``metadata.assay`` = the question's other fields) and ``qrels/SPLIT.tsv`` with the
           header ``query-id<TAB>corpus-id<TAB>score``. ``assay import beir`` reads the ``assay`` metadata back,
           so questions, chunks and qrels survive the round trip; BEIR's loader ignores it.
``trec``   ``qrels.txt`` (``qid 0 docid grade``, sorted) and ``topics.tsv`` (``qid<TAB>question``).
``ragas``  ``ragas.jsonl`` and ``ragas.csv`` with RAGAS test-set columns (:mod:`assay.formats.ragas`), the
           JSONL read by RAGAS as a ``Testset`` and as an ``EvaluationDataset`` (``synthesizer_name`` from the
           question, :func:`synthesizer_name`): the reference contexts are the chunks graded ``>= min_grade``,
           most relevant first. The default is 2
           (the chunk at least partly answers: RAGAS's reference contexts hold the answer, and assay's
           ``ragas_context_precision`` counts the same chunks as useful); ``min_grade=1`` adds related chunks.
``csv``    ``labels.csv`` and ``questions.csv`` for spreadsheets (:mod:`assay.formats.tabular`).
=========  ==========================================================================================================

A golden set with conversations also exports to ``ragas-multiturn``, ``deepeval`` and ``cast`` (TREC CAsT topics and
per-turn qrels), described in :mod:`.conversations`.

**Pooled spans.** Passages that ``assay eval`` judged (``passages.jsonl``: spans of golden documents, or texts found
in no document) are labels of the pool too, and BEIR and TREC keep them (:mod:`.spans` says which and with which
text): in BEIR each is a corpus entry (``_id`` its passage id, ``p:{doc_id}:{start}-{end}`` or ``t:{hash}``;
``text`` the span's text; ``metadata`` ``doc_id``, ``start``, ``end`` and ``match``, and for a located one the
``assay`` chunk fields, so that ``assay import beir`` brings it back as a chunk of its document at its offsets) and
its grades are qrels rows; in TREC its grades are rows of ``qrels.txt`` and the side file ``passages.jsonl`` maps
each passage id to ``doc_id``, ``start``, ``end`` and ``text`` (offsets null for a passage found in no document).
RAGAS and CSV leave them out and say so in a note.

Grades are those of :meth:`GoldenSet.qrels_map` (a human label overrides the judge's). Unscored labels are never
written as grades: a pair whose labels are all unscored is left out of BEIR, TREC and RAGAS, listed in
``labels.csv`` with an empty grade and its reason, and counted in :attr:`ExportSummary.unscored`. ``min_grade``
keeps only grades ``>= min_grade`` (RAGAS aside, all scored grades by default, 0 and -1 included, since
trec_eval's bpref and judged@k use judged non-relevant documents). Ids that hold characters a format cannot carry
(any whitespace in TREC; tab, CR or LF in BEIR's TSV) are percent-encoded consistently across the files of the
export, and counted.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, get_args

from assay.errors import InputError
from assay.formats.atomic import atomic_dir
from assay.formats.beir import TSV_UNSAFE, BeirDoc, BeirQrel, BeirQuery, escape_id, write_beir
from assay.formats.golden import GoldenSet
from assay.formats.ragas import write_ragas_csv, write_ragas_jsonl
from assay.formats.tabular import LABEL_COLUMNS, QUESTION_COLUMNS, label_rows, question_rows, write_csv
from assay.formats.topics import write_topics
from assay.formats.trec import write_qrels
from assay.pipelines.transfer.conversations import write_cast, write_deepeval, write_ragas_multiturn
from assay.pipelines.transfer.spans import (
    PASSAGE_MAP,
    PooledPassage,
    PooledSpans,
    pooled_passages,
    write_passage_map,
)
from assay.types import Chunk, Document, Question

__all__ = ["EXPORT_FORMATS", "ExportFormat", "ExportSummary", "export_golden", "graded_pairs", "synthesizer_name"]

ExportFormat = Literal["beir", "trec", "ragas", "csv", "ragas-multiturn", "deepeval", "cast"]
EXPORT_FORMATS: tuple[str, ...] = get_args(ExportFormat)
_TREC_UNSAFE = re.compile(r"\s")


@dataclass
class ExportSummary:
    """What an export wrote: files with their record counts, and what it left out and why."""

    format: str
    out: Path
    files: dict[str, int] = field(default_factory=dict)  # path relative to ``out`` -> records written
    questions: int = 0
    grades: int = 0  # (question, chunk or passage, grade) labels written as grades
    passages: int = 0  # judged passages (pooled spans) written
    passage_grades: int = 0  # of ``grades``, those of passages
    unscored: int = 0  # pairs with no scored label: not written as grades
    below_min_grade: int = 0
    grade_threshold: int | None = None  # grades below it were left out (None: every scored grade written)
    renamed_ids: int = 0  # ids percent-encoded because the format cannot hold them
    notes: list[str] = field(default_factory=list)


def graded_pairs(golden: GoldenSet, min_grade: int | None = None) -> tuple[list[tuple[str, str, int]], int]:
    """Sorted ``(query_id, chunk_id, grade)`` of the scored qrels with ``grade >= min_grade``, and how many were
    below ``min_grade``."""
    pairs: list[tuple[str, str, int]] = []
    below = 0
    table = golden.qrels_map()
    for qid in sorted(table):
        for cid in sorted(table[qid]):
            grade = table[qid][cid]
            if min_grade is not None and grade < min_grade:
                below += 1
            else:
                pairs.append((qid, cid, grade))
    return pairs, below


def export_golden(
    golden: GoldenSet,
    fmt: str,
    out: str | Path,
    *,
    min_grade: int | None = None,
    split: str = "test",
    overwrite: bool = False,
) -> ExportSummary:
    """Write ``golden`` as ``fmt`` (one of :data:`EXPORT_FORMATS`) into the folder ``out``, atomically."""
    if fmt not in EXPORT_FORMATS:
        raise InputError(f"unknown export format {fmt!r}: choose one of {', '.join(EXPORT_FORMATS)}")
    if not split or "/" in split or split.startswith("."):
        raise InputError(f"split name {split!r} cannot be a file name: use a plain name such as test or dev")
    target = Path(out)
    spans = pooled_passages(golden, min_grade)
    summary = ExportSummary(fmt, target, questions=len(golden.questions), unscored=len(golden.unscored()))
    summary.unscored += spans.unscored
    summary.grade_threshold = min_grade
    try:
        with atomic_dir(target, overwrite=overwrite) as tmp:
            _WRITERS[fmt](golden, tmp, summary, min_grade, split)
    except FileExistsError:
        raise InputError(f"{target} exists and is not empty: choose another folder or pass --overwrite") from None
    return summary


class _Ids:
    """Percent-encodes ids a format cannot hold, the same way in every file, counting the ids it changed."""

    def __init__(self, unsafe: re.Pattern[str]) -> None:
        self.unsafe = unsafe
        self.changed: set[str] = set()

    def __call__(self, value: str) -> str:
        safe = escape_id(value, self.unsafe)
        if safe != value:
            self.changed.add(value)
        return safe


def _beir(golden: GoldenSet, tmp: Path, summary: ExportSummary, min_grade: int | None, split: str) -> None:
    ids = _Ids(TSV_UNSAFE)
    docs = {d.id: d for d in golden.documents}
    corpus = []
    for chunk in golden.chunks:
        doc = docs.get(chunk.doc_id)
        info: dict[str, Any] = chunk.model_dump(mode="json", exclude={"id", "text"})
        if doc is not None:
            info["document"] = _document_info(doc)
        title = doc.title if doc is not None and doc.title else ""
        corpus.append(BeirDoc(0, ids(chunk.id), chunk.text, title, {"assay": info}))
    spans = pooled_passages(golden, min_grade)
    corpus += _passage_docs(golden, spans.passages, ids)
    queries = [
        BeirQuery(0, ids(q.id), q.text, {"assay": q.model_dump(mode="json", exclude={"id", "text"})})
        for q in golden.questions
    ]
    pairs, summary.below_min_grade = graded_pairs(golden, min_grade)
    pairs += _passage_pairs(spans)
    qrels = [BeirQrel(0, ids(q), ids(c), g) for q, c, g in sorted(pairs)]
    summary.files = write_beir(tmp, corpus, queries, qrels, split=split)
    summary.grades, summary.renamed_ids = len(qrels), len(ids.changed)
    _count_spans(summary, spans)


def _document_info(doc: Document) -> dict[str, Any]:
    return {"source": doc.source, "title": doc.title, "metadata": doc.metadata}


def _passage_docs(golden: GoldenSet, passages: list[PooledPassage], ids: _Ids) -> list[BeirDoc]:
    """Corpus entries of the pooled passages: ``metadata`` ``doc_id``, ``start``, ``end``, ``match``; a located one
    also carries the ``assay`` fields of a chunk of its document (ordinals after the document's chunks)."""
    ordinal = {c.doc_id: c.ordinal for c in sorted(golden.chunks, key=lambda c: c.ordinal)}
    out = []
    for pooled in passages:
        meta: dict[str, Any] = {**pooled.offsets(), "match": pooled.passage.match}
        doc, title = pooled.document, ""
        if doc is not None:
            ordinal[doc.id] = ordinal.get(doc.id, -1) + 1
            chunk = _as_chunk(pooled, doc, ordinal[doc.id])
            meta["assay"] = {**chunk.model_dump(mode="json", exclude={"id", "text"}), "document": _document_info(doc)}
            title = doc.title or ""
        out.append(BeirDoc(0, ids(pooled.id), pooled.text, title, meta))
    return out


def _as_chunk(pooled: PooledPassage, doc: Document, ordinal: int) -> Chunk:
    """A located passage as the chunk ``assay import beir`` makes of it; ``metadata.assay_passage`` keeps its match,
    score and (when it differs from the span's) the run's text."""
    passage: dict[str, Any] = {"match": pooled.passage.match, "score": pooled.passage.score}
    if pooled.passage.text.strip() != pooled.text.strip():
        passage["run_text"] = pooled.passage.text
    return Chunk(
        id=pooled.id,
        doc_id=doc.id,
        ordinal=ordinal,
        text=pooled.text,
        start=pooled.passage.start,
        end=pooled.passage.end,
        metadata={"assay_passage": passage},
    )


def _passage_pairs(spans: PooledSpans) -> list[tuple[str, str, int]]:
    return [(qid, pooled.id, grade) for pooled in spans.passages for qid, grade in pooled.grades]


def _count_spans(summary: ExportSummary, spans: PooledSpans) -> None:
    summary.passages, summary.passage_grades = len(spans.passages), spans.grades
    summary.below_min_grade += spans.below_min_grade


def _left_out_spans(golden: GoldenSet, summary: ExportSummary) -> None:
    """RAGAS and CSV have no place for passages: a note says how many judged passages are not in the export."""
    if golden.passages:
        summary.notes.append(
            f"{len(golden.passages)} judged passage(s) of passages.jsonl (pooled spans) are not in this format; "
            "export --to beir or --to trec to keep them"
        )


def _trec(golden: GoldenSet, tmp: Path, summary: ExportSummary, min_grade: int | None, split: str) -> None:
    ids = _Ids(_TREC_UNSAFE)
    pairs, summary.below_min_grade = graded_pairs(golden, min_grade)
    spans = pooled_passages(golden, min_grade)
    table: dict[str, dict[str, int]] = {}
    for qid, cid, grade in pairs + _passage_pairs(spans):
        table.setdefault(ids(qid), {})[ids(cid)] = grade
    summary.files["qrels.txt"] = summary.grades = write_qrels(tmp / "qrels.txt", table)
    summary.files["topics.tsv"] = write_topics(tmp / "topics.tsv", ((ids(q.id), q.text) for q in golden.questions))
    if spans.passages:
        summary.files[PASSAGE_MAP] = write_passage_map(tmp / PASSAGE_MAP, spans.passages, ids)
    summary.renamed_ids = len(ids.changed)
    _count_spans(summary, spans)


def _ragas(golden: GoldenSet, tmp: Path, summary: ExportSummary, min_grade: int | None, split: str) -> None:
    threshold = summary.grade_threshold = 2 if min_grade is None else min_grade
    pairs, summary.below_min_grade = graded_pairs(golden, threshold)
    relevant: dict[str, list[tuple[int, str]]] = {}
    for qid, cid, grade in pairs:
        relevant.setdefault(qid, []).append((-grade, cid))
    rows = []
    for q in golden.questions:
        ranked = [cid for _, cid in sorted(relevant.get(q.id, []))]
        row: dict[str, Any] = {
            "query_id": q.id,
            "user_input": q.text,
            "reference": q.reference_answer,
            "reference_contexts": [golden.chunk(cid).text for cid in ranked],
            "reference_context_ids": ranked,
            "synthesizer_name": synthesizer_name(q),
        }
        if q.tool_calls:  # RAGAS's ToolCall shape; written only where there are some
            row["reference_tool_calls"] = [{"name": c.name, "args": c.arguments} for c in q.tool_calls]
        rows.append(row)
    summary.files["ragas.jsonl"] = write_ragas_jsonl(tmp / "ragas.jsonl", rows)
    summary.files["ragas.csv"] = write_ragas_csv(tmp / "ragas.csv", rows)
    summary.grades = len(pairs)
    _left_out_spans(golden, summary)
    empty = sum(1 for r in rows if not r["reference_contexts"])
    if empty:
        hint = " (binary qrels, where 1 means relevant? export with --min-grade 1)" if threshold > 1 else ""
        summary.notes.append(f"{empty} question(s) have no chunk graded >= {threshold}: empty reference_contexts{hint}")
    unanswered = sum(1 for r in rows if not r["reference"])
    if unanswered:
        summary.notes.append(f"{unanswered} question(s) have no reference answer: 'reference' is null")


def synthesizer_name(question: Question) -> str:
    """RAGAS's ``synthesizer_name`` of a question: the one it was imported with (a RAGAS test set's), else
    ``assay_`` + its type with ``_`` for ``-`` (``assay_multi_hop``; ``assay_unknown`` for imported BEIR/TREC
    queries, which have no type)."""
    given = question.metadata.get("synthesizer_name")
    if isinstance(given, str) and given.strip():
        return given
    return "assay_" + question.type.replace("-", "_")


def _csv(golden: GoldenSet, tmp: Path, summary: ExportSummary, min_grade: int | None, split: str) -> None:
    labels = label_rows(golden, min_grade=min_grade)
    summary.files["labels.csv"] = write_csv(tmp / "labels.csv", LABEL_COLUMNS, labels.rows)
    questions = question_rows(golden, min_grade=1 if min_grade is None else min_grade)
    summary.files["questions.csv"] = write_csv(tmp / "questions.csv", QUESTION_COLUMNS, questions)
    summary.grades = sum(1 for row in labels.rows if row["grade"] != "")
    summary.below_min_grade = labels.below_min_grade
    if min_grade is None and labels.unscored:
        summary.notes.append(f"{labels.unscored} unscored pair(s) listed in labels.csv with an empty grade and reason")
    _left_out_spans(golden, summary)


def _ragas_multiturn(golden: GoldenSet, tmp: Path, summary: ExportSummary, min_grade: int | None, _: str) -> None:
    summary.files["ragas_multiturn.jsonl"] = summary.questions = write_ragas_multiturn(
        golden, tmp / "ragas_multiturn.jsonl"
    )


def _deepeval(golden: GoldenSet, tmp: Path, summary: ExportSummary, min_grade: int | None, _: str) -> None:
    threshold = summary.grade_threshold = 2 if min_grade is None else min_grade
    summary.files["deepeval.json"] = write_deepeval(golden, tmp / "deepeval.json", threshold)
    summary.questions = _judged_turns(golden)


def _judged_turns(golden: GoldenSet) -> int:
    """The turns of the conversations that are questions (context turns are exported, but are no test items)."""
    return sum(turn.judged for c in golden.conversations for turn in c.turns)


def _cast(golden: GoldenSet, tmp: Path, summary: ExportSummary, min_grade: int | None, _: str) -> None:
    summary.files.update(write_cast(golden, tmp, min_grade))
    summary.grades = summary.files["qrels.txt"]
    summary.questions = _judged_turns(golden)


_WRITERS: dict[str, Callable[[GoldenSet, Path, ExportSummary, int | None, str], None]] = {
    "beir": _beir,
    "trec": _trec,
    "ragas": _ragas,
    "csv": _csv,
    "ragas-multiturn": _ragas_multiturn,
    "deepeval": _deepeval,
    "cast": _cast,
}
