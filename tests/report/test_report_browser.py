"""report.html in headless Chromium: plots render, no console errors, the per-query table sorts and filters."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from browser_page import opened_report

pytestmark = pytest.mark.browser


@pytest.fixture(scope="module")
def report_file(tmp_path_factory: pytest.TempPathFactory, fixture_html: str) -> Path:
    path = tmp_path_factory.mktemp("browser") / "report.html"
    path.write_text(fixture_html, encoding="utf-8")
    return path


@pytest.fixture
def page(browser: Any, report_file: Path) -> Iterator[Any]:
    with opened_report(browser, report_file) as opened:
        yield opened


def _column(page: Any, header: str) -> list[str]:
    index = page.eval_on_selector_all("#q-table thead th", "(hs, h) => hs.findIndex(x => x.textContent === h)", header)
    assert index >= 0, header
    return page.eval_on_selector_all(
        "#q-table tbody tr:not([hidden])", "(rows, i) => rows.map(r => r.cells[i].getAttribute('data-v'))", index
    )


def test_plots_render_without_errors(page: Any, tmp_path: Path) -> None:
    boxes = page.eval_on_selector_all("svg.plot", "els => els.map(e => e.getBoundingClientRect().width)")
    assert len(boxes) == 6 and all(width > 300 for width in boxes)
    page.click("details.lazy-plot summary >> nth=0")  # a folded plot: decompressed and drawn when opened
    page.wait_for_selector("details.lazy-plot svg.plot")
    assert page.eval_on_selector("details.lazy-plot svg.plot", "e => e.getBoundingClientRect().width") > 300
    texts = page.eval_on_selector_all("svg.plot text", "els => els.length")
    assert texts > 50  # axis labels and legends drawn as text
    page.screenshot(path=str(tmp_path / "report.png"), full_page=True)
    assert page.problems == []


def test_table_sorts_numerically_with_unscored_last(page: Any) -> None:
    page.click("#q-table thead th:text-is('faithfulness')")
    values = _column(page, "faithfulness")
    numbers = [float(v) for v in values if v != ""]
    assert numbers == sorted(numbers) and values[len(numbers) :] == [""] * (len(values) - len(numbers))
    assert "" in values  # the fixture has unscored faithfulness values, and they sort last
    page.click("#q-table thead th:text-is('faithfulness')")
    values = _column(page, "faithfulness")
    numbers = [float(v) for v in values if v != ""]
    assert numbers == sorted(numbers, reverse=True) and values[-1] == ""
    assert page.get_attribute("#q-table thead th:text-is('faithfulness')", "aria-sort") == "descending"
    unscored = page.eval_on_selector_all("#q-table td.unscored", "els => els.map(e => [e.textContent, e.title])")
    assert unscored and all(text == "unscored" and title for text, title in unscored)
    assert page.problems == []


def test_filter_box_and_escaped_query_id(page: Any) -> None:
    page.fill("#q-filter", "<script>")
    assert page.text_content("#q-count") == "3 of 72 rows"
    shown = _column(page, "query")
    assert shown == ["<script>alert(1)</script>"] * 3  # shown as text, never run
    page.fill("#q-filter", "hybrid")
    assert page.text_content("#q-count") == "24 of 72 rows"
    page.fill("#q-filter", "")
    assert page.text_content("#q-count") == "72 rows"
    assert page.problems == []


def test_agreement_section_renders_without_errors(page: Any) -> None:
    page.click("nav a[href='#agreement']")
    assert page.is_visible("#agreement-stats") and page.is_visible("#agreement-matrix")
    labels = page.eval_on_selector_all("#agreement-stats tbody td:first-child", "els => els.map(e => e.textContent)")
    assert labels[:2] == ["percent agreement", "Cohen's kappa"] and len(labels) == 6
    matrix = page.eval_on_selector_all(
        "#agreement-matrix tbody tr", "rows => rows.map(r => Array.from(r.cells).map(c => c.textContent))"
    )
    assert len(matrix) == 5 and all(len(row) == 6 for row in matrix)  # grades 0-3 + totals, both ways
    assert sum(int(v) for row in matrix[:4] for v in row[1:5]) == 60
    svg = page.eval_on_selector(
        "#agreement svg.plot", "e => [e.getBoundingClientRect().width, e.querySelectorAll('text').length]"
    )
    assert svg[0] > 300 and svg[1] > 5
    strata = page.eval_on_selector_all(".agreement-strata tbody td:first-child", "els => els.map(e => e.textContent)")
    assert "<img src=x onerror=alert(1)>" in strata  # shown as text, never an element
    assert page.eval_on_selector_all("#agreement img", "els => els.length") == 0
    assert page.problems == []
