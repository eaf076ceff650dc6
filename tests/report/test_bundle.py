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
    walk = [TreeStepAnswer(id="q1", question="days?", answer="yes", reason="14"),
            TreeStepAnswer(id="q2", question="named?", answer="no", reason="")]  # fmt: skip
    verdicts = [
        CriterionVerdictRecord(run="-base", query_id="q1", criterion="tone", ref="tone@1", item="abc", label="good",
                               score=1.0, votes=[CriterionVote(model="m1", label="good", reason="=SUM(A1)",
                                                               steps=walk),
                                                 CriterionVote(model="m2", label="good", reason="ok")]),
        CriterionVerdictRecord(run="-base", query_id="q2", criterion="tone", ref="tone@1", item="def",
                               unscored="invalid_output", votes=[CriterionVote(model="m1", unscored="invalid_output")]),
    ]  # fmt: skip
    judgement = PairJudgement(query_id="q1", run_a="bm25", run_b="dense", winner="tie", orders=[
        OrderVerdict(shown_first="dense", preferred="A", winner="dense", reason="+more detail"),
        OrderVerdict(shown_first="bm25", preferred="A", winner="bm25", reason="shorter"),
    ])  # fmt: skip
    one_order = PairJudgement(query_id="q2", run_a="bm25", run_b="dense", unscored="backend_error", orders=[
        OrderVerdict(shown_first="bm25", unscored="backend_error"),
    ])  # fmt: skip
    preferences = Preferences(criterion="helpful", ref="helpful@1", ties="half", confidence=0.95,
                              pair_confidence=0.95, questions=2, clusters=2,
                              judgements=[judgement, one_order])  # fmt: skip
    out = tmp_path / "report"
    paths = write_report(result.model_copy(update={"criterion_verdicts": verdicts, "preferences": preferences}), out,
                         rows)  # fmt: skip
    assert {"criteria.csv", "pairwise.csv"} <= set(paths)
    assert b"\r" not in paths["criteria.csv"].read_bytes()  # one line ending, as assay export --to csv
    text = paths["criteria.csv"].read_text(encoding="utf-8")
    criteria = list(csv.DictReader(io.StringIO(text)))
    assert criteria == [
        {"run": "-base", "query_id": "q1", "criterion": "tone", "ref": "tone@1", "label": "good", "score": "1.0",
         "unscored": "", "item": "abc", "votes": "m1: good [q1=yes; q2=no] (=SUM(A1)) | m2: good (ok)"},
        {"run": "-base", "query_id": "q2", "criterion": "tone", "ref": "tone@1", "label": "", "score": "",
         "unscored": "invalid_output", "item": "def", "votes": "m1: unscored: invalid_output"},
    ]  # an id is written as it is ('-base'); the votes cell starts with text, so no formula  # fmt: skip
    pairs = list(csv.DictReader(io.StringIO(paths["pairwise.csv"].read_text(encoding="utf-8"))))
    # each order under the run shown first: bm25 first chose bm25, dense first chose dense: a tie
    assert pairs[0] == {"query_id": "q1", "run_a": "bm25", "run_b": "dense", "criterion": "helpful",
                        "winner": "tie", "unscored": "", "a_first_preferred": "A", "a_first_winner": "bm25",
                        "a_first_reason": "shorter", "b_first_preferred": "A", "b_first_winner": "dense",
                        "b_first_reason": "'+more detail"}  # a formula, neutralized  # fmt: skip
    assert pairs[1] == {"query_id": "q2", "run_a": "bm25", "run_b": "dense", "criterion": "helpful", "winner": "",
                        "unscored": "backend_error", "a_first_preferred": "unscored: backend_error",
                        "a_first_winner": "", "a_first_reason": "", "b_first_preferred": "", "b_first_winner": "",
                        "b_first_reason": ""}  # the order never asked: empty  # fmt: skip
    write_report(result, out, rows)  # an evaluation without either: the old tables go
    assert not (out / "criteria.csv").exists() and not (out / "pairwise.csv").exists()
