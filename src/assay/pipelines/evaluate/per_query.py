"""Step 3 of an evaluation: each run's values per question, against the same labels for every run. On the run's
projection (:mod:`~.scoring.ranking`): trec_eval ranking measures, RAGAS context precision, coverage recall; on its
passages' text: span measures (:mod:`~.scoring.spans`) and budget measures (:mod:`~.scoring.budget`, with how full
each budget is, :mod:`~.scoring.fill`); the LLM metrics as the judge assessed them; the team's own criteria
(:mod:`~.scoring.criteria`); a conversation's rewrites; the measures of a trajectory when some run's lines carry
steps (:mod:`~.scoring.trajectory`). Each
run comes out as one :class:`~.scoring.scored.ScoredRun`, with its passage rows (:func:`~.judging.passages.
passage_rows`).

Two rules about the system rather than the judge: a question the system failed on scores 0 on its recall-type
answer measures (:data:`~.scoring.names.RECALL_TYPE`: it gave nothing) and on the measures of what it retrieved
(:func:`~.scoring.names.measures_retrieval`: nothing, as an empty list scores), and every other metric of it is
unscored (``system_failed``); a run with answers and no passage at all
(:attr:`~.runs.loaded.LoadedRun.passage_free`) has every measure that reads passages unscored (``no passages in this
run``), never 0."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from assay.corpus.pooling import Bm25Index
from assay.formats.golden import GoldenSet
from assay.pipelines.evaluate.judged import Judged
from assay.pipelines.evaluate.judging.passages import passage_rows
from assay.pipelines.evaluate.prepared import Prepared
from assay.pipelines.evaluate.runs.loaded import NO_PASSAGES, LoadedRun
from assay.pipelines.evaluate.runs.read import FAILED
from assay.pipelines.evaluate.scoring import ranking as er
from assay.pipelines.evaluate.scoring.budget import SpanPool, budget_values
from assay.pipelines.evaluate.scoring.conversations import TurnParts
from assay.pipelines.evaluate.scoring.criteria import criterion_values
from assay.pipelines.evaluate.scoring.fill import budget_fill
from assay.pipelines.evaluate.scoring.names import RECALL_TYPE, measures_retrieval, needs_passages
from assay.pipelines.evaluate.scoring.scored import ScoredRun
from assay.pipelines.evaluate.scoring.spans import span_values
from assay.pipelines.evaluate.scoring.trajectory import trajectory_values
from assay.pipelines.evaluate.statistics.stats import question_strata
from assay.results import QueryResult

__all__ = ["Scores", "score_runs"]


@dataclass(frozen=True)
class Scores:
    """Every run scored (in the order read; an asking of a repeated run on its own), the labels they were scored
    against, and the pool of character grades the budget measures read."""

    labels: er.Labels
    runs: list[ScoredRun]
    pool: SpanPool


def score_runs(setup: Prepared, judged: Judged, *, strict: bool) -> Scores:
    """Score every run (module doc). ``strict``: an unscored label is not relevant for want of a grade (evaluated
    with a judge), as :class:`~.scoring.ranking.Labels` says."""
    gold, config = setup.gold, setup.config
    labels = er.Labels.of(gold, strict_unscored=strict)  # the same pool for every run
    turns = TurnParts.of(gold, setup.loaded, labels, config.threshold)
    pool = SpanPool(setup.index)
    stepped = any(line.steps for one in setup.loaded for line in one.lines.values())
    step = _Scoring(setup, judged, labels, pool, turns, stepped, _chunk_index(gold) if stepped else None)
    scored = []
    for one in setup.runs:
        passages = passage_rows(one.run, labels, judged.carried, config.depth)
        scored.append(ScoredRun(one.run, one.projected, step.rows(one.run, one.projected), passages))
    return Scores(labels, scored, pool)


@dataclass(frozen=True)
class _Scoring:
    """What scoring every run shares."""

    setup: Prepared
    judged: Judged
    labels: er.Labels
    pool: SpanPool
    turns: TurnParts | None
    stepped: bool  # some run's lines carry steps: every run gets the measures of a trajectory
    chunk_index: Bm25Index | None  # BM25 over the golden chunks, for the step queries (None: no chunk text)

    def rows(self, run: LoadedRun, projected: LoadedRun) -> dict[str, QueryResult]:
        """Per-query values of ``run`` (``projected``: its projection onto the golden chunks), with the module
        docstring's two rules applied."""
        parts = self._parts(run, projected)
        fills = {} if run.passage_free else budget_fill(run, self.pool, self.setup.chosen.budgets)
        rows: dict[str, QueryResult] = {}
        for qid in run.lines:
            strata = question_strata(self.setup.gold.question(qid), self.setup.config.strata)
            strata.update(self.turns.strata.get(qid, {}) if self.turns is not None else {})
            row = rows[qid] = QueryResult(run=run.name, query_id=qid, strata=strata,
                                          cluster=self.setup.clusters.get(qid), budget=fills.get(qid, {}))  # fmt: skip
            for part in parts:
                values = part.get(qid)
                if values is not None:
                    row.metrics.update(values.metrics)
                    row.unscored.update(values.unscored)
        _fail(run, rows)
        if run.passage_free:
            _no_passages(rows)
        return rows

    def _parts(self, run: LoadedRun, projected: LoadedRun) -> list[Mapping[str, er.QueryValues]]:
        """Each measure's values per question, in the order they join a row."""
        config, chosen, labels = self.setup.config, self.setup.chosen, self.labels
        parts: list[Mapping[str, er.QueryValues]] = []
        if chosen.ranking:
            parts.append(er.rank_run(projected, labels, chosen.ranking, threshold=config.threshold,
                                     depth=config.depth))  # fmt: skip
        if labels.strict_unscored and "ragas_context_precision" in chosen.families:  # evaluated with a judge
            parts.append(er.context_precision(projected, labels, config.k_values, config.cp_threshold))
        if "coverage_recall" in chosen.families:
            parts.append(er.coverage(projected, self.setup.gold, config.k_values))
        if chosen.spans:
            parts.append(span_values(run, self.setup.index, chosen.spans))
        if chosen.budgets:
            parts.append(budget_values(run, self.pool, chosen.budgets, config.threshold))
        parts.append(self.judged.assessed.get(run.name, {}))
        if config.loaded_criteria:
            parts.append(criterion_values(run, self.setup.gold, config.loaded_criteria, config.depth,
                                          self.judged.criteria.values.get(run.name, {})))  # fmt: skip
        parts.append(self.turns.rewrites.get(run.name, {}) if self.turns is not None else {})
        if self.stepped and not (run.passage_free and not any(line.steps for line in run.lines.values())):
            parts.append(trajectory_values(run, self.setup.gold, self.pool, labels, threshold=config.threshold,
                                           index=self.chunk_index))  # fmt: skip
        return parts


def _chunk_index(gold: GoldenSet) -> Bm25Index | None:
    """BM25 over the golden chunks (None when they have no text to search)."""
    return Bm25Index.build(gold.chunks) if any(chunk.text.strip() for chunk in gold.chunks) else None


def _fail(run: LoadedRun, rows: Mapping[str, QueryResult]) -> None:
    """A question the system failed on: its recall-type answer measures that were scored are 0 (it answered nothing,
    whatever answer text the failed line carries: the judging step scores that text, and the failure comes first),
    the measures of what it retrieved are 0 (nothing), every other metric is unscored (``system_failed``), never
    scored as empty."""
    names = list(dict.fromkeys(name for row in rows.values() for name in row.metrics))
    retrieved = {name for name in names if measures_retrieval(name)}
    for qid, line in run.lines.items():
        if line.error is not None:
            row = rows[qid]
            zero = retrieved | {name for name in RECALL_TYPE if row.metrics.get(name) is not None}
            row.metrics = {name: 0.0 if name in zero else None for name in names}
            row.unscored = {name: FAILED for name in names if name not in zero}


def _no_passages(rows: Mapping[str, QueryResult]) -> None:
    """A run with no passage at all: every measure that reads passages is unscored (``no passages in this run``)."""
    for row in rows.values():
        for name in row.metrics:
            if needs_passages(name):
                row.metrics[name] = None
                row.unscored[name] = NO_PASSAGES
