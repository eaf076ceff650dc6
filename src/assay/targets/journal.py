"""The answers cache of ``assay run``: one append-only JSONL file per (target, label), one line per answer.

Each answer is appended and flushed the moment it arrives, so a run killed at any point (even ``kill -9``) keeps
every finished answer, and the rerun asks only the rest. A line is ``{"key": ..., "record": {...}}``; the key is
``blake2b`` of the canonical JSON of the question (id, text, metadata; the repeat from the second asking on, with
``--repeats``), the file name ``blake2b`` of the target's
identity (spec, body, map, header names: never a secret) and the label. Failures are not kept (a rerun asks them
again). A last line cut short by a kill is skipped on reading. Later lines win over earlier ones (``--refresh``
appends fresh answers).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from pathlib import Path
from typing import IO, Any

from assay.targets.callers import Ask
from assay.text import canonical_json

__all__ = ["Journal", "question_key"]


def _digest(payload: Any) -> str:
    return hashlib.blake2b(canonical_json(payload).encode("utf-8"), digest_size=16).hexdigest()


def question_key(ask: Ask) -> str:
    """The cache key of one question: its id, text and metadata, and its repeat from the second on (the first
    asking of a repeated run is the answer of a plain run, and shares its key)."""
    payload = ask.as_json()
    if ask.repeat:
        payload["repeat"] = ask.repeat
    return _digest(payload)


class Journal:
    """The answers of one target and label in ``folder``."""

    def __init__(self, folder: str | Path, identity: Mapping[str, Any], label: str | None) -> None:
        self.path = Path(folder) / f"{_digest({'identity': dict(identity), 'label': label})}.jsonl"
        self._handle: IO[str] | None = None

    def load(self) -> dict[str, dict[str, Any]]:
        """``{key: record}`` of every answer kept (an unreadable line, such as one cut by a kill, is skipped)."""
        if not self.path.is_file():
            return {}
        found: dict[str, dict[str, Any]] = {}
        with self.path.open(encoding="utf-8", errors="replace") as handle:
            for raw in handle:
                try:
                    line = json.loads(raw)
                except json.JSONDecodeError:
                    continue
                if isinstance(line, dict) and isinstance(line.get("record"), dict):
                    found[str(line.get("key"))] = line["record"]
        return found

    def append(self, key: str, record: Mapping[str, Any]) -> None:
        """Keep one answer: appended and flushed at once."""
        if self._handle is None:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self._handle = self.path.open("a", encoding="utf-8")
        self._handle.write(json.dumps({"key": key, "record": dict(record)}, ensure_ascii=False) + "\n")
        self._handle.flush()

    def close(self) -> None:
        if self._handle is not None:
            self._handle.close()
            self._handle = None
