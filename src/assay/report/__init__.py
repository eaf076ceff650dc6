"""Reports of an evaluation: a terminal summary (rich), ``report.md``, and one self-contained ``report.html``.

All of them render an :class:`~assay.results.EvalResult`; :func:`write_report` writes the
whole folder. matplotlib is imported only when the HTML plots are drawn, so importing this package stays cheap.

Modules, one line each:

- ``_agreement``: the wording of judge-versus-human agreement and audit-size figures.
- ``_budget``: what the verdict says about each run's budget.
- ``_conversations``: the conversations of an evaluation as plain sentences.
- ``_diagnosis``: the diagnosis section's content.
- ``_format``: shared wording and number formatting.
- ``_planning``: the planning of an evaluation as plain lines.
- ``_statistics``: how the evaluation's noise was counted, as plain sentences.
- ``_system``: the system side of each run, and the quality-versus-latency plot.
- ``_trajectory``: the trajectories of an evaluation (a system that searches several times) as plain sentences.
- ``caveats``: the verdict's caveats, one small function each, in their severity order.
- ``bundle``: :func:`write_report`, the report folder in one call.
- ``csv_tables``: ``criteria.csv`` and ``pairwise.csv``, the criteria's verdicts and the pairs' outcomes.
- ``html``: ``report.html``, one self-contained page.
- ``html_data``: the page's heavy data (per-query table, explorer), packed in lazy blocks.
- ``markdown``: ``report.md``.
- ``panel``: the wording of agreement between the judges of a panel.
- ``plots``: the plots as inline SVG, matplotlib imported lazily.
- ``terminal``: the terminal output (rich): the header and the verdict, then the summary or the details.
- ``terminal_summary``: the one-screen summary below the verdict (the run x metric and metric x pair matrices).
- ``terminal_verbose``: everything ``assay eval --verbose`` prints below the verdict.
- ``verdict``: the verdict, the answer first, built in one place.
"""

from __future__ import annotations

from assay.report.bundle import REPORT_FILES, TABLE_FILES, write_report
from assay.report.html import render_html, write_html
from assay.report.markdown import render_markdown, write_markdown
from assay.report.terminal import render_terminal

__all__ = [
    "REPORT_FILES",
    "TABLE_FILES",
    "render_html",
    "render_markdown",
    "render_terminal",
    "write_html",
    "write_markdown",
    "write_report",
]
