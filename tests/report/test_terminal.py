"""The terminal summary: what it says about each run and comparison, at 100 columns."""

from __future__ import annotations

from rich.console import Console

from assay.report import render_terminal
from assay.report._format import fmt_unscored
from assay.results import EvalResult


def _render(result: EvalResult, width: int = 100) -> str:
    console = Console(record=True, width=width, force_terminal=False, color_system=None)
    render_terminal(result, console, verbose=True)
    return console.export_text()


def test_runs_headline_metrics_and_unscored_reasons(result: EvalResult) -> None:
    text = _render(result)
    assert "judge: openai/gpt-4o-mini" in text and "assay 0.1.0" in text
    for run in result.runs:
        assert run.name in text
        for metric in ("ndcg@10", "map", "faithfulness"):
            summary = run.metrics[metric]
            assert f"{summary.mean:.3f}" in text
            assert f"[{summary.low:.3f}, {summary.high:.3f}]" in text
        recall = run.metrics["context_recall"]  # unscored in every run of the fixture: the reasons must show
        assert recall.n_unscored and fmt_unscored(recall) in text
    assert "ndcg@5" not in text  # only the headline cut-off in the summary


def test_run_counts_worth_a_warning_and_judged_at_k(result: EvalResult) -> None:
    text = _render(result)
    assert "1 unknown query ids" in text and "1 golden questions missing from the run" in text
    assert "3 unknown chunk ids" in text and "2 duplicate ids" in text and "1 empty retrieved lists" in text
    assert "52 labels judged now" in text
    assert "judged@10 98%" in text


def test_comparisons_corrected_usage_and_warnings(result: EvalResult) -> None:
    text = " ".join(_render(result, width=200).split())
    assert "hybrid & rerank vs bm25" in text
    significant = next(c for c in result.comparisons if c.significant and c.metric == "ndcg@10")
    assert f"{significant.delta:+.3f} [{significant.low:.3f}, {significant.high:.3f}]" in text
    winner = significant.b if significant.delta > 0 else significant.a
    assert f"{winner} better" in text  # a short verdict: the row already holds delta, interval and p
    assert "no reliable difference" in text
    assert "PPI++" in text and "0.701 [0.652, 0.748]" in text and "40/200" in text
    assert "unknown" in text and "95,210" in text  # cost of a model without a price, tokens with separators
    assert "are not in the golden set" in text


def test_each_metric_keeps_one_line_at_80_columns_with_its_unscored_reasons_below(result: EvalResult) -> None:
    lines = _render(result, width=80).splitlines()
    assert max(len(line) for line in lines) <= 80
    for run in result.runs:
        start = next(i for i, line in enumerate(lines) if line.startswith(f"{run.name}  "))
        for metric in ("ndcg@10", "map", "context_recall", "faithfulness", "nugget_recall"):
            summary = run.metrics[metric]
            row = next(line for line in lines[start:] if line.startswith(metric + " "))
            cells = row.split()  # metric, mean, [low, high], scored, unscored: all on this one line
            assert cells == [metric, f"{summary.mean:.3f}", f"[{summary.low:.3f},", f"{summary.high:.3f}]",
                             str(summary.n_scored), str(summary.n_unscored)]  # fmt: skip
            if summary.n_unscored:  # the reasons, one line under the table
                assert f"  {metric}: {fmt_unscored(summary)}" in lines[start:]


def test_fits_100_columns(result: EvalResult) -> None:
    assert max(len(line) for line in _render(result).splitlines()) <= 100


def test_data_is_not_read_as_markup(result: EvalResult) -> None:
    result.runs[0].name = "[bold red]boom[/bold red]"
    assert "[bold red]boom[/bold red]" in _render(result)


def test_without_judge_or_comparisons(result: EvalResult) -> None:
    result.judge = None
    result.comparisons = []
    result.corrected = []
    result.agreement = None
    text = _render(result)
    assert "no judge: trec_eval convention" in text
    assert " vs " not in text and "PPI" not in text
    assert "assay audit golden/demo" in " ".join(text.split())  # nothing audited: how to audit, in one line
