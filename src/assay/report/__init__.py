"""Reports of an evaluation: a terminal summary (rich), ``report.md``, and one self-contained ``report.html``.

All of them render an :class:`~assay.results.EvalResult`; :func:`write_report` writes the
whole folder. matplotlib is imported only when the HTML plots are drawn, so importing this package stays cheap.
"""

from __future__ import annotations

from assay.report.bundle import REPORT_FILES, write_report
from assay.report.html import render_html, write_html
from assay.report.markdown import render_markdown, write_markdown
from assay.report.terminal import render_terminal

__all__ = [
    "REPORT_FILES",
    "render_html",
    "render_markdown",
    "render_terminal",
    "write_html",
    "write_markdown",
    "write_report",
]
