"""``--batch`` end to end on the fake batch API: ``assay grade``, ``eval`` and ``build`` give what direct calls give,
through batches only, and a process killed after submitting resumes its batch on the rerun without paying twice."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from click.testing import CliRunner
from test_build_cli import TINY, _answer
from test_eval_cli import relevant_or_invalid

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "pipelines" / "evaluate"))
from evaluate_fixture import PRODUCTS, good_lines, save_golden, write_run

from assay.cli import main
from assay.formats.golden import GoldenSet
from assay.judge import make_judge
from assay.judge.batches import Ledger, use_batches
from assay.judge.factory import make_dry_run_judge
from assay.testing import FakeOpenAIServer, default_answer
from assay.testing.fake_batches import FakeBatchServer

PAIRS = [
    {"query_id": "q1", "question": "What is BM25?", "chunk_id": "c1", "text": "BM25 is a ranking function."},
    {"query_id": "q1", "question": "What is BM25?", "chunk_id": "c2", "text": "Cats sleep a lot."},
    {"query_id": "q2", "question": "Who wrote trec_eval?", "chunk_id": "c1", "text": "BM25 is a ranking function."},
]


def run(*args: str | Path) -> tuple[int, str]:
    result = CliRunner().invoke(main, [str(a) for a in args])
    return result.exit_code, result.output


@pytest.fixture
def pairs_file(tmp_path: Path) -> Path:
    path = tmp_path / "pairs.jsonl"
    path.write_text("".join(json.dumps(p) + "\n" for p in PAIRS))
    return path


def _grades(path: Path) -> list[tuple[str, str, int]]:
    return [
        (x["query_id"], x["chunk_id"], x["grade"])
        for x in map(json.loads, path.read_text(encoding="utf-8").splitlines())
    ]


def test_grade_batch_gives_the_direct_labels_through_batches_only(pairs_file: Path, tmp_path: Path) -> None:
    judge = ("--judge", "openai/gpt-4o-mini", "--api-key", "k")
    with FakeOpenAIServer() as direct:
        code, text = run("grade", pairs_file, "-o", tmp_path / "direct.jsonl", *judge, "--api-base", direct.url,
                         "--cache-dir", tmp_path / "direct-cache")  # fmt: skip
        assert code == 0, text
    with FakeBatchServer() as server:
        args = ("grade", pairs_file, "-o", tmp_path / "batch.jsonl", *judge, "--api-base", server.url)
        code, text = run(*args, "--cache-dir", tmp_path / "cache", "--batch")
        assert code == 0, text
        assert server.calls == 0 and len(server.batches) == 1
        assert "batch: 3 requests submitted in 1 batch" in text and "at the batch price" in text
        assert "batch: 3/3 done, 0 failed, 1 batch (1 completed), elapsed 0:00:0" in text  # the progress line
        code, again = run(*args, "--cache-dir", tmp_path / "cache")  # a direct rerun reuses the batch answers
        assert code == 0 and server.calls == 0 and "3 cached" in again
    assert _grades(tmp_path / "batch.jsonl") == _grades(tmp_path / "direct.jsonl")


def test_grade_batch_dry_run_prices_at_the_batch_price(pairs_file: Path, tmp_path: Path) -> None:
    args = ("grade", pairs_file, "-o", tmp_path / "x.jsonl", "--judge", "openai/gpt-4o-mini", "--cache-dir", tmp_path)
    code, direct = run(*args, "--dry-run")
    code_batch, batch = run(*args, "--dry-run", "--batch")
    assert code == code_batch == 0
    direct_cost = float(direct.split("cost <= $")[1].split()[0])
    batch_cost = float(batch.split("cost <= $")[1].split()[0])
    # gpt-4o-mini: $0.15/$0.60 per million tokens direct, $0.075/$0.30 through the batch API (OpenAI's price list)
    assert batch_cost == pytest.approx(direct_cost / 2, abs=1e-4)
    assert f"the same calls direct: ${batch_cost * 2:.4f}"[:-1] in batch and "batch saves" in batch


def test_batch_with_the_offline_judge_is_refused(pairs_file: Path, tmp_path: Path) -> None:
    code, text = run("grade", pairs_file, "-o", tmp_path / "x.jsonl", "--judge", "offline", "--batch")
    assert code == 1 and "drop --batch" in text and not (tmp_path / "x.jsonl").exists()


def _kill_after_submission(args: list[str], cache: Path) -> None:
    """Run ``assay ARGS`` in a process of its own and kill it (SIGKILL) once the ledger names a created batch."""
    code = "import sys; from assay.cli import main; sys.exit(main())"
    process = subprocess.Popen([sys.executable, "-c", code, *args], stderr=subprocess.PIPE, start_new_session=True)
    try:
        _wait_for_a_created_batch(cache, process)
    finally:
        os.kill(process.pid, signal.SIGKILL)
        process.wait()


def test_grade_killed_after_submission_resumes_on_the_rerun(pairs_file: Path, tmp_path: Path) -> None:
    cache, out = tmp_path / "cache", tmp_path / "labels.jsonl"
    with FakeBatchServer(turnaround=3600.0) as server:
        args = ["grade", str(pairs_file), "-o", str(out), "--judge", "openai/gpt-4o-mini", "--api-key", "k",
                "--api-base", server.url, "--cache-dir", str(cache), "--batch"]  # fmt: skip
        _kill_after_submission(args, cache)
        assert not out.exists() and len(server.batches) == 1
        server.advance(3600.0)
        code_rerun, text = run(*args)
        assert code_rerun == 0, text
        assert "picked up 1 batch submitted before (3 of these requests)" in text
        assert len(server.batches) == 1 and server.paid_twice() == 0 and server.calls == 0
    assert [grade for _, _, grade in _grades(out)] == [_fake_grade(p["question"], p["text"]) for p in PAIRS]
    assert all(record.collected for record in Ledger.beside(cache).load())


def test_build_killed_mid_batch_resumes_on_the_rerun(tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    with FakeBatchServer(_answer, turnaround=3600.0) as server:
        args = ["build", str(TINY), "-o", str(tmp_path / "g"), "--judge", "openai/fake", "--api-key", "k",
                "--per-doc", "2", "--mix", "factoid=1", "--api-base", server.url, "--cache-dir", str(cache),
                "--batch"]  # fmt: skip
        _kill_after_submission(args, cache)  # killed while the generation batch runs
        assert len(server.batches) == 1 and not (tmp_path / "g").exists()
        server.turnaround = 0.0  # the provider finishes it, and answers the next batches at once
        code, text = run(*args)
        assert code == 0, text
        assert "picked up 1 batch submitted before" in text
        assert len(server.batches) == 4 and server.paid_twice() == 0 and server.calls == 0
    assert GoldenSet.load(tmp_path / "g").questions


def _fake_grade(question: str, passage: str) -> int:
    """The grade the fake answers for this pair (its rule applied to the rendered prompt)."""
    request = make_dry_run_judge("openai/gpt-4o-mini").prepare("relevance", {"question": question, "passage": passage})
    grade: int = json.loads(default_answer(request.request.messages))["grade"]
    return grade


def _wait_for_a_created_batch(cache: Path, process: subprocess.Popen[bytes]) -> None:
    """Until the ledger names a created batch (the subprocess then polls a batch that takes an hour)."""
    for _ in range(600):
        records = Ledger.beside(cache).load() if (cache / "batches.json").is_file() else []
        if records and records[0].id is not None:
            return
        if process.poll() is not None:
            raise AssertionError(f"assay grade ended first: {process.stderr.read() if process.stderr else ''!r}")
        time.sleep(0.1)
    raise AssertionError("no batch was created within 60 s")


def test_eval_batch_labels_the_unjudged_and_leaves_failures_unscored(tmp_path: Path) -> None:
    golden = save_golden(tmp_path / "golden")
    good = write_run(tmp_path / "good.jsonl", good_lines())
    with FakeBatchServer(relevant_or_invalid) as server:
        code, text = run(
            "eval", golden, good, "-o", tmp_path / "report", "--judge", "openai/judge-x", "--api-base", server.url,
            "--api-key", "sk-test", "--cache-dir", tmp_path / "cache", "--n-boot", "200", "--batch",
        )  # fmt: skip
        assert code == 0, text
        assert server.calls == 0 and "needs up to 2 batch rounds" in text
    metrics = json.loads((tmp_path / "report" / "results.json").read_text())["runs"][0]["metrics"]
    n = len(PRODUCTS)
    assert metrics["faithfulness"]["mean"] is None
    assert metrics["faithfulness"]["unscored_reasons"] == {"invalid_output": n}  # after one batch retry round
    assert metrics["P@3"]["mean"] == pytest.approx(1.0)  # the judged care chunk is grade 1 now
    assert sum(q.provenance.model == "openai/judge-x" for q in GoldenSet.load(golden).qrels) == 2 * n


def test_build_batch_builds_what_a_direct_build_builds(tmp_path: Path) -> None:
    args = ["build", TINY, "--judge", "openai/fake", "--api-key", "k", "--per-doc", "2", "--mix", "factoid=1"]
    with FakeOpenAIServer(_answer) as direct:
        code, text = run(*args, "-o", tmp_path / "direct", "--api-base", direct.url, "--cache-dir", tmp_path / "c1")
        assert code == 0, text
    with FakeBatchServer(_answer) as server:
        code, text = run(*args, "-o", tmp_path / "batch", "--api-base", server.url, "--cache-dir", tmp_path / "c2",
                         "--batch")  # fmt: skip
        assert code == 0, text
        assert server.calls == 0 and "this build needs 4 batch rounds" in text
        firsts = [server._files.data[b.input_file_id].splitlines()[0] for b in server.batches.values()]
        names = [json.loads(line)["body"]["response_format"]["json_schema"]["name"] for line in firsts]
    # one batch per stage, each submitted once the stage before it had its answers
    assert names == ["GeneratedQuestion", "QuestionCritique", "ListwiseRelevance", "SupportAssignments"]
    direct_set, batch_set = GoldenSet.load(tmp_path / "direct"), GoldenSet.load(tmp_path / "batch")
    assert [q.text for q in batch_set.questions] == [q.text for q in direct_set.questions]
    assert {(x.query_id, x.chunk_id, x.grade) for x in batch_set.qrels} == {
        (x.query_id, x.chunk_id, x.grade) for x in direct_set.qrels
    }


class _Killed(Exception):
    pass


async def _killed(seconds: float) -> None:
    raise _Killed


def test_batches_list_check_and_cancel(tmp_path: Path) -> None:
    items = [{"question": f"q{i}?", "passage": f"passage {i}"} for i in range(10)]
    with FakeBatchServer(turnaround=100.0, clock=lambda: 0.0) as server:
        judge = make_judge("openai/gpt-4o-mini", api_base=server.url, cache_dir=tmp_path)
        use_batches(judge).sleep = _killed  # the process "dies" once the batch is submitted
        with pytest.raises(_Killed):
            judge.judge_many("relevance", items, stage="relevance")
        [batch_id] = server.batches
        code, listed = run("batches", "list", "--cache-dir", tmp_path)
        assert code == 0 and batch_id in listed and "in_progress" in listed
        server.advance(30.0)  # 3 of 10 requests answered
        code, _ = run("batches", "check", "--cache-dir", tmp_path, "--api-key", "k")
        assert code == 0 and Ledger.beside(tmp_path).load()[0].done == 3
        code, text = run("batches", "cancel", "--cache-dir", tmp_path)
        assert code == 2 and "--all" in text
        code, text = run("batches", "cancel", "batch_nope", "--cache-dir", tmp_path)
        assert code == 1 and "no open batch batch_nope" in text
        code, cancelled = run("batches", "cancel", batch_id, "--cache-dir", tmp_path)
        assert code == 0 and "cancelled" in cancelled
        rerun = make_judge("openai/gpt-4o-mini", api_base=server.url, cache_dir=tmp_path)
        runner = use_batches(rerun, retry="none")
        results = rerun.judge_many("relevance", items, stage="relevance")
    # the three answered before the cancel are kept; the seven it never ran are unscored as cancelled
    assert [r.unscored.kind if r.unscored else None for r in results] == [None] * 3 + ["batch_cancelled"] * 7
    assert runner.totals.submitted == 0 and runner.totals.answered == 3


def test_eval_killed_mid_batch_resumes_on_the_rerun(tmp_path: Path) -> None:
    golden = save_golden(tmp_path / "golden")
    good = write_run(tmp_path / "good.jsonl", good_lines())
    cache = tmp_path / "cache"
    with FakeBatchServer(relevant_or_invalid, turnaround=3600.0) as server:
        args = ["eval", str(golden), str(good), "-o", str(tmp_path / "report"), "--judge", "openai/judge-x",
                "--api-base", server.url, "--api-key", "k", "--cache-dir", str(cache), "--n-boot", "200",
                "--batch", "--batch-retry", "none"]  # fmt: skip
        _kill_after_submission(args, cache)
        submitted = len(server.batches)
        assert submitted >= 1 and not (tmp_path / "report").exists()
        server.turnaround = 0.0
        code, text = run(*args)
        assert code == 0, text
        assert "picked up" in text and server.paid_twice() == 0 and server.calls == 0
    metrics = json.loads((tmp_path / "report" / "results.json").read_text())["runs"][0]["metrics"]
    assert metrics["P@3"]["mean"] == pytest.approx(1.0)
    assert metrics["faithfulness"]["unscored_reasons"] == {"invalid_output": len(PRODUCTS)}


def test_eval_and_build_dry_runs_with_batch(tmp_path: Path) -> None:
    golden = save_golden(tmp_path / "golden")
    good = write_run(tmp_path / "good.jsonl", good_lines())
    judge = ("--judge", "openai/gpt-4o-mini", "--cache-dir", tmp_path / "cache")
    code, text = run("eval", golden, good, *judge, "--dry-run", "--batch")
    assert code == 0, text
    assert "with --batch: costs at the batch price; the same calls direct" in text and "batch saves" in text
    code, text = run("build", TINY, "-o", tmp_path / "g", "--judge", "anthropic/claude-x", "--dry-run", "--batch")
    assert code == 1 and "drop --batch" in text
    code, text = run("eval", golden, good, "-o", tmp_path / "r", "--no-judge", "--batch")
    assert code == 1 and "give --judge MODEL too" in text


class _NoBatches(FakeOpenAIServer):
    """A chat-completions server that answers 404 on any other path, as vLLM's does."""

    async def _route(self, method: str, path: str, headers: dict[str, str], raw: bytes) -> bytes:
        if "/chat/completions" in path:
            return await super()._route(method, path, headers, raw)
        body = b'{"detail": "Not Found"}'
        return b"HTTP/1.1 404 Not Found\r\nContent-Length: %d\r\n\r\n%s" % (len(body), body)


def test_a_server_without_a_batch_api_is_named(pairs_file: Path, tmp_path: Path) -> None:
    with _NoBatches() as server:
        code, text = run("grade", pairs_file, "-o", tmp_path / "x.jsonl", "--judge", "openai/m", "--api-key", "k",
                         "--api-base", server.url, "--cache-dir", tmp_path / "cache", "--batch")  # fmt: skip
    assert code == 1 and "has no batch API" in text and "drop --batch" in text
    assert not (tmp_path / "x.jsonl").exists()


def test_max_cost_bounds_what_is_submitted(pairs_file: Path, tmp_path: Path) -> None:
    out = tmp_path / "labels.jsonl"
    with FakeBatchServer() as server:
        # at $1,000,000 per million tokens a request's bound (hundreds of prompt tokens plus max_tokens) is
        # hundreds of dollars: $1 has no room for any of them
        code, text = run("grade", pairs_file, "-o", out, "--judge", "openai/m", "--api-key", "k", "--api-base",
                         server.url, "--cache-dir", tmp_path / "cache", "--batch", "--price", "1000000/1000000",
                         "--max-cost", "1")  # fmt: skip
        assert code == 1 and "rerun with a higher --max-cost" in text
        assert not server.batches and not out.exists()


def test_batch_dry_run_knows_a_judge_by_its_own_server_and_never_batches_the_offline_one(
    pairs_file: Path, tmp_path: Path
) -> None:
    out = ("grade", pairs_file, "-o", tmp_path / "x.jsonl", "--cache-dir", tmp_path, "--dry-run", "--batch")
    code, text = run(*out, "--judge", "hosted_vllm/x=http://127.0.0.1:9/v1", "--price", "1/2")
    assert code == 0 and "3 calls to make" in text, text
    code, text = run(*out, "--judge", "offline", "--api-base", "http://127.0.0.1:9/v1")
    assert code == 1 and "drop --batch" in text


def test_batches_check_and_cancel_leave_collected_batches_alone(tmp_path: Path) -> None:
    items = [{"question": f"q{i}?", "passage": f"passage {i}"} for i in range(4)]
    with FakeBatchServer(turnaround=100.0, clock=lambda: 0.0) as server:

        async def passes(seconds: float) -> None:
            server.advance(seconds)

        judge = make_judge("openai/gpt-4o-mini", api_base=server.url, cache_dir=tmp_path)
        use_batches(judge).sleep = passes  # this run waits for its batch and collects it
        assert all(r.ok for r in judge.judge_many("relevance", items[:2], stage="relevance"))
        use_batches(judge).sleep = _killed  # the process "dies" once this batch is submitted: it stays open
        with pytest.raises(_Killed):
            judge.judge_many("relevance", items[2:], stage="relevance")
        collected, still_open = sorted(Ledger.beside(tmp_path).load(), key=lambda r: not r.collected)
        assert collected.collected and not still_open.collected
        assert collected.id is not None and still_open.id is not None
        code, checked = run("batches", "check", "--cache-dir", tmp_path, "--api-key", "k")
        assert code == 0 and still_open.id in checked and collected.id not in checked, checked
        code, text = run("batches", "cancel", collected.id, "--cache-dir", tmp_path)
        assert code == 1 and f"no open batch {collected.id}" in text
        code, cancelled = run("batches", "cancel", "--all", "--cache-dir", tmp_path)
        assert code == 0 and still_open.id in cancelled and collected.id not in cancelled, cancelled
        assert server.batches[collected.id].stopped is None and server.batches[still_open.id].stopped is not None
    assert {r.ref: r for r in Ledger.beside(tmp_path).load()}[collected.ref] == collected  # untouched
