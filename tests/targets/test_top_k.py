"""``assay run --top-k N`` reaches every kind of target: a python function's ``top_k`` or ``k`` parameter (one with
neither is refused before any question is asked), ``"top_k"`` in an HTTP body (the default one, or a ``--body`` that
places ``{top_k}``; one that does not is refused), ``"top_k"`` in a command's JSON; recorded in the run header and
part of the answers cache's key."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from targets_fixture import make_golden

from assay.cli import main
from assay.errors import ConfigError
from assay.formats.jsonl import read_header
from assay.targets import TargetSpec, run_target
from assay.testing.fake_target import FakeTarget


def _passages(n: int) -> dict[str, Any]:
    return {"retrieved": [f"c{i}" for i in range(1, n + 1)], "answer": "a"}


def with_top_k(question: str, top_k: int = 2) -> dict[str, Any]:
    return _passages(top_k)


def with_k(question: str, k: int = 2) -> dict[str, Any]:
    return _passages(k)


def with_kwargs(question: str, **kwargs: Any) -> dict[str, Any]:
    return _passages(kwargs.get("top_k", 2))


def without(question: str) -> dict[str, Any]:
    return _passages(2)


@pytest.mark.parametrize("fn", [with_top_k, with_k, with_kwargs])
def test_a_python_target_gets_top_k_by_the_name_it_takes(fn: Any) -> None:
    done = run_target(make_golden(2), fn, top_k=5)
    assert [len(line["retrieved"]) for line in done.lines] == [5, 5]
    assert done.header["top_k"] == 5
    plain = run_target(make_golden(2), fn)  # not asked: the function's own default, and no top_k in the header
    assert [len(line["retrieved"]) for line in plain.lines] == [2, 2] and "top_k" not in plain.header


def test_a_python_target_without_the_parameter_is_refused_before_asking() -> None:
    calls: list[str] = []

    def counted(question: str) -> dict[str, Any]:
        calls.append(question)
        return _passages(1)

    with pytest.raises(ConfigError, match=r"takes no top_k \(or k\) parameter.*add `top_k: int = 10`"):
        run_target(make_golden(2), counted, top_k=5)
    assert calls == []
    with pytest.raises(ConfigError, match="at least 1 passage"):
        run_target(make_golden(1), with_top_k, top_k=0)


def test_http_targets_get_top_k_in_the_body() -> None:
    with FakeTarget() as server:
        run_target(make_golden(1), TargetSpec(server.url), top_k=7)
        run_target(make_golden(1), TargetSpec(server.url))
        templated = TargetSpec(server.url, body='{"q": "{question}", "n": "{top_k}"}')
        run_target(make_golden(1), templated, top_k=3)
        with pytest.raises(ConfigError, match=r"--body has no \{top_k\}"):
            run_target(make_golden(1), TargetSpec(server.url, body='{"q": "{question}"}'), top_k=3)
        bodies = [request["body"] for request in server.requests]
    assert bodies == [
        {"question": "what is fact 1?", "query_id": "q1", "metadata": {"topic": "odd"}, "top_k": 7},
        {"question": "what is fact 1?", "query_id": "q1", "metadata": {"topic": "odd"}},
        {"q": "what is fact 1?", "n": 3},
    ]


APP = """
import json, sys
ask = json.loads(sys.stdin.read())
print(json.dumps({"retrieved": ["c%d" % i for i in range(1, ask.get("top_k", 2) + 1)], "answer": json.dumps(ask)}))
"""


def test_a_command_target_gets_top_k_in_its_json(tmp_path: Path) -> None:
    script = tmp_path / "app.py"
    script.write_text(APP, encoding="utf-8")
    done = run_target(make_golden(1), TargetSpec(f"cmd:{sys.executable} {script}"), top_k=4)
    [line] = done.lines
    assert len(line["retrieved"]) == 4 and json.loads(line["answer"])["top_k"] == 4


CLI_APP = """
calls = []

def answer(question, query_id, top_k=2):
    calls.append((query_id, top_k))
    return {"retrieved": ["c" + str(i) for i in range(1, top_k + 1)], "answer": "yes"}
"""


def test_assay_run_top_k_is_recorded_and_asks_again_for_another_k(tmp_path: Path, monkeypatch: Any) -> None:
    make_golden(2).save(tmp_path / "golden")
    (tmp_path / "topk_app.py").write_text(CLI_APP, encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    out, cache = tmp_path / "app.jsonl", tmp_path / "cache"
    base = ["run", str(tmp_path / "golden"), "--target", "python:topk_app:answer", "-o", str(out), "--cache-dir",
            str(cache), "--label", "v1"]  # fmt: skip
    for k in ("6", "6", "3"):
        result = CliRunner().invoke(main, [*base, "--top-k", k])
        assert result.exit_code == 0, result.output
        head = read_header(out)
        assert head is not None and head.top_k == int(k)
    import topk_app  # the module the command imported, with its call log

    assert sorted(topk_app.calls) == [("q1", 3), ("q1", 6), ("q2", 3), ("q2", 6)]  # the second 6: from the cache
