"""The terminal summary and the verdict, on real evaluations of the demo golden set (offline judge): four runs, one
of which cuts its text differently, and one run alone."""

from __future__ import annotations

import re

import pytest
from rich.console import Console

from assay.pipelines.evaluate import Evaluated
from assay.report import render_markdown, render_terminal
from assay.report._format import headline_metrics
from assay.report.caveats import first_caveats
from assay.report.terminal import TERMINAL_CAVEATS
from assay.report.verdict import build_verdict
from assay.results import EvalResult, SystemSummary, summary_metrics

NUMBER = re.compile(r"^[+-]?\d\.\d{3}\*?$|^—$|^n/a$")


def _render(result: EvalResult, width: int, *, verbose: bool = False) -> list[str]:
    console = Console(record=True, width=width, force_terminal=False, color_system=None)
    render_terminal(result, console, verbose=verbose)
    return console.export_text().splitlines()


def test_four_runs_fit_sixty_lines_at_80_columns_with_the_verdict_first(demo_evaluated: Evaluated) -> None:
    result = demo_evaluated.result
    lines = _render(result, 80)
    assert len(lines) <= 60 and max(len(line) for line in lines) <= 80
    verdict = build_verdict(result)
    start = lines.index("Verdict")
    assert start < 15 and lines[start + 1].startswith(f"• {verdict.lead.leader} leads on {verdict.metric}")
    text = " ".join(" ".join(lines).split())
    shown, left = first_caveats(verdict.caveats, TERMINAL_CAVEATS)
    for sentence in [*verdict.lines, *shown]:  # the verdict, each sentence once, and the caveats that fit
        assert text.count(sentence) == 1, sentence
    assert (f"{left} more caveat" in text) == (left > 0)
    assert "report.html" in lines[-1] and "--verbose" in lines[-1]


@pytest.mark.parametrize("width", [80, 120])
def test_no_table_row_wraps(demo_evaluated: Evaluated, width: int) -> None:
    result = demo_evaluated.result
    lines = _render(result, width)
    names = [run.name for run in result.runs]
    header = next(line for line in lines if line.startswith("metric ") and "bm25" in line)
    assert header.split()[1:] == names  # every run's column, on one line
    shown = summary_metrics(headline_metrics(result), build_verdict(result).metric)
    assert len(shown) >= 5 and shown[0] == result.primary_metric == "ndcg@1000t"
    rows = {line.split()[0]: line.split()[1:] for line in lines if line.split() and line.split()[0] in shown}
    pairs = next(line for line in lines if line.startswith("metric ") and "−" in line).split()[1:]
    for name in shown:  # a metric row, then (when compared) a comparison row: each on one line with every cell
        cells = [line.split()[1:] for line in lines if line.split()[:1] == [name]]
        assert [len(cells[0])] + [len(c) for c in cells[1:]] in ([len(names)], [len(names), len(pairs)]), name
        assert all(NUMBER.match(cell) for row in cells for cell in row), (name, cells)
    assert rows  # the rows were found
    compared = {c.metric for c in result.comparisons}
    assert all(any(line.split()[:1] == [m] for line in lines[lines.index(next(x for x in lines if "−" in x)) :])
               for m in shown if m in compared)  # fmt: skip


def test_the_verdict_says_lead_ranking_trust_and_caveats(demo_evaluated: Evaluated) -> None:
    verdict = build_verdict(demo_evaluated.result)
    lead = verdict.lead
    best = max(demo_evaluated.result.runs, key=lambda run: run.metrics[verdict.metric].mean or 0.0)
    assert lead is not None and lead.leader == verdict.places[0].run == best.name
    assert lead.supported == (lead.low > 0)  # the interval excludes 0 in the leader's favour
    assert f"p adj. {lead.p_adjusted:.3f}, n = {lead.n} questions" in verdict.headline
    assert ("the evidence supports the lead" in verdict.headline) == lead.supported
    ranking = verdict.ranking or ""
    assert ranking.startswith(f"Ranking on ndcg@1000t: {best.name}")
    weak = next(run for run in demo_evaluated.result.runs if run.name == "weak").metrics["ndcg@1000t"].mean
    assert f"weak {weak:.3f} (b);" in ranking  # the one run reliably worse than the others
    places = {p.run: p for p in verdict.places}
    assert places["bm25"].groups == places["halves"].groups == "a"  # the same text: not reliably different
    for c in (c for c in demo_evaluated.result.comparisons if c.metric == verdict.metric):
        a, b = places[c.a], places[c.b]
        assert bool(set(a.groups) & set(b.groups)) != c.significant and (a.place == b.place) <= (not c.significant)
        assert f"{a.run} {a.mean:.3f} ({a.groups})" in ranking
    assert "runs that share a letter are not reliably different" in ranking
    assert "unmeasured" in verdict.judge and "assay judge-check --judge offline --labels" in verdict.judge
    assert verdict.caveats[0].startswith("The judge is the offline lexical baseline")
    assert any("cut their text differently" in c for c in verdict.caveats)
    assert all(c.endswith(".") and c.count(". ") == 0 for c in verdict.caveats)  # one sentence each


def test_one_run_states_its_figure_with_no_comparison(demo_one_run: Evaluated) -> None:
    result = demo_one_run.result
    verdict = build_verdict(result)
    ndcg = result.runs[0].metrics["ndcg@10"]
    assert verdict.metric == "ndcg@10" and verdict.lead is None and verdict.ranking is None
    assert verdict.headline.startswith(f"hybrid: ndcg@10 {ndcg.mean:.3f} [{ndcg.low:.3f}, {ndcg.high:.3f}]")
    assert "no comparison" in verdict.headline
    lines = _render(result, 80)
    assert not any(line.startswith("Comparisons") for line in lines) and len(lines) <= 40
    assert "## Verdict" in render_markdown(result).split("## Settings")[0]


def test_verbose_prints_the_full_tables_after_the_verdict(demo_evaluated: Evaluated) -> None:
    lines = _render(demo_evaluated.result, 100, verbose=True)
    assert lines.index("Verdict") < 5
    assert len(lines) > 200 and any(line.startswith("ndcg@5 ") for line in lines) is False
    assert sum(line.startswith("ndcg@10 ") for line in lines) >= 4  # one table per run


def test_cost_latency_and_unscored_caveat_when_known(result: EvalResult) -> None:
    """The committed fixture with a system recorded for one run, and many unscored questions in another."""
    result.runs[0].system = SystemSummary(lines=24, latency_ms={"p50": 820.0, "p95": 1400.0}, cost_usd=0.0123)
    verdict = build_verdict(result)
    assert verdict.cost == f"Cost and latency: {result.runs[0].name} $0.0123, p50 820 ms, p95 1,400 ms."
    assert verdict.systems[0].p95_ms == 1400.0 and len(verdict.systems) == 1
    primary = result.runs[1].metrics["ndcg@10"]
    primary.n_unscored, primary.n_scored = 6, 18
    caveats = [c for c in build_verdict(result).caveats if c.startswith("Unscored")]
    assert caveats == [f"Unscored on ndcg@10 (left out of the means, never counted as 0): {result.runs[1].name} 25%."]
