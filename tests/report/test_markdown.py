"""report.md: the same content as Markdown tables, per-stratum tables, and data that cannot break out."""

from __future__ import annotations

import re
from pathlib import Path

from report_fixture import FIXTURE_DIR, XSS_QUERY

from assay.report import render_markdown, write_markdown
from assay.report._format import fmt_unscored
from assay.results import EvalResult


def _table_rows(text: str) -> list[str]:
    return [line for line in text.splitlines() if line.startswith("| ")]


def _cells(line: str) -> int:
    """Column count of a table row: pipes not escaped with a backslash."""
    return sum(1 for i, ch in enumerate(line) if ch == "|" and (i == 0 or line[i - 1] != "\\")) - 1


def test_every_metric_of_every_run_with_unscored_reasons(result: EvalResult) -> None:
    text = render_markdown(result)
    assert "**judge:** openai/gpt-4o-mini" in text
    for run in result.runs:
        assert f"## Run: {run.name}" in text
        for name, summary in run.metrics.items():
            unscored = fmt_unscored(summary) if summary.n_unscored else "0"
            row = f"| {name} | {summary.mean:.3f} | [{summary.low:.3f}, {summary.high:.3f}] | {summary.n_scored} | "
            assert row + unscored + " |" in text


def test_per_stratum_tables(result: EvalResult) -> None:
    text = render_markdown(result)
    assert text.count("### By type") == 3 and text.count("### By difficulty") == 3
    hard = result.runs[2].strata["difficulty"]["hard"]["ndcg@10"]
    assert f"{hard.mean:.3f} [{hard.low:.3f}, {hard.high:.3f}] n={hard.n_scored}" in text
    assert "| metric | difficulty = easy | difficulty = hard |" in text


def test_comparisons_and_corrected(result: EvalResult) -> None:
    text = render_markdown(result)
    assert "### ndcg@10 (primary metric): Holm over 2 pairs" in text
    assert text.index("### ndcg@10 (primary") < text.index("### map (secondary metric): Holm over 2 pairs")
    assert "| hybrid & rerank vs bm25 | 24 | +0.252 [0.081, 0.424] | +0.82 | 19/0/5 |" in text
    for comp in result.comparisons:
        assert comp.verdict in text
    assert "## Corrected metrics" in text and "| 0.701 | [0.652, 0.748] |" in text
    assert "| support | 144 | 0 | 5 | 120,400 | 10,100 | unknown |" in text


def test_tables_are_well_formed(result: EvalResult) -> None:
    result.runs[0].name = "a|b"
    result.runs[0].strata["type"]["weird | value\nwith newline"] = result.runs[0].strata["type"]["factoid"]
    text = render_markdown(result)
    blocks = text.split("\n\n")
    for block in blocks:
        rows = _table_rows(block)
        assert len({_cells(row) for row in rows}) <= 1, block


def test_data_cannot_become_html(result: EvalResult) -> None:
    result.runs[1].name = XSS_QUERY
    result.warnings.append("<img src=x onerror=alert(1)>")
    text = render_markdown(result)
    assert re.search(r"(?<!\\)[<>]", text) is None  # every angle bracket is backslash-escaped
    assert r"\<script\>alert(1)\</script\>" in text


def test_without_judge_says_trec_eval_convention(result: EvalResult) -> None:
    result.judge = None
    assert "- **no judge: trec_eval convention (unjudged = not relevant)**" in render_markdown(result)


def test_write_markdown(tmp_path: Path, result: EvalResult) -> None:
    path = tmp_path / "out" / "report.md"
    write_markdown(result, path)
    assert path.read_text(encoding="utf-8") == render_markdown(result)
    assert path.stat().st_mode & 0o777 == 0o644


def test_results_format_1_comparisons_say_what_they_were_corrected_over() -> None:
    """A results.json of format 1 (Holm across the metrics of a pair) renders, and says so."""
    old = EvalResult.model_validate_json((FIXTURE_DIR / "eval_result_v1_before_agreement.json").read_text("utf-8"))
    assert old.comparisons and all(c.family_size == 0 for c in old.comparisons)
    text = render_markdown(old)
    assert "p adjusted by Holm across the metrics of a pair (format 1)" in text
    assert "Holm across the metrics of the pair (results format 1)" in text
