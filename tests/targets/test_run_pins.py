"""``run_target`` and ``asks_of`` pinned by hand: a golden set read from its folder, the asks of a plain run and of
conversations asked once, the progress callback, a failure's message cleaned of the secret it quotes, the header's
``repeats`` only for a repeated run, and the words of the nothing-answered error."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from targets_fixture import make_golden
from test_run_conversations import conversational

from assay.errors import NothingProduced
from assay.targets import Conversing, TargetSettings, TargetSpec, run_target
from assay.targets.run import TargetRun, asks_of
from assay.targets.runner import RunStats


async def _no_sleep(_: float) -> None:
    return None


ONCE = TargetSettings(concurrency=2, attempts=1, sleep=_no_sleep)


def test_asks_of_asks_each_question_once_by_default() -> None:
    asks = asks_of(make_golden(2))
    assert [(ask.query_id, ask.question, dict(ask.metadata), ask.repeat) for ask in asks] == [
        ("q1", "what is fact 1?", {"topic": "odd"}, None),
        ("q2", "what is fact 2?", {"topic": "even"}, None),
    ]


def test_turns_asked_once_carry_no_repeat() -> None:
    asks = asks_of(conversational(), 1, Conversing())
    assert [(ask.query_id, ask.repeat) for ask in asks] == [("q1", None), ("q2", None), ("q3", None), ("q4", None)]
    twice = asks_of(conversational(), 2, Conversing())
    assert [ask.repeat for ask in twice] == [0, 0, 0, 0, 1, 1, 1, 1]


def test_a_golden_set_is_read_from_its_folder(tmp_path: Path) -> None:
    make_golden(2).save(tmp_path / "golden")
    done = run_target(str(tmp_path / "golden"), lambda question: f"A: {question}", settings=ONCE)
    assert [line["answer"] for line in done.lines] == ["A: what is fact 1?", "A: what is fact 2?"]


def test_progress_is_told_of_every_question() -> None:
    seen: list[int] = []
    run_target(make_golden(3), lambda question: "ok", settings=ONCE, progress=lambda stats: seen.append(stats.done))
    assert seen[0] == 0 and seen[-1] == 3 and len(seen) == 4


FAILING_APP = "import sys\nsys.stdin.read()\nsys.stderr.write('refused key ' + sys.argv[1])\nsys.exit(2)\n"


def test_a_failures_message_names_the_secret_never_its_value(tmp_path: Path) -> None:
    script = tmp_path / "app.py"
    script.write_text(FAILING_APP, encoding="utf-8")
    spec = TargetSpec(f"cmd:{sys.executable} {script} ${{RAG_KEY}}")
    done = run_target(make_golden(1), spec, tmp_path / "run.jsonl", settings=ONCE, secrets={"RAG_KEY": "k-secret-9"})
    assert done.lines[0]["error"]["message"] == "exit status 2: refused key ${RAG_KEY}"
    assert "k-secret-9" not in (tmp_path / "run.jsonl").read_text(encoding="utf-8")


def test_the_header_says_repeats_only_for_a_repeated_run() -> None:
    assert "repeats" not in run_target(make_golden(1), lambda question: "ok", settings=ONCE).header
    assert run_target(make_golden(1), lambda question: "ok", settings=ONCE, repeats=2).header["repeats"] == 2


def test_nothing_answered_lists_every_kind_and_says_where_it_was_written(tmp_path: Path) -> None:
    def app(question: str, query_id: str) -> str:
        if query_id == "q1":
            raise ValueError("bad")
        return 42  # type: ignore[return-value]  # not an answer: invalid output

    done = run_target(make_golden(3), app, settings=ONCE)
    with pytest.raises(NothingProduced) as refused:
        done.check()
    assert str(refused.value) == (
        "the target answered none of 3 questions: 2 invalid_output, 1 exception; the first: ValueError: bad. "
        "Check that the system runs (try one question by hand), then rerun"
    )
    written = run_target(make_golden(3), app, tmp_path / "run.jsonl", settings=ONCE)
    with pytest.raises(NothingProduced, match=rf"none of 3 questions \(written to {tmp_path / 'run.jsonl'}\): 2 inv"):
        written.check()


def test_nothing_answered_without_counted_kinds_says_all_failed() -> None:
    line = {"query_id": "q1", "error": {"kind": "timeout", "message": "no answer within 1 s"}}
    run = TargetRun({}, [line], RunStats(total=1))
    with pytest.raises(NothingProduced) as refused:
        run.check()
    assert "none of 1 questions: all failed; the first: no answer within 1 s." in str(refused.value)
