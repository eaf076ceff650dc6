"""Which golden question a trace asked: by query id, by the same words, or by words a typo or two away.

The rule (stated for users in :mod:`assay.pipelines.traces.imports`): a trace's own query id when the golden set has
it; else the golden question with the same words (:func:`~assay.text.question_key`: case, spacing and
punctuation folded); else the golden question nearest in *word edit distance* (words inserted, deleted or replaced,
each one edit), when it is at most :func:`allowed_edits` of that golden question's length. Between golden questions
equally near, the one whose replaced words are more often *misspellings* of its own wins (:func:`misspelt`: a
character or two apart, a swap of two letters being one); still equal, the trace is *ambiguous* and left unmatched,
since a typo cannot tell them apart ("lamp" for "tent" or for "stove").
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from assay.formats.golden import GoldenSet
from assay.formats.traces import Trace
from assay.metrics.close import edit_distance
from assay.text import question_key

__all__ = [
    "KINDS",
    "Matching",
    "QuestionMatcher",
    "allowed_edits",
    "match_traces",
    "misspelt",
    "word_edits",
]

KINDS = ("query_id", "question", "near_question", "ambiguous", "none")
WORDS_PER_EDIT = 4  # one word edit allowed per four words of the golden question ...
MAX_EDITS = 2  # ... and never more than two: "a typo or two"


@dataclass
class Matching:
    """Traces with the query id each got (``(query_id, trace, kind)``, in the traces' order), those that got none,
    and how many of each kind (:data:`KINDS`)."""

    named: list[tuple[str, Trace, str]] = field(default_factory=list)
    ambiguous: list[tuple[Trace, tuple[str, ...]]] = field(default_factory=list)  # the equally near question ids
    unmatched: list[Trace] = field(default_factory=list)
    kinds: Counter[str] = field(default_factory=Counter)


def allowed_edits(words: int) -> int:
    """Word edits allowed for a golden question of ``words`` words: one per four words, at most two (a question of
    three words or fewer must match exactly)."""
    return min(MAX_EDITS, words // WORDS_PER_EDIT)


def word_edits(a: Sequence[str], b: Sequence[str]) -> tuple[int, int]:
    """``(edits, edits that are not misspellings)`` of the cheapest way from ``a`` to ``b`` (fewest edits first,
    then fewest that are not a word replaced by a misspelling of it): a Levenshtein table over words whose cells
    are such pairs (pairs add and compare in order, so the table's minimum is the cheapest)."""
    previous = [(j, j) for j in range(len(b) + 1)]
    for i, word in enumerate(a, start=1):
        current = [(i, i)]
        for j, other in enumerate(b, start=1):
            swap = (0, 0) if word == other else (1, 0) if misspelt(word, other) else (1, 1)
            up, left, diagonal = previous[j], current[j - 1], previous[j - 1]
            current.append(min((up[0] + 1, up[1] + 1), (left[0] + 1, left[1] + 1),
                               (diagonal[0] + swap[0], diagonal[1] + swap[1])))  # fmt: skip
        previous = current
    return previous[-1]


def misspelt(word: str, right: str) -> bool:
    """Whether ``word`` is a misspelling of ``right``: at most one character edit per four of ``right`` (at least
    one), where an edit inserts, deletes or replaces a character or swaps two neighbours."""
    return edit_distance(word, right) <= max(1, len(right) // 4)


class QuestionMatcher:
    """The golden question of a question text, by the rule of the module docstring (answers cached per text)."""

    def __init__(self, questions: Iterable[tuple[str, str]]) -> None:
        """``questions``: ``(query_id, text)`` of each golden question."""
        self.exact: dict[str, str] = {}
        self.words: list[tuple[str, list[str]]] = []
        self.index: dict[str, list[tuple[int, int]]] = {}  # word -> (golden position, times in that question)
        for qid, text in questions:
            key = question_key(text)
            self.exact.setdefault(key, qid)
            self.words.append((qid, key.split()))
            for word, times in Counter(key.split()).items():
                self.index.setdefault(word, []).append((len(self.words) - 1, times))
        self.cache: dict[str, tuple[tuple[str, ...], str]] = {}

    def match(self, text: str) -> tuple[tuple[str, ...], str]:
        """``((query_id,), "question" | "near_question")``, ``(ids, "ambiguous")`` or ``((), "none")``."""
        key = question_key(text)
        if key not in self.cache:
            self.cache[key] = ((self.exact[key],), "question") if key in self.exact else self._near(key.split())
        return self.cache[key]

    def _near(self, words: list[str]) -> tuple[tuple[str, ...], str]:
        shared: Counter[int] = Counter()
        for word, times in Counter(words).items():
            for position, held in self.index.get(word, ()):
                shared[position] += min(times, held)
        best, found = (MAX_EDITS + 1, 0), set[str]()
        for position, common in shared.items():
            qid, golden = self.words[position]
            allowed = allowed_edits(len(golden))
            if max(len(golden), len(words)) - common > allowed:  # fewer shared words than the edits allow
                continue
            cost = word_edits(words, golden)
            if cost[0] <= allowed and cost <= best:
                found = found if cost == best else set()
                best = cost
                found.add(qid)
        if not found:
            return (), "none"
        return tuple(sorted(found)), "near_question" if len(found) == 1 else "ambiguous"


def match_traces(traces: Sequence[Trace], golden: GoldenSet) -> Matching:
    """Each trace's golden question by the rule of the module docstring."""
    known = {q.id for q in golden.questions}
    matcher = QuestionMatcher((q.id, q.text) for q in golden.questions)
    out = Matching()
    for trace in traces:
        if trace.query_id is not None and trace.query_id in known:
            ids: tuple[str, ...] = (trace.query_id,)
            kind = "query_id"
        else:
            ids, kind = matcher.match(trace.question)
        out.kinds[kind] += 1
        if kind == "ambiguous":
            out.ambiguous.append((trace, ids))
        elif kind == "none":
            out.unmatched.append(trace)
        else:
            out.named.append((ids[0], trace, kind))
    return out
