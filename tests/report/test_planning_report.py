"""The planning in the three reports: one intro and the plans' sentences (all in Markdown and HTML, the first few
in the terminal), nothing without plans, and text from the data escaped."""

from __future__ import annotations

from rich.console import Console

from assay.report import render_html, render_markdown, render_terminal
from assay.report._planning import TERMINAL_PLANS, planning_lines
from assay.results import EvalResult, PowerPlan


def plans(count: int, *, b: str | None = "hybrid") -> list[PowerPlan]:
    return [
        PowerPlan(metric="ndcg@10", a="bm25", b=b, effect=0.01 * (i + 1), sd=0.2, design_effect=1.3, alpha=0.025,
                  questions=100 + i, clusters=40 + i, sentence=f"to detect {0.01 * (i + 1):g} <b>x{i}</b> you need")
        for i in range(count)
    ]  # fmt: skip


def terminal(result: EvalResult, *, verbose: bool = True) -> str:
    console = Console(record=True, width=200)
    render_terminal(result, console, verbose=verbose)
    return console.export_text()


def test_no_plans_no_planning(result: EvalResult) -> None:
    result.planning = []
    assert planning_lines(result) == []
    assert "## Planning" not in render_markdown(result) and "planning:" not in terminal(result)
    assert 'id="planning"' not in render_html(result)


def test_the_intro_names_power_level_and_basis_then_every_sentence(result: EvalResult) -> None:
    result.planning = plans(2)
    intro, *sentences = planning_lines(result)
    assert intro.startswith("Questions needed to detect a difference on ndcg@10 at 80% power, two-sided test at level")
    assert "level 0.025" in intro and "alpha / m for the family's m pairs" in intro
    assert sentences == [p.sentence for p in result.planning]
    one_run = planning_lines(result.model_copy(update={"planning": plans(1, b=None)}))[0]
    assert "bm25's own per-question sd" in one_run and "against a fixed value" in one_run


def test_markdown_and_html_show_every_plan_escaped(result: EvalResult) -> None:
    result.planning = plans(TERMINAL_PLANS + 2)
    markdown = render_markdown(result)
    assert "## Planning" in markdown
    assert all(f"\\<b\\>x{i}\\</b\\>" in markdown for i in range(TERMINAL_PLANS + 2))
    page = render_html(result)
    assert '<section id="planning">' in page and 'href="#planning"' in page
    assert "&lt;b&gt;x7&lt;/b&gt;" in page and "<b>x7</b>" not in page


def test_the_terminal_shows_the_first_plans_and_counts_the_rest(result: EvalResult) -> None:
    result.planning = plans(TERMINAL_PLANS + 2)
    text = terminal(result)
    assert "planning: Questions needed" in text
    assert f"<b>x{TERMINAL_PLANS - 1}</b>" in text and f"<b>x{TERMINAL_PLANS}</b>" not in text
    assert "(2 more in report.md)" in text
    summary = terminal(result, verbose=False)  # the one-screen summary leaves the plans to --verbose and the reports
    assert "<b>x0</b>" not in summary
