"""`assay audit`, `assay agreement` and `assay labels` through click's runner, on a small golden folder."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import krippendorff
import numpy as np
import pytest
from click.testing import CliRunner

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "audit"))
from audit_fixtures import build_golden

import assay.cli.audit as audit_cli
from assay.audit.access import open_store
from assay.cli import main
from assay.formats.golden import GoldenSet
from assay.types import LabelEvent, Provenance


@pytest.fixture
def golden(tmp_path: Path) -> Path:
    return build_golden(tmp_path / "golden")


def grade(golden: Path, rows: list[tuple[str, str, int]], who: str = "ann") -> None:
    store, _ = open_store(golden)
    for qid, cid, g in rows:
        store.record(LabelEvent(query_id=qid, chunk_id=cid, grade=g, source="human", annotator=who))


# judge grades in the fixture: q1/cNN -> NN % 4 (q1/c05 unscored), q2/cNN -> (NN + 1) % 4
ANN = [("q1", "c00", 0), ("q1", "c01", 1), ("q1", "c02", 1), ("q1", "c03", 3), ("q1", "c04", 2), ("q1", "c05", 2)]
ANN += [("q2", "c00", 1)]


def run(*args: str) -> Any:
    return CliRunner().invoke(main, list(args), catch_exceptions=False)


def test_agreement_needs_audited_labels(golden: Path) -> None:
    result = run("agreement", str(golden))
    assert result.exit_code == 1
    assert f"audit some labels first with: assay audit {golden}" in result.output


def test_agreement_on_a_golden_set_without_judge_labels_says_there_is_nothing_to_compare(golden: Path) -> None:
    gold = GoldenSet.load(golden)
    gold.qrels = [label.model_copy(update={"provenance": Provenance(source="human")}) for label in gold.qrels]
    gold.save(golden, overwrite=True)
    result = run("agreement", str(golden))
    assert result.exit_code == 1 and "has no judge label, so there is nothing to compare with people" in result.output
    assert f"assay eval {golden} RUN --judge MODEL" in result.output


def test_agreement_json_against_hand_computed_values(golden: Path) -> None:
    grade(golden, ANN)
    result = run("agreement", str(golden), "--format", "json", "--resamples", "500", "--by", "type")
    assert result.exit_code == 0, result.output
    report = json.loads(result.output)
    overall = report["overall"]
    # scored pairs (judge, human): (0,0) (1,1) (2,1) (3,3) (0,2) (1,1); q1/c05 is unscored by the judge
    assert (overall["n"], overall["n_unscored"]) == (6, 1)
    assert overall["percent_agreement"]["value"] == pytest.approx(4 / 6, abs=1e-6)
    # p_o = 4/6; judge marginals 2,2,1,1 and human 1,3,1,1 over 6: p_e = (2+6+1+1)/36; kappa = 14/26
    assert overall["cohen_kappa"]["value"] == pytest.approx(14 / 26, abs=1e-6)
    assert overall["leniency"]["value"] == pytest.approx(-1 / 6, abs=1e-6)
    judge, human = [0, 1, 2, 3, 0, 1], [0, 1, 1, 3, 2, 1]
    expected_alpha = krippendorff.alpha(reliability_data=[judge, human], level_of_measurement="ordinal")
    assert overall["krippendorff_alpha"]["value"] == pytest.approx(expected_alpha, abs=1e-6)
    assert overall["confusion_matrix"] == [[1, 0, 1, 0], [0, 2, 0, 0], [0, 1, 0, 0], [0, 0, 0, 1]]
    assert overall["judge_histogram"] == [2, 2, 1, 1] and overall["human_histogram"] == [1, 3, 2, 1]
    low, high = overall["cohen_kappa"]["low"], overall["cohen_kappa"]["high"]
    assert low <= overall["cohen_kappa"]["value"] <= high
    assert {k: (v["n"], v["n_unscored"]) for k, v in report["strata"].items()} == {
        "comparison": (1, 0),
        "factoid": (5, 1),
    }
    assert report["between_humans"] is None


def test_agreement_between_three_annotators(golden: Path) -> None:
    items = [("q1", f"c{i:02d}") for i in range(8)]
    grades = {"ann": [0, 1, 2, 3, 0, 1, 2, 3], "bob": [0, 1, 2, 2, 0, 1, 3, 3], "cy": [1, 1, 2, 3, 0, 0, 2, 3]}
    for who, values in grades.items():
        grade(golden, [(q, c, g) for (q, c), g in zip(items, values, strict=True)], who)
    report = json.loads(run("agreement", str(golden), "--format", "json", "--resamples", "200").output)
    humans = report["between_humans"]
    expected = krippendorff.alpha(reliability_data=list(grades.values()), level_of_measurement="ordinal")
    assert humans["krippendorff_alpha"]["value"] == pytest.approx(expected, abs=1e-6)
    assert humans["fleiss_kappa"]["n"] == 8
    # judge vs people uses the lower median per item: c03 (3, 2, 3) -> 3, c06 (2, 3, 2) -> 2
    assert report["overall"]["human_histogram"] == list(np.bincount([0, 1, 2, 3, 0, 1, 2, 3], minlength=4))
    only_bob = json.loads(run("agreement", str(golden), "--annotator", "bob", "--format", "json").output)
    assert only_bob["annotators"] == ["bob"]


def test_agreement_table_and_unknown_stratum(golden: Path) -> None:
    grade(golden, ANN)
    table = run("agreement", str(golden), "--resamples", "200", "--by", "difficulty")
    assert table.exit_code == 0
    assert "Cohen's kappa" in table.output and "Per difficulty" in table.output
    bad = run("agreement", str(golden), "--by", "colour")
    assert bad.exit_code == 1 and "choose one of: difficulty, judge_grade, type" in bad.output


def test_labels_export_and_import_round_trip(golden: Path, tmp_path: Path) -> None:
    grade(golden, ANN[:3])
    out = tmp_path / "labels.csv"
    assert run("labels", "export", str(golden), "-o", str(out)).exit_code == 0
    events = tmp_path / "events.jsonl"
    exported = run("labels", "export", str(golden), "-o", str(events))
    assert "Wrote 28 label events" in exported.output
    fresh = build_golden(tmp_path / "fresh")
    imported = run("labels", "import", str(fresh), str(out))
    assert imported.exit_code == 0 and "Imported 3 labels" in imported.output
    store, _ = open_store(fresh)
    assert [(lab.item, lab.grade) for lab in store.current_labels(role="human")] == [
        (("q1", "c00"), 0),
        (("q1", "c01"), 1),
        (("q1", "c02"), 1),
    ]


def test_labels_import_names_bad_rows(golden: Path, tmp_path: Path) -> None:
    bad = tmp_path / "bad.csv"
    bad.write_text("query_id,chunk_id,grade,reason,annotator\nq1,c00,1,,ann\nq1,c01,seven,,ann\n")
    result = run("labels", "import", str(golden), str(bad))
    assert result.exit_code == 1
    assert f"{bad}:3: grade 'seven' is not 0, 1, 2 or 3" in result.output
    store, _ = open_store(golden)
    assert store.current_labels(role="human") == []


def test_audit_prints_url_and_warns_off_loopback(golden: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    served: list[Any] = []
    monkeypatch.setattr(audit_cli, "_serve", lambda app, sock: served.append((app, sock.getsockname())))
    result = run("audit", str(golden), "--port", "0", "--annotator", "alice", "--no-browser", "--blind")
    assert result.exit_code == 0, result.output
    ((app, (host, port)),) = served[:1]
    assert host == "127.0.0.1" and port > 0
    assert f"http://127.0.0.1:{port}/" in result.output and "alice" in result.output
    # the fixture's listwise label disagrees with its pointwise one: by default, where judges disagree comes first
    assert app.state.audit.blind is True and app.state.audit.queue == "disagreement"
    assert "(disagreement queue, seed 0, blind)" in result.output
    assert "Warning" not in result.output
    chosen = run("audit", str(golden), "--port", "0", "--no-browser", "--queue", "stratified")
    assert chosen.exit_code == 0 and served[-1][0].state.audit.queue == "stratified"
    wide = CliRunner().invoke(main, ["audit", str(golden), "--port", "0", "--host", "0.0.0.0", "--no-browser"])
    assert "Warning: serving on 0.0.0.0" in wide.output


def test_audit_rejects_bad_names_and_busy_ports(golden: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(audit_cli, "_serve", lambda app, sock: None)
    bad = run("audit", str(golden), "--annotator", "<script>", "--no-browser", "--port", "0")
    assert bad.exit_code == 1 and "annotator name" in bad.output
    wrong_queue = CliRunner().invoke(main, ["audit", str(golden), "--queue", "random"])
    assert wrong_queue.exit_code == 2
    for command in (["audit"], ["agreement"], ["labels"], ["labels", "export"], ["labels", "import"]):
        assert "Examples:" in run(*command, "--help").output
