"""What the intervals count, in every report: the clustering, a repeated run's own variance, the judge asked again;
and the verdict's caveats for few clusters and for judge noise as large as the lead."""

from __future__ import annotations

from pathlib import Path

from rich.console import Console

from assay.report import render_terminal, write_report
from assay.report._statistics import noise_lines
from assay.report.caveats import Facts, judge_noise
from assay.report.verdict import build_verdict
from assay.results import Clustering, EvalResult, JudgeNoise, QueryResult, RepeatSummary, VarianceSplit


def noisy(result: EvalResult) -> EvalResult:
    metric = build_verdict(result).metric
    assert metric is not None
    result.clustering = Clustering(by="doc", questions=40, clusters=8, mean_size=5.0, max_size=9, design_effect=2.5,
                                   method="flips", note="Only 8 documents hold the 40 questions: wide.")  # fmt: skip
    first = result.runs[0]
    first.repeats = RepeatSummary(repeats=3, metrics={metric: VarianceSplit(between=0.03, within=0.01,
                                  within_share=0.25, questions=40)}, spread={metric: 0.012})  # fmt: skip
    verdict = build_verdict(result)
    assert verdict.lead is not None
    pair = f"{verdict.lead.leader} - {verdict.lead.other}"
    result.judge_noise = JudgeNoise(repeats=2, labels=120, eligible=240, coverage=0.5, changed=0.15, metric=metric,
                                    sd={first.name: 0.01}, sd_delta={pair: abs(verdict.lead.delta) + 0.01})  # fmt: skip
    return result


def test_the_sentences_say_what_was_counted(result: EvalResult) -> None:
    result = noisy(result)
    metric = build_verdict(result).metric
    lines = noise_lines(result, metric)
    assert lines[0].startswith("Questions clustered by source document: 40 questions in 8 clusters")
    assert f"design effect 2.50 on {metric}, so they weigh as about 16 independent questions" in lines[0]
    assert "Only 8 documents" in lines[0]
    assert f"{result.runs[0].name} was asked every question 3 times" in lines[1] and "25% of the" in lines[1]
    assert "changed 15% of its grades" in lines[2] and "(50% of them)" in lines[2] and "lower bound" in lines[2]


def test_every_report_carries_them_and_the_verdict_warns(
    result: EvalResult, rows: list[QueryResult], tmp_path: Path
) -> None:
    result = noisy(result)
    caveats = build_verdict(result).caveats
    assert any("Only 8 documents" in c for c in caveats)
    verdict = build_verdict(result)
    facts = Facts(result, verdict.metric, [c for c in result.comparisons if c.metric == verdict.metric], verdict.lead)
    noise = judge_noise(facts)  # the caveat itself, as the verdict words it
    assert noise is not None and noise.startswith("The judge's own noise moves the lead's delta by sd")
    assert noise in verdict.caveats  # every caveat that applies is kept
    write_report(result, tmp_path, rows)
    markdown = (tmp_path / "report.md").read_text()
    assert "## What the intervals count" in markdown and "40 questions in 8 clusters" in markdown
    assert '<section id="noise">' in (tmp_path / "report.html").read_text()
    console = Console(record=True, width=80)
    render_terminal(result, console)
    summary = console.export_text()
    assert "Intervals count 8 clusters of questions, design effect 2.50; 1 run(s) asked repeatedly" in " ".join(
        summary.split()
    )
    console = Console(record=True, width=120)
    render_terminal(result, console, verbose=True)
    assert "changed 15% of its grades" in " ".join(console.export_text().split())


def test_nothing_said_without_clusters_repeats_or_judge_noise(result: EvalResult) -> None:
    result.clustering = Clustering(by="doc", questions=12, clusters=12, mean_size=1.0, max_size=1)
    assert noise_lines(result, "ndcg@10") == []
