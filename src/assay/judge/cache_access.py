"""The judge's reads and writes of its cache, made safe: a broken cache warns, is counted in ``stats.cache_errors``,
and reads as a miss; judging goes on. :class:`~assay.judge.client.Judge` inherits these; callers that derive their
own keys (listwise relevance) use them directly.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence

from assay.judge.cache import JudgeCache
from assay.judge.results import JudgeStats

__all__ = ["CacheAccess"]

log = logging.getLogger("assay.judge")


class CacheAccess:
    """Cache reads and writes that never stop a run (``cache`` None: no cache)."""

    cache: JudgeCache | None
    stats: JudgeStats

    def cache_get(self, key: str) -> str | None:
        """Read the cache; an error warns, counts, and reads as a miss."""
        if self.cache is None:
            return None
        try:
            return self.cache.get(key)
        except Exception as exc:  # a broken cache must not stop judging
            self.stats.cache_errors += 1
            log.warning("judge cache read failed (%s); calling the model instead.", exc)
            return None

    def cache_put_many(self, items: Sequence[tuple[str, str]]) -> None:
        """Write several entries in one transaction; an error warns, counts, and is otherwise ignored."""
        if self.cache is None or not items:
            return
        try:
            self.cache.put_many(items)
        except Exception as exc:  # a broken cache must not stop judging
            self.stats.cache_errors += 1
            log.warning("judge cache write failed (%s); the answers are not cached.", exc)

    def cache_get_many(self, keys: Sequence[str]) -> dict[str, str]:
        """Read many keys at once; an error warns, counts, and reads as all misses."""
        if self.cache is None or not keys:
            return {}
        try:
            return self.cache.get_many(keys)
        except Exception as exc:  # a broken cache must not stop judging
            self.stats.cache_errors += 1
            log.warning("judge cache read failed (%s); calling the model instead.", exc)
            return {}
