"""report.html: content, escaping, no external resources, deterministic inline SVG plots."""

from __future__ import annotations

import base64
import gzip
import html
import json
import re
import subprocess
import sys
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

from report_fixture import XSS_QUERY

from assay.report import render_html, write_html
from assay.report._format import fmt_unscored
from assay.results import EvalResult, QueryResult, RunResult


class _Collector(HTMLParser):
    """Collects tags, URL-bearing attributes, inline styles and <style>/<script> text."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.tags: list[str] = []
        self.urls: list[str] = []
        self.styles: list[str] = []
        self.ids: list[str] = []
        self.scripts: list[dict[str, str | None]] = []
        self._in: str | None = None

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append(tag)
        found = dict(attrs)
        self.urls += [v or "" for k, v in attrs if k in {"src", "href", "xlink:href", "action", "srcset", "poster"}]
        self.styles += [v or "" for k, v in attrs if k == "style"]
        self.ids += [v or "" for k, v in attrs if k == "id"]
        if tag == "script":
            self.scripts.append(found)
        self._in = tag if tag in {"style", "script"} else None

    def handle_data(self, data: str) -> None:
        if self._in == "style":
            self.styles.append(data)


def lazy_block(page: str, name: str) -> Any:
    """A lazy data block of the page, decoded as the browser does: base64, gzip, JSON."""
    found = re.search(rf'<script type="application/octet-stream" id="{name}">([^<]*)</script>', page)
    assert found is not None, name
    return json.loads(gzip.decompress(base64.b64decode(found[1])))


def _parse(text: str) -> _Collector:
    parser = _Collector()
    parser.feed(text)
    return parser


def test_header_names_judge_golden_and_version(fixture_html: str) -> None:
    assert "judge <b>openai/gpt-4o-mini</b>" in fixture_html and "assay 0.1.0" in fixture_html
    assert "golden set <b>golden/demo</b>" in fixture_html


def test_every_mean_has_its_unscored_count_and_reasons(result: EvalResult, fixture_html: str) -> None:
    text = html.unescape(fixture_html)
    for run in result.runs:
        for name, summary in run.metrics.items():
            assert f'{summary.mean:.3f}</span> <span class="ci">[{summary.low:.3f}, {summary.high:.3f}]' in text
            note = fmt_unscored(summary) if summary.n_unscored else "0 unscored"
            assert note in text, (run.name, name)
        for values in run.strata.values():
            for summaries in values.values():
                for summary in summaries.values():
                    if summary.n_unscored:
                        assert fmt_unscored(summary) in text


def test_runs_comparisons_corrected_and_counts(result: EvalResult, fixture_html: str) -> None:
    text = html.unescape(fixture_html)
    for comp in result.comparisons:
        assert comp.verdict in text
    assert "hybrid & rerank vs bm25" in text
    assert "3 unknown chunk ids" in text and "52 labels judged now" in text and "judged@10 98%" in text
    assert "PPI++" in text and "40 of 200" in text
    queries = lazy_block(fixture_html, "data-queries")  # the per-query rows, loaded by the page on first use
    assert len(queries["rows"]) == 3 * 24 and [c[0] for c in queries["columns"][:2]] == ["run", "query"]


def test_data_is_escaped_everywhere(result: EvalResult, rows: list[QueryResult]) -> None:
    result.runs[1].name = XSS_QUERY  # also drawn into the SVG legends
    result.runs[1].strata["type"][XSS_QUERY] = result.runs[1].strata["type"]["factoid"]
    result.warnings.append('<img src=x onerror="alert(2)">')
    text = render_html(result, rows)
    assert "<script>alert" not in text and "<img" not in text
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in text
    scripts = _parse(text).scripts
    assert [s for s in scripts if s != {"type": "application/octet-stream", "id": s.get("id")}] == [{}]  # ours
    for block in re.findall(r'<script type="application/octet-stream" id="[^"]+">([^<]*)</script>', text):
        assert re.fullmatch(r"[A-Za-z0-9+/=]+", block)  # data only: base64, never markup


def test_no_external_resources(fixture_html: str) -> None:
    parsed = _parse(fixture_html)
    assert "link" not in parsed.tags and "iframe" not in parsed.tags and "img" not in parsed.tags
    external = re.compile(r"^\s*(https?:)?//", re.IGNORECASE)
    assert parsed.urls and all(not external.match(url) for url in parsed.urls)
    assert all(url.startswith("#") for url in parsed.urls)  # in-page anchors and SVG references only
    for style in parsed.styles:
        assert "url(" not in style.replace("url(#", "") and "@import" not in style


def test_svg_plots_present_scoped_and_deterministic(
    fixture_html: str, tmp_path: Path, result: EvalResult, rows: list[QueryResult]
) -> None:
    first = fixture_html
    path = tmp_path / "report.html"
    write_html(result, path, rows)  # a second render, in the same process, of the same result
    second = path.read_text(encoding="utf-8")
    assert re.findall(r"<svg.*?</svg>", first, re.S) == re.findall(r"<svg.*?</svg>", second, re.S)
    names = re.findall(r'<svg role="img" aria-label="([^"]+)"', first)
    assert names == [
        "comparison deltas with family-adjusted intervals",
        "per-question differences on ndcg@10 against bm25",
        "metric@k curves per run",
        "precision-recall curves",
        "grade histogram of retrieved chunks",
        "judge and human grade histograms of the audited items",
    ]
    folded = lazy_block(first, "data-lazy")  # the strata plots, drawn when their section is opened
    assert list(folded) == ["strata-0", "strata-1"] and all(svg.startswith("<svg role=") for svg in folded.values())
    assert "metrics by type" in folded["strata-0"] and "metrics by difficulty" in folded["strata-1"]
    ids = _parse(first).ids
    assert len(ids) == len(set(ids))  # several SVGs in one page, no id clash
    assert "<?xml" not in first and "DOCTYPE svg" not in first and "<metadata" not in first


def test_renders_without_per_query_rows_or_plottable_data() -> None:
    bare = EvalResult(assay_version="0.1.0", golden="g", judge=None, k_values=[], runs=[RunResult(name="r", path="r")])
    text = render_html(bare)
    assert "no judge: trec_eval convention" in text
    assert "<svg" not in text and "<script>" not in text and 'id="queries"' not in text
    assert "This result holds no curves or histograms." in text


def test_svgs_identical_across_processes(fixture_html: str, tmp_path: Path) -> None:
    out = tmp_path / "report.html"
    code = (
        "import sys; sys.path.insert(0, sys.argv[2]); from report_fixture import load; "
        "from assay.report import write_html; write_html(*load()[:1], sys.argv[1], load()[1])"
    )
    subprocess.run([sys.executable, "-c", code, str(out), str(Path(__file__).parent)], check=True)
    assert out.read_text(encoding="utf-8") == fixture_html
    assert out.stat().st_mode & 0o777 == 0o644


def test_matplotlib_is_imported_lazily() -> None:
    code = "import sys, assay.report; sys.exit('matplotlib' in sys.modules)"
    assert subprocess.run([sys.executable, "-c", code], check=False).returncode == 0
