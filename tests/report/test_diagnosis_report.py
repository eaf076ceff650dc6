"""The diagnosis section of the three reports: modules side by side per run, the strongest differences read with each
metric's direction, example claims with anchors; data escaped everywhere."""

from __future__ import annotations

import html
import io
import re

from rich.console import Console

from assay.report import render_html, render_markdown, render_terminal
from assay.report._diagnosis import MODULES
from assay.results import Comparison, DiagnosisExample, EvalResult, MetricSummary

XSS = "<script>alert(3)</script>"


def _with_diagnosis(result: EvalResult) -> EvalResult:
    """The fixture with diagnosis metrics on its first two runs, two comparisons and two examples."""
    a, b = result.runs[0], result.runs[1]
    for offset, run in ((0.0, a), (0.2, b)):
        for _, rows in MODULES:
            for _, metric, _ in rows:
                run.metrics[metric] = MetricSummary(mean=0.3 + offset, low=0.2 + offset, high=0.4 + offset, n_scored=20)
    result.diagnosis_comparisons = [
        Comparison(a=a.name, b=b.name, metric="hallucination", n=20, delta=0.2, low=0.1, high=0.3, p_value=0.001,
                   p_adjusted=0.004, significant=True, verdict="x"),
        Comparison(a=a.name, b=b.name, metric="claim_f1", n=20, delta=0.2, low=0.1, high=0.3, p_value=0.002,
                   p_adjusted=0.008, significant=True, verdict="x"),
    ]  # fmt: skip
    result.diagnosis_examples = [
        DiagnosisExample(run=a.name, query_id="q001", question="How long?", category="relevant_noise",
                         claim=f"Refunds take 30 days {XSS}", verdict="not entailed by the reference, but a relevant "
                         "chunk entails it", reason="neutral: the reference says 14", chunk_id="c1",
                         chunk_text=f"Refunds take 30 days. {XSS}"),
        DiagnosisExample(run=b.name, query_id="q002", question="Who?", category="missed_by_retriever",
                         claim="The manager signs it.", verdict="no retrieved chunk entails this reference claim"),
    ]  # fmt: skip
    return result


def test_html_section_rows_differences_and_examples(result: EvalResult) -> None:
    text = render_html(_with_diagnosis(result))
    section = text[text.index('<section id="diagnosis">') : text.index('<section id="plots">')]
    assert '<a href="#diagnosis">Diagnosis</a>' in text
    plain = html.unescape(section)
    for label in ("↑ overall: claim precision", "↑ retriever: claim recall", "↓ generator: hallucination"):
        assert label in plain
    assert '0.300</span> <span class="ci">[0.200, 0.400]' in plain and "0.500</span>" in plain
    # hallucination went up by 0.2 in run b: lower is better, so run a is better; claim F1 up: run b better
    rows = re.findall(r"<tr><td>(.*?)</td><td>(.*?)</td>.*?<td>([^<]*better)</td></tr>", plain)
    assert (f"{result.runs[1].name} vs {result.runs[0].name}", "generator: hallucination",
            f"{result.runs[0].name} better") in rows  # fmt: skip
    assert ("overall: claim F1", f"{result.runs[1].name} better") in [(r[1], r[2]) for r in rows]
    assert 'href="#diag-0-relevant_noise"' in section and 'id="diag-0-relevant_noise"' in section
    assert 'id="diag-1-missed_by_retriever"' in section
    assert '<details class="example"><summary>q001 · Refunds take 30 days' in section
    assert "<script>" not in section and section.count("&lt;script&gt;alert(3)") == 2
    assert "neutral: the reference says 14" in plain and "<code>c1</code>" in section


def test_no_section_without_diagnosis(result: EvalResult) -> None:
    assert 'id="diagnosis"' not in render_html(result)
    assert "## Diagnosis" not in render_markdown(result)


def test_markdown_section(result: EvalResult) -> None:
    text = render_markdown(_with_diagnosis(result))
    section = text[text.index("## Diagnosis") :]
    assert "| overall | ↑ claim precision | 0.300 [0.200, 0.400] | 0.500 [0.400, 0.600] |" in section
    assert f"- {result.runs[1].name} − " in section and "p adj. 0.004" in section
    assert "relevant noise (a wrong claim taken from a relevant chunk)" in section
    assert "<script>" not in section and r"\<script\>" in section


def test_terminal_section(result: EvalResult) -> None:
    out = io.StringIO()
    render_terminal(_with_diagnosis(result), Console(file=out, width=140, color_system=None), verbose=True)
    text = out.getvalue()
    assert "Diagnosis (RAGChecker's claim-level metrics, mean [95%])" in text
    assert "↓ hallucination" in text and "0.300 [0.20, 0.40]" in text
    assert f"on generator: hallucination: +0.200 [0.100, 0.300], p adj. 0.004: {result.runs[0].name} better" in text
    assert "2 example claims by failure category" in text
    run_table = text[: text.index("Diagnosis (")]
    assert "claim_precision" not in run_table  # the module table shows them, the run tables do not repeat them
