"""Read a corpus: a folder (recursive) or a list of files, into :class:`~assay.types.Document` records.

Formats by extension:

- ``.txt``: the text as is.
- ``.md`` / ``.markdown``: the text as is (headings kept for the chunker); title from the first ``#`` heading, or
  a ``title:`` in YAML-style front matter (front matter is moved from the text into ``metadata``).
- ``.html`` / ``.htm``: visible text, headings as ``#`` lines, title from ``<title>`` or ``<h1>``
  (:func:`assay.corpus.html_text.html_to_text`).
- ``.jsonl``: one document per line (``{id?, text, title?, metadata?}``, or BEIR ``{_id, title, text}``), or
  pre-made chunks (``{id, doc_id, text}``), which pass through untouched into ``chunks_given`` (a missing
  ``ordinal`` is numbered per document in file order). The first record decides which.
- ``.pdf``: text of each page via the optional ``pypdf`` (``pip install 'assay[pdf]'``).

Text is decoded as UTF-8 (a BOM is dropped; UTF-16 with a BOM is read too), else as the encoding charset-normalizer
detects (with a warning naming it); text that decodes only to gibberish is skipped as undecodable. Binary files
(NUL bytes), empty files, hidden files and unknown extensions are skipped with a reason. Line ends become ``\\n``.

Ids: a file's document id is its path relative to ``root`` (posix separators, case kept); a JSONL document keeps
its own ``id`` / ``_id``, or gets ``"FILE:LINE"``. Duplicate ids raise :class:`~assay.errors.CorpusError` naming
both sources.
"""

from __future__ import annotations

import json
import os
import re
import unicodedata
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from assay.corpus.html_text import html_to_text
from assay.errors import CorpusError, FormatError
from assay.formats.jsonl import first_problem, is_header
from assay.text import content_hash
from assay.types import Chunk, Document

__all__ = ["SUPPORTED_SUFFIXES", "IngestResult", "corpus_files", "decode_text", "ingest"]

SUPPORTED_SUFFIXES = (".txt", ".md", ".markdown", ".html", ".htm", ".jsonl", ".pdf")
_BINARY_PROBE = 8192
_ATX_HEADING = re.compile(r"^ {0,3}#{1,6}[ \t]+(.+?)[ \t]*#*[ \t]*$", re.MULTILINE)
_FRONT_MATTER = re.compile(r"\A---[ \t]*\n(.*?\n)---[ \t]*\n", re.DOTALL)


@dataclass
class IngestResult:
    """What :func:`ingest` read: documents, pre-made chunks, and every skipped file with its reason."""

    documents: list[Document] = field(default_factory=list)
    chunks_given: list[Chunk] = field(default_factory=list)
    skipped: list[tuple[str, str]] = field(default_factory=list)  # (relative path or "FILE:LINE", reason)
    warnings: list[str] = field(default_factory=list)
    chunk_sources: dict[str, str] = field(default_factory=dict, repr=False)  # chunk id -> "FILE:LINE"

    def skip(self, where: str, reason: str) -> None:
        self.skipped.append((where, reason))
        self.warnings.append(f"skipped {where}: {reason.rstrip('.')}.")


def ingest(paths: list[Path] | Path, *, root: Path | None = None) -> IngestResult:
    """Read the files under ``paths`` (a folder, read recursively in sorted order, or a list of files).

    ``root`` is what document ids are relative to: by default the folder itself, or the common parent of the
    files. Raises :class:`CorpusError` when nothing is left to use (empty folder, every file skipped), on a
    duplicate document or chunk id, or for a path that does not exist.
    """
    files, base = _collect(paths, root)
    result = IngestResult()
    for path in files:
        _ingest_file(path, _relative(path, base), result)
    if not result.documents and not result.chunks_given:
        reasons = "; ".join(f"{where}: {why}" for where, why in result.skipped[:5])
        raise CorpusError(
            f"no usable documents in {_describe(paths)} ({len(result.skipped)} file(s) skipped: {reasons}). "
            f"Fix: add {', '.join(SUPPORTED_SUFFIXES)} files with text in them"
        )
    _check_unique(result)
    return result


def _describe(paths: list[Path] | Path) -> str:
    return str(paths) if isinstance(paths, Path) else ", ".join(str(p) for p in paths[:3])


def _collect(paths: list[Path] | Path, root: Path | None) -> tuple[list[Path], Path]:
    """The files to read, in a deterministic order, and the folder ids are relative to."""
    items = [Path(paths)] if isinstance(paths, str | Path) else [Path(p) for p in paths]
    if not items:
        raise CorpusError("no input paths given: name a folder or files to ingest")
    files: list[Path] = []
    for item in items:
        if not item.exists():
            raise CorpusError(f"{item} does not exist: check the path of your corpus")
        files.extend(corpus_files(item) if item.is_dir() else [item])
    if not files:
        raise CorpusError(
            f"{_describe(paths)} holds no files (hidden files are ignored): point assay at the folder with your "
            f"documents ({', '.join(SUPPORTED_SUFFIXES)})"
        )
    if root is None:
        root = (
            items[0] if len(items) == 1 and items[0].is_dir() else Path(os.path.commonpath([f.parent for f in files]))
        )
    return files, root


def corpus_files(folder: Path) -> list[Path]:
    """The files under ``folder``, recursively, hidden files and folders left out, sorted by relative path."""
    out: list[Path] = []
    for dirpath, dirnames, filenames in os.walk(folder):
        dirnames[:] = sorted(d for d in dirnames if not d.startswith("."))
        out.extend(Path(dirpath) / name for name in sorted(filenames) if not name.startswith("."))
    return sorted(out, key=lambda p: p.relative_to(folder).as_posix())


def _relative(path: Path, root: Path) -> str:
    try:
        return path.resolve().relative_to(root.resolve()).as_posix()
    except ValueError:
        raise CorpusError(f"{path} is outside the corpus root {root}: pass a root that contains every file") from None


def _ingest_file(path: Path, rel: str, result: IngestResult) -> None:
    suffix = path.suffix.lower()
    if suffix not in SUPPORTED_SUFFIXES:
        result.skip(rel, f"unsupported file type {suffix or '(none)'} (assay reads {', '.join(SUPPORTED_SUFFIXES)})")
        return
    data = path.read_bytes()
    if suffix == ".pdf":
        _add_text(result, rel, _pdf_text(data, rel, result), "pdf")
        return
    text = _decode_or_skip(data, rel, result)
    if text is None:
        return
    if suffix == ".jsonl":
        _ingest_jsonl(text, rel, result)
    elif suffix in (".html", ".htm"):
        body, title = html_to_text(text)
        _add_text(result, rel, body, "html", title=title)
    elif suffix in (".md", ".markdown"):
        body, meta = _split_front_matter(text)
        _add_text(result, rel, body, "md", title=meta.pop("title", None) or _first_heading(body), extra=meta)
    else:
        _add_text(result, rel, text, "txt")


def _decode_or_skip(data: bytes, rel: str, result: IngestResult) -> str | None:
    if not data.strip():
        result.skip(rel, "empty file")
        return None
    if b"\x00" in data[:_BINARY_PROBE] and not data.startswith((b"\xff\xfe", b"\xfe\xff")):
        result.skip(rel, "binary file (NUL bytes)")
        return None
    text, encoding = decode_text(data)
    if text is None:
        result.skip(rel, "undecodable text: not UTF-8 and no encoding fits; re-save the file as UTF-8")
        return None
    if encoding not in ("utf-8", "utf-8-sig"):
        result.warnings.append(f"{rel}: not UTF-8, decoded as {encoding} (detected); re-save as UTF-8 to be sure.")
    return text.replace("\r\n", "\n").replace("\r", "\n")


def decode_text(data: bytes) -> tuple[str | None, str | None]:
    """Decode bytes as UTF-8 (BOM dropped), UTF-16 with a BOM, or the encoding charset-normalizer detects.

    Returns ``(text, encoding)``, or ``(None, None)`` when no encoding gives text that looks like writing (at least
    85% letters, digits, spaces and punctuation among the non-space characters).
    """
    for bom, codec in ((b"\xef\xbb\xbf", "utf-8-sig"), (b"\xff\xfe", "utf-16"), (b"\xfe\xff", "utf-16")):
        if data.startswith(bom):
            try:
                return data.decode(codec), codec
            except UnicodeDecodeError:
                return None, None
    try:
        return data.decode("utf-8"), "utf-8"
    except UnicodeDecodeError:
        pass
    from charset_normalizer import from_bytes

    best = from_bytes(data).best()
    if best is None or not _looks_like_text(str(best)):
        return None, None
    return str(best), best.encoding


def _looks_like_text(text: str) -> bool:
    chars = [c for c in text if not c.isspace()]
    if not chars:
        return False
    good = sum(1 for c in chars if unicodedata.category(c)[0] in "LNP" or c in "$+<=>^`|~€£¥°§©®")
    return good / len(chars) >= 0.85


def _pdf_text(data: bytes, rel: str, result: IngestResult) -> str:
    try:
        import pypdf
    except ImportError:
        result.warnings.append(f"{rel}: PDF support is not installed; run pip install 'assay[pdf]'.")
        result.skipped.append((rel, "pdf support not installed (pip install 'assay[pdf]')"))
        return ""
    import io
    import logging

    pypdf_log = logging.getLogger("pypdf")  # it logs repairs ("EOF marker not found") that the skip line says better
    level = pypdf_log.level
    pypdf_log.setLevel(logging.ERROR)
    try:
        reader = pypdf.PdfReader(io.BytesIO(data))
        pages = [page.extract_text() or "" for page in reader.pages]
    except Exception as exc:  # pypdf raises many types for broken or encrypted files
        result.skip(rel, f"unreadable PDF ({type(exc).__name__}: {exc})")
        return ""
    finally:
        pypdf_log.setLevel(level)
    text = "\n\n".join(p.strip() for p in pages if p.strip())
    if not text:
        result.skip(rel, "PDF with no extractable text (scanned images need OCR first)")
    return text


def _add_text(
    result: IngestResult,
    rel: str,
    text: str,
    fmt: str,
    *,
    title: str | None = None,
    extra: dict[str, Any] | None = None,
    doc_id: str | None = None,
) -> None:
    if not text.strip():
        if fmt != "pdf":  # _pdf_text has already said why
            result.skip(rel, "empty file" if fmt != "html" else "no text left after dropping scripts and markup")
        return
    metadata: dict[str, Any] = {"format": fmt, **(extra or {})}
    result.documents.append(
        Document(
            id=doc_id or rel, source=rel, title=title, text=text, content_hash=content_hash(text), metadata=metadata
        )
    )


def _first_heading(text: str) -> str | None:
    match = _ATX_HEADING.search(text)
    return match.group(1).strip() if match else None


def _split_front_matter(text: str) -> tuple[str, dict[str, Any]]:
    """Move ``key: value`` lines of a leading ``---`` block into metadata (values kept as strings)."""
    match = _FRONT_MATTER.match(text)
    if not match:
        return text, {}
    meta: dict[str, Any] = {}
    for line in match.group(1).splitlines():
        key, sep, value = line.partition(":")
        if sep and key.strip() and not key.startswith((" ", "\t", "-")):
            meta[key.strip()] = value.strip().strip("\"'")
    return text[match.end() :], meta


# --------------------------------------------------------------------------------------------------- JSONL input


def _ingest_jsonl(text: str, rel: str, result: IngestResult) -> None:
    records = _json_records(text, rel)
    kind = str(records[0][1]["assay"]) if records and is_header(records[0][1]) else None
    if kind is not None:
        records = records[1:]
    else:
        kind = "chunks" if records and "doc_id" in records[0][1] else "documents"
    if kind == "chunks":
        _add_chunks(records, rel, result)
    elif kind == "documents":
        for line, obj in records:
            _add_json_document(obj, rel, line, result)
    else:
        raise FormatError(rel, records[0][0] if records else 1, f"an assay {kind!r} file", "documents or chunks")
    if not records:
        result.skip(rel, "empty file")


def _json_records(text: str, rel: str) -> list[tuple[int, dict[str, Any]]]:
    out: list[tuple[int, dict[str, Any]]] = []
    for number, line in enumerate(text.split("\n"), start=1):
        if not line.strip():
            continue
        try:
            obj = json.loads(line)
        except json.JSONDecodeError as exc:
            problem = f"invalid JSON at column {exc.colno}: {exc.msg}"
            raise FormatError(rel, number, problem, "one JSON object per line") from None
        if not isinstance(obj, dict):
            raise FormatError(rel, number, f"a JSON {type(obj).__name__}", "a JSON object per line")
        out.append((number, obj))
    return out


def _add_json_document(obj: dict[str, Any], rel: str, line: int, result: IngestResult) -> None:
    text = obj.get("text", obj.get("contents"))
    if not isinstance(text, str):
        raise FormatError(rel, line, "no string field 'text'", '{"id": ..., "text": ..., "title": ...}')
    where = f"{rel}:{line}"
    if not text.strip():
        result.skip(where, "empty text")
        return
    given, title, metadata = obj.get("id", obj.get("_id")), obj.get("title") or None, obj.get("metadata")
    _add_text(
        result,
        where,
        text.replace("\r\n", "\n"),
        "jsonl",
        title=str(title) if title is not None else None,
        extra=metadata if isinstance(metadata, dict) else None,
        doc_id=str(given) if given not in (None, "") else None,
    )


def _add_chunks(records: list[tuple[int, dict[str, Any]]], rel: str, result: IngestResult) -> None:
    """Pre-made chunks pass through as given; only a missing ``ordinal`` is filled in (per document, in order)."""
    ordinals: dict[str, int] = {}
    for line, obj in records:
        missing = [k for k in ("id", "doc_id", "text") if not isinstance(obj.get(k), str | int) or obj.get(k) == ""]
        if missing:
            raise FormatError(
                rel, line, f"chunk without {', '.join(missing)}", '{"id": ..., "doc_id": ..., "text": ...}'
            )
        doc_id = str(obj["doc_id"])
        record = {**obj, "id": str(obj["id"]), "doc_id": doc_id}
        record.setdefault("ordinal", ordinals.get(doc_id, 0))
        try:
            chunk = Chunk.model_validate(record)
        except ValidationError as exc:
            raise FormatError(rel, line, first_problem(exc, whole=""), "a chunk record") from None
        ordinals[doc_id] = chunk.ordinal + 1
        if chunk.id in result.chunk_sources:
            where = result.chunk_sources[chunk.id]
            raise CorpusError(f"duplicate chunk id {chunk.id!r}: at {where} and at {rel}:{line}. Fix: make ids unique")
        result.chunk_sources[chunk.id] = f"{rel}:{line}"
        result.chunks_given.append(chunk)


def _check_unique(result: IngestResult) -> None:
    seen: dict[str, str] = {}
    for doc in result.documents:
        if doc.id in seen:
            raise CorpusError(
                f"duplicate document id {doc.id!r}: from {seen[doc.id]} and from {doc.source}. "
                "Fix: give one of them another id (or remove the copy)"
            )
        seen[doc.id] = doc.source
