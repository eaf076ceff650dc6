"""Which metrics a summary shows: the headline cut-off, the headline metrics, and the groups the reports fold
their tables by (names read with :class:`assay.metric_names.MetricName`)."""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from assay.metric_names import TRAJECTORY_FAMILY, MetricName, is_criterion

__all__ = ["HEADLINE_K", "METRIC_GROUPS", "headline_k", "headline_metrics", "metric_group", "summary_metrics"]

HEADLINE_K = 10  # the cut-off of summaries, strata, comparisons and corrections when it was evaluated


def headline_k(k_values: Sequence[int]) -> int | None:
    """The headline cut-off: :data:`HEADLINE_K` when it was evaluated, else the largest k (None without k values)."""
    if not k_values:
        return None
    return HEADLINE_K if HEADLINE_K in k_values else max(k_values)


def headline_metrics(names: Sequence[str], k_values: Sequence[int], named: Iterable[str] = ()) -> list[str]:
    """The metrics that summaries show, strata break down and comparisons test: those without a cut-off (``map``,
    ``faithfulness``, ``map|g>=2``), those at :func:`headline_k` (``ndcg@10``, ``recall@10|g>=2``), those at a
    budget (``ndcg@1000t``) and every one ``named`` (asked for with ``-m`` or ``--fail-under``: ``P@5`` with
    k = 5, 10), in the order given; every name when that leaves none (e.g. only ``ndcg@5`` asked for with k = 5, 10)."""
    head, asked = headline_k(k_values), set(named)
    chosen = [n for n in names if n in asked or _headline_cut(MetricName.parse(n), head)]
    return chosen or list(names)


def _headline_cut(name: MetricName, head: int | None) -> bool:
    """No cut-off (``map``; ``ndcg@`` too), the headline cut-off as written (``10``, not ``010``), or a budget."""
    return name.cut in (None, "", str(head)) or name.budget is not None


# The groups of metrics the reports fold their tables by, in print order (the evaluator's own families are in
# pipelines/evaluate/scoring/names.py; these group them for a reader).
METRIC_GROUPS = ("ranking", "budget", "span", "context", "answer", "nuggets", "diagnosis", "trajectory", "criteria")


_CONTEXT = ("context_recall", "ragas_context_precision", "coverage_recall")


_ANSWER = ("faithfulness", "answer_relevance", "attribution_rate")


_DIAGNOSIS = ("claim_", "retriever_", "context_utilization", "noise_sensitivity", "hallucination", "self_knowledge")


def metric_group(name: str) -> str:
    """The group of :data:`METRIC_GROUPS` a metric is shown in: ``ndcg@1000t`` budget, ``span_iou@10`` span,
    ``context_recall`` context, ``faithfulness`` answer, ``nugget_recall_all_strict`` nuggets, ``claim_f1``
    diagnosis, ``criterion:NAME`` criteria, ``hop_coverage`` (a measure of a system's steps) trajectory, everything
    else (``ndcg@10``, ``map``, ``recall@5|g>=2``) ranking."""
    parsed = MetricName.parse(name)
    if is_criterion(name):
        return "criteria"
    if name in TRAJECTORY_FAMILY:
        return "trajectory"
    base = parsed.word
    if parsed.budget is not None:  # the budget measures are headline figures of their own group
        return "budget"
    groups = (("span", ("span_",)), ("context", _CONTEXT), ("answer", _ANSWER), ("nuggets", ("nugget_recall",)),
              ("diagnosis", _DIAGNOSIS))  # fmt: skip
    return next((group for group, starts in groups if base.startswith(starts)), "ranking")


def summary_metrics(headline: Sequence[str], primary: str | None) -> list[str]:
    """The few metrics a summary shows: the primary, then the first headline metric of each other group (in
    :data:`METRIC_GROUPS` order)."""
    chosen = [primary] if primary is not None and primary in headline else []
    taken = {metric_group(name) for name in chosen}
    for group in METRIC_GROUPS:
        first = next((name for name in headline if metric_group(name) == group), None)
        if first is not None and group not in taken:
            chosen.append(first)
            taken.add(group)
    return chosen
