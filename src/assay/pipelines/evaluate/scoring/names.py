"""Metric names of ``assay eval``: what each name asks for, the cut-off it needs, and the check before any work.

A name is a ranking measure of :func:`assay.metrics.parse_measure` (``ndcg@10``, ``P@5``, ``recall@5|g>=2``,
``map``) or a judged metric: a family (``faithfulness``, ``nugget_recall``, ``ragas_context_precision``) or one
metric of it (``nugget_recall_vital_strict``, ``ragas_context_precision@5``). The rule: a metric that is named is
computed whatever the k values say, since its cut-off joins them (``-k 10 -m P@5`` gives P@5 and evaluates at
k = 5 and 10). Names are checked before any work; an unknown one raises :class:`ConfigError` with the close names:
the real names nearest it by edit distance (:func:`assay.metrics.close.close_names`) among every name of
:func:`catalogue` at the k values and budgets asked for.

Every metric name and family of ``assay eval`` is defined here, once: the steps import them from here, and this
module imports none of the steps (it is the ground floor of :mod:`assay.pipelines.evaluate`). How a name splits
into its word, cut-off and options is the grammar of :class:`assay.metric_names.MetricName`, which the results, the
reports and the ranking measures read names with too; this module says which names exist and what each asks for.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass

from assay.errors import ConfigError
from assay.metric_names import TOOL_ARGS_JUDGED, TRAJECTORY_METRICS, MetricName, is_criterion
from assay.metrics import MetricError, parse_measure
from assay.metrics.budget import CHARS_PER_TOKEN
from assay.metrics.close import close_names
from assay.metrics.diagnosis import DIAGNOSIS_METRICS, SHARED_NAMES
from assay.metrics.registry import COMMON_CUTS, measure_catalogue
from assay.results import HEADLINE_K, headline_k

__all__ = [
    "ANSWER_METRICS",
    "AT_K",
    "BUDGET_FAMILIES",
    "CONTRADICTION",
    "CURVE_FAMILIES",
    "DIAGNOSIS_NAMES",
    "LLM_FAMILIES",
    "NEEDS_JUDGE",
    "NUGGET_METRICS",
    "PASSAGE_BOUND",
    "RECALL_TYPE",
    "REWRITE_METRICS",
    "SHARED_NAMES",
    "SPAN_FAMILIES",
    "TOOL_ARGS_JUDGED",
    "TRAJECTORY_METRICS",
    "TURN_STRATA",
    "BudgetName",
    "Keep",
    "SpanName",
    "budget_measures",
    "catalogue",
    "check_gate",
    "check_names",
    "counts_passages",
    "counts_units",
    "default_measures",
    "family",
    "family_members",
    "joined_k",
    "kind_of",
    "needs_passages",
    "parse_budget",
    "parse_budget_name",
    "parse_span_name",
]

Keep = Callable[[str], bool]  # which names exist for the golden set and runs at hand (the close names' filter)
CURVE_FAMILIES = ("ndcg", "P", "recall", "hit", "map", "err")  # measured at each k by default, drawn as metric@k
SPAN_FAMILIES = ("span_recall", "span_precision", "span_iou")
ANSWER_METRICS = ["faithfulness", "answer_relevance", "attribution_rate"]  # what the answer call gives
NUGGET_METRICS = [f"nugget_recall_{s}_{m}" for s in ("all", "vital") for m in ("strict", "lenient")]
# a conversation turn whose run line carries the system's own rewrite (scoring.conversations)
REWRITE_METRICS = ("rewrite_f1", "rewrite_bm25_ndcg@10", "gold_rewrite_bm25_ndcg@10")
# a conversation turn whose answer the judge checked against the run's earlier answers of the conversation: 1 when it
# contradicts one, 0 when not (judging.calls; the per-conversation rate in scoring.conversations)
CONTRADICTION = "contradiction"
TURN_STRATA = ("depends_on_history", "dependency")  # the strata of a golden set's conversation turns
DIAGNOSIS_NAMES = [n for names in DIAGNOSIS_METRICS.values() for n in names if n not in SHARED_NAMES]
# metric family -> the call kind it needs ("relevance": the labels only; "": nothing beyond the labels)
LLM_FAMILIES = {
    "ragas_context_precision": "relevance",
    "coverage_recall": "",
    "context_recall": "context_recall",
    **dict.fromkeys(ANSWER_METRICS, "answer"),
    "nugget_recall": "nugget_recall",
    CONTRADICTION: CONTRADICTION,
    TOOL_ARGS_JUDGED: "tool_args",  # a system's tool calls against the reference calls, arguments judged
    **dict.fromkeys(DIAGNOSIS_NAMES, "diagnosis"),  # claim_check after the context and answer calls
}
AT_K = ("ragas_context_precision", "coverage_recall")  # measured at each k value: ``family@k``
NEEDS_JUDGE = frozenset(LLM_FAMILIES) - {"coverage_recall"}
# the judged metrics that are one metric each (every other key of LLM_FAMILIES is a family of several: nugget_recall
# of its four NUGGET_METRICS, and the AT_K ones of one metric per k)
_UNCUT = ("context_recall", *ANSWER_METRICS, *NUGGET_METRICS, CONTRADICTION, TOOL_ARGS_JUDGED, *DIAGNOSIS_NAMES)
BUDGET_FAMILIES = ("ndcg", "recall", "P", "map", *SPAN_FAMILIES)  # at a budget of text: ``ndcg@1000t``
_BUDGET_WORD = re.compile(r"[A-Za-z_]+")
_GRADE = re.compile(r"g>=(\d+)")
_BUDGET_FIX = "a whole number and a unit: t (tokens, 4 characters each) or c (characters), e.g. 1000t or 4000c"
# metrics over the top k passages or the context's passages: in runs that cut their text differently, the same k
# holds different amounts of text, so they compare chunkings rather than retrieval (no verdict across them)
PASSAGE_BOUND = frozenset({*SPAN_FAMILIES, "context_recall", "faithfulness", "attribution_rate", *DIAGNOSIS_NAMES})
# the answer measures of how much of the reference an answer holds: an empty answer, or none from a system that
# failed, holds none of it and scores 0 (the system's failure, not the judge's); every other answer measure is about
# what an answer says (faithfulness, answer relevance, claim precision...), and an empty one says nothing: unscored
RECALL_TYPE = frozenset({*NUGGET_METRICS, "claim_recall", "claim_f1"})
# the judged measures of what a system retrieved (read from its passages and the labels, not from its answer)
_RETRIEVAL_JUDGED = ("ragas_context_precision", "coverage_recall", "context_recall")
# what an answer is scored on with no passage at all: every other measure reads the run's passages
_ANSWER_ALONE = frozenset(
    {
        "answer_relevance",
        *RECALL_TYPE,
        "claim_precision",
        CONTRADICTION,
        *REWRITE_METRICS,
        *TRAJECTORY_METRICS,
        TOOL_ARGS_JUDGED,
    }
)
_JUDGED = ", ".join([f"{f}@K" for f in AT_K] + [*_UNCUT[:4], "nugget_recall", CONTRADICTION])
_SPAN_FIX = "e.g. span_recall@5, span_iou@10 or span_recall@5|g>=2"
_FIX = (
    f"ranking names as in `assay metrics --help` (P@5, ndcg@10, map, recall@5|g>=2, ...); judged: {_JUDGED}; "
    "span: span_recall@K, span_precision@K, span_iou@K (|g>=G for graded chunks as evidence); "
    "at a budget of text: ndcg@1000t, recall@1000t, P@4000c, map@1000t, span_recall@1000t"
)


def family(name: str) -> str:
    """``nugget_recall_vital_strict`` -> ``nugget_recall``; ``ragas_context_precision@5`` ->
    ``ragas_context_precision``; a ranking name -> its word before ``@`` and ``|`` (:attr:`MetricName.family`)."""
    return MetricName.parse(name).family


def check_names(
    names: Iterable[str], k_values: Sequence[int] = (), budgets: Sequence[str] = (), keep: Keep | None = None
) -> set[int]:
    """Check every name (``-m``); return the cut-offs they name. ConfigError, with the close names among those at
    ``k_values`` and ``budgets`` that ``keep`` keeps (:func:`catalogue`), for a bad one."""
    cuts: set[int] = set()
    for name in names:
        cut = _cutoff(name, k_values, budgets, keep)
        if cut is not None:
            cuts.add(cut)
    return cuts


def check_gate(
    name: str,
    *,
    judged: bool,
    flag: str = "--fail-under",
    k_values: Sequence[int] = (),
    budgets: Sequence[str] = (),
    keep: Keep | None = None,
) -> int | None:
    """Check a name that must be one metric the results carry (not a family), computable with or without a judge
    (``judged``): a ``--fail-under`` gate or the ``--primary`` metric (``flag``, for the message); return its
    cut-off. The two families among the judged names (``nugget_recall``; ``coverage_recall`` and
    ``ragas_context_precision`` without ``@K``) are refused with their metrics that ``keep`` keeps (those that exist
    for the golden set and runs at hand; None: all); every other name, one metric each, passes."""
    cut = _cutoff(name, k_values, budgets, keep)
    fam = family(name)
    if fam in LLM_FAMILIES and name not in _UNCUT and cut is None:
        members = [m for m in family_members(fam, k_values) if keep is None or keep(m)]
        none = "none of its metrics exists for this golden set and these runs"
        one = f"e.g. {', '.join(members)}" if members else none
        raise ConfigError(f"{flag} {name}: give one metric, not a family; {one}")
    if fam in NEEDS_JUDGE and not judged:
        raise ConfigError(f"{flag} {name}: an LLM-judged metric needs --judge MODEL (not --no-judge)")
    return cut


def family_members(fam: str, k_values: Sequence[int] = ()) -> list[str]:
    """The metrics of a judged family that is several: ``nugget_recall`` -> its four :data:`NUGGET_METRICS`;
    ``coverage_recall`` -> ``coverage_recall@K`` at the headline k of ``k_values`` (10 without them)."""
    if fam == "nugget_recall":
        return list(NUGGET_METRICS)
    return [f"{fam}@{headline_k(k_values) or HEADLINE_K}"] if fam in AT_K else [fam]


def joined_k(k_values: Sequence[int], cuts: Iterable[int]) -> tuple[int, ...]:
    """The k values with the named cut-offs joined, sorted, without repeats."""
    return tuple(sorted({*k_values, *cuts}))


def _cutoff(name: str, k_values: Sequence[int], budgets: Sequence[str], keep: Keep | None = None) -> int | None:
    parsed = MetricName.parse(name)
    if name in REWRITE_METRICS or name in TRAJECTORY_METRICS or is_criterion(name):  # fixed names
        return None
    if _budget_shaped(parsed):
        parse_budget_name(name)
        return None
    fam = parsed.family
    if fam in SPAN_FAMILIES and parsed.mistyped_cut:
        raise _unknown(name, k_values, budgets, keep)
    if fam in SPAN_FAMILIES:
        return parse_span_name(name).k
    if fam in LLM_FAMILIES:
        return _llm_cutoff(parsed, k_values, budgets, keep)
    try:
        return parse_measure(name).k
    except MetricError as exc:
        message = str(exc)
        if "(no family" in message or "(not of the form" in message:
            raise _unknown(name, k_values, budgets, keep) from None
        raise ConfigError(f"metric {name!r}: {message.split('; known:', maxsplit=1)[0]}") from None


def _llm_cutoff(
    parsed: MetricName, k_values: Sequence[int], budgets: Sequence[str], keep: Keep | None = None
) -> int | None:
    name, fam = str(parsed), parsed.family
    if name == fam or name in _UNCUT:
        return None
    written_at_k = fam in AT_K and parsed.word == fam and parsed.cut is not None  # family@something
    if written_at_k and not parsed.options and parsed.k is not None and parsed.k >= 1:
        return parsed.k
    if written_at_k and not parsed.mistyped_cut:  # @x, @0, or options: told how to write it
        raise ConfigError(f"metric {name!r}: write {fam}@K with K a whole number >= 1, e.g. {fam}@5")
    raise _unknown(name, k_values, budgets, keep)  # @1O: a slip, given close names


def catalogue(k_values: Sequence[int] = (), budgets: Sequence[str] = (), keep: Keep | None = None) -> list[str]:
    """Every metric name of ``assay eval`` at ``k_values`` (and the common cut-offs) and ``budgets`` (and 1000t),
    one variant each, without repeats: the real names a misspelt one is compared with; with ``keep``, only those it
    keeps (the metrics that exist for a golden set and its runs:
    :class:`~assay.pipelines.evaluate.scoring.available.Available`). Every name here is one metric, except the
    judged families of :func:`family_members` (``nugget_recall``)."""
    cuts = sorted({*k_values, *COMMON_CUTS})
    sizes = list(dict.fromkeys([*budgets, "1000t"]))
    names = [
        *measure_catalogue(cuts),
        *(f"{fam}@{k}" for fam in (*AT_K, *SPAN_FAMILIES) for k in cuts),
        *(f"{fam}@{size}" for fam in BUDGET_FAMILIES for size in sizes),
        *(fam for fam in LLM_FAMILIES if fam not in AT_K),
        *_UNCUT,
        *REWRITE_METRICS,
        *TRAJECTORY_METRICS,
    ]
    return [name for name in dict.fromkeys(names) if keep is None or keep(name)]


def _unknown(name: str, k_values: Sequence[int], budgets: Sequence[str], keep: Keep | None = None) -> ConfigError:
    """``unknown metric 'ndgc@10'; close names: ndcg@10``, with where to find every name."""
    parsed = MetricName.parse(name)
    close = [f"{near}{parsed.suffix}" for near in close_names(parsed.head, catalogue(k_values, budgets, keep))]
    hint = f"close names: {', '.join(close)}" if close else "no close name"
    return ConfigError(f"unknown metric {name!r}; {hint}. Names: {_FIX}")


def kind_of(name: str) -> str:
    """``budget``, ``span``, ``llm``, ``rewrite`` (a conversation turn's rewrite measures), ``trajectory`` (a
    system's steps) or ``ranking``: which part of the evaluation computes the metric ``name``; ``criterion`` for a
    team's own criterion (``criterion:NAME``)."""
    if name in REWRITE_METRICS:
        return "rewrite"
    if name in TRAJECTORY_METRICS:
        return "trajectory"
    if is_criterion(name):
        return "criterion"
    parsed = MetricName.parse(name)
    if _budget_shaped(parsed):
        return "budget"
    fam = parsed.family
    return "span" if fam in SPAN_FAMILIES else "llm" if fam in LLM_FAMILIES else "ranking"


def counts_passages(name: str) -> bool:
    """Whether ``name`` is measured over a number of passages (the top k, or the answer's context), so that runs
    which cut their text differently cannot be compared on it (see :data:`PASSAGE_BOUND`)."""
    return kind_of(name) != "budget" and family(name) in PASSAGE_BOUND


def needs_passages(name: str) -> bool:
    """Whether ``name`` reads the run's passages (ranking, budget, span, context and passage-bound answer measures),
    so that a run with no passage at all leaves it unscored; the answer measures that read the answer and the
    reference only (answer relevance, nugget recall, claim precision, recall and F1, contradiction) do not, nor do the
    measures of a trajectory (they read its steps), nor does a criterion (its check says itself when it has no
    passage to read)."""
    return name not in _ANSWER_ALONE and not is_criterion(name)


def measures_retrieval(name: str) -> bool:
    """Whether ``name`` measures what a system retrieved: ranking, budget and span measures, coverage and context
    recall, RAGAS context precision. A question the system failed on retrieved nothing: 0 on these, as an empty
    ``retrieved`` list scores 0."""
    return kind_of(name) in ("ranking", "budget", "span") or family(name) in _RETRIEVAL_JUDGED


def counts_units(name: str) -> bool:
    """Whether ``name`` is counted in golden chunks: a ranking measure (``ndcg@10``, ``P@5``, ``map``, ``mrr``) or
    coverage recall, computed on a run's projection onto the golden chunks, where a passage reaches a chunk only once
    the run has shown at least half of the chunk's characters (:mod:`assay.metrics.projection`)."""
    return kind_of(name) == "ranking" or family(name) == "coverage_recall"


@dataclass(frozen=True)
class BudgetName:
    """A parsed budget measure: family, the budget in characters, and the relevance threshold (None: the
    evaluation's)."""

    name: str
    family: str
    chars: int
    threshold: int | None
    budget: str = ""  # the budget as written: ``1000t`` for ``ndcg@1000t``


def parse_budget(text: str) -> int:
    """``1000t`` -> 4000 characters, ``4000c`` -> 4000; :class:`ConfigError` for a budget of 0 or without a unit."""
    match = re.fullmatch(r"(\d+)([tc])", text.strip())
    if match is None:
        raise ConfigError(f"budget {text!r}: write {_BUDGET_FIX}")
    size = int(match.group(1)) * (CHARS_PER_TOKEN if match.group(2) == "t" else 1)
    if size < 1:
        raise ConfigError(f"budget {text!r}: a budget is at least 1 character ({_BUDGET_FIX})")
    return size


def _budget_shaped(parsed: MetricName) -> bool:
    """Whether a name is written as a budget measure: a word of letters and underscores at a budget
    (:attr:`MetricName.budget`), with at most one option, ``g>=G``."""
    grade_only = not parsed.options or (len(parsed.options) == 1 and _GRADE.fullmatch(parsed.options[0]) is not None)
    return parsed.budget is not None and _BUDGET_WORD.fullmatch(parsed.word) is not None and grade_only


def parse_budget_name(name: str) -> BudgetName:
    """Parse ``ndcg@1000t``, ``recall@4000c`` or ``P@1000t|g>=2``; :class:`ConfigError` naming the fix otherwise."""
    parsed = MetricName.parse(name)
    if not _budget_shaped(parsed) or parsed.word not in BUDGET_FAMILIES or parsed.budget is None:
        known = ", ".join(f"{f}@1000t" for f in BUDGET_FAMILIES)
        raise ConfigError(f"metric {name!r}: a budget measure is one of {known} (budget: {_BUDGET_FIX})")
    fam, grade = parsed.word, parsed.options[0][3:] if parsed.options else None
    if grade and (fam in SPAN_FAMILIES or fam == "ndcg" or not 0 <= int(grade) <= 3):
        raise ConfigError(f"metric {name!r}: |g>=G (G in 0..3) goes with recall, P and map at a budget")
    chars = parse_budget(parsed.budget)
    return BudgetName(name, fam, chars, int(grade) if grade else None, parsed.budget)


def budget_measures(budgets: Sequence[str]) -> list[str]:
    """The budget measures evaluated by default: nDCG, recall, P and MAP at each budget."""
    return [f"{fam}@{budget}" for budget in budgets for fam in ("ndcg", "recall", "P", "map")]


def default_measures(k_values: Sequence[int]) -> list[str]:
    """The ranking measures evaluated by default: per k nDCG, P, recall, hit, AP and ERR; then the uncut ones."""
    per_k = [f"{family}@{k}" for k in k_values for family in CURVE_FAMILIES]
    return [*per_k, "map", "mrr", "ndcg", "rprec", "bpref"]


@dataclass(frozen=True)
class SpanName:
    """A parsed span metric name: family, cut-off, and the grade whose chunks are the evidence (None: quotes)."""

    name: str
    family: str
    k: int
    min_grade: int | None


def parse_span_name(name: str) -> SpanName:
    """Parse ``span_recall@5`` or ``span_iou@10|g>=2``; :class:`ConfigError` naming the fix otherwise."""
    parsed = MetricName.parse(name)
    family, k, grade = parsed.word, parsed.k, "|".join(parsed.options)
    if family not in SPAN_FAMILIES or k is None or k < 1:
        raise ConfigError(
            f"metric {name!r}: write {family or 'span_recall'}@K with K a whole number >= 1 ({_SPAN_FIX})"
        )
    if grade and not (grade.startswith("g>=") and grade[3:].isdigit() and 0 <= int(grade[3:]) <= 3):
        raise ConfigError(f"metric {name!r}: the variant is |g>=G with G in 0..3 ({_SPAN_FIX})")
    return SpanName(name, family, k, int(grade[3:]) if grade else None)
