"""What a golden set's conversations add to the per-turn scores: the turn strata, the quality of the system's own
rewrites, and the share of a conversation's vital nuggets its answers cover.

A judged turn is a golden question (its text the standalone rewrite), so every retrieval and answer metric is
already measured per turn; a context turn (``Turn.judged`` False, CAsT's unjudged turns) is no question and is never
scored: it is in no stratum, no coverage and no count below (only in the history the system was asked with, and as an
earlier answer for the contradiction check). On top of them:

* strata (:func:`turn_strata`): ``depends_on_history`` (``yes``/``no``) and ``dependency`` (``none``, ``pronoun``,
  ``ellipsis``, ``comparison``, ``topic_shift``, ``unanswerable``), so every strata table splits the turns that
  lean on the history from the standalone ones;
* rewrite quality, for a turn whose run line carries the system's own ``rewrite`` (:func:`rewrite_values`):
  ``rewrite_f1``, the token F1 of the system's rewrite against the golden rewrite (SQuAD's: words lowercased with
  punctuation folded, counted as multisets; 2PR/(P+R), 0 when no word is shared); ``rewrite_bm25_ndcg@10``, nDCG@10
  of BM25 over the golden chunks queried with the system's rewrite, beside ``gold_rewrite_bm25_ndcg@10``, the same
  with the golden rewrite (a retriever-free measure of what the rewrite costs retrieval; unscored, reason
  ``no_relevant_label``, for a turn without a relevant chunk). A turn without a rewrite has none of them;
* conversation coverage (:func:`vital_coverage`): of the vital nuggets of all of a conversation's turns, the share
  the turns' answers support (strict: ``support`` counts, ``partial`` does not); a conversation with a turn whose
  nugget verdict is missing is unscored, never counted as 0;
* self-contradiction (:func:`contradiction_rates`): per conversation, the share of its checked turns whose answer
  contradicts an earlier answer of the run (``contradiction``, :mod:`~assay.pipelines.evaluate.judging.contradiction`);
  a conversation with a turn the judge could not check is unscored, never counted as 0; one with no checked turn
  (a single answered turn) is left out;
* a run asked several times (``--repeats N``, :func:`repeated_summary`): coverage and self-contradiction per repeat,
  then per conversation the mean over the repeats that scored it, as a question's metric is merged
  (:func:`~assay.pipelines.evaluate.statistics.repeats.merged_rows`).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from assay.corpus.align import normalized_words
from assay.corpus.pooling import Bm25Index
from assay.formats.golden import GoldenSet
from assay.metrics import evaluate as trec_evaluate
from assay.pipelines.evaluate.runs.loaded import LoadedRun
from assay.pipelines.evaluate.scoring import ranking as er
from assay.pipelines.evaluate.scoring.names import CONTRADICTION, REWRITE_METRICS
from assay.pipelines.evaluate.scoring.ranking import Labels, QueryValues
from assay.results import ConversationSummary, QueryResult

__all__ = [
    "TurnParts",
    "bm25_ndcg",
    "contradiction_rates",
    "conversation_summary",
    "repeated_summary",
    "rewrite_values",
    "token_f1",
    "turn_strata",
    "vital_coverage",
]

_DEPTH = 10


def turn_strata(gold: GoldenSet) -> dict[str, dict[str, str]]:
    """``{question id: {"depends_on_history": "yes"|"no", "dependency": kind}}`` for every judged turn."""
    return {
        turn.question_id: {"depends_on_history": "yes" if turn.depends_on_history else "no",
                           "dependency": turn.dependency}
        for conversation in gold.conversations for turn in conversation.turns if turn.judged
    }  # fmt: skip


def token_f1(said: str, golden: str) -> float:
    """SQuAD token F1 of ``said`` against ``golden`` (module docstring); two empty texts agree (1.0)."""
    a, b = normalized_words(said), normalized_words(golden)
    if not a or not b:
        return float(a == b)
    common = sum((Counter(a) & Counter(b)).values())
    if common == 0:
        return 0.0
    precision, recall = common / len(a), common / len(b)
    return 2 * precision * recall / (precision + recall)


def rewrite_values(
    run: LoadedRun, gold: GoldenSet, labels: Labels, threshold: int, index: Bm25Index | None
) -> dict[str, QueryValues]:
    """The rewrite metrics (module docstring) of every turn of ``run`` with a rewrite; ``index``: BM25 over the
    golden chunks (None: the BM25 measures are left out, e.g. a golden set without chunk text)."""
    turns = {turn.question_id for conversation in gold.conversations for turn in conversation.turns if turn.judged}
    out: dict[str, QueryValues] = {}
    for qid, line in run.lines.items():
        if qid not in turns or line.rewrite is None or line.error is not None:
            continue
        golden = gold.question(qid).text
        values = out[qid] = QueryValues()
        values.put(REWRITE_METRICS[0], token_f1(line.rewrite, golden))
        if index is None:
            continue
        relevant = labels.n_relevant(qid, threshold) > 0
        for name, text in zip(REWRITE_METRICS[1:], (line.rewrite, golden), strict=True):
            values.put(name, bm25_ndcg(index, labels, qid, text) if relevant else None, "no_relevant_label")
    return out


def bm25_ndcg(index: Bm25Index, labels: Labels, qid: str, text: str) -> float:
    """nDCG@10 (trec_eval's) of BM25's top 10 chunks for ``text`` against the labels of question ``qid``."""
    found = index.search(text, _DEPTH)
    if not found:
        return 0.0
    ranked = {qid: {cid: score for cid, score in found}}
    result = trec_evaluate({qid: labels.qrels.get(qid, {})}, ranked, [f"ndcg@{_DEPTH}"])
    return float(result.per_query[f"ndcg@{_DEPTH}"][0])


def vital_coverage(gold: GoldenSet, supported: Mapping[str, tuple[int, int] | None]) -> dict[str, float | None]:
    """Per conversation, the share of its judged turns' vital nuggets that the answers support (a context turn has
    none). ``supported``: per turn whose nuggets were judged, ``(vital nuggets supported, vital nuggets)``, None when
    its verdict is missing. A conversation with no vital nugget, or no turn judged, is left out; one with a turn's
    verdict missing is None (unscored)."""
    out: dict[str, float | None] = {}
    for conversation in gold.conversations:
        counts = [supported[t.question_id] for t in conversation.turns if t.question_id in supported]
        if not counts:
            continue
        if any(c is None for c in counts):
            out[conversation.id] = None
            continue
        total = sum(c[1] for c in counts if c is not None)
        if total:
            out[conversation.id] = float(np.round(sum(c[0] for c in counts if c is not None) / total, 6))
    return out


def contradiction_rates(gold: GoldenSet, rows: Mapping[str, QueryResult]) -> dict[str, float | None]:
    """Per conversation, the share of its checked turns (``rows`` with a ``contradiction`` value or unscored) that
    contradict an earlier answer; None when one of them is unscored (module docstring)."""
    out: dict[str, float | None] = {}
    for conversation in gold.conversations:
        checked = [rows[t.question_id] for t in conversation.turns if t.question_id in rows]
        values = [row.metrics[CONTRADICTION] for row in checked if CONTRADICTION in row.metrics]
        if not values:
            continue
        scored = [v for v in values if v is not None]
        out[conversation.id] = round(float(np.mean(scored)), 6) if len(scored) == len(values) else None
    return out


def _contradiction_fields(gold: GoldenSet, rows: Mapping[str, QueryResult]) -> dict[str, Any]:
    rates = contradiction_rates(gold, rows)
    rated = [v for v in rates.values() if v is not None]
    values = [row.metrics[CONTRADICTION] for row in rows.values() if CONTRADICTION in row.metrics]
    return {
        "contradiction_rate": round(float(np.mean(rated)), 6) if rated else None,
        "contradiction_conversations": len(rated),
        "contradicting": sum(v == 1.0 for v in values),
        "contradiction_checked": sum(v is not None for v in values),
        "contradiction_unscored": sum(v is None for v in values),
    }


def conversation_summary(
    gold: GoldenSet,
    run: LoadedRun,
    supported: Mapping[str, tuple[int, int] | None],
    rows: Mapping[str, QueryResult] | None = None,
) -> ConversationSummary | None:
    """The conversation-level measures of ``run`` (None for a golden set without conversations): counts of judged
    turns (questions the run answers; context turns are not counted), turns with the system's rewrite, the
    vital-nugget coverage from ``supported`` (:func:`vital_coverage`), and the self-contradiction rate from the
    run's per-query ``rows`` (:func:`contradiction_rates`)."""
    if not gold.conversations:
        return None
    turns = [t for c in gold.conversations for t in c.turns if t.judged and t.question_id in run.lines]
    coverage = vital_coverage(gold, supported)
    scored = [v for v in coverage.values() if v is not None]
    return ConversationSummary(
        conversations=sum(any(t.judged and t.question_id in run.lines for t in c.turns) for c in gold.conversations),
        turns=len(turns),
        dependent=sum(t.depends_on_history for t in turns),
        rewrites=sum(run.lines[t.question_id].rewrite is not None for t in turns),
        vital_coverage=round(float(np.mean(scored)), 6) if scored else None,
        covered=len(scored),
        coverage_unscored=len(coverage) - len(scored),
        **_contradiction_fields(gold, rows or {}),
    )


Asking = tuple[LoadedRun, Mapping[str, tuple[int, int] | None], Mapping[str, QueryResult]]
_SUMMED = ("rewrites", "contradicting", "contradiction_checked", "contradiction_unscored")  # counts of turns


def repeated_summary(gold: GoldenSet, askings: Sequence[Asking]) -> ConversationSummary | None:
    """:func:`conversation_summary` of a run asked once or per repeat: ``askings`` holds each repeat's run, vital
    counts and rows. With N > 1, each conversation's coverage and contradiction rate is its mean over the repeats
    that scored it (None when none did; module docstring), the counts of turns summed over the repeats."""
    each = [conversation_summary(gold, *asking) for asking in askings]
    first = each[0]
    if first is None or len(askings) == 1:
        return first
    coverage = _over_repeats([vital_coverage(gold, supported) for _, supported, _ in askings])
    rates = _over_repeats([contradiction_rates(gold, rows) for _, _, rows in askings])
    scored, rated = [v for v in coverage.values() if v is not None], [v for v in rates.values() if v is not None]
    return first.model_copy(update={
        "vital_coverage": round(float(np.mean(scored)), 6) if scored else None,
        "covered": len(scored),
        "coverage_unscored": len(coverage) - len(scored),
        "contradiction_rate": round(float(np.mean(rated)), 6) if rated else None,
        "contradiction_conversations": len(rated),
        "repeats": len(askings),
        **{field: sum(getattr(one, field) for one in each if one is not None) for field in _SUMMED},
    })  # fmt: skip


def _over_repeats(per_repeat: Sequence[Mapping[str, float | None]]) -> dict[str, float | None]:
    """Per conversation found in any repeat, the mean of its values over the repeats that scored it (None: none)."""
    out: dict[str, float | None] = {}
    for key in dict.fromkeys(key for one in per_repeat for key in one):
        values = [v for one in per_repeat if (v := one.get(key)) is not None]
        out[key] = round(float(np.mean(values)), 6) if values else None
    return out


@dataclass(frozen=True)
class TurnParts:
    """What conversations add per turn (:mod:`~assay.pipelines.evaluate.scoring.conversations`): the turn strata and
    each run's rewrite metrics."""

    strata: Mapping[str, Mapping[str, str]]
    rewrites: Mapping[str, Mapping[str, er.QueryValues]]

    @classmethod
    def of(cls, gold: GoldenSet, runs: Sequence[LoadedRun], labels: er.Labels, threshold: int) -> TurnParts | None:
        if not gold.conversations:
            return None
        rewritten = any(line.rewrite for run in runs for line in run.lines.values())
        has_text = any(chunk.text.strip() for chunk in gold.chunks)
        index = Bm25Index.build(gold.chunks) if rewritten and has_text else None
        return cls(turn_strata(gold), {run.name: rewrite_values(run, gold, labels, threshold, index) for run in runs})
