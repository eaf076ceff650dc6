"""No report prints a verdict that its own interval contradicts: significant <=> the printed interval excludes 0.

Comparisons come from the evaluator's own comparison stage on simulated per-query scores (four runs, effects from
none to large, so each family holds significant and non-significant pairs and some near the threshold), for each
correction; then the terminal, Markdown and HTML reports are parsed back row by row.
"""

from __future__ import annotations

import html
import re

import numpy as np
import pytest
from rich.console import Console

from assay.pipelines.evaluate.statistics.compare import compare_runs
from assay.pipelines.evaluate.statistics.stats import StatSettings
from assay.report import render_terminal
from assay.report.html import render_html
from assay.report.markdown import render_markdown
from assay.results import EvalResult, MetricSummary, QueryResult, RunResult

INTERVAL = re.compile(r"([+-]\d+\.\d+) \[(-?[\d.e+-]+), (-?[\d.e+-]+)\]")
EFFECTS = {"base": 0.0, "same": 0.0, "small": 0.06, "large": 0.2}


def _result(correction: str, seed: int, baseline: str | None) -> EvalResult:
    rng = np.random.default_rng(seed)
    n = 30
    query = rng.normal(0.5, 0.15, size=n)  # per-query difficulty shared by the runs
    per_run = {}
    for run, effect in EFFECTS.items():
        ndcg = np.clip(query + effect + rng.normal(0, 0.12, size=n), 0, 1)
        mrr = np.clip(ndcg + rng.normal(0, 0.05, size=n), 0, 1)
        per_run[run] = {
            f"q{i}": QueryResult(run=run, query_id=f"q{i}", metrics={"ndcg@10": float(a), "mrr": float(b)})
            for i, (a, b) in enumerate(zip(ndcg, mrr, strict=True))
        }
    settings = StatSettings(correction=correction, baseline=baseline, seed=seed, n_perm=2000)
    comparisons = compare_runs(per_run, ["ndcg@10", "mrr"], settings)
    return EvalResult(
        assay_version="test", golden="g", judge=None, k_values=[10], settings={"baseline": baseline},
        runs=[RunResult(name=run, path=f"{run}.jsonl", metrics=_means(per_run[run])) for run in EFFECTS],
        comparisons=comparisons,
        primary_metric="ndcg@10",
    )  # fmt: skip


def _means(rows: dict[str, QueryResult]) -> dict[str, MetricSummary]:
    """Each metric's mean over the queries (the verdict ranks the runs by it)."""
    means = {m: float(np.mean([r.metrics[m] for r in rows.values()])) for m in ("ndcg@10", "mrr")}
    return {m: MetricSummary(mean=mean, n_scored=len(rows)) for m, mean in means.items()}


def _excludes_zero(match: re.Match[str]) -> bool:
    low, high = float(match[2]), float(match[3])
    return low > 0 or high < 0


CASES = [(c, s, b) for c in ("holm", "tukey", "none") for s in (0, 1) for b in (None, "base")]


@pytest.mark.parametrize(("correction", "seed", "baseline"), CASES)
def test_every_report_row_agrees_with_its_interval(correction: str, seed: int, baseline: str | None) -> None:
    result = _result(correction, seed, baseline)
    comps = result.comparisons
    assert {c.significant for c in comps} == {True, False}  # both kinds of verdict are exercised
    for c in comps:
        assert c.significant == (c.low > 0 or c.high < 0) == (c.p_adjusted <= 0.05)
        assert c.low <= c.delta <= c.high
    checked = {"markdown": 0, "html": 0, "terminal": 0}
    for line in render_markdown(result).splitlines():
        found = INTERVAL.search(line)
        if found and " vs " in line:
            verdict = line.rsplit("|", 2)[-2]
            assert (" beats " in verdict) == _excludes_zero(found) != verdict.strip().startswith("no significant")
            checked["markdown"] += 1
    page = render_html(result, [])
    for row in re.findall(r"<tr><td>[^<]* vs [^<]*</td>.*?</tr>", page):
        found = INTERVAL.search(html.unescape(row))
        verdict = html.unescape(re.findall(r"<td>([^<]*)</td></tr>$", row)[0])
        assert found is not None and (" beats " in verdict) == _excludes_zero(found)
        checked["html"] += 1
    console = Console(width=240, record=True, color_system=None)
    render_terminal(result, console, verbose=True)
    text = console.export_text()
    for line in text.splitlines():  # secondary metrics: one row per comparison with its short verdict
        found = INTERVAL.search(line)
        if found and ("better" in line or "no reliable difference" in line):
            assert ("better" in line) == _excludes_zero(found)
            checked["terminal"] += 1
    lead = " ".join(text[text.index("• ") : text.index("• Ranking")].split())  # the verdict: the lead's interval
    found = re.search(r"over \w+ \(p adj", lead) and re.findall(r"\[(-?[\d.e+-]+), (-?[\d.e+-]+)\]", lead)[-1]
    assert found and ("the evidence supports the lead" in lead) == (float(found[0]) > 0 or float(found[1]) < 0)
    text = text[text.index("paired randomization test") :]
    for bullet in re.findall(r"• (.*?)(?=\n\s*\n|•)", text, re.S):  # primary metric: the verdict sentences
        sentence = " ".join(bullet.split())
        found = re.search(r"\[(-?[\d.e+-]+), (-?[\d.e+-]+)\]", sentence)
        assert found is not None
        low, high = float(found[1]), float(found[2])
        assert (" beats " in sentence) == (low > 0 or high < 0) != sentence.startswith("no significant")
        checked["terminal"] += 1
    assert checked == {"markdown": len(comps), "html": len(comps), "terminal": len(comps)}
