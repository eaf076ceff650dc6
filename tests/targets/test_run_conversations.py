"""Calling a conversational system: the history as OpenAI messages, reference or own, the rewrites mode, failures,
the cache keyed by the history sent, and python, http and cmd targets."""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path
from typing import Any

import pytest
from targets_fixture import make_golden

from assay.errors import ConfigError
from assay.formats.golden import GoldenSet
from assay.formats.jsonl import read_header
from assay.targets import Conversing, TargetSettings, TargetSpec, run_target
from assay.testing.fake_target import FakeTarget
from assay.types import Conversation, Turn


async def _no_sleep(_: float) -> None:
    return None


FAST = TargetSettings(concurrency=4, attempts=1, sleep=_no_sleep)
UTTERANCES = {"q1": "what is fact 1?", "q2": "and the next one?", "q3": "how does it compare?"}


def conversational(n: int = 4) -> GoldenSet:
    """``make_golden(n)`` with conversation ``c1`` of turns q1, q2, q3 (q2 and q3 lean on the history); q4 on its
    own. Reference answers ``ref i``."""
    gold = make_golden(n)
    for i, question in enumerate(gold.questions, start=1):
        question.reference_answer = f"ref {i}"
    turns = [Turn(question_id=qid, utterance=text, depends_on_history=qid != "q1",
                  dependency="none" if qid == "q1" else "pronoun") for qid, text in UTTERANCES.items()]  # fmt: skip
    gold.conversations = [Conversation(id="c1", turns=turns)]
    return gold


def with_context() -> GoldenSet:
    """``conversational()`` with a context turn (unjudged, no question) between q1 and q2: ``c1-t2`` "and its
    colour?", reference answer ``ctx ref``; q2 is then turn 2 (from 0) of c1."""
    gold = conversational()
    context = Turn(question_id="c1-t2", utterance="and its colour?", judged=False, rewrite="What colour is fact 1?",
                   answer="ctx ref", dropped="leakage", depends_on_history=True, dependency="pronoun")  # fmt: skip
    gold.conversations[0].turns.insert(1, context)
    return gold


class Recorder:
    """A conversational system: answers ``A(<utterance>)`` and reports a rewrite; records what each call got."""

    def __init__(self, fail: str | None = None) -> None:
        self.calls: list[tuple[str, str, Any]] = []
        self.fail = fail

    def __call__(self, question: str, query_id: str, messages: list[dict[str, str]] | None = None) -> dict[str, Any]:
        self.calls.append((query_id, question, messages))
        if query_id == self.fail:
            raise ValueError("boom")
        return {"retrieved": ["c1"], "answer": f"A({question})", "rewrite": f"rewritten {query_id}"}


def test_reference_history_sends_the_golden_answers_and_marks_the_turns(tmp_path: Path) -> None:
    app = Recorder()
    done = run_target(conversational(), app, tmp_path / "run.jsonl", settings=FAST)
    got = {qid: (question, messages) for qid, question, messages in app.calls}
    assert got["q3"] == ("how does it compare?", [
        {"role": "user", "content": "what is fact 1?"}, {"role": "assistant", "content": "ref 1"},
        {"role": "user", "content": "and the next one?"}, {"role": "assistant", "content": "ref 2"},
        {"role": "user", "content": "how does it compare?"},
    ])  # fmt: skip
    assert got["q1"] == ("what is fact 1?", [{"role": "user", "content": "what is fact 1?"}])
    assert got["q4"] == ("what is fact 4?", None)  # a single question: no history
    lines = {line["query_id"]: line for line in done.lines}
    assert [lines[q].get("turn") for q in ("q1", "q2", "q3", "q4")] == [0, 1, 2, None]
    assert lines["q2"]["conversation_id"] == "c1" and lines["q2"]["rewrite"] == "rewritten q2"
    assert "rewrite" not in lines["q4"] and "conversation_id" not in lines["q4"]
    header = read_header(tmp_path / "run.jsonl")
    assert header is not None and (header.conversation_mode, header.history) == ("turns", "reference")


def test_own_history_asks_in_order_with_the_systems_answers() -> None:
    app = Recorder()
    done = run_target(conversational(), app, settings=FAST, conversing=Conversing(history="own"))
    order = [qid for qid, _, _ in app.calls if qid != "q4"]
    assert order == ["q1", "q2", "q3"]
    messages = {qid: m for qid, _, m in app.calls}
    assert messages["q3"] == [
        {"role": "user", "content": "what is fact 1?"}, {"role": "assistant", "content": "A(what is fact 1?)"},
        {"role": "user", "content": "and the next one?"}, {"role": "assistant", "content": "A(and the next one?)"},
        {"role": "user", "content": "how does it compare?"},
    ]  # fmt: skip
    assert done.failed == 0 and [line["query_id"] for line in done.lines] == ["q1", "q2", "q3", "q4"]


def test_reference_history_holds_a_context_turns_answer_without_asking_it() -> None:
    app = Recorder()
    done = run_target(with_context(), app, settings=FAST)
    got = {qid: messages for qid, _, messages in app.calls}
    assert sorted(got) == ["q1", "q2", "q3", "q4"]  # the context turn is not asked
    assert got["q2"] == [
        {"role": "user", "content": "what is fact 1?"}, {"role": "assistant", "content": "ref 1"},
        {"role": "user", "content": "and its colour?"}, {"role": "assistant", "content": "ctx ref"},
        {"role": "user", "content": "and the next one?"},
    ]  # fmt: skip
    assert [(line["query_id"], line.get("turn")) for line in done.lines] == [("q1", 0), ("q2", 2), ("q3", 3),
                                                                            ("q4", None)]  # fmt: skip


def test_own_history_asks_a_context_turn_in_its_place_and_eval_skips_its_line(tmp_path: Path) -> None:
    from assay.cli._target_options import summary_line
    from assay.pipelines.evaluate import evaluate

    app, gold = Recorder(), with_context()
    done = run_target(gold, app, tmp_path / "own.jsonl", settings=FAST, conversing=Conversing(history="own"))
    assert [qid for qid, _, _ in app.calls if qid != "q4"] == ["q1", "c1-t2", "q2", "q3"]
    messages = {qid: m for qid, _, m in app.calls}
    assert messages["c1-t2"][-2:] == [{"role": "assistant", "content": "A(what is fact 1?)"},
                                      {"role": "user", "content": "and its colour?"}]  # fmt: skip
    assert messages["q2"][2:4] == [{"role": "user", "content": "and its colour?"},
                                   {"role": "assistant", "content": "A(and its colour?)"}]  # fmt: skip
    assert [line["query_id"] for line in done.lines] == ["q1", "c1-t2", "q2", "q3", "q4"]
    assert (done.lines[1]["conversation_id"], done.lines[1]["turn"]) == ("c1", 1)
    said = summary_line(done, gold)
    assert said.startswith(f"wrote {tmp_path / 'own.jsonl'}: 4 questions and 1 context turn (asked for the history, "
                           "not scored), 5 answered")  # fmt: skip
    result, rows = evaluate(gold, [tmp_path / "own.jsonl"])
    counts = result.runs[0].counts
    assert (counts.context_turns, counts.unknown_query_ids, counts.queries_evaluated) == (1, 0, 4)
    assert sorted({row.query_id for row in rows}) == ["q1", "q2", "q3", "q4"]  # the context turn is never scored
    assert result.runs[0].conversations is not None and result.runs[0].conversations.turns == 3


def test_own_history_resumes_from_the_cache_with_a_context_turn(tmp_path: Path) -> None:
    own, cache = Conversing(history="own"), tmp_path / "cache"
    first = run_target(with_context(), Recorder(fail="q3"), settings=FAST, cache_dir=cache, conversing=own)
    assert first.failed == 1
    again = Recorder()
    second = run_target(with_context(), again, settings=FAST, cache_dir=cache, conversing=own)
    assert [qid for qid, _, _ in again.calls] == ["q3"] and second.failed == 0  # the rest came from the cache
    assert again.calls[0][2][3] == {"role": "assistant", "content": "A(and its colour?)"}  # its history kept
    assert [line["query_id"] for line in second.lines] == ["q1", "c1-t2", "q2", "q3", "q4"]


def test_rewrites_mode_does_not_ask_a_context_turn() -> None:
    app = Recorder()
    run_target(with_context(), app, settings=FAST, conversing=Conversing(mode="rewrites"))
    assert sorted(qid for qid, _, _ in app.calls) == ["q1", "q2", "q3", "q4"]


def test_own_history_a_failed_turn_ends_its_conversation() -> None:
    app = Recorder(fail="q2")
    done = run_target(conversational(), app, settings=FAST, conversing=Conversing(history="own"))
    lines = {line["query_id"]: line for line in done.lines}
    assert lines["q2"]["error"]["kind"] == "exception"
    assert lines["q3"]["error"]["kind"] == "history_failed"
    assert "turn 1 (q2) of conversation c1 failed (exception)" in lines["q3"]["error"]["message"]
    assert (lines["q3"]["conversation_id"], lines["q3"]["turn"]) == ("c1", 2)
    assert "q3" not in [qid for qid, _, _ in app.calls]
    assert done.stats.failed == {"exception": 1, "history_failed": 1}


def test_the_cache_keys_a_turn_by_the_history_sent(tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    own = Conversing(history="own")
    run_target(conversational(), Recorder(), settings=FAST, cache_dir=cache, conversing=own)
    again = Recorder()
    second = run_target(conversational(), again, settings=FAST, cache_dir=cache, conversing=own)
    assert again.calls == [] and second.stats.cached == 4
    assert [line.get("turn") for line in second.lines] == [0, 1, 2, None]
    reference = Recorder()
    run_target(conversational(), reference, settings=FAST, cache_dir=cache)
    # the first turn and the single question sent the same as before; later turns carry other answers
    assert sorted(qid for qid, _, _ in reference.calls) == ["q2", "q3"]


def test_rewrites_mode_asks_each_rewrite_alone(tmp_path: Path) -> None:
    app = Recorder()
    done = run_target(conversational(), app, tmp_path / "r.jsonl", settings=FAST,
                      conversing=Conversing(mode="rewrites"))  # fmt: skip
    assert sorted(app.calls) == [(f"q{i}", f"what is fact {i}?", None) for i in range(1, 5)]
    assert done.lines[2]["turn"] == 2 and done.lines[2]["conversation_id"] == "c1"
    header = read_header(tmp_path / "r.jsonl")
    assert header is not None and (header.conversation_mode, header.history) == ("rewrites", None)


def test_async_function_and_repeats_number_each_conversation_apart() -> None:
    seen: list[tuple[str, int | None, int]] = []

    async def app(question: str, query_id: str, repeat: int | None, messages: Any = None) -> str:
        await asyncio.sleep(0)
        seen.append((query_id, repeat, len(messages or [])))
        return f"{query_id}/{repeat}"

    done = run_target(conversational(), app, settings=FAST, repeats=2, conversing=Conversing(history="own"))
    assert len(done.lines) == 8 and done.failed == 0
    assert ("q3", 1, 5) in seen and ("q4", 0, 0) in seen
    assert [(line["query_id"], line.get("repeat")) for line in done.lines][:4] == [("q1", 0), ("q2", 0), ("q3", 0),
                                                                                  ("q4", 0)]  # fmt: skip


def test_http_target_gets_the_messages_in_the_default_body_and_the_template() -> None:
    with FakeTarget() as server:
        run_target(conversational(), TargetSpec(server.url), settings=FAST)
        bodies = {r["body"]["query_id"]: r["body"] for r in server.requests}
    assert bodies["q2"]["messages"][-1] == {"role": "user", "content": "and the next one?"}
    assert bodies["q2"]["question"] == "and the next one?" and "messages" not in bodies["q4"]
    body = '{"input": "{question}", "history": "{messages}"}'
    with FakeTarget(answer=lambda b: {"answer": "x", "query": "standalone"}) as server:
        done = run_target(conversational(), TargetSpec(server.url, body=body), settings=FAST)
        sent = [r["body"] for r in server.requests]
    assert sorted(len(b["history"]) for b in sent) == [0, 1, 3, 5]  # q4 gets [], turns 1, 3 and 5 messages
    assert {line.get("rewrite") for line in done.lines} == {"standalone", None}


def test_cmd_target_reads_the_messages_on_stdin(tmp_path: Path) -> None:
    script = tmp_path / "app.py"
    code = "import json, sys\nask = json.load(sys.stdin)\nsays = str(len(ask.get('messages', [])))\n"
    code += "print(json.dumps({'answer': says}))\n"
    script.write_text(code, encoding="utf-8")
    done = run_target(conversational(), TargetSpec(f"cmd:{sys.executable} {script}"), settings=FAST)
    assert [line["answer"] for line in done.lines] == ["1", "3", "5", "0"]


@pytest.mark.parametrize(("conversing", "flag"), [(Conversing(history="mine"), "--history mine"),
                                                 (Conversing(mode="both"), "--conversation-mode both")])  # fmt: skip
def test_bad_modes_name_the_flag(conversing: Conversing, flag: str) -> None:
    with pytest.raises(ConfigError, match=flag):
        run_target(conversational(), Recorder(), settings=FAST, conversing=conversing)


def test_run_cli_flags(tmp_path: Path) -> None:
    from click.testing import CliRunner

    from assay.cli import main

    gold = tmp_path / "golden"
    conversational().save(gold)
    out = tmp_path / "run.jsonl"
    result = CliRunner().invoke(
        main,
        [
            "run",
            str(gold),
            "--target",
            f"cmd:{sys.executable} -c pass",
            "-o",
            str(out),
            "--history",
            "own",
            "--attempts",
            "1",
            "--cache-dir",
            str(tmp_path / "c"),
        ],
    )
    assert result.exit_code == 1  # the command prints nothing: every turn fails (invalid_output)
    assert "2 history_failed" in result.output
    bad = CliRunner().invoke(main, ["run", str(gold), "--target", "cmd:true", "-o", str(out), "--history", "x"])
    assert bad.exit_code == 2 and "--history" in bad.output
