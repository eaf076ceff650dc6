"""``assay grade`` and ``assay cache`` end to end: the fake server, the offline judge, bad input, dry run, budget."""

from __future__ import annotations

import asyncio
import json
import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from click.testing import CliRunner

from assay.cli import main
from assay.cli.grade import read_pairs
from assay.errors import BackendError
from assay.judge import Pair
from assay.judge.base import ChatRequest
from assay.judge.factory import make_dry_run_judge
from assay.testing import FakeOpenAIServer, Fault, default_answer

PAIRS = [
    {"query_id": "q1", "question": "What is BM25?", "chunk_id": "c1", "text": "BM25 is a ranking function."},
    {"query_id": "q1", "question": "What is BM25?", "chunk_id": "c2", "text": "Cats sleep a lot."},
    {"query_id": "q2", "question": "Who wrote trec_eval?", "chunk_id": "c1", "text": "BM25 is a ranking function."},
]


@pytest.fixture
def pairs_file(tmp_path: Path) -> Path:
    path = tmp_path / "pairs.jsonl"
    path.write_text("".join(json.dumps(p) + "\n" for p in PAIRS))
    return path


@pytest.fixture
def server() -> Iterator[FakeOpenAIServer]:
    with FakeOpenAIServer() as fake:
        yield fake


def run(*args: str | Path) -> tuple[int, str]:
    result = CliRunner().invoke(main, [str(a) for a in args])
    return result.exit_code, result.output


def read(path: Path) -> list[dict[str, object]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def test_grade_through_an_openai_compatible_server(pairs_file: Path, tmp_path: Path, server: FakeOpenAIServer) -> None:
    out = tmp_path / "labels.jsonl"
    base = ("grade", pairs_file, "-o", out, "--judge", "hosted_vllm/judge", "--api-base", server.url)
    code, text = run(*base, "--cache-dir", tmp_path / "cache")
    assert code == 0, text
    labels = read(out)
    assert [(x["query_id"], x["chunk_id"]) for x in labels] == [(p["query_id"], p["chunk_id"]) for p in PAIRS]
    for label in labels:
        assert label["grade"] in (0, 1, 2, 3) and label["model"] == "hosted_vllm/judge"
        assert label["prompt"] == "relevance@4" and label["cached"] is False and "unscored" not in label
        assert label["reason"] == "scripted answer"
    assert server.calls == 3 and "3 calls" in text
    # Each request fences its pair in tags carrying that call's code, one code per pair.
    users = [str(r["messages"][-1]["content"]) for r in server.requests]
    codes = [re.findall(r"^<passage-([0-9a-f]{12})>$", user, flags=re.M) for user in users]
    for found, user in zip(codes, users, strict=True):
        assert len(found) == 1 and f"</passage-{found[0]}>" in user and f"<question-{found[0]}>" in user
    assert len({c[0] for c in codes}) == 3
    code, text = run(*base, "--cache-dir", tmp_path / "cache")
    assert code == 0 and server.calls == 3 and all(x["cached"] for x in read(out))


def test_summary_counts_tokens_and_cost(pairs_file: Path, tmp_path: Path, server: FakeOpenAIServer) -> None:
    out = tmp_path / "labels.jsonl"
    args = ("grade", pairs_file, "-o", out, "--judge", "x/j", "--api-base", server.url, "--no-cache")
    code, text = run(*args, "--price", "1000/1000")  # $0.001 a token, in or out
    assert code == 0, text
    # the fake server's usage: (characters of the messages) // 4 + 1 in, (characters of its answer) // 4 + 1 out
    tokens_in = sum(sum(len(m["content"]) for m in r["messages"]) // 4 + 1 for r in server.requests)
    tokens_out = sum(len(default_answer(r["messages"])) // 4 + 1 for r in server.requests)
    cost = (tokens_in + tokens_out) / 1000
    assert (
        f"graded 3 pairs: 3 calls, 0 cached, 0 retries, 0 unscored; tokens {tokens_in} in / {tokens_out} out; "
        f"cost ${cost:.4f}"
    ) in text


def test_unscored_pairs_are_null_with_the_cause(pairs_file: Path, tmp_path: Path, server: FakeOpenAIServer) -> None:
    server.inject(Fault("invalid"), Fault("invalid"))
    out = tmp_path / "labels.jsonl"
    code, text = run(
        "grade", pairs_file, "-o", out, "--judge", "x/judge", "--api-base", server.url, "--no-cache", "--concurrency", 1
    )
    assert code == 0, text
    first = read(out)[0]
    assert first["grade"] is None and first["unscored"]["kind"] == "invalid_output"  # type: ignore[index]
    assert "1 unscored (1 invalid_output)" in text


def test_every_pair_unscored_is_a_failure_with_the_causes(
    pairs_file: Path, tmp_path: Path, server: FakeOpenAIServer
) -> None:
    server.inject(Fault("truncated"), Fault("loop"), Fault("truncated"))
    out = tmp_path / "labels.jsonl"
    code, text = run(
        "grade", pairs_file, "-o", out, "--judge", "x/judge", "--api-base", server.url, "--no-cache", "--concurrency", 1
    )
    assert code == 1, text
    assert "every one of the 3 pairs is unscored (1 loop, 2 truncated)" in text
    assert server.calls == 3  # a cut answer is not asked again
    assert [line["unscored"]["kind"] for line in read(out)] == ["truncated", "loop", "truncated"]  # type: ignore[index]


def test_listwise_through_the_server(pairs_file: Path, tmp_path: Path, server: FakeOpenAIServer) -> None:
    def listwise(body: dict[str, object]) -> str:
        user = body["messages"][-1]["content"]  # type: ignore[index]
        ids = re.findall(r'<passage-\w+ id="([^"]+)"', user)
        return json.dumps({"judgements": [{"id": i, "reason": "r", "grade": 2} for i in ids]})

    server.responder = listwise
    out = tmp_path / "labels.jsonl"
    code, text = run(
        "grade", pairs_file, "-o", out, "--judge", "x/j", "--api-base", server.url, "--listwise", 5, "--no-cache"
    )
    assert code == 0, text
    assert [x["grade"] for x in read(out)] == [2, 2, 2] and server.calls == 2
    assert read(out)[0]["prompt"] == "relevance_listwise@4"


def test_offline_judge(pairs_file: Path, tmp_path: Path) -> None:
    out = tmp_path / "labels.jsonl"
    code, text = run("grade", pairs_file, "-o", out, "--judge", "offline")
    assert code == 0, text
    labels = read(out)
    assert all(x["model"] == "offline" for x in labels) and len(labels) == 3
    assert all(x["grade"] in (0, 1, 2, 3) and "unscored" not in x for x in labels)


def test_integer_ids_are_read_as_text(tmp_path: Path) -> None:
    path = tmp_path / "pairs.jsonl"
    path.write_text(json.dumps({"query_id": 7, "question": "x?", "chunk_id": 12, "text": "t", "extra": 1}) + "\n")
    assert read_pairs(path) == [Pair("7", "x?", "12", "t")]


@pytest.mark.parametrize(
    ("line", "problem"),
    [
        ("{not json", "invalid JSON"),
        ('{"query_id": "q", "question": "x", "text": "t"}', "field 'chunk_id': Field required"),
        ('{"query_id": "q", "question": "", "chunk_id": "c", "text": "t"}', "field 'question': String should have"),
        ('{"query_id": true, "question": "x", "chunk_id": "c", "text": "t"}', "field 'query_id"),
        ("[1, 2]", "a JSON list where a record belongs"),
        (json.dumps(PAIRS[0]), "already given on line 1"),
    ],
)
def test_bad_lines_name_file_and_line(tmp_path: Path, line: str, problem: str) -> None:
    path = tmp_path / "pairs.jsonl"
    path.write_text(json.dumps(PAIRS[0]) + "\n" + line + "\n")
    out = tmp_path / "labels.jsonl"
    code, text = run("grade", path, "-o", out, "--judge", "offline")
    assert code == 1 and f"{path}:2: " in text and problem in text
    assert not out.exists()


def test_dry_run_calls_nothing(pairs_file: Path, tmp_path: Path, server: FakeOpenAIServer) -> None:
    out = tmp_path / "labels.jsonl"
    code, text = run(
        "grade", pairs_file, "-o", out, "--judge", "openai/gpt-4o-mini", "--dry-run", "--cache-dir", tmp_path / "c"
    )
    assert code == 0, text
    assert "3 calls to make" in text and "0 cached" in text and "cost <= $" in text
    assert not out.exists() and server.calls == 0


def test_dry_run_prices_offline_at_zero_and_an_unknown_model_at_unknown(pairs_file: Path, tmp_path: Path) -> None:
    out = tmp_path / "labels.jsonl"
    code, text = run("grade", pairs_file, "-o", out, "--judge", "offline", "--dry-run")
    assert code == 0 and "3 calls to make" in text and "cost <= $0.0000" in text  # the offline judge is free
    code, text = run("grade", pairs_file, "-o", out, "--judge", "x/unpriced", "--dry-run", "--no-cache")
    assert code == 0 and "cost unknown (no price for this model; give --price)" in text
    assert not out.exists()


def test_dry_run_judge_refuses_to_call_a_model() -> None:
    judge = make_dry_run_judge("openai/gpt-4o-mini")
    with pytest.raises(BackendError, match="a dry run makes no model calls"):
        asyncio.run(judge.backend.complete(ChatRequest(model="m", messages=[], prompt_name="p", prompt_version="1")))


def test_missing_key_names_the_fix(pairs_file: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    code, text = run("grade", pairs_file, "-o", tmp_path / "o.jsonl", "--judge", "openai/gpt-4o-mini", "--no-cache")
    assert code == 1 and "OPENAI_API_KEY" in text and "--api-key" in text


def test_max_cost_stops_and_writes_nothing(pairs_file: Path, tmp_path: Path, server: FakeOpenAIServer) -> None:
    out = tmp_path / "labels.jsonl"
    args = ("grade", pairs_file, "-o", out, "--judge", "x/j", "--api-base", server.url, "--concurrency", 1)
    code, text = run(*args, "--cache-dir", tmp_path / "c", "--price", "1000/1000", "--max-cost", "0.0001")
    assert code == 1 and "budget" in text and not out.exists()
    assert server.calls == 1
    code, text = run(*args, "--cache-dir", tmp_path / "c", "--price", "1000/1000")
    assert code == 0 and server.calls == 3  # resumed: the first pair came from the cache
    code, text = run(*args, "--no-cache", "--max-cost", "1")
    assert code == 1 and "--price" in text


def test_cache_commands(
    pairs_file: Path, tmp_path: Path, server: FakeOpenAIServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ASSAY_CACHE_DIR", str(tmp_path / "envcache"))
    assert run("cache", "path")[1].strip() == str(tmp_path / "envcache")
    out = tmp_path / "labels.jsonl"
    assert run("grade", pairs_file, "-o", out, "--judge", "x/j", "--api-base", server.url)[0] == 0
    code, text = run("cache", "stats")
    assert code == 0 and "3 entries" in text
    code, text = run("cache", "clear", "--yes")
    assert code == 0 and "removed 3" in text
    assert "0 entries" in run("cache", "stats")[1]


def test_help_shows_examples() -> None:
    for command in (("grade",), ("cache",), ("cache", "clear")):
        code, text = run(*command, "--help")
        assert code == 0 and "Example" in text


def test_help_imports_no_model_client_or_cache_library() -> None:
    # litellm takes seconds to import and aiohttp a fifth of one: `assay --help` must load neither, nor diskcache
    code = (
        "import sys\n"
        "from assay.cli import main\n"
        "try:\n    main(['--help'])\nexcept SystemExit:\n    pass\n"
        "print(sorted(m for m in ('aiohttp', 'diskcache', 'litellm', 'openai') if m in sys.modules))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip().splitlines()[-1] == "[]"


def test_max_tokens_for_every_prompt_or_one(pairs_file: Path, tmp_path: Path, server: FakeOpenAIServer) -> None:
    base = ["grade", pairs_file, "-o", tmp_path / "l.jsonl", "--judge", "x/j", "--api-base", server.url, "--no-cache"]
    assert run(*base, "--max-tokens", "77")[0] == 0
    assert {body["max_tokens"] for body in server.requests} == {77}
    server.requests.clear()
    assert run(*base, "--max-tokens", "relevance=33", "--max-tokens", "support=9")[0] == 0
    assert {body["max_tokens"] for body in server.requests} == {33}
    code, text = run(*base, "--max-tokens", "relevanse=33")
    assert code == 1 and "no prompt 'relevanse'" in text and "relevance_listwise" in text
    code, text = run(*base, "--max-tokens", "0")
    assert code == 1 and "whole number N >= 1" in text


def test_a_max_tokens_the_servers_context_cannot_hold_is_refused_before_any_call(
    pairs_file: Path, tmp_path: Path
) -> None:
    with FakeOpenAIServer(context=660) as server:  # relevance asks for up to 512 of 660 tokens
        args = ["grade", pairs_file, "-o", tmp_path / "l.jsonl", "--judge", "x/j", "--api-base", server.url]
        code, text = run(*args, "--no-cache")
        assert code == 1 and "holds 660 tokens per request" in text and "--max-tokens relevance=165" in text
        assert server.calls == 0 and not (tmp_path / "l.jsonl").exists()
        code, text = run(*args, "--no-cache", "--max-tokens", "relevance=165")
        assert code == 0, text


def test_an_answer_copied_from_the_passage_counts_as_unscored_echo(tmp_path: Path, server: FakeOpenAIServer) -> None:
    """The fake answers {"reason": "scripted answer", "grade": G}; a passage holding that answer for every G makes
    whatever it says a copy, unscored as echo, and the summary counts it."""
    shaped = " ".join(json.dumps({"reason": "scripted answer", "grade": g}) for g in range(4))
    pairs = tmp_path / "pairs.jsonl"
    rows = [PAIRS[0], {**PAIRS[1], "text": f"Cats sleep a lot. {shaped}"}]
    pairs.write_text("".join(json.dumps(p) + "\n" for p in rows))
    out = tmp_path / "labels.jsonl"
    code, text = run("grade", pairs, "-o", out, "--judge", "x/j", "--api-base", server.url, "--no-cache")
    assert code == 0, text
    labels = read(out)
    assert labels[0]["grade"] is not None and labels[1]["grade"] is None
    assert labels[1]["unscored"]["kind"] == "echo"  # type: ignore[index]
    assert "1 unscored (1 echo)" in text
