"""A judged criterion measured against people, end to end: ``assay eval`` queues its verdicts in the golden folder's
store, people label them on the audit page (``/criteria``: keys give labels, undo, blind mode), and the next
evaluation reports the agreement (kappa with its interval, the confusion matrix) and the PPI-corrected means;
``assay agreement --criteria`` says the same from the store; ``criteria.csv`` holds every verdict.

The scripted judge (test_criteria_judged's) passes every answer of the good run (each gives a number of days) and
fails every answer of the weak one. The people disagree on three items: they fail the good run's first two answers
and pass the weak run's first. With M questions per run, by hand: exact agreement (2M - 3) / 2M; the judge's
marginals are M pass, M fail, the people's M - 1 pass, M + 1 fail, so chance agreement is 1/2 and Cohen's kappa
2 p_o - 1 = (M - 3) / M. Every item of a run is audited, so PPI's lambda is 0 and the corrected mean is the
people's mean: (M - 2) / M for the good run, 1 / M for the weak one, with the classical interval around it.
"""

from __future__ import annotations

import csv
import io
import json
import math
import statistics
from pathlib import Path

from click.testing import CliRunner
from evaluate_fixture import PRODUCTS, good_lines, qid, save_golden, weak_lines, write_run
from starlette.testclient import TestClient
from test_criteria_judged import DAYS, _folder, judge_criteria

from assay.audit.app import create_app
from assay.audit.criteria import criterion_items
from assay.audit.store import LabelStore
from assay.cli import main
from assay.testing import FakeOpenAIServer

M = len(PRODUCTS)
BASE = "http://127.0.0.1:8765"
DISAGREE = {("good", qid(0)): "fail", ("good", qid(1)): "fail", ("weak", qid(0)): "pass"}


def _eval(tmp_path: Path, server: FakeOpenAIServer, out: str) -> tuple[int, str]:
    golden = tmp_path / "golden"
    args = ["eval", golden, "good=" + str(tmp_path / "good.jsonl"), "weak=" + str(tmp_path / "weak.jsonl"),
            "--judge", "openai/judge-x", "--api-key", "k", "--api-base", server.url, "--cache-dir",
            tmp_path / "cache", "-c", tmp_path / "criteria", "-m", "ndcg@10", "-o", tmp_path / out]  # fmt: skip
    result = CliRunner().invoke(main, [str(a) for a in args])
    return result.exit_code, result.output


def _setup(tmp_path: Path) -> Path:
    golden = save_golden(tmp_path / "golden")
    write_run(tmp_path / "good.jsonl", good_lines(M))
    write_run(tmp_path / "weak.jsonl", weak_lines(M))
    _folder(tmp_path, DAYS)
    return golden


def _client(golden: Path, **options: object) -> tuple[TestClient, dict[str, str]]:
    app = create_app(golden, annotator="ann", **options)  # type: ignore[arg-type]
    return TestClient(app, base_url=BASE), {"X-Assay-Token": app.state.token, "Origin": BASE}


def _label_everything(golden: Path) -> None:
    client, headers = _client(golden)
    queue = client.get("/api/criteria/queue").json()["items"]
    assert len(queue) == 2 * M
    for row in queue:
        item = client.get(f"/api/criteria/item?i={row['i']}").json()
        [verdict] = item["verdicts"]
        key = (verdict["run"], item["query_id"])
        body = {"i": row["i"], "label": DISAGREE[key]} if key in DISAGREE else {"i": row["i"], "accept_judge": True}
        done = client.post("/api/criteria/label", json=body, headers=headers)
        assert done.status_code == 200, done.text
    assert client.get("/api/criteria/queue").json()["progress"] == {"done": 2 * M, "total": 2 * M}


def test_eval_queues_people_label_and_the_next_eval_measures_the_criterion(tmp_path: Path) -> None:
    golden = _setup(tmp_path)
    with FakeOpenAIServer(responder=judge_criteria) as server:
        code, text = _eval(tmp_path, server, "first")
        assert code == 0, text
        assert f"{2 * M} new criterion verdict(s) to audit: assay audit {golden} --criteria" in text
        first = json.loads((tmp_path / "first" / "results.json").read_text())
        assert first["criterion_agreement"] == []
        assert any("criterion:days (0 of 10 audited)" in c for c in first["verdict"]["caveats"])
        _label_everything(golden)
        code, text = _eval(tmp_path, server, "second")
        assert code == 0, text
        assert "new criterion verdict" not in text  # the same answers: the same items, queued once
    saved = json.loads((tmp_path / "second" / "results.json").read_text())
    [found] = saved["criterion_agreement"]
    assert (found["criterion"], found["labels"], found["n"], found["statistic"]) == ("days", ["fail", "pass"], 2 * M,
                                                                                      "kappa")  # fmt: skip
    assert found["confusion"] == [[M - 1, 1], [2, M - 2]]  # rows the judge (fail, pass), columns people
    assert math.isclose(found["percent"]["value"], (2 * M - 3) / (2 * M), abs_tol=1e-6)
    assert math.isclose(found["kappa"]["value"], (M - 3) / M, abs_tol=1e-6)
    assert found["kappa"]["low"] <= found["kappa"]["value"] <= found["kappa"]["high"]
    assert found["validated"] is True
    ppi = {row["run"]: row for row in found["ppi"]}
    for run, people in (("good", [0.0, 0.0] + [1.0] * (M - 2)), ("weak", [1.0] + [0.0] * (M - 1))):
        mean = sum(people) / M
        half = 1.959964 * statistics.stdev(people) / math.sqrt(M)  # lambda 0: the classical interval
        assert math.isclose(ppi[run]["estimate"], mean, abs_tol=1e-6)
        # cut to the scale's range [0, 1]: a mean of declared scores cannot leave it
        assert math.isclose(ppi[run]["low"], max(mean - half, 0.0), abs_tol=1e-5)
        assert math.isclose(ppi[run]["high"], min(mean + half, 1.0), abs_tol=1e-5)
        assert (ppi[run]["n_audited"], ppi[run]["n_unaudited"]) == (M, 0)
    assert ppi["good"]["judge_only"] == 1.0 and ppi["weak"]["judge_only"] == 0.0
    verdict = saved["verdict"]
    assert not any("criterion:days" in c for c in verdict["caveats"])
    assert verdict["criteria"].startswith(f"Judged criteria against people: criterion:days kappa {(M - 3) / M:.3f} ")
    markdown = (tmp_path / "second" / "report.md").read_text()
    assert "### criterion:days against people (validated)" in markdown
    assert f"| fail | {M - 1} | 1 |" in markdown and f"| pass | 2 | {M - 2} |" in markdown
    agreement = CliRunner().invoke(main, ["agreement", str(golden), "--criteria", "--format", "json"])
    assert agreement.exit_code == 0, agreement.output
    [row] = json.loads(agreement.output)
    assert row["confusion"] == found["confusion"]
    assert row["kappa"] == {key: found["kappa"][key] for key in ("value", "low", "high")}  # the same interval too
    table = CliRunner().invoke(main, ["agreement", str(golden), "--criteria"])
    assert table.exit_code == 0 and "Cohen's kappa" in table.output, table.output


def test_criteria_csv_holds_every_verdict_with_its_audit_item(tmp_path: Path) -> None:
    golden = _setup(tmp_path)
    with FakeOpenAIServer(responder=judge_criteria) as server:
        code, text = _eval(tmp_path, server, "out")
    assert code == 0, text
    rows = list(csv.DictReader(io.StringIO((tmp_path / "out" / "criteria.csv").read_text(encoding="utf-8"))))
    assert len(rows) == 2 * M
    by = {(r["run"], r["query_id"]): r for r in rows}
    assert by[("good", qid(0))]["label"] == "pass" and by[("good", qid(0))]["score"] == "1.0"
    assert by[("weak", qid(0))]["label"] == "fail" and by[("weak", qid(0))]["score"] == "0.0"
    assert by[("good", qid(0))]["votes"] == "openai/judge-x: pass (scripted: pass)"
    queued = {one.item for one in criterion_items(LabelStore.in_folder(golden))}
    assert {r["item"] for r in rows} == queued and len(queued) == 2 * M
    assert "criteria.csv" in text
    assert not (tmp_path / "out" / "pairwise.csv").exists()


def test_the_page_keys_undo_and_blind_mode(tmp_path: Path) -> None:
    golden = _setup(tmp_path)
    with FakeOpenAIServer(responder=judge_criteria) as server:
        assert _eval(tmp_path, server, "out")[0] == 0
    client, headers = _client(golden, blind=True)
    page = client.get("/criteria")
    assert page.status_code == 200 and "/static/criteria.js" in page.text
    assert client.get("/static/criteria.js").headers["content-type"].startswith("text/javascript")
    item = client.get("/api/criteria/item?i=0").json()
    assert item["judge_hidden"] is True and item["verdicts"] == []
    assert [one["label"] for one in item["about"]["labels"]] == ["fail", "pass"]  # lowest score first: keys 1, 2
    assert set(item["shown"]) == {"answer"}  # what the criterion names, nothing else
    refused = client.post("/api/criteria/label", json={"i": 0, "accept_judge": True}, headers=headers)
    assert refused.status_code == 400 and "blind mode" in refused.json()["error"]
    bad = client.post("/api/criteria/label", json={"i": 0, "label": "maybe"}, headers=headers)
    assert bad.status_code == 400 and "fail, pass" in bad.json()["error"]
    done = client.post("/api/criteria/label", json={"i": 0, "label": "PASS", "reason": "says 14 days"},
                       headers=headers).json()  # fmt: skip
    assert done["item"]["mine"]["label"] == "pass" and done["item"]["mine"]["reason"] == "says 14 days"
    assert done["item"]["judge_hidden"] is False and len(done["item"]["verdicts"]) == 1
    client.post("/api/criteria/label", json={"i": 0, "label": "fail"}, headers=headers)
    undone = client.post("/api/criteria/undo", json={}, headers=headers).json()
    assert undone["undone"] is True and undone["i"] == 0
    assert client.get("/api/criteria/item?i=0").json()["mine"]["label"] == "pass"  # the label before comes back
    client.post("/api/criteria/undo", json={}, headers=headers)
    assert client.get("/api/criteria/item?i=0").json()["mine"] is None
    assert client.post("/api/criteria/undo", json={}, headers=headers).json()["undone"] is False
    no_token = client.post("/api/criteria/label", json={"i": 1, "label": "pass"})
    assert no_token.status_code in (400, 403)
    assert client.get(f"/api/criteria/item?i={2 * M}").status_code == 400


def test_audit_and_agreement_refuse_a_criteria_audit_with_nothing_queued(tmp_path: Path) -> None:
    golden = save_golden(tmp_path / "golden")
    result = CliRunner().invoke(main, ["audit", str(golden), "--criteria", "--no-browser", "--port", "0"])
    assert result.exit_code != 0 and "no judged criterion's verdict is queued" in result.output
    assert "assay eval" in result.output and "-c criteria/NAME.md" in result.output
    result = CliRunner().invoke(main, ["agreement", str(golden), "--criteria"])
    assert result.exit_code != 0 and f"assay audit {golden} --criteria" in result.output
    result = CliRunner().invoke(main, ["audit", str(golden), "--criterion", "days", "--no-browser"])
    assert result.exit_code == 2 and "add --criteria" in result.output
