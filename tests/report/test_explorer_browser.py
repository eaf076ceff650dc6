"""The decision document in headless Chromium, on a real evaluation of four runs over the demo golden set: the
verdict above the fold, the comparison matrix, and the per-question explorer (pick a question, see each run's
passages with their grades and how each got it, and links that open the label in ``assay audit``)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import quote

import pytest
from browser_page import opened_report

from assay.pipelines.evaluate import Evaluated
from assay.report import write_report
from assay.report.verdict import build_verdict

pytestmark = pytest.mark.browser


@pytest.fixture(scope="module")
def report(tmp_path_factory: pytest.TempPathFactory, demo_evaluated: Evaluated) -> Path:
    done = demo_evaluated
    out = tmp_path_factory.mktemp("decision")
    return write_report(done.result, out, done.per_query, done.questions)["report.html"]


@pytest.fixture
def page(browser: Any, report: Path) -> Iterator[Any]:
    with opened_report(browser, report) as opened:
        yield opened


def test_four_runs_stay_under_one_megabyte(report: Path) -> None:
    assert report.stat().st_size < 1_000_000


def test_the_verdict_is_above_the_fold(page: Any, demo_evaluated: Evaluated) -> None:
    box = page.eval_on_selector("#verdict", "e => { const r = e.getBoundingClientRect(); return [r.top, r.bottom]; }")
    assert box[0] > 0 and box[1] <= 900  # wholly within the first 900 px at 1280 px width
    verdict = " ".join(page.text_content("#verdict").split())
    leader = build_verdict(demo_evaluated.result).places[0].run
    assert f"{leader} leads on ndcg@1000t" in verdict and "Ranking on ndcg@1000t" in verdict
    first = page.eval_on_selector("main", "m => m.querySelector('section').id")
    assert first == "verdict"
    assert page.problems == []


def test_comparison_cells_open_their_sentence(page: Any, demo_evaluated: Evaluated) -> None:
    headers = page.eval_on_selector_all("#cmp-matrix thead th", "els => els.map(e => e.textContent)")
    assert headers[:2] == ["pair", "ndcg@1000t"]
    pairs = page.eval_on_selector_all("#cmp-matrix tbody td.pair", "els => els.map(e => e.textContent)")
    leader = build_verdict(demo_evaluated.result).places[0].run
    assert len(pairs) == 6 and all(leader in pair for pair in pairs[:3])  # the leader's pairs first
    cell = "#cmp-matrix tbody tr:first-child td:nth-child(2) details"
    assert not page.is_visible(f"{cell} p")
    page.click(f"{cell} summary")
    sentence = page.text_content(f"{cell} p")
    first = pairs[0].split(" − ")
    comp = next(c for c in demo_evaluated.result.comparisons if c.metric == "ndcg@1000t" and {c.a, c.b} == {*first})
    assert page.is_visible(f"{cell} p") and sentence == comp.verdict
    assert page.problems == []


def test_explorer_shows_each_runs_passages_grades_and_how(page: Any, demo_evaluated: Evaluated) -> None:
    page.click("nav a[href='#explorer']")
    page.wait_for_selector("#x-view[data-ready='1']")
    question = next(q for q in demo_evaluated.questions if len(q.runs) == 4 and any(
        p.how == "judged" for side in q.runs for p in side.passages))  # fmt: skip
    page.fill("#x-search", question.query_id)
    assert page.text_content("#x-count") == f"1 of {len(demo_evaluated.questions)} questions"
    page.wait_for_selector(f".x-question[data-query='{question.query_id}']")
    assert page.text_content(".x-question h3") == question.text
    runs = page.eval_on_selector_all(".x-run", "els => els.map(e => e.dataset.run)")
    assert runs == ["bm25", "hybrid", "weak", "halves"]
    for side in question.runs:
        card = f".x-run[data-run='{side.run}']"
        shown = page.eval_on_selector_all(
            f"{card} tr.x-passage", "rows => rows.map(r => [r.cells[0].textContent, r.dataset.grade, r.dataset.how])"
        )
        assert shown == [[str(p.rank), "" if p.grade is None else str(p.grade), p.how] for p in side.passages]
        assert side.answer is None or page.text_content(f"{card} .x-answer") == side.answer
    halves = ".x-run[data-run='halves'] tr.x-passage"
    hows = page.eval_on_selector_all(halves, "rows => rows.map(r => r.cells[2].textContent)")
    assert set(hows) <= {"carried over from labelled spans", "judged before", "judged now", "unlabelled"}
    link = page.get_attribute(f"{halves}[data-how='judged'] a", "href")
    unit = next(p.unit for side in question.runs if side.run == "halves" for p in side.passages if p.how == "judged")
    assert link == f"http://127.0.0.1:8765/#q={quote(question.query_id, safe='')}&c={quote(unit, safe='')}"
    page.fill("#x-search", "")
    page.select_option("#x-pick", index=2)
    page.wait_for_selector(f".x-question[data-query='{demo_evaluated.questions[2].query_id}']")
    metrics = page.text_content(".x-run[data-run='hybrid'] p.note")
    row = next(
        r for r in demo_evaluated.per_query if (r.run, r.query_id) == ("hybrid", demo_evaluated.questions[2].query_id)
    )
    assert f"ndcg@1000t {row.metrics['ndcg@1000t']:.3f}" in metrics or "ndcg@1000t unscored" in metrics
    assert page.problems == []
