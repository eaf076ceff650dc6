"""The judge cache: valid model answers on disk, keyed by everything that decides the answer and nothing else.

The key is ``"v1:" + blake2b(canonical JSON of {model, messages, params, prompt name, version, content hash,
output schema})``: changing any of those makes a new key; timeouts, retries, concurrency or the machine do not.
The model is the judge's ``cache_model``: the model string, or the name a backend gives its answers (the offline
judge's ``offline/rules-N``, so a change of its rules is a new key).
Values are JSON strings (never pickles), so a cache can be read by any version of assay and shared by a cluster.
Storage is :mod:`diskcache` (SQLite underneath), safe for several processes on one directory. This is the only
module of assay that imports diskcache. Failures are never cached (the client only ``put``s validated answers).
"""

from __future__ import annotations

import asyncio
import functools
import hashlib
import json
import logging
import threading
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path
from typing import Any

from assay.judge.base import is_plain_message
from assay.text import canonical_json

__all__ = ["KEY_VERSION", "CacheWriter", "JudgeCache", "cache_key", "derived_key"]

KEY_VERSION = "v1"
_SQLITE_AUTOCHECKPOINT = 1000  # SQLite's default, in pages
log = logging.getLogger("assay.judge")
_BATCH = 500  # keys per SQL query, well under SQLite's limit on bound variables


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
    """The cache key of one model call (see the module docstring for what goes in).

    Equal to ``_digest`` of the dict ``{model, messages, params, prompt: {name, version, hash}, schema}``; the
    canonical JSON is assembled piece by piece so the long, repeated parts (system prompt, schema) are encoded and
    hashed once per prompt, not once per call.
    """
    first = messages[0] if messages else None
    if first is not None and is_plain_message(first):
        hasher = _hash_after_message(first["role"], first["content"]).copy()
    else:
        hasher = _hash_after("" if first is None else canonical_json(first)).copy()
    rest = "".join("," + _message_json(m) for m in messages[1:])
    prompt = _prompt_json(prompt_name, prompt_version, prompt_hash)
    tail = (
        f'{rest}],"model":{_string_json(model)},"params":{_canonical(dict(params))},"prompt":{prompt},'
        f'"schema":{_schema_json(schema)}}}'
    )
    hasher.update(tail.encode("utf-8"))
    return f"{KEY_VERSION}:{hasher.hexdigest()}"


@functools.lru_cache(maxsize=64)
def _hash_after(head: str) -> Any:
    """The blake2b state after ``{"messages":[`` and the first message."""
    return hashlib.blake2b(('{"messages":[' + head).encode("utf-8"), digest_size=20)


@functools.lru_cache(maxsize=64)
def _hash_after_message(role: str, content: str) -> Any:
    """:func:`_hash_after` for a plain first message: a system prompt (one str object per prompt, its hash cached
    by Python) is encoded and hashed once per prompt, not once per call."""
    return _hash_after(_role_content_json(role, content))


@functools.lru_cache(maxsize=64)
def _prompt_json(name: str, version: str, content_hash: str) -> str:
    return canonical_json({"name": name, "version": version, "hash": content_hash})


# canonical_json's settings in one encoder made once (json.dumps with arguments builds an encoder per call), and
# its string encoder: equal to canonical_json(value) for every dict and str value.
_canonical = json.JSONEncoder(sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=str).encode
_string_json: Callable[[str], str] = json.encoder.encode_basestring


def _message_json(message: Mapping[str, str]) -> str:
    if is_plain_message(message):
        return _role_content_json(message["role"], message["content"])
    return canonical_json(message)


def _role_content_json(role: str, content: str) -> str:
    return f'{{"content":{_string_json(content)},"role":{_string_json(role)}}}'


_SCHEMAS: dict[int, tuple[Mapping[str, Any] | None, str]] = {}


def _schema_json(schema: Mapping[str, Any] | None) -> str:
    """Canonical JSON of a schema, memoised by identity (prompts keep one schema object for their lifetime)."""
    memo = _SCHEMAS.get(id(schema))
    if memo is not None and memo[0] is schema:
        return memo[1]
    text = canonical_json(schema)
    if len(_SCHEMAS) > 256:
        _SCHEMAS.clear()
    _SCHEMAS[id(schema)] = (schema, text)
    return text


def derived_key(kind: str, fields: Mapping[str, Any]) -> str:
    """A key for a result derived from a call (e.g. one pair's label out of a listwise answer), tagged by ``kind``."""
    return _digest({"derived": kind, **fields})


_INSERT = (
    "INSERT INTO Cache(key, raw, store_time, expire_time, access_time, access_count, tag, size, mode, filename, value)"
    " VALUES (?, 1, ?, NULL, ?, 0, NULL, 0, ?, NULL, ?)"
)


def _split_new(
    items: Sequence[tuple[str, str]], present: set[str], min_file_size: int
) -> tuple[list[tuple[str, str]], list[tuple[str, str]]]:
    """Split ``items`` into plain inserts and pairs for diskcache's ``set`` (every pair of a key goes one way)."""
    counts: dict[str, int] = {}
    slow_keys = set(present)
    for key, value in items:
        counts[key] = counts.get(key, 0) + 1
        if type(value) is not str or len(value) >= min_file_size or counts[key] > 1:
            slow_keys.add(key)
    fast = [(key, value) for key, value in items if key not in slow_keys]
    slow = [(key, value) for key, value in items if key in slow_keys]
    return fast, slow


class JudgeCache:
    """A directory of cached answers. ``get`` returns the stored JSON string or None; ``put`` stores one.

    Entries are never evicted (labels are expensive and small); ``clear`` removes them all.
    """

    def __init__(self, directory: str | Path) -> None:
        self.path = Path(directory)
        self.path.mkdir(parents=True, exist_ok=True)
        import diskcache  # here, not at module level: `assay --help` and commands without a judge never need it

        # No eviction and no size cap: an evicted label is money spent twice. Values are str, stored as text.
        self._raw_mode = diskcache.core.MODE_RAW
        self._store = diskcache.Cache(str(self.path), size_limit=2**62, eviction_policy="none", cull_limit=0)

    def get(self, key: str) -> str | None:
        """The stored value for ``key``, or None."""
        value = self._store.get(key, default=None, retry=True)
        return value if isinstance(value, str) else None

    def get_many(self, keys: Sequence[str]) -> dict[str, str]:
        """The stored values of those ``keys`` that are present, in one SQL query per 500 keys.

        Small text values sit in diskcache's ``Cache`` table in raw mode and are read straight from it; any other
        entry (a large value kept in a file) is read through diskcache's own ``get``.
        """
        found: dict[str, str] = {}
        now = time.time()
        for key, mode, value, expire in self._rows("key, mode, value, expire_time", keys):
            if expire is not None and expire <= now:
                continue
            if mode == self._raw_mode and isinstance(value, str):
                found[key] = value
            elif (slow := self.get(key)) is not None:
                found[key] = slow
        return found

    def put(self, key: str, value: str) -> None:
        """Store ``value`` (a JSON string) under ``key``."""
        self._store.set(key, value, retry=True)

    def put_many(self, items: Sequence[tuple[str, str]]) -> None:
        """Store several ``(key, value)`` pairs in one transaction (a later pair wins over an earlier one).

        New keys with small text values (the usual answer) go in with one ``executemany`` INSERT of the row
        diskcache's own ``set`` would write (raw text, no expiry, no tag; the size and count triggers run as
        usual); a key already stored, repeated in ``items``, or with a value large enough for a file goes
        through diskcache's ``set``, which replaces rows and cleans up files.
        """
        with self._store.transact(retry=True):
            present = self._present([key for key, _ in items])
            fast, slow = _split_new(items, present, int(self._store.disk_min_file_size))
            if fast:
                now = time.time()
                rows = [(key, now, now, self._raw_mode, value) for key, value in fast]
                self._store._con.executemany(_INSERT, rows)
            for key, value in slow:
                self._store.set(key, value, retry=True)

    def _present(self, keys: Sequence[str]) -> set[str]:
        return {key for (key,) in self._rows("key", keys)}

    def _rows(self, columns: str, keys: Sequence[str]) -> Iterator[tuple[Any, ...]]:
        """``columns`` of the rows of those ``keys`` that are stored, in one SQL query per 500 keys."""
        for start in range(0, len(keys), _BATCH):
            chunk = list(keys[start : start + _BATCH])
            query = f"SELECT {columns} FROM Cache WHERE raw = 1 AND key IN ({','.join('?' * len(chunk))})"
            yield from self._store._sql(query, chunk).fetchall()

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

    def set_autocheckpoint(self, pages: int) -> None:
        """SQLite's WAL auto-checkpoint threshold, in pages, for this thread's connection (0: off; SQLite's default
        is 1000). Off, a commit never stops to copy the log into the database and fsync it (up to ~15 ms here)."""
        self._store._sql(f"PRAGMA wal_autocheckpoint = {int(pages)}").fetchall()

    def checkpoint(self) -> None:
        """Copy the write-ahead log into the database: a PASSIVE checkpoint, which never waits for other
        connections (run it from a thread of its own to keep its fsyncs off an event loop)."""
        self._store._sql("PRAGMA wal_checkpoint(PASSIVE)").fetchall()

    def close(self) -> None:
        """Close the underlying database connections (reopened on next use)."""
        self._store.close()

    def __enter__(self) -> JudgeCache:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class CacheWriter:
    """Group commit for the event loop: puts made in one loop iteration are written in one transaction.

    ``await put(key, value)`` returns once the entry is committed (a result handed out is on disk, so a killed run
    loses nothing it reported). Answers arriving together (a wave of responses) cost one SQLite commit instead of
    one each. A failed write calls ``on_error`` and is otherwise ignored. Use from one event loop.

    Checkpoints (copying SQLite's write-ahead log into the database, with fsyncs that took up to ~15 ms here) would
    otherwise run inside a commit on the loop every ~1,000 pages and stall every call in flight. The writer turns
    them off for the loop's connection and runs one every ``checkpoint_every`` commits on a thread of its own,
    where SQLite releases the GIL; :meth:`close` turns them back on.
    """

    def __init__(
        self, cache: JudgeCache, on_error: Callable[[Exception], None], *, checkpoint_every: int = 128
    ) -> None:
        self._cache = cache
        self._on_error = on_error
        self._pending: list[tuple[str, str, asyncio.Future[None]]] = []
        self._checkpoint_every = checkpoint_every
        self._commits = 0
        self._checkpointer: ThreadPoolExecutor | None = None
        self._checkpointing: Future[None] | None = None
        self._thread = threading.get_ident()
        self._set_autocheckpoint(0)

    async def put(self, key: str, value: str) -> None:
        """Queue ``value`` under ``key`` and wait until it is committed."""
        loop = asyncio.get_running_loop()
        future: asyncio.Future[None] = loop.create_future()
        self._pending.append((key, value, future))
        if len(self._pending) == 1:
            loop.call_soon(self._flush)
        await future

    def _flush(self) -> None:
        batch, self._pending = self._pending, []
        try:
            self._cache.put_many([(key, value) for key, value, _ in batch])
        except Exception as exc:  # a broken cache must not stop judging
            self._on_error(exc)
        for _, _, future in batch:
            if not future.done():
                future.set_result(None)
        self._commits += 1
        if self._commits % self._checkpoint_every == 0:
            self._checkpoint_in_background()

    def _checkpoint_in_background(self) -> None:
        if self._checkpointing is not None and not self._checkpointing.done():
            return  # the last one is still running: the next one will catch up
        if self._checkpointer is None:
            self._checkpointer = ThreadPoolExecutor(max_workers=1, thread_name_prefix="assay-cache-checkpoint")
        self._checkpointing = self._checkpointer.submit(self._checkpoint)

    def _checkpoint(self) -> None:
        try:
            self._cache.checkpoint()
        except Exception as exc:  # nothing is lost: the log stays valid and is copied by a later checkpoint
            log.warning("judge cache checkpoint failed (%s); the next one will retry.", exc)

    def close(self) -> None:
        """Write whatever is still queued (nothing is, once every ``put`` has returned), wait for a checkpoint in
        progress, and turn SQLite's own checkpoints back on for this connection."""
        if self._pending:
            self._flush()
        if self._checkpointer is not None:
            self._checkpointer.shutdown(wait=True)
            self._checkpointer = None
        if threading.get_ident() == self._thread:
            self._set_autocheckpoint(_SQLITE_AUTOCHECKPOINT)

    def _set_autocheckpoint(self, pages: int) -> None:
        try:
            self._cache.set_autocheckpoint(pages)
        except Exception as exc:  # a broken cache must not stop judging; its writes will fail and be counted
            log.warning("judge cache: could not set SQLite's auto-checkpoint to %d pages (%s).", pages, exc)
