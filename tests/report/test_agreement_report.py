"""The judge-vs-human agreement and the audit-size figures in report.md, report.html and the terminal: present,
escaped, and replaced by one line naming `assay audit` when nothing was audited."""

from __future__ import annotations

import html
import re

from report_fixture import XSS_STRATUM
from rich.console import Console

from assay.report import render_html, render_markdown, render_terminal
from assay.results import EvalResult

AUDIT_LINE = "audit a sample of the judge's labels with `assay audit golden/demo`"


def _terminal(result: EvalResult) -> str:
    console = Console(width=100, record=True, force_terminal=False, color_system=None)
    render_terminal(result, console, verbose=True)
    return " ".join(console.export_text().split())


def test_markdown_agreement_section(result: EvalResult) -> None:
    text = render_markdown(result)
    overall = result.agreement.overall  # type: ignore[union-attr]
    assert "## Judge vs human" in text and "60 audited items (alice, bob, chen)" in text
    assert "2 left unscored by the judge, not counted" in text
    assert f"| Cohen's kappa | {overall.cohen_kappa.value:.3f} |" in text  # type: ignore[union-attr]
    assert f"| leniency (judge − human grade) | {overall.leniency.value:+.3f} |" in text  # type: ignore[union-attr]
    for grade, row in enumerate(overall.confusion_matrix):
        assert f"| **{grade}** | {' | '.join(map(str, row))} | {overall.judge_histogram[grade]} |" in text
    assert f"| **human total** | {' | '.join(map(str, overall.human_histogram))} | 60 |" in text
    assert "### Between annotators (alice, bob, chen)" in text and "| Fleiss' kappa |" in text
    assert "### Agreement by type" in text and r"\<img src=x onerror=alert(1)\>" in text
    assert re.search(r"(?<!\\)<img", text) is None


def test_markdown_audit_size_beside_each_corrected_metric(result: EvalResult) -> None:
    text = render_markdown(result)
    # "~" is escaped: GitHub Markdown reads tildes as strikethrough
    assert r"audit \~125 more pairs for ±0.050 · audit \~1,200 more pairs for ±0.025 |" in text
    assert "±0.050: audited labels all equal: no spread to size from |" in text


def test_html_agreement_section_and_escaping(result: EvalResult) -> None:
    result.agreement.annotators = ["<b>mallory</b>", "bob"]  # type: ignore[union-attr]
    page = render_html(result)
    section = page[page.index('<section id="agreement">') : page.index('<section id="corrected">')]
    assert "<b>mallory</b>" not in section and "&lt;b&gt;mallory&lt;/b&gt;" in section
    assert "<img" not in section and html.escape(XSS_STRATUM) in section
    text = html.unescape(section)
    overall = result.agreement.overall  # type: ignore[union-attr]
    assert f"{overall.weighted_kappa_quadratic.value:.3f}" in text  # type: ignore[union-attr]
    cells = re.findall(r'<td style="background: rgba\(0, 114, 178, [0-9.]+\); color: [^"]+">(\d+)</td>', section)
    assert [int(c) for c in cells] == [v for row in overall.confusion_matrix for v in row]
    assert 'aria-label="judge and human grade histograms of the audited items"' in section
    assert "Agreement by type" in text and "Between annotators" in text and "Fleiss' kappa" in text
    assert '<a href="#agreement">Judge vs human</a>' in page


def test_html_audit_size_column(result: EvalResult) -> None:
    text = html.unescape(render_html(result))
    assert "for a tighter interval" in text
    assert "audit ~125 more pairs for ±0.050 · audit ~1,200 more pairs for ±0.025" in text


def test_terminal_agreement_block_and_audit_size(result: EvalResult) -> None:
    text = _terminal(result)
    assert "Judge vs human on 60 audited items (alice, bob, chen)" in text
    assert "weighted kappa (quadratic)" in text and "between annotators: Fleiss' kappa" in text
    assert "dense faithfulness: audit ~125 more pairs for ±0.050" in text


def test_nothing_audited_says_how_to_audit_everywhere(result: EvalResult) -> None:
    result.agreement = None
    result.corrected = []
    page = html.unescape(render_html(result))
    assert AUDIT_LINE in page and 'id="agreement-stats"' not in page
    assert AUDIT_LINE.replace("`", r"\`") in render_markdown(result)
    assert "assay audit golden/demo" in _terminal(result)


def test_a_golden_set_labelled_by_people_has_no_agreement_section_and_no_audit_advice(result: EvalResult) -> None:
    result.agreement, result.corrected = None, []
    result.label_origin, result.label_sources = "human", {"human": 3114}
    page = html.unescape(render_html(result))
    assert 'id="agreement"' not in page and "Judge vs human" not in page and "assay audit" not in page
    assert "labels: 3,114 human" in page
    text = render_markdown(result)
    assert "Judge vs human" not in text and "assay audit" not in text and "- **labels:** 3,114 human" in text
    terminal = _terminal(result)
    assert "assay audit" not in terminal and "labels: 3,114 human" in terminal


def test_a_mixed_golden_set_asks_to_audit_the_judges_labels(result: EvalResult) -> None:
    result.agreement, result.corrected = None, []
    result.label_origin, result.label_sources = "mixed", {"human": 30, "judge": 12}
    advice = "No judge label has a human grade yet"
    assert advice in html.unescape(render_html(result)) and advice in render_markdown(result)
    assert advice in _terminal(result) and "labels: 30 human, 12 judge (mixed)" in _terminal(result)


def test_judge_labels_not_saved_are_not_sent_to_the_audit_page_as_they_are(result: EvalResult) -> None:
    result.agreement, result.corrected = None, []
    result.label_origin, result.label_sources = "mixed", {"human": 30, "judge": 12}
    result.settings = {**result.settings, "add_labels": False}
    assert "were not saved (--no-add-labels): to audit a sample of them, evaluate without it" in _terminal(result)
