"""Judge noise (``assay eval --judge-repeats N``): how often the judge changes its grade when merely asked again, and
what that does to the primary metric.

A judge that grades one (question, chunk) pair 2 today and 1 tomorrow adds noise that no interval over questions
sees: every run is scored against the same labels, drawn once. This step measures it on a sample:

* **The sample**: the golden chunks in the top k of each run (k: the primary metric's cut-off, else the headline k)
  whose label came from the judge or the generator (a person's label or an imported one is not re-asked), at most
  ``limit`` pairs, chosen by a CRC-32 of ``query_id<TAB>chunk_id`` (the same pairs on any machine, spread over the
  questions).
* **The asks**: ask 0 is the judge as configured (the labels it gave, from its cache when it made them with these
  settings); asks 1..N are :meth:`~assay.judge.client.Judge.repeat` (the same prompt and grouping, cached apart, so a
  rerun pays nothing). A re-ask that fails keeps the pair's label for that ask and is counted.
* **The figures** (:class:`~assay.results.JudgeNoise`): ``changed`` = the share of sampled pairs whose grade differs
  in some ask (the judge card's consistency figure, on this evaluation's own pairs); for a primary metric computed
  from the labels (a ranking measure), each run's mean is recomputed under every ask's labels, and the standard
  deviation over the asks is the judge's share of noise in that mean (``sd``), and in each compared pair's delta
  (``sd_delta``). Those are stated beside the interval, not folded into it: the interval is over questions, the
  judge's noise is over asks, and a reader decides with both in view. Pairs outside the sample keep their labels,
  so when the sample is capped the figures are a lower bound (``coverage`` says which share of the top-k labels
  was re-asked).

Without ``--judge-repeats``, :func:`noise_from_card` states the judge card's consistency figure when the card has one.
"""

from __future__ import annotations

import math
import zlib
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from assay.aio import run_sync
from assay.errors import ConfigError
from assay.formats.golden import GoldenSet
from assay.judge import Judge
from assay.judge.panel import Grader
from assay.judge.relevance import Pair, grade_pairs
from assay.metric_names import MetricName
from assay.metrics import MetricError, parse_measure
from assay.pipelines.evaluate.runs.loaded import LoadedRun
from assay.pipelines.evaluate.scoring import ranking as er
from assay.pipelines.evaluate.scoring.names import kind_of
from assay.results import Comparison, JudgeCardSummary, JudgeNoise, rounded

__all__ = ["DEFAULT_LIMIT", "check_repeatable", "cutoff", "judge_noise", "noise_from_card", "sample_pairs"]

DEFAULT_LIMIT = 300  # pairs re-asked at most, per evaluation
_RE_ASKED = ("judge", "generator")


def check_repeatable(judge: Grader | None, repeats: int) -> None:
    """``--judge-repeats`` needs one judge (a :class:`Judge`), and a count >= 1; raised before any work."""
    if repeats <= 0:
        return
    if judge is None:
        raise ConfigError("--judge-repeats re-asks the judge: give --judge MODEL too")
    if not isinstance(judge, Judge):
        raise ConfigError("--judge-repeats measures one judge: give one --judge (a panel's judges vary apart)")


def sample_pairs(
    gold: GoldenSet, runs: Sequence[LoadedRun], *, k: int, limit: int
) -> tuple[list[tuple[str, str]], int]:
    """The pairs to re-ask (module doc) and how many top-k pairs were eligible before the cap."""
    sources = {
        (label.query_id, label.chunk_id): label.provenance.source for label in gold.qrels if label.grade is not None
    }
    people = {(q, c) for source in ("human", "imported") for q, chunks in gold.qrels_map(source=source).items()
              for c in chunks}  # fmt: skip
    eligible = {
        (qid, cid)
        for run in runs
        for qid, line in run.lines.items()
        for cid in line.top(k)
        if sources.get((qid, cid)) in _RE_ASKED and (qid, cid) not in people and gold.has_chunk(cid)
    }
    chosen = sorted(eligible, key=lambda pair: (zlib.crc32(f"{pair[0]}\t{pair[1]}".encode()), pair))[:limit]
    return sorted(chosen), len(eligible)


def judge_noise(
    judge: Judge,
    gold: GoldenSet,
    members: Mapping[str, Sequence[LoadedRun]],
    labels: er.Labels,
    *,
    repeats: int,
    primary: str | None,
    ranking: Sequence[str],
    comparisons: Sequence[Comparison],
    threshold: int,
    depth: int,
    k: int,
    listwise: int | None,
    seed: int,
    limit: int = DEFAULT_LIMIT,
) -> JudgeNoise:
    """Re-ask the judge ``repeats`` times on the sample and measure (module doc). ``members``: each run's projected
    runs (one, or one per repeat of a repeated run)."""
    everyone = [run for runs in members.values() for run in runs]
    pairs, eligible = sample_pairs(gold, everyone, k=k, limit=limit)
    if not pairs:
        return JudgeNoise(repeats=repeats, labels=0, note="No judge label in the runs' top k to re-ask.")
    asked = [Pair(q, gold.question(q).text, c, gold.chunk(c).text) for q, c in pairs]
    grades, failed = _asks(judge, asked, repeats, listwise=listwise, seed=seed, original=labels)
    table = np.array(grades, dtype=np.float64)  # asks x pairs
    changed = float(np.mean(np.any(table != table[0], axis=0)))
    out = JudgeNoise(
        repeats=repeats, labels=len(pairs), eligible=eligible, coverage=rounded(len(pairs) / eligible),
        changed=rounded(changed), failed=failed, metric=primary,
    )  # fmt: skip
    if primary is None or primary not in ranking:
        out.note = (
            f"{primary or 'The primary metric'} is not computed from the chunk labels alone, so only the share of "
            "changed grades is measured."
        )
        return out
    means = _means_per_ask(members, labels, pairs, table, primary, threshold=threshold, depth=depth)
    out.sd = {run: rounded(float(np.std(values, ddof=1))) for run, values in means.items() if len(values) > 1}
    for c in comparisons:
        if c.primary and c.a in means and c.b in means:
            deltas = np.array(means[c.b]) - np.array(means[c.a])
            out.sd_delta[f"{c.b} - {c.a}"] = rounded(float(np.std(deltas, ddof=1)))
    return out


def _asks(
    judge: Judge, pairs: Sequence[Pair], repeats: int, *, listwise: int | None, seed: int, original: er.Labels
) -> tuple[list[list[int]], int]:
    """Grades per ask (ask 0: the judge as configured), a failed re-ask keeping the label; and the failures."""

    async def work() -> list[list[Any]]:
        try:
            out = []
            for index in range(repeats + 1):
                asker = judge.repeat(index) if index else judge
                out.append(await grade_pairs(asker, pairs, listwise=listwise, seed=seed, stage="judge-noise"))
            return out
        finally:
            await judge.aclose()

    failed = 0
    grades: list[list[int]] = []
    for labels in run_sync(work):
        row = []
        for pair, label in zip(pairs, labels, strict=True):
            kept = original.grade(pair.query_id, pair.chunk_id)
            if label.grade is None:
                failed += 1
            row.append(label.grade if label.grade is not None else (kept if kept is not None else 0))
        grades.append(row)
    return grades, failed


def _means_per_ask(
    members: Mapping[str, Sequence[LoadedRun]],
    labels: er.Labels,
    pairs: Sequence[tuple[str, str]],
    table: np.ndarray,
    primary: str,
    *,
    threshold: int,
    depth: int,
) -> dict[str, list[float]]:
    """Each run's mean of ``primary`` under each ask's labels (a repeated run: the mean over its repeats)."""
    out: dict[str, list[float]] = {}
    for row in table:
        qrels = {qid: dict(chunks) for qid, chunks in labels.qrels.items()}
        for (qid, cid), grade in zip(pairs, row, strict=True):
            qrels.setdefault(qid, {})[cid] = int(grade)
        asked = er.Labels(qrels, labels.unscored, labels.strict_unscored)
        for name, runs in members.items():
            per_question: dict[str, list[float]] = {}
            for run in runs:
                for qid, values in er.rank_run(run, asked, [primary], threshold=threshold, depth=depth).items():
                    value = values.metrics.get(primary)
                    if value is not None:
                        per_question.setdefault(qid, []).append(value)
            scored = [float(np.mean(v)) for v in per_question.values()]
            out.setdefault(name, []).append(float(np.mean(scored)) if scored else math.nan)
    return {name: values for name, values in out.items() if not any(math.isnan(v) for v in values)}


def noise_from_card(card: JudgeCardSummary | None, primary: str | None) -> JudgeNoise | None:
    """The judge card's consistency figure as a :class:`JudgeNoise` (no re-ask in this evaluation); None without."""
    if card is None or not card.found:
        return None
    figure = next((value for label, value in card.figures.items() if "grade changed" in label), None)
    if figure is None:
        return None
    return JudgeNoise(
        source="card", metric=primary, card_figure=figure,
        note=f"The judge card measured this judge changing grades when asked again ({figure}); its effect on "
        f"{primary or 'the primary metric'} is not measured here: rerun with --judge-repeats 2 to measure it.",
    )  # fmt: skip


def cutoff(primary: str | None, k_head: int) -> int:
    """The top k the sample is drawn from: the primary metric's cut-off, else the headline k."""
    if primary is None or kind_of(primary) != "ranking":
        return k_head
    try:
        found = parse_measure(primary).k
    except MetricError:  # a name the registry does not know: the cut-off as written, when nothing follows it
        parsed = MetricName.parse(primary)
        found = None if parsed.options else parsed.k
    return found or k_head
