"""Progress of reads and writes: reported only inside ``reporting``, in bytes read and records written."""

from __future__ import annotations

import json
from pathlib import Path

from assay.formats.beir import read_corpus, read_qrels_tsv
from assay.formats.jsonl import write_jsonl
from assay.formats.progress import reporting
from assay.formats.trec import read_qrels
from assay.types import Chunk

Seen = list[tuple[str, int, int]]


def _corpus(path: Path, n: int) -> Path:
    lines = (json.dumps({"_id": f"d{i}", "title": "", "text": f"passage number {i} " * 20}) for i in range(n))
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def test_a_read_reports_bytes_up_to_the_file_size_a_few_hundred_times_at_most(tmp_path: Path) -> None:
    path = _corpus(tmp_path / "corpus.jsonl", 20_000)
    seen: Seen = []
    with reporting(lambda *event: seen.append(event)):
        assert len(read_corpus(path)) == 20_000
    size = path.stat().st_size
    assert {what for what, _, _ in seen} == {"reading corpus.jsonl"}
    assert seen[-1] == ("reading corpus.jsonl", size, size)
    assert 2 <= len(seen) <= 202 and [done for _, done, _ in seen] == sorted(done for _, done, _ in seen)


def test_tsv_and_column_readers_report_too(tmp_path: Path) -> None:
    tsv, trec = tmp_path / "test.tsv", tmp_path / "qrels.txt"
    tsv.write_text("query-id\tcorpus-id\tscore\n" + "".join(f"q{i}\td{i}\t1\n" for i in range(100)))
    trec.write_text("".join(f"q{i} 0 d{i} 1\n" for i in range(100)))
    seen: Seen = []
    with reporting(lambda *event: seen.append(event)):
        read_qrels_tsv(tsv)
        read_qrels(trec)
    assert ("reading test.tsv", tsv.stat().st_size, tsv.stat().st_size) in seen
    assert seen[-1] == ("reading qrels.txt", trec.stat().st_size, trec.stat().st_size)


def test_a_write_reports_records_of_the_total(tmp_path: Path) -> None:
    chunks = [Chunk(id=f"d#{i}", doc_id="d", ordinal=i, text=f"t{i}") for i in range(1000)]
    seen: Seen = []
    with reporting(lambda *event: seen.append(event)):
        write_jsonl(tmp_path / "chunks.jsonl", "chunks", chunks)
    assert seen[-1] == ("writing chunks.jsonl", 1000, 1000)
    assert all(total == 1000 for _, _, total in seen)


def test_nothing_is_reported_outside_a_reporting_block(tmp_path: Path) -> None:
    seen: Seen = []
    with reporting(lambda *event: seen.append(event)):
        pass
    read_corpus(_corpus(tmp_path / "corpus.jsonl", 10))
    assert seen == []
