"""Tool calls of a system against a question's reference calls: names unordered and in order, and arguments.

A call is a name and its arguments (a JSON object). With ``R`` the reference calls and ``S`` the system's, in order:

* **names, unordered**: ``m`` = the calls whose names the two lists share, counted as multisets (a name the system
  called twice and the reference once matches once); precision ``m / |S|`` (NaN when the system called nothing),
  recall ``m / |R|``, F1 their harmonic mean (0 when either is 0);
* **names, in order**: ``l`` = the length of the longest common subsequence of the two name sequences; F1
  ``2 l / (|S| + |R|)`` (the ordered counterpart of the F1 above, as RAGAS's strict-order tool-call accuracy
  aligns sequences);
* **arguments, exact**: the share of reference calls matched, one to one, by a system call of the same name whose
  arguments are the same JSON value, strings compared with their spaces folded and case ignored and numbers as
  numbers (``2`` and ``2.0`` are one value; case folded as Unicode folds it: "Straße" is "STRASSE").

NaN for every measure when the question has no reference call (nothing to compare with).

**Arguments, judged**: :func:`matched` counts the reference calls paired, one to one, with system calls some rule or
judge found equivalent (a maximum matching of the bipartite graph of equivalent pairs, so the count does not depend on
the order the pairs are listed in); :func:`same_terms` is the offline rule: the same name and, per argument, the same
numbers and words in any order (``"3.2+12"`` and ``"12 + 3.2"``).
"""

from __future__ import annotations

import json
import math
import re
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

__all__ = ["Call", "ToolScores", "exact_pairs", "matched", "same_terms", "tool_scores"]

Call = tuple[str, Mapping[str, Any]]  # (name, arguments)


@dataclass(frozen=True)
class ToolScores:
    """The measures of the module docstring for one question."""

    name_precision: float
    name_recall: float
    name_f1: float
    order_f1: float
    args_exact: float


def tool_scores(reference: Sequence[Call], system: Sequence[Call]) -> ToolScores:
    """The measures of the module docstring."""
    if not reference:
        return ToolScores(math.nan, math.nan, math.nan, math.nan, math.nan)
    ref_names, sys_names = [name for name, _ in reference], [name for name, _ in system]
    shared = sum((Counter(ref_names) & Counter(sys_names)).values())
    precision = shared / len(system) if system else math.nan
    recall = shared / len(reference)
    f1 = 2 * precision * recall / (precision + recall) if system and precision + recall > 0 else 0.0
    order = 2 * _lcs(ref_names, sys_names) / (len(reference) + len(system))
    exact = sum((Counter(map(_key, reference)) & Counter(map(_key, system))).values()) / len(reference)
    return ToolScores(precision, recall, f1, order, exact)


def _lcs(a: Sequence[str], b: Sequence[str]) -> int:
    """The length of the longest common subsequence of ``a`` and ``b``."""
    previous = [0] * (len(b) + 1)
    for x in a:
        current = [0]
        for j, y in enumerate(b, start=1):
            current.append(previous[j - 1] + 1 if x == y else max(previous[j], current[j - 1]))
        previous = current
    return previous[-1]


def _key(call: Call) -> str:
    name, arguments = call
    return name + "\x1f" + json.dumps(_canonical(arguments), sort_keys=True)


def _canonical(value: Any) -> Any:
    """A JSON value with strings folded (spaces, case) and numbers as floats, for comparing arguments."""
    if isinstance(value, Mapping):
        return {str(k): _canonical(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_canonical(v) for v in value]
    if isinstance(value, bool) or value is None:
        return value
    if isinstance(value, int | float):
        return float(value)
    return " ".join(str(value).split()).casefold()


def exact_pairs(reference: Sequence[Call], system: Sequence[Call]) -> list[tuple[int, int]]:
    """Every (reference index, system index) whose calls are the same (the rule of ``tool_args_exact``)."""
    keys = [_key(call) for call in system]
    return [(i, j) for i, call in enumerate(reference) for j, key in enumerate(keys) if _key(call) == key]


def matched(pairs: Sequence[tuple[int, int]]) -> int:
    """The size of a maximum one-to-one matching of ``pairs`` (reference index, system index): Kuhn's augmenting
    paths, visiting references and their partners in sorted order."""
    partners: dict[int, list[int]] = {}
    for ref, made in sorted(set(pairs)):
        partners.setdefault(ref, []).append(made)
    owner: dict[int, int] = {}

    def augment(ref: int, seen: set[int]) -> bool:
        for made in partners[ref]:
            if made in seen:
                continue
            seen.add(made)
            if made not in owner or augment(owner[made], seen):
                owner[made] = ref
                return True
        return False

    return sum(augment(ref, set()) for ref in sorted(partners))


_TERM = re.compile(r"\d+(?:\.\d+)?|[^\W\d_]+")


def same_terms(reference: Call, made: Call) -> bool:
    """The offline rule: the same tool, the same argument names, and each argument's numbers and words the same in
    any order (numbers as numbers, words without case)."""
    if reference[0] != made[0] or set(reference[1]) != set(made[1]):
        return False
    return all(_terms(reference[1][key]) == _terms(made[1][key]) for key in reference[1])


def _terms(value: Any) -> Counter[str]:
    text = value if isinstance(value, str) else json.dumps(value, sort_keys=True, ensure_ascii=False)
    return Counter(str(float(t)) if t[0].isdigit() else t.casefold() for t in _TERM.findall(text))
