"""The diagnosis section's content, shared by the terminal, Markdown and HTML reports: RAGChecker's modules with each
run's scores side by side, the strongest differences between runs on them, and example claims per failure category.

The retriever's claim recall is ``context_recall`` and the generator's faithfulness is ``faithfulness`` (same
definitions, computed once). Direction: ``up`` higher is better, ``down`` lower is better, ``""`` neither
(self-knowledge: right, but not from the context).
"""

from __future__ import annotations

from dataclasses import dataclass

from assay.metrics.diagnosis import DIAGNOSIS_METRICS, LOWER_IS_BETTER, NO_DIRECTION, SHARED_NAMES
from assay.results import Comparison, DiagnosisExample, EvalResult, MetricSummary

__all__ = [
    "CATEGORIES",
    "MODULES",
    "Difference",
    "ExampleGroup",
    "ModuleRow",
    "differences",
    "example_groups",
    "has_diagnosis",
    "module_rows",
]

_SHOWN = {  # how the report names each diagnosis metric (RAGChecker's names, from assay.metrics.diagnosis)
    "claim_precision": "claim precision", "claim_recall": "claim recall", "claim_f1": "claim F1",
    "retriever_claim_recall": "claim recall", "retriever_context_precision": "context precision",
    "context_utilization": "context utilization", "noise_sensitivity_relevant": "noise sens. relevant",
    "noise_sensitivity_irrelevant": "noise sens. irrelevant", "hallucination": "hallucination",
    "self_knowledge": "self-knowledge", "faithfulness": "faithfulness",
}  # fmt: skip


def _direction(name: str) -> str:
    return "" if name in NO_DIRECTION else "down" if name in LOWER_IS_BETTER else "up"


# (module, ((label, metric as results store it, better "up" | "down" | ""), ...)), from the metrics' own catalogue
MODULES: tuple[tuple[str, tuple[tuple[str, str, str], ...]], ...] = tuple(
    (module, tuple((_SHOWN[name], SHARED_NAMES.get(name, name), _direction(name)) for name in names))
    for module, names in DIAGNOSIS_METRICS.items()
)
CATEGORIES = {
    "missed_by_retriever": "missed by the retriever (a reference claim no chunk entails)",
    "ignored_by_generator": "ignored by the generator (in a chunk, not in the answer)",
    "relevant_noise": "relevant noise (a wrong claim taken from a relevant chunk)",
    "irrelevant_noise": "irrelevant noise (a wrong claim taken from an irrelevant chunk)",
    "hallucination": "hallucination (a wrong claim no chunk entails)",
    "self_knowledge": "self-knowledge (a right claim no chunk entails)",
}
_LABEL = {metric: f"{module}: {label}" for module, rows in MODULES for label, metric, _ in rows}
_DIRECTION = {metric: direction for _, rows in MODULES for _, metric, direction in rows}
_ONLY_DIAGNOSIS = "claim_precision"  # written only by the diagnosis: its presence says the section has data


@dataclass(frozen=True)
class ModuleRow:
    """One metric of one module, with each run's summary (None where the run has no value)."""

    module: str
    label: str
    metric: str
    direction: str
    summaries: list[MetricSummary | None]

    @property
    def arrow(self) -> str:
        return {"up": "↑", "down": "↓"}.get(self.direction, "·")


@dataclass(frozen=True)
class Difference:
    """A comparison on a diagnosis metric, read with the metric's direction (``better`` is a run name or None)."""

    comparison: Comparison
    label: str
    better: str | None


@dataclass(frozen=True)
class ExampleGroup:
    """The examples of one run and one category; ``anchor`` is a safe HTML id (run index, category key)."""

    run: str
    category: str
    title: str
    anchor: str
    examples: list[DiagnosisExample]


def has_diagnosis(result: EvalResult) -> bool:
    """Whether any run carries diagnosis metrics."""
    return any(_ONLY_DIAGNOSIS in run.metrics for run in result.runs)


def module_rows(result: EvalResult) -> list[ModuleRow]:
    """Every module metric some run has, in module order."""
    rows = []
    for module, metrics in MODULES:
        for label, metric, direction in metrics:
            summaries = [run.metrics.get(metric) for run in result.runs]
            if any(s is not None for s in summaries):
                rows.append(ModuleRow(module, label, metric, direction, summaries))
    return rows


def _better(comparison: Comparison) -> str | None:
    direction = _DIRECTION[comparison.metric]
    if not comparison.significant or not direction or comparison.delta == 0:
        return None
    b_higher = comparison.delta > 0
    return comparison.b if b_higher == (direction == "up") else comparison.a


def differences(result: EvalResult, top: int = 5) -> list[Difference]:
    """The ``top`` comparisons on diagnosis metrics: significant ones first, then by adjusted p, then by size."""
    chosen = [c for c in [*result.comparisons, *result.diagnosis_comparisons] if c.metric in _DIRECTION]
    chosen.sort(key=lambda c: (not c.significant, c.p_adjusted, -abs(c.delta)))
    return [Difference(c, _LABEL[c.metric], _better(c)) for c in chosen[:top]]


def example_groups(result: EvalResult) -> list[ExampleGroup]:
    """The examples grouped by run (in run order) and category (in :data:`CATEGORIES` order)."""
    groups = []
    for index, run in enumerate(result.runs):
        for key, title in CATEGORIES.items():
            found = [e for e in result.diagnosis_examples if e.run == run.name and e.category == key]
            if found:
                groups.append(ExampleGroup(run.name, key, title, f"diag-{index}-{key}", found))
    return groups
