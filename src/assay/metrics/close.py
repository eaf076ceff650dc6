"""Close names: the real names nearest a misspelt one, for the error that refuses it.

:func:`close_names` ranks a catalogue of real names by :func:`edit_distance` to the name given (case ignored): the
fewest edits first; among equals, the name as long as the one given (one character mistyped rather than one
missing: ``ndcg@1O`` is ``ndcg@10`` before ``ndcg@1``), then the catalogue's order. Only the nearest names are
offered (those at the fewest edits found), within ``max(1, len(name) // 3)`` edits, and never the name itself.
"""

from __future__ import annotations

from collections.abc import Iterable

__all__ = ["close_names", "edit_distance"]


def edit_distance(a: str, b: str) -> int:
    """Edits that turn ``a`` into ``b``: insert, delete or replace one character, or swap two neighbours (optimal
    string alignment: ``ndgc`` -> ``ndcg`` is one edit)."""
    previous2: list[int] = []
    previous = list(range(len(b) + 1))
    for i, x in enumerate(a, 1):
        row = [i] + [0] * len(b)
        for j, y in enumerate(b, 1):
            row[j] = min(previous[j] + 1, row[j - 1] + 1, previous[j - 1] + (x != y))
            if i > 1 and j > 1 and x == b[j - 2] and a[i - 2] == y:
                row[j] = min(row[j], previous2[j - 2] + 1)
        previous2, previous = previous, row
    return previous[-1]


def close_names(name: str, catalogue: Iterable[str], most: int = 3) -> list[str]:
    """Up to ``most`` names of ``catalogue`` nearest ``name`` (see the module docstring); [] when none is close."""
    given = name.lower()
    reach = max(1, len(name) // 3)
    ranked = []
    for order, candidate in enumerate(dict.fromkeys(catalogue)):
        if candidate == name:
            continue
        distance = edit_distance(given, candidate.lower())
        if distance <= reach:
            ranked.append((distance, abs(len(candidate) - len(name)), order, candidate))
    nearest = min((rank[0] for rank in ranked), default=None)
    return [candidate for distance, *_, candidate in sorted(ranked)[:most] if distance == nearest]
