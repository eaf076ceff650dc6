"""Corpus: ingest files into documents, chunk them with stable ids, and pool candidate chunks with BM25.

Modules, one line each:

- ``align``: locate passages in documents (the character span a retrieved text came from).
- ``chunking``: split documents into chunks by headings, paragraphs and sentences, packed to a token budget.
- ``html_text``: HTML to text for the corpus, headings kept as ``#`` lines.
- ``ingest``: read a corpus from files or records.
- ``pooling``: BM25 over chunks and the candidate pools the judge grades.
"""

from __future__ import annotations

from assay.corpus.chunking import chunk_corpus, chunk_document, chunk_id
from assay.corpus.ingest import IngestResult, ingest
from assay.corpus.pooling import Bm25Index, PoolEntry

__all__ = ["Bm25Index", "IngestResult", "PoolEntry", "chunk_corpus", "chunk_document", "chunk_id", "ingest"]
