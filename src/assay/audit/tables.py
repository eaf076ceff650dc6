"""Rich tables for `assay agreement`: the statistics with intervals, confusion matrix, histograms, strata."""

from __future__ import annotations

from typing import Any

from rich.console import Console
from rich.table import Table

from assay.report._agreement import CRITERION_STATISTIC

__all__ = ["print_criteria", "print_report"]

LABELS = {
    "percent_agreement": "percent agreement",
    "cohen_kappa": "Cohen's kappa",
    "weighted_kappa_linear": "weighted kappa (linear)",
    "weighted_kappa_quadratic": "weighted kappa (quadratic)",
    "krippendorff_alpha": "Krippendorff's alpha (ordinal)",
    "leniency": "leniency (judge - human)",
}


def _num(value: float | None, digits: int = 3) -> str:
    return "-" if value is None else f"{value:.{digits}f}"


def _ci(stat: dict[str, Any] | None, digits: int = 3) -> tuple[str, str]:
    if stat is None:
        return "-", "-"
    return _num(stat["value"], digits), f"[{_num(stat['low'], digits)}, {_num(stat['high'], digits)}]"


def print_report(console: Console, report: dict[str, Any]) -> None:
    """Print the agreement report of :func:`assay.audit.agreement.agreement_report`."""
    overall = report["overall"]
    annotators = ", ".join(report["annotators"])
    title = f"Judge vs human: {overall['n']} items ({annotators})"
    if overall["n_unscored"]:
        title += f"; {overall['n_unscored']} unscored by the judge, left out"
    table = Table(title=title, title_justify="left")
    for column in ("statistic", "value", "95% interval"):
        table.add_column(column, justify="left" if column == "statistic" else "right")
    for key, label in LABELS.items():
        table.add_row(label, *_ci(overall[key]))
    console.print(table)
    _print_matrix(console, overall)
    _print_humans(console, report.get("between_humans"))
    if "strata" in report:
        _print_strata(console, report["by"], report["strata"])


def _print_matrix(console: Console, block: dict[str, Any]) -> None:
    table = Table(title="Confusion matrix (rows: judge grade, columns: human grade)", title_justify="left")
    table.add_column("judge \\ human")
    for grade in range(4):
        table.add_column(str(grade), justify="right")
    table.add_column("judge total", justify="right")
    for grade, row in enumerate(block["confusion_matrix"]):
        table.add_row(str(grade), *(str(v) for v in row), str(block["judge_histogram"][grade]))
    table.add_row("human total", *(str(v) for v in block["human_histogram"]), str(sum(block["human_histogram"])))
    console.print(table)


def _print_humans(console: Console, humans: dict[str, Any] | None) -> None:
    if not humans:
        return
    table = Table(title=f"Between annotators ({', '.join(humans['annotators'])})", title_justify="left")
    for column in ("statistic", "value", "95% interval", "items"):
        table.add_column(column, justify="left" if column == "statistic" else "right")
    alpha = humans["krippendorff_alpha"]
    table.add_row("Krippendorff's alpha (ordinal)", *_ci(alpha), str(humans["n_items"]))
    if "fleiss_kappa" in humans:
        fleiss = humans["fleiss_kappa"]
        items = str(fleiss["n"]) if fleiss else "0 graded by all"
        table.add_row("Fleiss' kappa", *_ci(fleiss), items)
    console.print(table)


def _print_strata(console: Console, by: str, strata: dict[str, dict[str, Any]]) -> None:
    table = Table(title=f"Per {by}", title_justify="left")
    columns = [by, "n", "agreement", "kappa", "quadratic kappa", "alpha", "leniency"]
    for i, column in enumerate(columns):
        table.add_column(column, justify="left" if i == 0 else "right")
    keys = ["percent_agreement", "cohen_kappa", "weighted_kappa_quadratic", "krippendorff_alpha", "leniency"]
    for value, block in strata.items():
        cells = [" ".join(_ci(block[key], 2)) for key in keys]
        table.add_row(value, str(block["n"]), *cells)
    console.print(table)


def print_criteria(console: Console, rows: list[dict[str, Any]]) -> None:
    """Print :func:`assay.audit.criteria.agreement_report`: per criterion the statistic, exact agreement and the
    confusion matrix."""
    for row in rows:
        judges = ", ".join(row["judges"])
        title = f"criterion:{row['criterion']} ({row['ref']}), judge {judges} vs people: {row['n']} items"
        if row["judge_unscored"]:
            title += f"; {row['judge_unscored']} unscored by the judge, left out"
        console.print(title)  # a line of its own: a table title would wrap at the table's width
        table = Table()
        for column in ("statistic", "value", "95% interval"):
            table.add_column(column, justify="left" if column == "statistic" else "right")
        table.add_row(CRITERION_STATISTIC[row["statistic"]], *_ci(row["kappa"]))
        table.add_row("percent agreement", *_ci(row["percent"]))
        console.print(table)
        console.print("confusion matrix: rows the judge's label, columns people's")
        matrix = Table()
        matrix.add_column("judge \\ people")
        for label in row["labels"]:
            matrix.add_column(label, justify="right")
        for label, counts in zip(row["labels"], row["confusion"], strict=True):
            matrix.add_row(label, *(str(c) for c in counts))
        console.print(matrix)
