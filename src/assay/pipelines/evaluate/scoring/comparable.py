"""What can be compared across runs that cut their text differently, and what the verdict leads with then.

Runs **cut their text alike** when no passage of one partly overlaps a passage of another: in every document, a
passage only one run retrieved shares no character with a passage only the other retrieved (a run of golden chunk
ids and a run of the same chunks given by text cut alike; halves of those chunks do not). Two runs of one windowing
with overlap cut alike where they share windows or their windows do not touch; where a window only one run has
partly overlaps a window only the other has, they read as cut differently: the test errs towards fewer verdicts.
Passages found in no document are left out of the test. When the runs cut alike, every metric compares retrieval.
When they do not:

* ranking measures (computed on each run's projection onto the golden chunks, :mod:`~..runs.units`), budget
  measures (characters of relevant text within a budget, :mod:`~.budget`), coverage recall, context precision and
  the answer-only metrics follow the text, so they are compared as usual;
* metrics over a number of passages (:data:`~.names.PASSAGE_BOUND`: span metrics at k, and the LLM metrics whose
  context is the top passages) would compare how much text k passages hold: they get no verdict, and one sentence
  says why;
* the primary metric, unless named, is nDCG at the first budget: it weighs the relevant text a run put first within
  the first B characters of each run's text; a run that retrieved less text is scored on what it retrieved (how
  full each run's budget is: :mod:`~.fill`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from assay.metric_names import MetricName
from assay.pipelines.evaluate.runs.loaded import LoadedRun
from assay.pipelines.evaluate.scoring.names import counts_passages, parse_budget

__all__ = ["Comparable", "comparable", "cut_alike"]


def _spans(run: LoadedRun, depth: int) -> dict[str, set[tuple[int, int]]]:
    out: dict[str, set[tuple[int, int]]] = {}
    for line in run.lines.values():
        for unit in line.top(depth):
            found = line.located.get(unit)
            if found is not None and found.span is not None:
                out.setdefault(found.span.doc_id, set()).add((found.span.start, found.span.end))
    return out


def _crossing(a: set[tuple[int, int]], b: set[tuple[int, int]]) -> bool:
    """Whether a span only ``a`` has overlaps a span only ``b`` has. Spans both runs have are left out: a chunker
    whose passages overlap each other (windows) cuts two runs alike even where one run's window overlaps another
    window of the same chunking that only the other run retrieved."""
    active: list[list[int]] = [[], []]  # the ends of each side's spans that may still overlap what comes next
    for start, end, side in sorted([(s, e, 0) for s, e in a - b] + [(s, e, 1) for s, e in b - a]):
        other = active[1 - side] = [stop for stop in active[1 - side] if stop > start]
        if other:
            return True
        active[side].append(end)
    return False


def cut_alike(runs: Sequence[LoadedRun], depth: int) -> bool:
    """Whether the runs' passages in their top ``depth`` cut the documents alike (see the module docstring)."""
    spans = [_spans(run, depth) for run in runs]
    for i, one in enumerate(spans):
        for other in spans[i + 1 :]:
            if any(_crossing(one[doc], other[doc]) for doc in one.keys() & other.keys()):
                return False
    return True


@dataclass(frozen=True)
class Comparable:
    """The outcome for one evaluation: whether the runs cut alike, the metrics compared, the primary, the notes."""

    alike: bool
    compared: list[str]
    primary: str | None
    notes: list[str]


def comparable(
    runs: Sequence[LoadedRun],
    names: Sequence[str],
    *,
    depth: int,
    budgets: Sequence[str],
    primary: str | None,
    lengths: Mapping[str, float],
) -> Comparable:
    """Which of ``names`` are compared and which leads (see the module docstring); ``lengths``: each run's median
    passage length in characters, for the note."""
    if len(runs) < 2 or cut_alike(runs, depth):
        return Comparable(True, list(names), primary, [])
    compared = [name for name in names if not counts_passages(name)]
    left_out = [name for name in names if counts_passages(name)]
    lead = f"ndcg@{budgets[0]}" if budgets and f"ndcg@{budgets[0]}" in compared else None
    chosen = primary if primary is not None else lead
    shown = ", ".join(f"{name} {median:.0f}" for name, median in lengths.items())
    notes = [
        "The runs cut their text differently"
        + (f" (median passage length in characters: {shown})." if shown else ".")
        + " Ranking measures count the golden chunks a run showed at least half of, and budget measures count"
        " characters of relevant text within a budget, so both depend on the text retrieved, not on how it was cut."
    ]
    if chosen is not None and primary is None:
        notes.append(f"The primary metric is {chosen}: relevant text first, within the first {_budget_of(chosen)} of "
                     "each run's text; a run that retrieved less is scored on what it retrieved.")  # fmt: skip
    if left_out:
        notes.append(
            f"No verdict on {_listed(left_out)}: they are measured over a number of passages, and the same number of"
            " passages holds different amounts of text in these runs."
        )
    return Comparable(False, compared, chosen, notes)


def _budget_of(name: str) -> str:
    """``ndcg@1000t`` -> ``1000 tokens (4,000 characters)``; ``ndcg@400c`` -> ``400 characters``."""
    cut = MetricName.parse(name).cut or ""
    chars = parse_budget(cut)
    return f"{chars:,} characters" if cut.endswith("c") else f"{cut[:-1]} tokens ({chars:,} characters)"


def _listed(names: Sequence[str], most: int = 6) -> str:
    shown = ", ".join(names[:most])
    return shown + (f" and {len(names) - most} more" if len(names) > most else "")
