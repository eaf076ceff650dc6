"""The grammar of a metric name, parsed in one place for every layer that reads names.

A metric name is ``word[@cut][|option...]``:

* ``word``: the text before the first ``@`` or ``|`` (``ndcg``, ``P``, ``span_iou``, ``nugget_recall_vital_strict``);
* ``cut``: the text after the first ``@`` of the part before the first ``|``: a cut-off in passages (``ndcg@10``),
  a budget of text (``ndcg@1000t``: tokens, ``recall@4000c``: characters) or a recall level (``iprec@0.5``);
* ``options``: each ``|``-separated piece after it, as written (``recall@5|g>=2``, ``err@20|gmax=4``).

:meth:`MetricName.parse` is total: every string splits into those three parts, and ``str()`` gives the string back
unchanged. What the parts must hold is said by the layers that compute the metrics: the ranking measures and their
trec_eval aliases in :mod:`assay.metrics.registry`, the judged, span and budget metrics of ``assay eval`` in
:mod:`assay.pipelines.evaluate.scoring.names` (with the errors for a name that is not one). This module imports
nothing (the standalone :mod:`assay.metrics` reads names with it too).
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = [
    "BUDGET_UNITS",
    "CRITERION_PREFIX",
    "LOWER_IS_BETTER",
    "NO_DIRECTION",
    "TOOL_ARGS_JUDGED",
    "TRAJECTORY_FAMILY",
    "TRAJECTORY_METRICS",
    "MetricName",
    "is_criterion",
    "lower_is_better",
]

BUDGET_UNITS = ("t", "c")  # a budget of text in tokens or in characters
CRITERION_PREFIX = "criterion:"  # a team's own criterion (assay.judge.criteria): criterion:NAME, one metric
# the measures of a system that searches several times (run lines with steps; assay.pipelines.evaluate.scoring.
# trajectory computes them, the reports read them): fixed names, in this order
TRAJECTORY_METRICS = ("trajectory_recall", "first_search_recall", "evidence_dropped", "hop_coverage",
                      "redundant_searches", "looped", "step_query_bm25_ndcg@10", "searches", "tool_calls",
                      "step_tokens", "tool_name_precision", "tool_name_recall", "tool_name_f1", "tool_order_f1",
                      "tool_args_exact", "step_latency_ms")  # fmt: skip
# the judged one (a judge pairs a system's tool calls with the reference calls whose arguments mean the same), and
# the family the reports and comparisons group them in
TOOL_ARGS_JUDGED = "tool_args_judged"
TRAJECTORY_FAMILY = (*TRAJECTORY_METRICS, TOOL_ARGS_JUDGED)
# the measures where less is better: RAGChecker's noise sensitivities and hallucination, a conversation turn's
# contradiction (1 when its answer contradicts an earlier one), and a trajectory's evidence dropped, redundant
# searches, loops and time spent in its steps; every other measure is better higher
LOWER_IS_BETTER = frozenset(
    {"noise_sensitivity_relevant", "noise_sensitivity_irrelevant", "hallucination", "contradiction",
     "evidence_dropped", "redundant_searches", "looped", "step_latency_ms"}
)  # fmt: skip

# neither more nor less is better, it depends on the use: RAGChecker's self-knowledge (right claims no passage
# entails), and what a system that searches several times spent (its searches, tool calls and model tokens)
NO_DIRECTION = frozenset({"self_knowledge", "searches", "tool_calls", "step_tokens"})


def lower_is_better(name: str) -> bool:
    """Whether less of the measure ``name`` is better (:data:`LOWER_IS_BETTER`, whatever its cut or options)."""
    return MetricName.parse(name).word in LOWER_IS_BETTER


@dataclass(frozen=True)
class MetricName:
    """A metric name split by the grammar of the module doc; the properties read its parts."""

    word: str
    cut: str | None = None  # None: no ``@``; "" for a name that ends its head with ``@``
    options: tuple[str, ...] = ()

    @classmethod
    def parse(cls, text: str) -> MetricName:
        """Split ``text`` (never raises; nothing is stripped, so ``str()`` gives ``text`` back)."""
        head, *options = text.split("|")
        word, at, cut = head.partition("@")
        return cls(word, cut if at else None, tuple(options))

    def __str__(self) -> str:
        return self.head + self.suffix

    @property
    def head(self) -> str:
        """The name without its options: ``recall@5`` for ``recall@5|g>=2``."""
        return self.word if self.cut is None else f"{self.word}@{self.cut}"

    @property
    def suffix(self) -> str:
        """The options as written, each after its ``|``: ``|g>=2`` for ``recall@5|g>=2``; "" without options."""
        return "".join(f"|{option}" for option in self.options)

    @property
    def family(self) -> str:
        """The metric family: the word, except that the four ``nugget_recall_{all,vital}_{strict,lenient}`` (and
        any ``nugget_recall...`` word) are one family, ``nugget_recall``."""
        return "nugget_recall" if self.word.startswith("nugget_recall") else self.word

    @property
    def k(self) -> int | None:
        """The cut-off in passages when the cut is a whole number (``ndcg@10`` -> 10, ``ndcg@0`` -> 0); else None."""
        return int(self.cut) if self.cut and self.cut.isdecimal() else None

    @property
    def budget(self) -> str | None:
        """The budget of text when the cut is one, a whole number and a unit (``ndcg@1000t`` -> ``1000t``); else
        None."""
        cut = self.cut or ""
        return cut if cut[-1:] in BUDGET_UNITS and cut[:-1].isdecimal() else None

    @property
    def mistyped_cut(self) -> bool:
        """Whether the cut mixes digits with other characters (``@1O``: a slip, for which close names are offered)
        rather than holding no digit at all (``@x``: a name written without a number)."""
        cut = self.cut or ""
        return any(c.isdigit() for c in cut) and not cut.isdigit()


def is_criterion(name: str) -> bool:
    """Whether ``name`` is a team's own criterion, ``criterion:NAME``."""
    return name.startswith(CRITERION_PREFIX)
