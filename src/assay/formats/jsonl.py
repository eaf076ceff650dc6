"""Versioned JSONL: a header line ``{"assay": KIND, "version": N}``, then one JSON record per line.

Writing is atomic (a temporary file renamed over the target). Reading streams line by line and validates each
record with a pydantic model from :mod:`assay.types`; a bad line raises :class:`~assay.errors.FormatError` naming
the file, the line and the field that failed. Blank lines are skipped.

Versions: a file whose header version is newer than this assay reads raises :class:`~assay.errors.DatasetError`
naming the assay version that wrote it (the header's optional ``assay_version``). Older versions are upgraded on
read by the functions in ``_MIGRATIONS`` (none yet: version 1 is the first). Plain JSONL without a header (a user's
own file) is accepted only with ``header="optional"``.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterable, Iterator, Mapping
from pathlib import Path
from typing import Any, Literal, TypeVar

from pydantic import BaseModel, ValidationError

from assay._version import __version__
from assay.errors import DatasetError, FormatError
from assay.formats.atomic import atomic_write
from assay.formats.progress import reading, writing
from assay.types import FORMAT_VERSION

__all__ = [
    "KINDS",
    "RUN_HEADER_KEYS",
    "HeaderMode",
    "JsonlHeader",
    "first_problem",
    "is_header",
    "iter_json_lines",
    "iter_records",
    "read_header",
    "read_jsonl",
    "upgrade_advice",
    "write_jsonl",
]

KINDS = frozenset(
    {"documents", "chunks", "questions", "qrels", "nuggets", "passages", "runs", "labels", "conversations"}
)
HeaderMode = Literal["required", "optional"]
T = TypeVar("T", bound=BaseModel)

# (kind, version) -> function upgrading one record of that version to the next version.
_MIGRATIONS: dict[tuple[str, int], Callable[[dict[str, Any]], dict[str, Any]]] = {}
_HEADER_KEYS = {"assay", "version", "assay_version"}
# A run written by `assay run` also names its target (secrets removed), version label, start and end; other kinds
# keep the strict header.
RUN_HEADER_KEYS = frozenset({"target", "label", "started", "ended", "repeats", "conversation_mode", "history",
                             "top_k"})  # fmt: skip


class JsonlHeader(BaseModel):
    """The first line of an assay JSONL file."""

    assay: str
    version: int
    assay_version: str | None = None
    target: str | None = None
    label: str | None = None
    started: str | None = None
    ended: str | None = None
    repeats: int | None = None  # a run of a system asked every question this many times (assay run --repeats)
    conversation_mode: str | None = None  # a run of a golden set with conversations: turns or rewrites (assay run)
    history: str | None = None  # and, asked as turns, with the reference or its own history
    top_k: int | None = None  # the passages every question asked the system for (assay run --top-k)


def _assay_version() -> str:
    return __version__


def _release(version: str) -> tuple[int, ...]:
    """``0.2.1rc1`` -> (0, 2, 1): the numeric release a version string starts with (``()`` when none)."""
    found = re.match(r"\d+(?:\.\d+)*", version.strip())
    return tuple(int(part) for part in found.group().split(".")) if found else ()


def upgrade_advice(version: int, written_by: str | None) -> str:
    """What to install to read a file of format ``version`` written by assay ``written_by`` (None: not recorded):
    that release or a later one when it is newer than this assay; else a release that reads the format version
    (naming this assay's own version as the minimum would send the user to the release that refused the file)."""
    if written_by and _release(written_by) > _release(_assay_version()):
        return f"Upgrade: pip install -U 'assay>={written_by}'"
    return (f"Upgrade to an assay release that reads format version {version}: pip install -U assay (this one, "
            f"{_assay_version()}, is too old for it)")  # fmt: skip


def is_header(obj: object) -> bool:
    """Whether a parsed JSON line is an assay header (``assay`` and ``version``, at most ``assay_version`` besides;
    a ``runs`` header may also hold :data:`RUN_HEADER_KEYS`)."""
    if not (isinstance(obj, dict) and "assay" in obj and "version" in obj):
        return False
    allowed = _HEADER_KEYS | RUN_HEADER_KEYS if obj["assay"] == "runs" else _HEADER_KEYS
    return set(obj) <= allowed


def write_jsonl(
    path: str | Path,
    kind: str,
    records: Iterable[BaseModel | Mapping[str, Any]],
    *,
    version: int = FORMAT_VERSION,
    header: Mapping[str, str | None] | None = None,
) -> int:
    """Write a header and ``records`` to ``path`` atomically; returns the number of records written.

    Pydantic records are dumped in JSON mode with ``None`` fields kept (so every field is visible in the file).
    An error raised while iterating ``records`` leaves the previous file (or no file) in place. ``header`` adds
    fields to the header line: only a ``runs`` file has any (:data:`RUN_HEADER_KEYS`).
    """
    if kind not in KINDS:
        raise ValueError(f"unknown JSONL kind {kind!r}; known kinds: {', '.join(sorted(KINDS))}")
    extra = dict(header or {})
    if extra and (kind != "runs" or not set(extra) <= RUN_HEADER_KEYS):
        raise ValueError(f"header fields {sorted(extra)} are not allowed in a {kind!r} file")
    count = 0
    head = {"assay": kind, "version": version, "assay_version": _assay_version(), **extra}
    with atomic_write(path) as handle:
        handle.write(json.dumps(head, ensure_ascii=False) + "\n")
        for record in writing(path, records):
            obj = record.model_dump(mode="json") if isinstance(record, BaseModel) else dict(record)
            handle.write(json.dumps(obj, ensure_ascii=False, default=str) + "\n")
            count += 1
    return count


def read_header(path: str | Path) -> JsonlHeader | None:
    """The header of ``path``, or None when its first non-blank line is not an assay header."""
    for _, obj in _raw_lines(Path(path)):
        return JsonlHeader.model_validate(obj) if is_header(obj) else None
    return None


def read_jsonl(
    path: str | Path, model: type[T], kind: str | None = None, *, header: HeaderMode = "required"
) -> Iterator[T]:
    """Stream the records of ``path`` validated as ``model``; see :func:`iter_records` for the rules."""
    for _, record in iter_records(path, model, kind, header=header):
        yield record


def iter_records(
    path: str | Path, model: type[T], kind: str | None = None, *, header: HeaderMode = "required"
) -> Iterator[tuple[int, T]]:
    """Stream ``(line_number, record)`` pairs of ``path``, each validated as ``model``.

    A record that fails validation raises :class:`FormatError` naming the line and the failing field.
    """
    source = Path(path)
    for line, obj in iter_json_lines(source, kind=kind, header=header):
        try:
            yield line, model.model_validate(obj)
        except ValidationError as exc:
            raise FormatError(source, line, _describe(exc), f"a {model.__name__} record") from None


def iter_json_lines(
    path: str | Path, *, kind: str | None = None, header: HeaderMode = "required"
) -> Iterator[tuple[int, dict[str, Any]]]:
    """Stream ``(line_number, object)`` pairs after the header, upgraded to the current format version.

    ``kind`` (when given) must match the header's kind. With ``header="optional"`` a file without a header is read
    as plain JSONL of the current version; with ``"required"`` it raises :class:`FormatError`.
    """
    source = Path(path)
    version: int | None = None
    file_kind = kind or "records"
    for line, obj in _raw_lines(source):
        if version is None:
            version, file_kind = _check_header(source, line, obj, kind, header)
            if is_header(obj):
                continue
        if not isinstance(obj, dict):
            raise FormatError(source, line, f"a JSON {type(obj).__name__} where a record belongs", "a JSON object")
        yield line, _upgrade(file_kind, version, obj)
    if version is None and header == "required":
        raise FormatError(
            source,
            None,
            "empty file (no header line)",
            f'a first line like {{"assay": "{kind or "KIND"}", "version": {FORMAT_VERSION}}}',
        )


def _check_header(path: Path, line: int, obj: object, kind: str | None, mode: HeaderMode) -> tuple[int, str]:
    if not is_header(obj):
        if mode == "optional":
            return FORMAT_VERSION, kind or "records"
        want = kind or "KIND"
        raise FormatError(
            path, line, "no assay header line", f'a first line like {{"assay": "{want}", "version": {FORMAT_VERSION}}}'
        )
    try:
        head = JsonlHeader.model_validate(obj)
    except ValidationError as exc:
        raise FormatError(path, line, f"bad header: {_describe(exc)}", '{"assay": KIND, "version": N}') from None
    if kind is not None and head.assay != kind:
        raise FormatError(path, line, f"file holds {head.assay!r} records", f"a {kind!r} file")
    if head.version > FORMAT_VERSION:
        by = f"assay {head.assay_version}" if head.assay_version else "a newer assay"
        raise DatasetError(
            f"{path}: format version {head.version} was written by {by}; this assay ({_assay_version()}) reads up "
            f"to version {FORMAT_VERSION}. {upgrade_advice(head.version, head.assay_version)}"
        )
    if head.version < 1:
        raise FormatError(path, line, f"format version {head.version}", "a version >= 1")
    return head.version, head.assay


def _upgrade(kind: str, version: int, obj: dict[str, Any]) -> dict[str, Any]:
    while version < FORMAT_VERSION:
        obj = _MIGRATIONS[(kind, version)](obj)
        version += 1
    return obj


def _raw_lines(path: Path) -> Iterator[tuple[int, Any]]:
    """Parsed JSON of each non-blank line with its 1-based number; a BOM on the first line is ignored."""
    try:
        handle = path.open("rb")
    except FileNotFoundError:
        raise FormatError(path, None, "file not found", "an existing JSONL file") from None
    except IsADirectoryError:
        raise FormatError(path, None, "is a folder", "a JSONL file") from None
    meter = reading(path)
    with handle:
        for number, raw in enumerate(handle, start=1):
            meter.add(len(raw))
            try:
                text = raw.decode("utf-8-sig" if number == 1 else "utf-8")
            except UnicodeDecodeError as exc:
                raise FormatError(
                    path, number, f"bytes that are not UTF-8 at column {exc.start + 1}", "UTF-8"
                ) from None
            if not text.strip():
                continue
            try:
                yield number, json.loads(text)
            except json.JSONDecodeError as exc:
                raise FormatError(
                    path, number, f"invalid JSON at column {exc.colno}: {exc.msg}", "one JSON object per line"
                ) from None
    meter.finish()


def first_problem(exc: ValidationError, whole: str = "record") -> str:
    """The first validation problem as ``field 'a.b': message`` (``whole`` names a problem with no field)."""
    first = exc.errors()[0]
    where = ".".join(str(part) for part in first["loc"]) or whole
    return f"field {where!r}: {first['msg']}"


def _describe(exc: ValidationError) -> str:
    """The first validation problem (:func:`first_problem`) plus how many more there are."""
    n = exc.error_count()
    more = f" (and {n - 1} more problem{'s' if n > 2 else ''})" if n > 1 else ""
    return first_problem(exc) + more
