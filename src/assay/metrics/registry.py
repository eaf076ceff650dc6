"""Measure names as data, and :func:`evaluate`, the one entry point for ranking metrics.

Grammar: ``family[@k][|option...]`` with options ``g>=N`` (relevance threshold, default 1), ``gmax=N`` (ERR) and
``beta=X`` (F-beta). trec_eval's names are accepted too (``P_5``, ``recall_100``, ``map_cut_10``, ``ndcg``,
``ndcg_cut_10``, ``recip_rank``, ``Rprec``, ``bpref``, ``success_1``, ``iprec_at_recall_0.50``, ``11pt_avg``).
Results are reported under the name exactly as given.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace

import numpy as np

from assay.metric_names import MetricName
from assay.metrics import ranking as rk
from assay.metrics._errors import MetricError
from assay.metrics.close import close_names
from assay.metrics.judged import FloatArray, Judged, Qrels, Run, join

__all__ = ["COMMON_CUTS", "DEFAULT_MEASURES", "Evaluation", "Measure", "evaluate", "measure_catalogue", "parse_measure"]

DEFAULT_MEASURES = (
    "map", "mrr", "ndcg@10", "P@5", "P@10", "recall@10", "recall@100", "err@10", "hit@10", "rprec", "bpref",
)  # fmt: skip

_Fn = Callable[["Measure", Judged], FloatArray]
_FAMILIES: dict[str, tuple[_Fn, str, str]] = {
    # family: (function, cutoff rule "required" | "optional" | "none" | "level", example)
    "P": (lambda m, j: rk.precision(j, _k(m), m.threshold), "required", "P@5"),
    "recall": (lambda m, j: rk.recall(j, m.k, m.threshold), "optional", "recall@100"),
    "f": (lambda m, j: rk.f_beta(j, _k(m), m.beta, m.threshold), "required", "f1@10, f2@10, fbeta@10|beta=0.5"),
    "hit": (lambda m, j: rk.hit(j, m.k, m.threshold), "optional", "hit@5 (trec_eval success_5)"),
    "rr": (lambda m, j: rk.reciprocal_rank(j, m.k, m.threshold), "optional", "mrr, rr@10"),
    "ap": (lambda m, j: rk.average_precision(j, m.k, m.threshold), "optional", "map, map@10"),
    "rprec": (lambda m, j: rk.r_precision(j, m.threshold), "none", "rprec"),
    "bpref": (lambda m, j: rk.bpref(j, m.threshold), "none", "bpref"),
    "iprec": (lambda m, j: rk.interpolated_precision(j, _level(m), m.threshold), "level", "iprec@0.5"),
    "auc_pr": (lambda m, j: rk.auc_pr(j, m.threshold), "none", "auc_pr (mean of the 11 iprec points)"),
    "ndcg": (lambda m, j: rk.ndcg(j, m.k), "optional", "ndcg@10, ndcg"),
    "ndcg_exp": (lambda m, j: rk.ndcg(j, m.k, exponential=True), "optional", "ndcg_exp@10 (gain 2^g-1)"),
    "dcg": (lambda m, j: rk.dcg(j, m.k), "optional", "dcg@10"),
    "dcg_exp": (lambda m, j: rk.dcg(j, m.k, exponential=True), "optional", "dcg_exp@10"),
    "err": (lambda m, j: rk.err(j, m.k, m.gmax), "optional", "err@20, err@20|gmax=4"),
    "num_rel": (lambda m, j: rk.num_rel(j, m.threshold), "none", "num_rel"),
    "num_ret": (lambda m, j: rk.num_ret(j), "none", "num_ret"),
}
_READS_NONRELEVANT = {"bpref"}  # every other family reads only documents with a positive grade
_GRADED = {"ndcg", "ndcg_exp", "dcg", "dcg_exp", "err", "num_ret"}
_ALIASES = {
    "p": "P", "precision": "P", "r": "recall", "recall": "recall", "hit": "hit", "success": "hit",
    "rr": "rr", "mrr": "rr", "recip_rank": "rr", "ap": "ap", "map": "ap", "map_cut": "ap", "rprec": "rprec",
    "r-prec": "rprec", "r_prec": "rprec", "bpref": "bpref", "iprec": "iprec", "iprec_at_recall": "iprec",
    "auc_pr": "auc_pr", "aucpr": "auc_pr", "11pt_avg": "auc_pr", "ndcg": "ndcg", "ndcg_cut": "ndcg",
    "ndcg_exp": "ndcg_exp", "dcg": "dcg", "dcg_exp": "dcg_exp", "err": "err", "f": "f", "fbeta": "f",
    "f1": "f", "f2": "f", "num_rel": "num_rel", "num_ret": "num_ret",
}  # fmt: skip
# the names offered as close to a misspelt one (one word per family; cut-offs from COMMON_CUTS or the caller's)
_WORDS = ("P", "recall", "f1", "f2", "hit", "mrr", "rr", "map", "rprec", "bpref", "auc_pr", "ndcg", "ndcg_exp", "dcg",
          "dcg_exp", "err", "num_rel", "num_ret")  # fmt: skip
COMMON_CUTS = (1, 3, 5, 10, 20, 100)
_TREC = re.compile(r"^(P|recall|map_cut|ndcg_cut|success|iprec_at_recall)_(\d+(?:\.\d+)?)$")
_WORD = re.compile(r"[A-Za-z0-9_\-]+")
_CUT = re.compile(r"\d+(?:\.\d+)?")  # a cut-off, or iprec's recall level


@dataclass(frozen=True)
class Measure:
    """A parsed measure: ``family`` (a key of the registry), cutoff ``k`` (None: whole run) and options."""

    name: str
    family: str
    k: int | None = None
    threshold: int = 1
    gmax: int = 3
    beta: float = 1.0
    level: float | None = None

    def compute(self, judged: Judged) -> FloatArray:
        """Per-query values, aligned with ``judged.query_ids``."""
        return _FAMILIES[self.family][0](self, judged)


def _k(m: Measure) -> int:
    if m.k is None:
        raise MetricError(f"measure {m.name!r} needs a cutoff, e.g. {m.family}@10")
    return m.k


def _level(m: Measure) -> float:
    if m.level is None:
        raise MetricError(f"measure {m.name!r} needs a recall level in [0, 1], e.g. iprec@0.5")
    return m.level


def known_measures() -> str:
    """One line per family with examples, for error messages and --help."""
    return "; ".join(example for _, _, example in _FAMILIES.values())


def measure_catalogue(cuts: Iterable[int] = COMMON_CUTS) -> list[str]:
    """Every measure name of one word per family, at each of ``cuts`` where the family takes a cut-off (``ndcg``,
    ``ndcg@1``, ``ndcg@10``, ..., ``P@5``, ``map``, ``bpref``): the real names a misspelt one is compared with."""
    names = []
    for word in _WORDS:
        rule = _FAMILIES[_ALIASES[word.lower()]][1]
        if rule in ("optional", "none") and word not in ("rr", "f1", "f2"):
            names.append(word)
        if rule in ("optional", "required") and word != "mrr":
            names += [f"{word}@{k}" for k in sorted(set(cuts))]
    return names


def _unknown(name: str, why: str) -> MetricError:
    parsed = MetricName.parse(name)
    close = [f"{near}{parsed.suffix}" for near in close_names(parsed.head.strip(), measure_catalogue())]
    hint = f"close names: {', '.join(close)}; " if close else ""
    return MetricError(f"unknown measure {name!r} ({why}); {hint}known: {known_measures()}; option: |g>=2 threshold")


def parse_measure(name: str) -> Measure:
    """Parse a measure name; an unknown or malformed name raises MetricError listing the known families."""
    parsed = MetricName.parse(name.strip())
    base, options = parsed.head.strip(), [option.strip() for option in parsed.options]
    written = _word_and_cut(base)
    if written is None:
        raise _unknown(name, "not of the form family@k")
    word, cut = written
    family = _ALIASES.get(word) or _ALIASES.get(word.lower())
    if family is None:
        raise _unknown(name, f"no family {word!r}")
    measure = _with_cutoff(Measure(name, family), cut, name)
    if word.lower() in ("f1", "f2"):
        measure = replace(measure, beta=float(word[1]))
    for option in options:
        measure = _with_option(measure, option)
    return measure


def _word_and_cut(base: str) -> tuple[str, str | None] | None:
    """A name's word and cut-off as written: trec_eval's ``P_5``, ``ndcg_cut_10``, or the grammar's ``word@cut``
    (:class:`~assay.metric_names.MetricName`) with a word of letters, digits, ``_`` and ``-``; None for neither."""
    trec = _TREC.match(base)
    if trec is not None:
        return trec.group(1), trec.group(2)
    head = MetricName.parse(base)
    if _WORD.fullmatch(head.word) is None or (head.cut is not None and _CUT.fullmatch(head.cut) is None):
        return None
    return head.word, head.cut


def _with_cutoff(m: Measure, cut: str | None, name: str) -> Measure:
    rule = _FAMILIES[m.family][1]
    if rule == "level":
        level = float(cut) if cut is not None else math.nan
        if not 0.0 <= level <= 1.0:
            raise MetricError(f"measure {name!r} needs a recall level in [0, 1], e.g. iprec@0.5")
        return replace(m, level=level)
    if cut is None:
        if rule == "required":
            raise MetricError(f"measure {name!r} needs a cutoff, e.g. {_FAMILIES[m.family][2].split(',')[0]}")
        return m
    if rule == "none":
        raise MetricError(f"measure {name!r} takes no cutoff; write it without @{cut}")
    if not cut.isdigit() or int(cut) < 1:
        raise MetricError(f"measure {name!r}: the cutoff must be a whole number >= 1, e.g. @10")
    return replace(m, k=int(cut))


def _with_option(m: Measure, option: str) -> Measure:
    threshold = re.fullmatch(r"(?:g|rel)\s*>=\s*(-?\d+)", option)
    if threshold:
        if m.family in _GRADED:
            raise MetricError(f"measure {m.name!r}: {m.family} uses the raw grades; drop |{option}")
        if int(threshold.group(1)) < 1:
            raise MetricError(f"measure {m.name!r}: the threshold must be >= 1 (grade <= 0 is never relevant)")
        return replace(m, threshold=int(threshold.group(1)))
    value = re.fullmatch(r"(gmax|beta)\s*=\s*(\d+(?:\.\d+)?)", option)
    if value and value.group(1) == "gmax" and m.family == "err" and value.group(2).isdigit():
        return replace(m, gmax=max(int(value.group(2)), 1))
    if value and value.group(1) == "beta" and m.family == "f" and float(value.group(2)) > 0:
        return replace(m, beta=float(value.group(2)))
    raise MetricError(f"measure {m.name!r}: unknown option {option!r}; options: g>=N, gmax=N (err), beta=X (f)")


@dataclass(frozen=True)
class Evaluation:
    """Per-query values (``per_query[name]`` aligned with ``query_ids``, sorted), means and standard errors.

    ``n_missing`` counts qrels queries without a run entry: left out of the means, or counted as 0 when
    ``complete``. With no evaluated query every mean is NaN; the standard error needs two queries (else NaN).
    """

    query_ids: list[str]
    per_query: dict[str, FloatArray]
    n_missing: int = 0
    complete: bool = False
    measures: dict[str, Measure] = field(default_factory=dict)

    def _values(self, name: str) -> FloatArray:
        if name not in self.per_query:
            raise MetricError(f"measure {name!r} was not evaluated; evaluated: {', '.join(self.per_query)}")
        return self.per_query[name]

    def mean(self, name: str) -> float:
        """Mean over evaluated queries."""
        values = self._values(name)
        return float(values.mean()) if len(values) else math.nan

    def stderr(self, name: str) -> float:
        """Standard error of the mean: sample standard deviation (n - 1) / sqrt(n)."""
        values = self._values(name)
        return float(values.std(ddof=1) / math.sqrt(len(values))) if len(values) > 1 else math.nan

    def means(self) -> dict[str, float]:
        """Every measure's mean, in the order given."""
        return {name: self.mean(name) for name in self.per_query}


def _as_qrels(qrels: Qrels | Mapping[str, Mapping[str, int]]) -> Qrels:
    return qrels if isinstance(qrels, Qrels) else Qrels.from_dict(qrels)


def _as_run(run: Run | Mapping[str, Mapping[str, float]]) -> Run:
    return run if isinstance(run, Run) else Run.from_dict(run)


def evaluate(
    qrels: Qrels | Mapping[str, Mapping[str, int]],
    run: Run | Mapping[str, Mapping[str, float]],
    measures: Iterable[str | Measure] = DEFAULT_MEASURES,
    *,
    complete: bool = False,
) -> Evaluation:
    """Evaluate ``run`` against ``qrels`` on ``measures`` (names or :class:`Measure`), trec_eval-exact.

    ``qrels``/``run`` are pytrec_eval-shaped mappings or :class:`Qrels`/:class:`Run`. ``complete`` is trec_eval -c.
    """
    parsed = [m if isinstance(m, Measure) else parse_measure(m) for m in measures]
    if not parsed:
        raise MetricError(f"no measure given; for example {', '.join(DEFAULT_MEASURES[:3])}")
    positive_only = not any(m.family in _READS_NONRELEVANT for m in parsed)
    judged = join(_as_qrels(qrels), _as_run(run), complete=complete, positive_only=positive_only)
    per_query: dict[str, FloatArray] = {}
    for m in parsed:
        if m.name not in per_query:
            per_query[m.name] = np.asarray(m.compute(judged), dtype=np.float64)
    return Evaluation(judged.query_ids, per_query, judged.n_missing, complete, {m.name: m for m in parsed})


def measure_names(measures: Sequence[str]) -> list[str]:
    """Validate names early (e.g. in a CLI before reading files); returns them unchanged."""
    for name in measures:
        parse_measure(name)
    return list(measures)
