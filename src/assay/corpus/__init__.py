"""Corpus: ingest files into documents, chunk them with stable ids, and pool candidate chunks with BM25."""

from __future__ import annotations

from assay.corpus.chunking import chunk_corpus, chunk_document, chunk_id
from assay.corpus.ingest import IngestResult, ingest
from assay.corpus.pooling import Bm25Index, PoolEntry

__all__ = ["Bm25Index", "IngestResult", "PoolEntry", "chunk_corpus", "chunk_document", "chunk_id", "ingest"]
