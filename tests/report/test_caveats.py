"""No caveat lost: the verdict keeps every caveat that applies, most severe first; the terminal prints the first few
(the unscored share always among them) and says how many more the report holds; Markdown, HTML and results.json
hold all.

The result is the committed fixture grown to seven runs, with every caveat made to apply by hand: the offline judge,
unscored questions, few clusters, a lead the evidence does not support (d_z 0.2 over 24 questions), a judge noisier
than the lead, runs cut differently."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from markupsafe import escape
from rich.console import Console

from assay.report import render_markdown, render_terminal, write_report
from assay.report.caveats import first_caveats
from assay.report.terminal import TERMINAL_CAVEATS
from assay.report.verdict import build_verdict
from assay.results import Clustering, EvalResult, JudgeNoise, MetricSummary, QueryResult

# unscored questions of 50 per run, in the runs' order: 28%, 10%, 6%, 4%, 2%, none, none
UNSCORED = (14, 5, 3, 2, 1, 0, 0)
NOTE = "Only 8 documents hold the 50 questions: the intervals are wide."


def seven_runs(result: EvalResult) -> EvalResult:
    """The fixture's three runs and four copies of the first (``c1`` ... ``c4``), every caveat applying."""
    copies = [result.runs[0].model_copy(deep=True, update={"name": f"c{i}"}) for i in range(1, 5)]
    result.runs = [*result.runs, *copies]
    for run, unscored in zip(result.runs, UNSCORED, strict=True):
        summary = run.metrics["ndcg@10"]
        run.metrics["ndcg@10"] = summary.model_copy(update={"n_scored": 50 - unscored, "n_unscored": unscored})
    result.judge, result.cut_alike = "offline", False
    result.clustering = Clustering(by="doc", questions=50, clusters=8, mean_size=6.25, max_size=11, note=NOTE)
    for comp in result.comparisons:
        if comp.metric == "ndcg@10":  # no lead is supported, and a difference of d_z 0.2 needs 197 questions
            comp.significant, comp.d_z = False, 0.2 if comp.delta > 0 else -0.2
    lead = build_verdict(result).lead
    assert lead is not None and not lead.supported
    pair = f"{lead.leader} - {lead.other}"
    result.judge_noise = JudgeNoise(repeats=2, labels=100, eligible=100, coverage=1.0, changed=0.2, metric="ndcg@10",
                                    sd_delta={pair: abs(lead.delta)})  # fmt: skip
    return result


SHARE = ("Unscored on ndcg@10 (left out of the means, never counted as 0): bm25 28%, dense 10%, hybrid & rerank 6%, "
         "c1 4% and 1 more run at 2% or less.")  # fmt: skip
STARTS = ("The judge is the offline lexical baseline", SHARE, NOTE, "Too few questions for a difference this small",
          "The judge's own noise moves the lead's delta", "The runs cut their text differently")  # fmt: skip


def test_every_caveat_is_kept_most_severe_first(result: EvalResult) -> None:
    caveats = build_verdict(seven_runs(result)).caveats
    assert len(caveats) == len(STARTS)
    assert all(line.startswith(start) for line, start in zip(caveats, STARTS, strict=True)), caveats
    assert "needs about 197 questions to show at 80% power; there are 24" in caveats[3]


def _terminal(result: EvalResult, report: Path | None, *, verbose: bool = False) -> str:
    console = Console(record=True, width=100, force_terminal=False, color_system=None)
    render_terminal(result, console, report=report, verbose=verbose)
    return " ".join(console.export_text().split())


def test_the_terminal_prints_the_first_three_and_counts_the_rest_where_they_are(
    result: EvalResult, rows: list[QueryResult], tmp_path: Path
) -> None:
    result = seven_runs(result)
    paths = write_report(result, tmp_path, rows)
    caveats = build_verdict(result).caveats
    text = _terminal(result, paths["report.html"])
    assert TERMINAL_CAVEATS == 3 and [line in text for line in caveats] == [True] * 3 + [False] * 3
    assert SHARE in text and f"! 3 more caveats in {tmp_path / 'report.html'}" in text
    assert "3 more caveats in report.html and results.json" in _terminal(result, None)  # no report written
    verbose = _terminal(result, None, verbose=True)
    assert all(line in verbose for line in caveats) and "more caveats" not in verbose
    markdown = (tmp_path / "report.md").read_text()
    assert all(line in " ".join(markdown.split()) for line in caveats) and render_markdown(result) == markdown
    assert json.loads((tmp_path / "results.json").read_text())["verdict"]["caveats"] == caveats
    page = (tmp_path / "report.html").read_text()
    assert all(f"<li>{escape(line)}</li>" in page for line in caveats)


def test_one_unscored_question_is_said_and_equal_shares_are_said_once(result: EvalResult) -> None:
    primary = result.runs[1].metrics["ndcg@10"]
    result.runs[1].metrics["ndcg@10"] = primary.model_copy(update={"n_scored": 539, "n_unscored": 1})
    said = [c for c in build_verdict(result).caveats if c.startswith("Unscored")]
    assert said == ["Unscored on ndcg@10 (left out of the means, never counted as 0): dense <1%."]
    for run in result.runs:  # 28% of every run's questions, as in the seven runs
        run.metrics["ndcg@10"] = MetricSummary(mean=0.5, n_scored=36, n_unscored=14)
    said = [c for c in build_verdict(result).caveats if c.startswith("Unscored")]
    assert said == ["Unscored on ndcg@10 (left out of the means, never counted as 0): all 3 runs 28%."]


U = "Unscored on m: a 5%."


@pytest.mark.parametrize(
    ("caveats", "room", "shown", "left"),
    [
        (["a", "b", "c"], 4, ["a", "b", "c"], 0),  # 1. all fit
        (["a", U, "c", "d", "e", "f"], 4, ["a", U, "c", "d"], 2),  # 1. the unscored share is among the first
        (["a", "b", "c", "d", "e", U], 4, ["a", "b", "c", U], 2),  # 2. past the cut, it takes the last place
        (["a", "b", U], 1, [U], 2),  # 2. with room for one, it is the one
        (["a", "b", "c"], 2, ["a", "b"], 1),  # 3. no unscored share: the first ones
    ],
)
def test_first_caveats_step_by_step(caveats: list[str], room: int, shown: list[str], left: int) -> None:
    assert first_caveats(caveats, room) == (shown, left)


def test_no_room_for_caveats_is_refused() -> None:
    with pytest.raises(ValueError, match="1 or more"):
        first_caveats(["a"], 0)
