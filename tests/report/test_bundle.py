"""write_report: the four files, machine-readable round trips, and nothing half-written."""

from __future__ import annotations

from pathlib import Path

import pytest

from assay.formats.jsonl import read_header, read_jsonl
from assay.report import REPORT_FILES, bundle, write_report
from assay.report.verdict import build_verdict
from assay.results import EvalResult, QueryResult


def test_writes_four_files_that_round_trip(tmp_path: Path, result: EvalResult, rows: list[QueryResult]) -> None:
    paths = write_report(result, tmp_path / "report", rows)
    assert sorted(paths) == sorted(REPORT_FILES)
    assert all(p.parent == tmp_path / "report" and p.stat().st_mode & 0o777 == 0o644 for p in paths.values())
    written = EvalResult.model_validate_json(paths["results.json"].read_text(encoding="utf-8"))
    assert written == result.model_copy(update={"verdict": build_verdict(result)})  # the verdict, for machines too
    assert written.verdict is not None and written.verdict.lead is not None and written.verdict.lead.leader
    assert list(read_jsonl(paths["per_query.jsonl"], QueryResult, "per_query")) == rows
    header = read_header(paths["per_query.jsonl"])
    assert header is not None and header.assay == "per_query" and header.assay_version == "0.1.0"
    assert paths["report.md"].read_text(encoding="utf-8").startswith("# assay evaluation report")
    assert "<svg" in paths["report.html"].read_text(encoding="utf-8")


def test_a_failure_leaves_the_previous_report(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, result: EvalResult, rows: list[QueryResult]
) -> None:
    monkeypatch.setattr(
        bundle, "render_html", lambda r, q, questions: f"<p>{len(q)} rows</p>"
    )  # plots are tested elsewhere
    out = tmp_path / "report"
    write_report(result, out, rows)
    before = {p.name: p.read_bytes() for p in out.iterdir()}

    def broken(_: EvalResult) -> str:
        raise RuntimeError("renderer failed")

    monkeypatch.setattr(bundle, "render_markdown", broken)
    result.runs[0].name = "changed"
    with pytest.raises(RuntimeError):
        write_report(result, out, rows)
    assert {p.name: p.read_bytes() for p in out.iterdir()} == before  # no temporary files, nothing changed


def test_a_failure_on_a_fresh_folder_writes_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, result: EvalResult, rows: list[QueryResult]
) -> None:
    def broken(_: EvalResult) -> str:
        raise RuntimeError("renderer failed")

    monkeypatch.setattr(bundle, "render_html", lambda r, q, questions: "<p>html</p>")
    monkeypatch.setattr(bundle, "render_markdown", broken)
    with pytest.raises(RuntimeError):
        write_report(result, tmp_path / "report", rows)
    assert not (tmp_path / "report").exists() or not any((tmp_path / "report").iterdir())
