"""The judge cache: valid model answers on disk, keyed by everything that decides the answer and nothing else.

The key is ``"v1:" + blake2b(canonical JSON of {model, messages, params, prompt name, version, content hash,
output schema})``: changing any of those makes a new key; timeouts, retries, concurrency or the machine do not.
Values are JSON strings (never pickles), so a cache can be read by any version of assay and shared by a cluster.
Storage is :mod:`diskcache` (SQLite underneath), safe for several processes on one directory. This is the only
module of assay that imports diskcache. Failures are never cached (the client only ``put``s validated answers).
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import diskcache

from assay.text import canonical_json

__all__ = ["KEY_VERSION", "JudgeCache", "cache_key", "derived_key"]

KEY_VERSION = "v1"


def _digest(payload: Mapping[str, Any]) -> str:
    data = canonical_json(payload).encode("utf-8")
    return f"{KEY_VERSION}:{hashlib.blake2b(data, digest_size=20).hexdigest()}"


def cache_key(
    *,
    model: str,
    messages: list[dict[str, str]],
    params: Mapping[str, Any],
    prompt_name: str,
    prompt_version: str,
    prompt_hash: str,
    schema: Mapping[str, Any] | None,
) -> str:
    """The cache key of one model call (see the module docstring for what goes in)."""
    return _digest(
        {
            "model": model,
            "messages": messages,
            "params": dict(params),
            "prompt": {"name": prompt_name, "version": prompt_version, "hash": prompt_hash},
            "schema": schema,
        }
    )


def derived_key(kind: str, fields: Mapping[str, Any]) -> str:
    """A key for a result derived from a call (e.g. one pair's label out of a listwise answer), tagged by ``kind``."""
    return _digest({"derived": kind, **fields})


class JudgeCache:
    """A directory of cached answers. ``get`` returns the stored JSON string or None; ``put`` stores one.

    Entries are never evicted (labels are expensive and small); ``clear`` removes them all.
    """

    def __init__(self, directory: str | Path) -> None:
        self.path = Path(directory)
        self.path.mkdir(parents=True, exist_ok=True)
        # No eviction and no size cap: an evicted label is money spent twice. Values are str, stored as text.
        self._store = diskcache.Cache(str(self.path), size_limit=2**62, eviction_policy="none", cull_limit=0)

    def get(self, key: str) -> str | None:
        """The stored value for ``key``, or None."""
        value = self._store.get(key, default=None, retry=True)
        return value if isinstance(value, str) else None

    def put(self, key: str, value: str) -> None:
        """Store ``value`` (a JSON string) under ``key``."""
        self._store.set(key, value, retry=True)

    def __contains__(self, key: object) -> bool:
        return isinstance(key, str) and key in self._store

    def __len__(self) -> int:
        return len(self._store)

    def stats(self) -> dict[str, Any]:
        """Entries, bytes on disk and the directory."""
        return {"path": str(self.path), "entries": len(self._store), "bytes": int(self._store.volume())}

    def clear(self) -> int:
        """Remove every entry; returns how many there were."""
        return int(self._store.clear(retry=True))

    def close(self) -> None:
        """Close the underlying database connections (reopened on next use)."""
        self._store.close()

    def __enter__(self) -> JudgeCache:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
