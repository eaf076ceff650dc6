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


def test_criteria_and_pairwise_tables_are_written_neutralized_and_never_left_stale(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, result: EvalResult, rows: list[QueryResult]
) -> None:
    import csv
    import io

    from assay.results import (
        CriterionVerdictRecord,
        CriterionVote,
        OrderVerdict,
        PairJudgement,
        Preferences,
        TreeStepAnswer,
    )

    monkeypatch.setattr(bundle, "render_html", lambda r, q, questions: "<p>page</p>")
    walk = [TreeStepAnswer(id="q1", question="days?", answer="yes", reason="14")]
    verdicts = [
        CriterionVerdictRecord(run="bm25", query_id="q1", criterion="tone", ref="tone@1", item="abc", label="good",
                               score=1.0, votes=[CriterionVote(model="m1", label="good", reason="=SUM(A1)",
                                                               steps=walk)]),
        CriterionVerdictRecord(run="bm25", query_id="q2", criterion="tone", ref="tone@1", item="def",
                               unscored="invalid_output", votes=[CriterionVote(model="m1", unscored="invalid_output")]),
    ]  # fmt: skip
    judgement = PairJudgement(query_id="q1", run_a="bm25", run_b="dense", winner="tie", orders=[
        OrderVerdict(shown_first="dense", preferred="A", winner="dense", reason="+more detail"),
        OrderVerdict(shown_first="bm25", preferred="A", winner="bm25", reason="shorter"),
    ])  # fmt: skip
    preferences = Preferences(criterion="builtin", ref="builtin", ties="half", confidence=0.95, pair_confidence=0.95,
                              questions=1, clusters=1, judgements=[judgement])  # fmt: skip
    out = tmp_path / "report"
    paths = write_report(result.model_copy(update={"criterion_verdicts": verdicts, "preferences": preferences}), out,
                         rows)  # fmt: skip
    assert {"criteria.csv", "pairwise.csv"} <= set(paths)
    criteria = list(csv.DictReader(io.StringIO(paths["criteria.csv"].read_text(encoding="utf-8"))))
    assert [(r["query_id"], r["label"], r["score"], r["unscored"], r["item"]) for r in criteria] == [
        ("q1", "good", "1.0", "", "abc"), ("q2", "", "", "invalid_output", "def")]  # fmt: skip
    assert criteria[0]["votes"] == "m1: good [q1=yes] (=SUM(A1))"  # inside the cell, so no formula
    assert criteria[1]["votes"] == "m1: unscored: invalid_output"
    [pair] = list(csv.DictReader(io.StringIO(paths["pairwise.csv"].read_text(encoding="utf-8"))))
    # each order under the run shown first: bm25 first chose bm25, dense first chose dense: a tie
    assert (pair["winner"], pair["a_first_winner"], pair["b_first_winner"]) == ("tie", "bm25", "dense")
    assert (pair["a_first_reason"], pair["b_first_reason"]) == ("shorter", "'+more detail")  # a formula, neutralized
    write_report(result, out, rows)  # an evaluation without either: the old tables go
    assert not (out / "criteria.csv").exists() and not (out / "pairwise.csv").exists()
