"""Metric names of ``assay eval``: what each name asks for, the cut-off it needs, and the check before any work.

A name is a ranking measure of :func:`assay.metrics.parse_measure` (``ndcg@10``, ``P@5``, ``recall@5|g>=2``,
``map``) or a judged metric: a family (``faithfulness``, ``nugget_recall``, ``ragas_context_precision``) or one
metric of it (``nugget_recall_vital_strict``, ``ragas_context_precision@5``). The rule: a metric that is named is
computed whatever the k values say, since its cut-off joins them (``-k 10 -m P@5`` gives P@5 and evaluates at
k = 5 and 10). Names are checked before any work; an unknown one raises :class:`ConfigError` with the close names.

Without named metrics, the judged families that the golden set and the runs give nothing to compute from are left
out (:func:`applicable`), rather than shown unscored for every query: answer metrics when no run has an answer,
``context_recall`` without reference answers or claims, ``nugget_recall`` without nuggets or answers,
``coverage_recall`` without nugget support (a golden set imported from BEIR or TREC has none of these).
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING

from assay.errors import ConfigError
from assay.metrics import MetricError, parse_measure
from assay.pipelines.evaluate.judging import LLM_FAMILIES
from assay.pipelines.evaluate.ranking import default_measures
from assay.pipelines.evaluate.spans import SPAN_FAMILIES, default_span_names, parse_span_name

if TYPE_CHECKING:
    from assay.formats.golden import GoldenSet
    from assay.pipelines.evaluate.carry import SpanIndex
    from assay.pipelines.evaluate.pipeline import EvalSettings
    from assay.pipelines.evaluate.runs import LoadedRun

__all__ = [
    "AT_K",
    "NEEDS_JUDGE",
    "applicable",
    "check_gate",
    "check_names",
    "family",
    "joined_k",
    "kind_of",
    "split_metrics",
]

AT_K = ("ragas_context_precision", "coverage_recall")  # measured at each k value: ``family@k``
NEEDS_JUDGE = frozenset(LLM_FAMILIES) - {"coverage_recall"}
_NUGGETS = tuple(f"nugget_recall_{s}_{m}" for s in ("all", "vital") for m in ("strict", "lenient"))
_UNCUT = ("context_recall", "faithfulness", "answer_relevance", "attribution_rate", *_NUGGETS)
_RANKING_WORDS = ("P", "recall", "ndcg", "ndcg_exp", "dcg", "dcg_exp", "map", "mrr", "rr", "hit", "err", "f1",
                  "f2", "fbeta", "rprec", "bpref", "iprec", "auc_pr", "num_rel", "num_ret")  # fmt: skip
_JUDGED = ", ".join([f"{f}@K" for f in AT_K] + [*_UNCUT[:4], "nugget_recall"])
_FIX = (
    f"ranking names as in `assay metrics --help` (P@5, ndcg@10, map, recall@5|g>=2, ...); judged: {_JUDGED}; "
    "span: span_recall@K, span_precision@K, span_iou@K (|g>=G for graded chunks as evidence)"
)


def family(name: str) -> str:
    """``nugget_recall_vital_strict`` -> ``nugget_recall``; ``ragas_context_precision@5`` ->
    ``ragas_context_precision``; a ranking name -> its word before ``@`` and ``|``."""
    base = name.split("@", maxsplit=1)[0].split("|", maxsplit=1)[0]
    return "nugget_recall" if base.startswith("nugget_recall") else base


def check_names(names: Iterable[str]) -> set[int]:
    """Check every name (``-m``); return the cut-offs they name. ConfigError, with close names, for a bad one."""
    cuts: set[int] = set()
    for name in names:
        cut = _cutoff(name)
        if cut is not None:
            cuts.add(cut)
    return cuts


def check_gate(name: str, *, judged: bool) -> int | None:
    """Check a ``--fail-under`` name: one metric the results carry (not a family), computable with or without a
    judge (``judged``); return its cut-off."""
    cut = _cutoff(name)
    fam = family(name)
    if fam in LLM_FAMILIES and name not in _UNCUT and cut is None:
        one = f"{fam}@10" if fam in AT_K else ", ".join(_NUGGETS)
        raise ConfigError(f"--fail-under {name}: a gate names one metric, not a family; e.g. {one}")
    if fam in NEEDS_JUDGE and not judged:
        raise ConfigError(f"--fail-under {name}: an LLM-judged metric needs --judge MODEL (not --no-judge)")
    return cut


def joined_k(k_values: Sequence[int], cuts: Iterable[int]) -> tuple[int, ...]:
    """The k values with the named cut-offs joined, sorted, without repeats."""
    return tuple(sorted({*k_values, *cuts}))


def applicable(families: set[str], gold: GoldenSet, runs: Sequence[LoadedRun]) -> set[str]:
    """The judged ``families`` something in ``gold`` and ``runs`` can be computed from (see the module docstring)."""
    answers = any(run.counts.with_answer for run in runs)
    has = {
        "coverage_recall": bool(gold.nuggets),
        "context_recall": any(q.claims or q.reference_answer for q in gold.questions),
        "nugget_recall": answers and any(q.nuggets for q in gold.questions),
        **dict.fromkeys(("faithfulness", "answer_relevance", "attribution_rate"), answers),
    }
    return {f for f in families if has.get(f, True)}


def _cutoff(name: str) -> int | None:
    fam = family(name)
    if fam in SPAN_FAMILIES:
        return parse_span_name(name).k
    if fam in LLM_FAMILIES:
        return _llm_cutoff(name, fam)
    try:
        return parse_measure(name).k
    except MetricError as exc:
        message = str(exc)
        if "(no family" in message or "(not of the form" in message:
            raise _unknown(name) from None
        raise ConfigError(f"metric {name!r}: {message.split('; known:', maxsplit=1)[0]}") from None


def _llm_cutoff(name: str, fam: str) -> int | None:
    if name == fam or name in _UNCUT:
        return None
    head, at, cut = name.partition("@")
    if fam in AT_K and at and head == fam and cut.isdigit() and int(cut) >= 1:
        return int(cut)
    if fam in AT_K and head == fam:
        raise ConfigError(f"metric {name!r}: write {fam}@K with K a whole number >= 1, e.g. {fam}@5")
    raise _unknown(name)


def _unknown(name: str) -> ConfigError:
    """``unknown metric 'ndgc@10'; close names: ndcg@10``, with where to find every name."""
    fam = family(name)
    rest = name[len(fam) :] if name.startswith(fam) else ""
    words = [*_RANKING_WORDS, *LLM_FAMILIES, *_UNCUT, *SPAN_FAMILIES]
    close = [
        w + (rest if w in _RANKING_WORDS or w in AT_K or w in SPAN_FAMILIES else "")
        for w in difflib.get_close_matches(fam, words, 4)
    ]
    hint = f"close names: {', '.join(dict.fromkeys(close))}" if close else "no close name"
    return ConfigError(f"unknown metric {name!r}; {hint}. Names: {_FIX}")


def split_metrics(
    settings: EvalSettings, gold: GoldenSet, runs: Sequence[LoadedRun], index: SpanIndex
) -> tuple[list[str], set[str], list[str]]:
    """(ranking measure names, LLM families asked for, span metric names): those of ``metrics``, else the defaults
    and every family that ``gold`` and ``runs`` can give (:func:`~assay.pipelines.evaluate.names.applicable`); then
    those of ``also``. The names were checked by :meth:`EvalSettings.checked`."""
    if settings.metrics:
        ranking = list(dict.fromkeys(m for m in settings.metrics if kind_of(m) == "ranking"))
        families = {family(m) for m in settings.metrics if kind_of(m) == "llm"}
        spans = list(dict.fromkeys(m for m in settings.metrics if kind_of(m) == "span"))
    else:
        ranking, families = default_measures(settings.k_values), applicable(set(LLM_FAMILIES), gold, runs)
        spans = default_span_names(settings.k_values, gold, index)
    ranking += [m for m in dict.fromkeys(settings.also) if kind_of(m) == "ranking" and m not in ranking]
    spans += [m for m in dict.fromkeys(settings.also) if kind_of(m) == "span" and m not in spans]
    return ranking, families | {family(m) for m in settings.also if kind_of(m) == "llm"}, spans


def kind_of(name: str) -> str:
    """``span``, ``llm`` or ``ranking``: which part of the evaluation computes the metric ``name``."""
    fam = family(name)
    return "span" if fam in SPAN_FAMILIES else "llm" if fam in LLM_FAMILIES else "ranking"
