"""Several judges at once through the CLI: ``assay grade``, ``build`` and ``eval`` with ``--judge`` repeated and
``--combine``, against the fake OpenAI-compatible server (one scripted judge per model name) and the offline judge;
the votes in the outputs, the agreement in the summaries, results.json and the reports, the audit queue."""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from assay.audit.access import open_store
from assay.audit.app import create_app
from assay.audit.queues import queue_for
from assay.cli import main
from assay.formats.golden import GoldenSet
from assay.judge import Price
from assay.judge.factory import make_dry_run_judge
from assay.judge.panel import Panel
from assay.pipelines.bootstrap import BuildSettings, estimate_build
from assay.pipelines.evaluate.pipeline import estimate_evaluation
from assay.testing import FakeOpenAIServer
from assay.testing.fake_batches import FakeBatchServer
from assay.testing.scripted_judges import responder
from assay.types import LabelEvent

DEMO = Path(__file__).resolve().parents[2] / "datasets" / "demo" / "corpus"
PAIRS = [
    {"query_id": "q1", "question": "What is BM25?", "chunk_id": "c1", "text": "BM25 is a ranking function."},
    {"query_id": "q1", "question": "What is BM25?", "chunk_id": "c2", "text": "Cats sleep a lot."},
    {"query_id": "q2", "question": "Who wrote trec_eval?", "chunk_id": "c3", "text": "NIST wrote trec_eval."},
]
TRUTH = {("What is BM25?", "BM25 is a ranking function."): 3, ("Who wrote trec_eval?", "NIST wrote trec_eval."): 2}


@pytest.fixture
def server() -> Iterator[FakeOpenAIServer]:
    """One server, a scripted judge per model: ``*/truth`` grades by TRUTH, ``*/zero`` grades 0 (it knows nothing)."""
    truthful, zero = responder("unbiased", TRUTH), responder("unbiased", {})
    with FakeOpenAIServer(lambda body: zero(body) if body["model"].endswith("zero") else truthful(body)) as fake:
        yield fake


def run(*args: str | Path) -> tuple[int, str]:
    result = CliRunner().invoke(main, [str(a) for a in args])
    return result.exit_code, result.output


def read(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


@pytest.fixture
def pairs_file(tmp_path: Path) -> Path:
    path = tmp_path / "pairs.jsonl"
    path.write_text("".join(json.dumps(p) + "\n" for p in PAIRS))
    return path


def test_grade_with_a_panel_writes_votes_and_the_agreement(
    pairs_file: Path, tmp_path: Path, server: FakeOpenAIServer
) -> None:
    out = tmp_path / "labels.jsonl"
    judges = ("--judge", "hosted_vllm/truth", "--judge", "hosted_vllm/zero", "--judge", "hosted_vllm/truth2")
    code, text = run("grade", pairs_file, "-o", out, *judges, "--api-base", server.url, "--cache-dir", tmp_path / "c")
    assert code == 0, text
    labels = read(out)
    assert [x["grade"] for x in labels] == [3, 0, 2]  # majority of (3, 0, 3), (0, 0, 0), (2, 0, 2)
    assert labels[0]["model"] == "majority(hosted_vllm/truth, hosted_vllm/zero, hosted_vllm/truth2)"
    assert [(v["model"], v["grade"]) for v in labels[0]["votes"]] == [
        ("hosted_vllm/truth", 3),
        ("hosted_vllm/zero", 0),
        ("hosted_vllm/truth2", 3),
    ]
    assert server.calls == 9  # each judge asked each pair once
    assert "judge hosted_vllm/zero: 3 calls" in text
    assert (
        "3 judges (hosted_vllm/truth, hosted_vllm/zero, hosted_vllm/truth2), combined by majority, on 3 pairs" in text
    )
    assert "they disagree on 2 (66.7%)" in text and "all agree on 1 (33.3%)" in text
    assert "hosted_vllm/truth vs hosted_vllm/truth2 on 3 pairs: agreement 1.000" in text

    # min of the same votes: read from each judge's cache, nothing asked again
    code, text = run(
        "grade", pairs_file, "-o", out, *judges, "--api-base", server.url, "--cache-dir", tmp_path / "c", "--combine",
        "min",
    )  # fmt: skip
    assert code == 0, text
    assert [x["grade"] for x in read(out)] == [0, 0, 0] and server.calls == 9


def test_grade_panel_dry_run_prices_each_judge(pairs_file: Path, tmp_path: Path, server: FakeOpenAIServer) -> None:
    judges = ("--judge", "hosted_vllm/truth", "--judge", "hosted_vllm/zero", "--price", "1/2")
    code, text = run("grade", pairs_file, "-o", tmp_path / "x.jsonl", *judges, "--api-base", server.url, "--dry-run")
    assert code == 0, text
    assert "dry run: 3 pairs, 0 cached, 6 calls to make" in text
    assert (
        "  judge hosted_vllm/truth: 0 cached, 3 calls" in text and "  judge hosted_vllm/zero: 0 cached, 3 calls" in text
    )
    assert server.calls == 0


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (("--judge", "offline", "--combine", "min"), "--combine min combines several judges"),
        (("--judge", "offline", "--judge", "offline"), "judge offline is on the panel twice"),
        (("--judge", "offline", "--judge", "anthropic/x", "--batch"), "no judge of the panel is called that way"),
    ],
)
def test_panel_options_that_cannot_work_are_refused(
    pairs_file: Path, tmp_path: Path, extra: tuple[str, ...], message: str
) -> None:
    code, text = run("grade", pairs_file, "-o", tmp_path / "x.jsonl", *extra, "--api-key", "k")
    assert code != 0 and message in text, text
    assert not (tmp_path / "x.jsonl").exists()


@pytest.fixture
def panel_golden(tmp_path: Path, server: FakeOpenAIServer) -> Path:
    out = tmp_path / "golden"
    code, text = run(
        "build", DEMO, "-o", out, "--judge", "offline", "--judge", "hosted_vllm/zero", "--combine", "mean",
        "--api-base", server.url, "--questions", "6", "--cache-dir", tmp_path / "cache",
    )  # fmt: skip
    assert code == 0, text
    assert "2 judges (offline, hosted_vllm/zero), combined by mean" in text
    return out


def test_build_with_a_panel(panel_golden: Path, server: FakeOpenAIServer) -> None:
    golden = GoldenSet.load(panel_golden)
    manifest = golden.manifest
    assert manifest.models["relevance"] == "mean(offline, hosted_vllm/zero)"
    assert manifest.models["generator"] == "offline"  # every other prompt: the first judge
    assert manifest.settings["panel"]["judges"] == ["offline", "hosted_vllm/zero"]
    assert manifest.settings["panel"]["combine"] == "mean"
    assert all(label.votes and len(label.votes) == 2 for label in golden.qrels)
    halves_down = {0: 0, 1: 0, 2: 1, 3: 1}  # mean of (offline, 0): 0, 0.5, 1, 1.5
    for label in golden.qrels:
        offline, zero = (v.grade for v in label.votes or [])
        assert zero == 0 and offline is not None
        assert label.grade == halves_down[offline]
    assert any(label.grade for label in golden.qrels)
    # the server saw relevance calls only: generation, critic and support went to the first judge (offline)
    schemas = {r["response_format"]["json_schema"]["name"] for r in server.requests}
    assert server.calls > 0 and schemas == {"ListwiseRelevance"}
    # the golden set's qrels file keeps the votes; labels of one judge stay without the field
    line = json.loads((panel_golden / "qrels.jsonl").read_text().splitlines()[1])
    assert [v["model"] for v in line["votes"]] == ["offline", "hosted_vllm/zero"]


def test_audit_shows_where_the_panel_disagrees_first(panel_golden: Path) -> None:
    golden = GoldenSet.load(panel_golden)
    disputed = {(x.query_id, x.chunk_id) for x in golden.qrels if len({v.grade for v in x.votes or []}) > 1}
    assert disputed  # the offline judge grades some pooled chunks above 0; the zero judge never does
    app = create_app(panel_golden, annotator="alice")
    assert app.state.audit.queue == "disagreement"
    store, _ = open_store(panel_golden)
    judges = {lab.annotator for lab in store.current_labels(role="judge")}
    assert judges == {"mean(offline, hosted_vllm/zero)", "offline", "hosted_vllm/zero"}
    order = queue_for(store, "alice", "disagreement", 0)
    assert set(order[: len(disputed)]) == disputed and len(order) == len(golden.qrels)
    shown = app.state.audit.item_view("alice", 0, order[0])["judges"]  # the page shows the combined label and votes
    assert [j["annotator"] for j in shown] == ["mean(offline, hosted_vllm/zero)", "offline", "hosted_vllm/zero"]
    assert len({j["grade"] for j in shown[1:]}) == 2  # the first item is one where the judges disagree


def test_eval_with_a_panel_reports_the_judges(panel_golden: Path, tmp_path: Path, server: FakeOpenAIServer) -> None:
    golden = GoldenSet.load(panel_golden)
    chunk_ids = [c.id for c in golden.chunks]
    lines = [{"query_id": q.id, "retrieved": chunk_ids[i : i + 5]} for i, q in enumerate(golden.questions)]
    run_file = tmp_path / "run.jsonl"
    run_file.write_text("".join(json.dumps(x) + "\n" for x in lines))
    store, _ = open_store(panel_golden)  # a person audited three pairs: each judge is set against them
    audited = [(x.query_id, x.chunk_id) for x in golden.qrels[:3]]
    for qid, cid in audited:
        store.record(LabelEvent(query_id=qid, chunk_id=cid, grade=1, source="human", annotator="ann"))
    report = tmp_path / "report"
    asked = server.calls
    code, text = run(
        "eval", panel_golden, run_file, "-o", report, "--verbose", "--judge", "offline", "--judge", "hosted_vllm/zero",
        "--combine", "min", "--api-base", server.url, "--cache-dir", tmp_path / "cache", "--n-boot", "200",
    )  # fmt: skip
    assert code == 0, text
    result = json.loads((report / "results.json").read_text())
    # usage is summed over the judges: both grade the same listwise groups, and the server saw only the zero judge's
    assert server.calls > asked and result["usage"]["relevance"]["calls"] == 2 * (server.calls - asked)
    assert result["judge"] == "min(offline, hosted_vllm/zero)"
    judges = result["judges"]
    assert judges["judges"] == ["offline", "hosted_vllm/zero"] and sorted(judges["combine"]) == ["mean", "min"]
    again = GoldenSet.load(panel_golden)
    assert judges["n_pairs"] == sum(1 for x in again.qrels if x.votes)
    new = [x for x in again.qrels if (x.provenance.model or "").startswith("min(")]
    assert new and all(x.grade == 0 for x in new)  # min with a judge that always says 0
    (pair,) = judges["pairs"]
    assert pair["judges"] == ["offline", "hosted_vllm/zero"] and pair["n"] == judges["n_pairs"]
    zero = judges["with_people"]["hosted_vllm/zero"]
    assert zero["n"] == 3 and zero["confusion_matrix"][0][1] == 3  # it said 0 where the person said 1, three times
    assert set(judges["with_people"]) == {"offline", "hosted_vllm/zero"}
    markdown = (report / "report.md").read_text()
    assert "## Judges" in markdown and "offline vs hosted_vllm/zero" in markdown
    html = (report / "report.html").read_text()
    assert 'id="judges-pairs"' in html
    assert "Judges: 2 judges (offline, hosted_vllm/zero)" in text
    assert not result["judge_card"]["found"]  # no card was made in this cache
    (other,) = result["panel_cards"]  # the other judge has no card: said plainly, with how to make one
    assert not other["found"] and "hosted_vllm/zero" in other["note"] and "judge-check" in other["note"]
    assert other["note"] in markdown


def test_build_and_eval_dry_runs_price_each_judge(tmp_path: Path, server: FakeOpenAIServer) -> None:
    judges = ("--judge", "offline", "--judge", "hosted_vllm/zero", "--api-base", server.url, "--price", "1/2")
    code, text = run("build", DEMO, "-o", tmp_path / "g", *judges, "--questions", "6", "--dry-run")
    assert code == 0, text
    offline_row = next(line for line in text.splitlines() if "relevance offline" in line)
    assert "$0.000 " in offline_row  # --price is for the panel's models: the offline judge stays free
    assert server.calls == 0 and not (tmp_path / "g").exists()
    # each judge's relevance row is what that judge alone would cost; the other stages are the first judge's
    settings = BuildSettings(questions=6)
    zero = make_dry_run_judge("hosted_vllm/zero", price=Price.per_million(1, 2))
    panel = Panel((make_dry_run_judge("offline"), zero))
    together = {s.stage: s for s in estimate_build([DEMO], judge=panel, settings=settings).stages}
    alone = {s.stage: s for s in estimate_build([DEMO], judge=zero, settings=settings).stages}
    offline = {
        s.stage: s for s in estimate_build([DEMO], judge=make_dry_run_judge("offline"), settings=settings).stages
    }
    assert list(together) == ["generation", "critic", "relevance offline", "relevance hosted_vllm/zero", "support"]
    assert together["relevance hosted_vllm/zero"] == replace(alone["relevance"], stage="relevance hosted_vllm/zero")
    assert together["relevance offline"] == replace(offline["relevance"], stage="relevance offline")
    assert together["support"] == offline["support"] and together["generation"] == offline["generation"]


def test_eval_dry_run_prices_each_judge(panel_golden: Path, tmp_path: Path, server: FakeOpenAIServer) -> None:
    golden = GoldenSet.load(panel_golden)
    run_file = tmp_path / "run.jsonl"
    lines = [{"query_id": q.id, "retrieved": [c.id for c in golden.chunks[:8]]} for q in golden.questions]
    run_file.write_text("".join(json.dumps(x) + "\n" for x in lines))
    calls = server.calls
    code, text = run(
        "eval", panel_golden, run_file, "--judge", "offline", "--judge", "hosted_vllm/zero", "--api-base", server.url,
        "--dry-run", "--cache-dir", tmp_path / "cache",
    )  # fmt: skip
    assert code == 0, text
    assert server.calls == calls
    zero = make_dry_run_judge("hosted_vllm/zero")
    together = estimate_evaluation(panel_golden, [run_file], Panel((make_dry_run_judge("offline"), zero)))
    alone = estimate_evaluation(panel_golden, [run_file], zero)
    assert together["relevance hosted_vllm/zero"] == alone["relevance"] and alone["relevance"].calls > 0
    assert "relevance offline" in together and "relevance" not in together


def test_a_panel_batches_each_judge_that_can_and_calls_the_offline_judge_directly(
    pairs_file: Path, tmp_path: Path
) -> None:
    truthful, zero = responder("unbiased", TRUTH), responder("unbiased", {})
    out = tmp_path / "labels.jsonl"
    judges = ("--judge", "offline", "--judge", "openai/truth", "--judge", "openai/zero", "--api-key", "k")
    with FakeBatchServer(lambda body: zero(body) if body["model"].endswith("zero") else truthful(body)) as server:
        args = ("grade", pairs_file, "-o", out, *judges, "--api-base", server.url, "--cache-dir", tmp_path / "c")
        code, text = run(*args, "--batch", "--price", "1/2")
        assert code == 0, text
        assert server.calls == 0 and len(server.batches) == 2  # one batch per model judge, none for the offline one
        assert "openai/truth: batch: 3 requests submitted in 1 batch" in text
        assert "openai/zero: batch: 3 requests submitted in 1 batch" in text
        lines = read(out)
        assert [[v["model"] for v in x["votes"]] for x in lines] == [["offline", "openai/truth", "openai/zero"]] * 3
        assert [x["votes"][1]["grade"] for x in lines] == [3, 0, 2] and all(x["votes"][2]["grade"] == 0 for x in lines)
        code, _ = run(*args)  # a direct rerun of the panel: every vote from the cache
        assert code == 0 and server.calls == 0 and read(out) == [{**x, "cached": True} for x in lines]
        code, dry = run(*args, "--dry-run", "--batch", "--price", "1/2")
        assert code == 0 and "with --batch: the costs of openai/truth, openai/zero are at their batch prices" in dry


def test_each_judge_can_have_its_own_server(pairs_file: Path, tmp_path: Path) -> None:
    zero, truthful = responder("unbiased", {}), responder("unbiased", TRUTH)
    out = tmp_path / "labels.jsonl"
    with FakeOpenAIServer(zero) as first, FakeOpenAIServer(truthful) as second:
        judges = ("--judge", "hosted_vllm/a", "--judge", f"hosted_vllm/b={second.url}", "--api-base", first.url)
        code, text = run("grade", pairs_file, "-o", out, *judges, "--cache-dir", tmp_path / "c")
        assert code == 0, text
        assert first.calls == 3 and second.calls == 3  # a: --api-base; b: its own server
        assert {r["model"] for r in first.requests} == {"a"}  # the route prefix is not sent
        assert {r["model"] for r in second.requests} == {"b"}
    lines = read(out)
    assert [[v["model"] for v in x["votes"]] for x in lines] == [["hosted_vllm/a", "hosted_vllm/b"]] * 3
    assert [x["votes"][1]["grade"] for x in lines] == [3, 0, 2]


@pytest.mark.parametrize(
    ("value", "message"),
    [("hosted_vllm/b=gpu:8000", "MODEL=URL"), ("offline=http://x/v1", "the offline judge calls no server")],
)
def test_a_judge_server_that_cannot_be_is_refused(pairs_file: Path, tmp_path: Path, value: str, message: str) -> None:
    code, text = run("grade", pairs_file, "-o", tmp_path / "x.jsonl", "--judge", "offline", "--judge", value)
    assert code != 0 and message in text, text
