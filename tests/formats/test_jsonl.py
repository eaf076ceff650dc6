"""Versioned JSONL: header, streaming validation, file:line errors, version checks, atomic writes."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from assay.errors import DatasetError, FormatError
from assay.formats.jsonl import iter_records, read_header, read_jsonl, write_jsonl
from assay.types import Chunk, Document, NuggetSupport, Question, RelevanceLabel

V1 = Path(__file__).parents[1] / "fixtures" / "formats" / "v1" / "golden"


def _doc(i: int) -> Document:
    return Document(id=f"d{i}", source=f"d{i}.txt", text=f"text {i} ünïcode", content_hash=f"h{i}")


def _write_lines(path: Path, *lines: str) -> Path:
    path.write_text("".join(line + "\n" for line in lines), encoding="utf-8")
    return path


def test_round_trip_writes_header_first_and_keeps_records(tmp_path: Path) -> None:
    path = tmp_path / "documents.jsonl"
    docs = [_doc(i) for i in range(3)]
    assert write_jsonl(path, "documents", docs) == 3
    first = json.loads(path.read_text(encoding="utf-8").splitlines()[0])
    assert first["assay"] == "documents" and first["version"] == 1 and "assay_version" in first
    assert list(read_jsonl(path, Document, "documents")) == docs
    assert "ünïcode" in path.read_text(encoding="utf-8")  # not ASCII-escaped


def test_dicts_are_written_as_given(tmp_path: Path) -> None:
    path = tmp_path / "c.jsonl"
    write_jsonl(path, "chunks", [{"id": "c1", "doc_id": "d", "ordinal": 0, "text": "x", "extra": [1, 2]}])
    (chunk,) = read_jsonl(path, Chunk, "chunks")
    assert chunk.id == "c1" and chunk.model_extra == {"extra": [1, 2]}


def test_reading_streams_lazily(tmp_path: Path) -> None:
    path = _write_lines(tmp_path / "d.jsonl", '{"assay": "documents", "version": 1}', _doc(1).model_dump_json(), "{bad")
    records = read_jsonl(path, Document, "documents")
    assert next(records).id == "d1"  # the bad third line is not read yet
    with pytest.raises(FormatError):
        next(records)


def test_unknown_kind_is_refused_before_writing(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="unknown JSONL kind"):
        write_jsonl(tmp_path / "x.jsonl", "nonsense", [])
    assert not (tmp_path / "x.jsonl").exists()


def test_failure_while_writing_keeps_the_old_file(tmp_path: Path) -> None:
    path = tmp_path / "documents.jsonl"
    write_jsonl(path, "documents", [_doc(1)])
    before = path.read_bytes()

    def broken() -> Iterator[Document]:
        yield _doc(2)
        raise RuntimeError("disk on fire")

    with pytest.raises(RuntimeError):
        write_jsonl(path, "documents", broken())
    assert path.read_bytes() == before
    assert [p.name for p in tmp_path.iterdir()] == ["documents.jsonl"]  # no temporary file left


def test_invalid_json_names_file_line_and_column(tmp_path: Path) -> None:
    path = _write_lines(tmp_path / "d.jsonl", '{"assay": "documents", "version": 1}', "", '{"id": "d1", oops}')
    with pytest.raises(FormatError) as info:
        list(read_jsonl(path, Document, "documents"))
    assert info.value.line == 3 and info.value.path == str(path)
    assert f"{path}:3: invalid JSON at column 14" in str(info.value)


def test_invalid_record_names_the_failing_field(tmp_path: Path) -> None:
    bad = {"query_id": "q", "chunk_id": "c", "grade": 7, "provenance": {"source": "judge"}}
    path = _write_lines(tmp_path / "q.jsonl", '{"assay": "qrels", "version": 1}', json.dumps(bad))
    with pytest.raises(FormatError, match=r"q\.jsonl:2: field 'grade': .*outside the 0-3 scale") as info:
        list(read_jsonl(path, RelevanceLabel, "qrels"))
    assert info.value.expected == "a RelevanceLabel record"


def test_missing_nested_field_is_named_with_its_path(tmp_path: Path) -> None:
    bad = {"query_id": "q", "chunk_id": "c", "grade": 1, "provenance": {"model": "m"}}
    path = _write_lines(tmp_path / "q.jsonl", '{"assay": "qrels", "version": 1}', json.dumps(bad))
    with pytest.raises(FormatError, match=r"field 'provenance.source': Field required"):
        list(read_jsonl(path, RelevanceLabel, "qrels"))


def test_several_problems_name_the_first_and_count_the_rest(tmp_path: Path) -> None:
    bad = {"query_id": "q", "grade": 9}  # chunk_id and provenance missing, grade out of scale: three problems
    path = _write_lines(tmp_path / "q.jsonl", '{"assay": "qrels", "version": 1}', json.dumps(bad))
    with pytest.raises(FormatError, match=r"q\.jsonl:2: field 'chunk_id': Field required \(and 2 more problems\)"):
        list(read_jsonl(path, RelevanceLabel, "qrels"))


def test_a_line_that_is_not_an_object(tmp_path: Path) -> None:
    path = _write_lines(tmp_path / "d.jsonl", '{"assay": "documents", "version": 1}', "[1, 2]")
    with pytest.raises(FormatError, match=r"d\.jsonl:2: a JSON list where a record belongs"):
        list(read_jsonl(path, Document, "documents"))


def test_bytes_that_are_not_utf8_name_the_line(tmp_path: Path) -> None:
    path = tmp_path / "d.jsonl"
    path.write_bytes(b'{"assay": "documents", "version": 1}\n{"id": "\xff"}\n')
    with pytest.raises(FormatError, match=r"d\.jsonl:2: bytes that are not UTF-8 at column 9"):
        list(read_jsonl(path, Document, "documents"))


def test_header_is_required_unless_optional(tmp_path: Path) -> None:
    path = _write_lines(tmp_path / "user.jsonl", _doc(1).model_dump_json(), _doc(2).model_dump_json())
    with pytest.raises(FormatError, match=r"user\.jsonl:1: no assay header line .*\"assay\": \"documents\""):
        list(read_jsonl(path, Document, "documents"))
    assert [d.id for d in read_jsonl(path, Document, "documents", header="optional")] == ["d1", "d2"]
    assert read_header(path) is None


def test_header_optional_still_checks_a_header_that_is_there(tmp_path: Path) -> None:
    path = _write_lines(tmp_path / "c.jsonl", '{"assay": "chunks", "version": 1}')
    with pytest.raises(FormatError, match="file holds 'chunks' records"):
        list(read_jsonl(path, Document, "documents", header="optional"))


def test_wrong_kind_is_refused(tmp_path: Path) -> None:
    path = _write_lines(tmp_path / "q.jsonl", '{"assay": "questions", "version": 1}')
    with pytest.raises(FormatError, match=r"q\.jsonl:1: file holds 'questions' records \(expected a 'qrels' file\)"):
        list(read_jsonl(path, RelevanceLabel, "qrels"))


def test_future_version_says_which_assay_is_needed(tmp_path: Path) -> None:
    path = _write_lines(tmp_path / "d.jsonl", '{"assay": "documents", "version": 2, "assay_version": "0.7.0"}')
    with pytest.raises(DatasetError, match=r"version 2 was written by assay 0\.7\.0.*pip install -U 'assay>=0\.7\.0'"):
        list(read_jsonl(path, Document, "documents"))


@pytest.mark.parametrize("written_by", [None, "0.1.0", "0.0.9"])
def test_future_version_never_advises_this_assay_or_an_older_one(tmp_path: Path, written_by: str | None) -> None:
    """A version-99 file with no assay_version, or one naming this assay (0.1.0) or an older one: the advice names
    the format version the file needs, never ``assay>=0.1.0`` (the release that refused it)."""
    head = {"assay": "documents", "version": 99, **({"assay_version": written_by} if written_by else {})}
    path = _write_lines(tmp_path / "d.jsonl", json.dumps(head))
    with pytest.raises(DatasetError) as caught:
        list(read_jsonl(path, Document, "documents"))
    message = str(caught.value)
    assert "assay>=" not in message
    assert "Upgrade to an assay release that reads format version 99: pip install -U assay" in message


def test_bad_header_version(tmp_path: Path) -> None:
    path = _write_lines(tmp_path / "d.jsonl", '{"assay": "documents", "version": 0}')
    with pytest.raises(FormatError, match="format version 0"):
        list(read_jsonl(path, Document, "documents"))


def test_empty_file_and_missing_file(tmp_path: Path) -> None:
    (tmp_path / "empty.jsonl").write_text("")
    with pytest.raises(FormatError, match="empty file"):
        list(read_jsonl(tmp_path / "empty.jsonl", Document, "documents"))
    assert list(read_jsonl(tmp_path / "empty.jsonl", Document, header="optional")) == []
    with pytest.raises(FormatError, match="file not found"):
        list(read_jsonl(tmp_path / "nope.jsonl", Document))


def test_bom_and_crlf_are_tolerated(tmp_path: Path) -> None:
    path = tmp_path / "d.jsonl"
    head = b'\xef\xbb\xbf{"assay": "documents", "version": 1}\r\n'
    path.write_bytes(head + _doc(1).model_dump_json().encode() + b"\r\n")
    assert [d.id for d in read_jsonl(path, Document, "documents")] == ["d1"]


def test_iter_records_gives_line_numbers(tmp_path: Path) -> None:
    path = _write_lines(tmp_path / "d.jsonl", '{"assay": "documents", "version": 1}', "", _doc(1).model_dump_json())
    assert [(line, d.id) for line, d in iter_records(path, Document, "documents")] == [(3, "d1")]


@pytest.mark.parametrize(
    ("name", "model", "count"),
    [
        ("documents", Document, 2),
        ("chunks", Chunk, 3),
        ("questions", Question, 2),
        ("qrels", RelevanceLabel, 5),
        ("nuggets", NuggetSupport, 3),
    ],
)
def test_version_1_fixtures_keep_loading(name: str, model: type, count: int) -> None:
    records = list(read_jsonl(V1 / f"{name}.jsonl", model, name))
    assert len(records) == count
    header = read_header(V1 / f"{name}.jsonl")
    assert header is not None and header.assay == name and header.version == 1
