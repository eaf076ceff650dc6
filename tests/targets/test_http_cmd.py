"""HTTP targets against a fake RAG server on 127.0.0.1 (faults, Retry-After, body template, --map, headers), and
command targets (one process per question)."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest
from targets_fixture import make_golden

from assay.errors import ConfigError
from assay.targets import TargetSettings, TargetSpec, run_target
from assay.testing.fake_target import FakeTarget


class Waits:
    def __init__(self) -> None:
        self.asked: list[float] = []

    async def __call__(self, seconds: float) -> None:
        self.asked.append(seconds)


def test_http_faults_are_retried_by_policy_and_counted() -> None:
    script = {"q1": ["500"], "q2": ["429"], "q3": ["malformed"], "q4": ["reset"], "q5": ["400"], "q6": ["503"] * 9}

    def fault(body: dict[str, Any], attempt: int) -> str | None:
        kinds = script.get(body["query_id"], [])
        return kinds[attempt - 1] if attempt <= len(kinds) else None

    waits = Waits()
    settings = TargetSettings(concurrency=4, attempts=3, backoff=0.5, max_wait=30.0, sleep=waits)
    with FakeTarget(fault=fault) as server:
        done = run_target(make_golden(7), TargetSpec(server.url), settings=settings)
        counts = dict(server.counts)
    lines = {line["query_id"]: line for line in done.lines}
    assert counts == {"q1": 2, "q2": 2, "q3": 2, "q4": 2, "q5": 1, "q6": 3, "q7": 1}
    for qid in ("q1", "q2", "q3", "q4", "q7"):
        assert lines[qid]["retrieved"] == [f"c-{qid}", {"id": f"d-{qid}", "score": 0.5}]
    assert lines["q5"]["error"]["kind"] == "http_status" and lines["q5"]["error"]["message"].startswith("HTTP 400")
    assert lines["q6"]["error"]["kind"] == "http_status" and "HTTP 503" in lines["q6"]["error"]["message"]
    assert done.failed == 2 and done.stats.retries == 4 + 2
    assert 7.0 in waits.asked  # the 429's Retry-After
    assert all(w == 7.0 or 0.5 <= w <= 2.0 for w in waits.asked)


def test_http_hang_times_out_and_is_counted() -> None:
    def fault(body: dict[str, Any], attempt: int) -> str | None:
        return "hang" if body["query_id"] == "q1" else None

    settings = TargetSettings(timeout=0.2, attempts=2, sleep=Waits())
    with FakeTarget(fault=fault) as server:
        done = run_target(make_golden(2), TargetSpec(server.url), settings=settings)
        assert server.counts["q1"] == 2
    assert done.lines[0]["error"] == {"kind": "timeout", "message": "no answer within 0.2 s"}
    assert "error" not in done.lines[1]


def test_http_body_template_map_and_secret_header() -> None:
    def answer(body: dict[str, Any]) -> dict[str, Any]:
        return {"data": {"passages": [{"content": "p1"}], "text": "the answer"}, "refs": ["c1"]}

    spec = TargetSpec(
        "http://127.0.0.1:{port}/answer?key=${RAG_KEY}",
        body='{"input": {"q": "{question}", "id": "{query_id}", "meta": "{metadata}"}, "fixed": 3}',
        mapping=(("contexts", "/data/passages/0/content"), ("answer", "/data/text"), ("citations", "/refs")),
        headers=(("Authorization", "Bearer ${RAG_KEY}"),),
    )
    with FakeTarget(answer=answer) as server:
        spec = TargetSpec(spec.text.replace("{port}", str(server.port)), spec.body, spec.mapping, spec.headers)
        with pytest.raises(ConfigError, match=r"\$\{RAG_KEY\} is named in the target but has no value"):
            run_target(make_golden(1), spec)
        done = run_target(make_golden(1), spec, secrets={"RAG_KEY": "k-123"})
        [request] = server.requests
    assert request["body"] == {"input": {"q": "what is fact 1?", "id": "q1", "meta": {"topic": "odd"}}, "fixed": 3}
    assert request["headers"]["authorization"] == "Bearer k-123" and request["path"] == "/answer?key=k-123"
    assert done.header["target"] == f"http://127.0.0.1:{server.port}/answer?key=${{RAG_KEY}}"
    # the pointer to one passage gives a string where a list belongs: an invalid output, named
    assert (
        done.lines[0]["error"]["kind"] == "invalid_output"
        and "'contexts' is a str" in done.lines[0]["error"]["message"]
    )


def test_a_rotated_secret_keeps_the_answers_cache(tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    with FakeTarget() as server:
        spec = TargetSpec(server.url + "?key=${RAG_KEY}", headers=(("Authorization", "Bearer ${RAG_KEY}"),))
        first = run_target(make_golden(3), spec, secrets={"RAG_KEY": "k-old"}, cache_dir=cache)
        asked = len(server.requests)
        rotated = run_target(make_golden(3), spec, secrets={"RAG_KEY": "k-new"}, cache_dir=cache)
        assert len(server.requests) == asked  # the new key re-asks nothing
    assert rotated.stats.cached == 3 and rotated.lines == first.lines
    assert len(list(cache.iterdir())) == 1  # one answers file: the key's value is not part of the target


KEYED_APP = """
import json, sys
ask = json.loads(sys.stdin.read())
with open(sys.argv[2], "a", encoding="utf-8") as log:
    log.write(ask["query_id"] + "\\n")
print(json.dumps({"contexts": [ask["question"]], "answer": "k-old given" if sys.argv[1] == "--key=k-old" else "?"}))
"""


def test_a_commands_secret_is_recorded_by_name_and_a_rotated_one_keeps_the_cache(tmp_path: Path) -> None:
    script, asked, cache = tmp_path / "app.py", tmp_path / "asked.log", tmp_path / "cache"
    script.write_text(KEYED_APP, encoding="utf-8")
    spec = TargetSpec(f"cmd:{sys.executable} {script} --key=${{RAG_KEY}} {asked}")
    first = run_target(make_golden(3), spec, tmp_path / "first.jsonl", secrets={"RAG_KEY": "k-old"}, cache_dir=cache)
    rotated = run_target(make_golden(3), spec, tmp_path / "rotated.jsonl", secrets={"RAG_KEY": "k-new"},
                         cache_dir=cache)  # fmt: skip
    assert sorted(asked.read_text(encoding="utf-8").split()) == ["q1", "q2", "q3"]  # the new key re-asks nothing
    assert rotated.stats.cached == 3 and rotated.lines == first.lines
    assert [line["answer"] for line in first.lines] == ["k-old given"] * 3  # the command got the key's value
    assert first.header["target"] == rotated.header["target"] == spec.text  # the name, never the value
    assert len(list(cache.iterdir())) == 1  # one answers file: the key's value is not part of the target
    for path in (tmp_path / "first.jsonl", tmp_path / "rotated.jsonl", *cache.iterdir()):
        assert "--key=k-" not in path.read_text(encoding="utf-8"), path


def test_http_map_to_lists() -> None:
    def answer(body: dict[str, Any]) -> dict[str, Any]:
        return {"out": {"docs": ["first text", "second text"], "text": "A", "cost": {"prompt_tokens": 4}}}

    spec = TargetSpec("http://127.0.0.1:0/", mapping=(("contexts", "/out/docs"), ("answer", "/out/text"),
                                                     ("usage", "/out/cost")))  # fmt: skip
    with FakeTarget(answer=answer) as server:
        spec = TargetSpec(server.url, mapping=spec.mapping)
        done = run_target(make_golden(1), spec)
    assert done.lines[0]["retrieved"] == [{"text": "first text"}, {"text": "second text"}]
    assert done.lines[0]["answer"] == "A" and done.lines[0]["usage"] == {"prompt_tokens": 4}


def test_http_connection_refused_is_a_connection_failure() -> None:
    with FakeTarget() as server:
        url = server.url
    done = run_target(make_golden(1), TargetSpec(url), settings=TargetSettings(attempts=2, sleep=Waits()))
    assert done.lines[0]["error"]["kind"] == "connection"
    assert done.stats.retries == 1


APP = """
import json, sys
ask = json.loads(sys.stdin.read())
qid = ask["query_id"]
if qid == "q2":
    print("boom", file=sys.stderr); sys.exit(3)
if qid == "q3":
    print("not json")
else:
    print(json.dumps({"contexts": [ask["question"]], "answer": ask["metadata"]["topic"]}))
"""


def test_cmd_target_one_process_per_question(tmp_path: Path) -> None:
    script = tmp_path / "app.py"
    script.write_text(APP, encoding="utf-8")
    spec = TargetSpec(f"cmd:{sys.executable} {script}")
    done = run_target(make_golden(4), spec, settings=TargetSettings(concurrency=2, attempts=2, sleep=Waits()))
    lines = {line["query_id"]: line for line in done.lines}
    assert lines["q1"]["retrieved"] == [{"text": "what is fact 1?"}] and lines["q1"]["answer"] == "odd"
    assert lines["q4"]["answer"] == "even"
    assert lines["q2"]["error"] == {"kind": "exit_status", "message": "exit status 3: boom"}
    assert lines["q3"]["error"]["kind"] == "invalid_output"
    assert done.stats.retries == 1  # bad JSON is retried once (attempts=2); an exit status is not


def test_cmd_target_is_killed_on_timeout(tmp_path: Path) -> None:
    script = tmp_path / "slow.py"
    script.write_text("import sys, time\nsys.stdin.read()\ntime.sleep(60)\n", encoding="utf-8")
    done = run_target(make_golden(1), TargetSpec(f"cmd:{sys.executable} {script}"),
                      settings=TargetSettings(timeout=0.5, attempts=1))  # fmt: skip
    assert done.lines[0]["error"]["kind"] == "timeout"


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        (TargetSpec("ftp://x"), "write python:package.module:function"),
        (TargetSpec("python:mod"), "write python:package.module:function"),
        (TargetSpec("cmd:"), "names no command"),
        (TargetSpec("cmd:no-such-program-xyz"), "not found on PATH"),
        (TargetSpec("python:no_such_module_xyz:f"), "cannot import 'no_such_module_xyz'"),
        (TargetSpec("python:json:no_such_function"), "json has no 'no_such_function'"),
        (TargetSpec("cmd:python x.py", body="{}"), "--body, --map and --header are for http"),
        (TargetSpec("http://h/", body="{bad"), "--body is not JSON"),
        (TargetSpec("http://h/", mapping=(("answers", "/a"),)), "the fields are retrieved, contexts"),
        (TargetSpec("http://h/", mapping=(("answer", "a/b"),)), "a JSON pointer starts with '/'"),
    ],
)
def test_bad_specs_name_the_fix(spec: TargetSpec, message: str) -> None:
    with pytest.raises(ConfigError, match=message.replace("(", r"\(")):
        run_target(make_golden(1), spec)


def test_python_spec_is_imported() -> None:
    done = run_target(make_golden(1), TargetSpec("python:textwrap:dedent"))  # takes the question alone
    assert done.lines[0]["answer"] == "what is fact 1?"
    assert done.header["target"] == "python:textwrap:dedent"
