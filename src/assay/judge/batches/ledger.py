"""The batch ledger: the batches assay submitted, recorded beside the judge cache (``batches.json`` in its folder).

Each entry names the provider (api base and model), the stage and prompt, the input file, the provider's batch id
and the cache keys of its requests (each request's ``custom_id`` is its cache key). A batch is recorded as
``submitting`` with its input file id before it is created, and with its id right after, so a process killed at any
point leaves a trace a rerun can follow: it finds the batch still running or finished and collects it instead of
submitting the same requests again. Once its answers are in the cache the entry is ``collected``; the entries stay
for ``assay batches list``. The file is JSON with a format version, written whole and atomically
(:func:`assay.formats.atomic.atomic_write_text`) on every change; one process at a time should submit batches
against one cache folder.
"""

from __future__ import annotations

import datetime
from pathlib import Path

from pydantic import BaseModel, Field, ValidationError

from assay.errors import FormatError
from assay.formats.atomic import atomic_write_text

__all__ = ["LEDGER_FILE", "TERMINAL", "BatchRecord", "Ledger"]

LEDGER_FILE = "batches.json"
FORMAT = "assay.batches"
VERSION = 1
TERMINAL = frozenset({"completed", "failed", "expired", "cancelled"})


def now_iso() -> str:
    """The time now, UTC, to the second."""
    return datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds")


class BatchRecord(BaseModel):
    """One submitted batch. ``status`` is the provider's last seen (``submitting`` before it exists);
    ``done``/``failed`` its request counts; ``collected`` once its answers are in the cache."""

    ref: str
    api_base: str
    model: str
    stage: str
    prompt: str
    input_file_id: str
    keys: list[str]
    id: str | None = None
    status: str = "submitting"
    done: int = 0
    failed: int = 0
    submitted_at: str = Field(default_factory=now_iso)
    collected: bool = False

    @property
    def ended(self) -> bool:
        """The provider has finished with it (completed, failed, expired or cancelled)."""
        return self.status in TERMINAL


class _LedgerFile(BaseModel):
    format: str = FORMAT
    version: int = VERSION
    batches: list[BatchRecord] = Field(default_factory=list)


class Ledger:
    """The ledger file at ``path`` (read on every :meth:`load`, written whole on every :meth:`save`)."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)

    @classmethod
    def beside(cls, cache_dir: str | Path) -> Ledger:
        """The ledger of the judge cache in ``cache_dir``."""
        return cls(Path(cache_dir) / LEDGER_FILE)

    def load(self) -> list[BatchRecord]:
        """Every recorded batch, oldest first ([] when there is no ledger yet)."""
        if not self.path.is_file():
            return []
        try:
            data = _LedgerFile.model_validate_json(self.path.read_bytes())
        except ValidationError as exc:
            problem = exc.errors()[0]["msg"]
            expected = "a ledger written by assay; to start over, move it away (a rerun submits what is not cached)"
            raise FormatError(self.path, 1, f"not an assay batch ledger ({problem})", expected) from None
        if data.format != FORMAT or data.version > VERSION:
            raise FormatError(
                self.path, 1, f"format {data.format!r} version {data.version}", "one this assay reads: upgrade it"
            )
        return data.batches

    def save(self, records: list[BatchRecord]) -> None:
        """Write the ledger whole, atomically."""
        text = _LedgerFile(batches=records).model_dump_json(indent=1)
        atomic_write_text(self.path, text + "\n")

    def put(self, record: BatchRecord) -> None:
        """Add ``record``, or replace the entry with its ``ref``."""
        records = [r for r in self.load() if r.ref != record.ref]
        records.append(record)
        records.sort(key=lambda r: (r.submitted_at, r.ref))
        self.save(records)

    def open_batches(self, api_base: str, model: str) -> list[BatchRecord]:
        """The batches of this provider and model whose answers are not collected yet."""
        return [r for r in self.load() if not r.collected and r.api_base == api_base and r.model == model]
