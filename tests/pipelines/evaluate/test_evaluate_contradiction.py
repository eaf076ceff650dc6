"""Self-contradiction in conversations: which earlier answers a turn is checked against, the offline judge's rule,
the scripted judge through the fake server (cached, a failure unscored), the per-conversation rate, the dry run."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from evaluate_fixture import good_lines, qid
from test_evaluate_conversations import _run, _turned, conversational
from test_evaluate_judged import FAST, _schema, http_judge, scripted

from assay.judge import make_judge
from assay.judge.offline import offline_answer
from assay.pipelines.evaluate import evaluate
from assay.pipelines.evaluate.judging.contradiction import earlier_answers
from assay.pipelines.evaluate.pipeline import estimate_evaluation
from assay.pipelines.evaluate.runs.read import load_run
from assay.pipelines.evaluate.scoring.conversations import contradiction_rates
from assay.report.markdown import render_markdown
from assay.results import QueryResult
from assay.testing import FakeOpenAIServer
from assay.testing.scripted_judges import responder
from assay.types import Turn

ONLY = replace(FAST, metrics=("ndcg@10", "contradiction"))
CONTRADICTING = "The Alder kettle warranty lasts 99 days from the date of purchase."  # turn 1 of c0 said 14


def _lines() -> list[dict[str, Any]]:
    lines = _turned(good_lines())
    lines[2]["answer"] = CONTRADICTING  # c0, turn 3 (the Cedar stove's turn) contradicts turn 1
    return lines


def test_earlier_answers_skip_unanswered_turns_and_leave_first_turns_out(tmp_path: Path) -> None:
    gold = conversational()
    lines = _lines()
    del lines[3]["answer"]  # c1's first turn unanswered
    run = load_run(_run(tmp_path / "t.jsonl", lines, "turns"), gold)
    earlier = earlier_answers(gold, run)
    assert qid(0) not in earlier and [e["id"] for e in earlier[qid(2)]] == ["1", "2"]
    assert qid(4) not in earlier and [e["id"] for e in earlier[qid(5)]] == ["2"]


def test_a_context_turns_own_answer_is_an_earlier_answer_but_never_checked(tmp_path: Path) -> None:
    gold = conversational()
    gold.conversations[0].turns.insert(1, Turn(question_id="c0-t2", utterance="and the kettle?", judged=False,
                                               rewrite="And the Alder kettle?", answer="14 days."))  # fmt: skip
    lines = _lines()
    lines[1]["turn"], lines[2]["turn"] = 2, 3  # q01 and q02 come after the context turn
    context = {"query_id": "c0-t2", "conversation_id": "c0", "turn": 1, "retrieved": [], "answer": "It is 14 days."}
    run = load_run(_run(tmp_path / "t.jsonl", [*lines, context], "turns"), gold)
    earlier = earlier_answers(gold, run)
    assert "c0-t2" not in earlier and run.counts.context_turns == 1
    assert [(e["id"], e["question"], e["text"]) for e in earlier[qid(1)]][1] == ("2", "and the kettle?",
                                                                               "It is 14 days.")  # fmt: skip
    assert [e["id"] for e in earlier[qid(2)]] == ["1", "2", "3"]


def test_offline_rule_needs_the_same_unit_and_thing() -> None:
    earlier = [{"id": "1", "text": "The Alder kettle warranty lasts 14 days from the date of purchase."}]

    def check(answer: str) -> tuple[bool, list[int]]:
        out = offline_answer("contradiction", {"question": "q", "answer": answer, "earlier": earlier})
        return out.contradicts, out.earlier_turns  # type: ignore[attr-defined]

    assert check(CONTRADICTING) == (True, [1])
    assert check("The Alder kettle warranty lasts 14 days, as said.") == (False, [])  # the same number
    assert check("The Birch lantern warranty lasts 30 days from the date of purchase.") == (False, [])  # another thing
    assert check("The Alder kettle weighs 99 grams.") == (False, [])  # another unit


def test_offline_judge_flags_the_contradicting_turn_and_rates_each_conversation(tmp_path: Path) -> None:
    result, rows = evaluate(conversational(), [_run(tmp_path / "t.jsonl", _lines(), "turns")],
                            judge=make_judge("offline", cache_dir=tmp_path / "cache"), settings=FAST)  # fmt: skip
    by_id = {row.query_id: row.metrics for row in rows}
    assert "contradiction" not in by_id[qid(0)]  # a first turn has nothing to contradict
    assert by_id[qid(1)]["contradiction"] == 0.0 and by_id[qid(2)]["contradiction"] == 1.0
    summary = result.runs[0].conversations
    assert summary is not None
    assert (summary.contradicting, summary.contradiction_checked, summary.contradiction_unscored) == (1, 8, 0)
    assert summary.contradiction_rate == pytest.approx((1 / 2) / 4)  # c0: 1 of 2 checked turns; c1-c3: 0
    assert result.runs[0].metrics["contradiction"].mean == pytest.approx(1 / 8)
    shown = render_markdown(result)
    assert "answers contradicting an earlier answer of the conversation 0.125 per conversation (mean of 4)" in shown
    assert "1 of 8 turns checked" in shown


def test_scripted_judge_through_the_fake_server_cached_and_a_failure_unscored(tmp_path: Path) -> None:
    contradiction = responder("unbiased", {})

    def answer(body: dict[str, Any]) -> str:
        if _schema(body) != "ContradictionCheck":
            return scripted(body)
        if "Birch" in json.dumps(body):  # c0's turn 2 and turn 3 mention the Birch lantern: the judge breaks there
            return "not JSON"
        return contradiction(body)

    run = [_run(tmp_path / "t.jsonl", _lines(), "turns")]
    with FakeOpenAIServer(answer) as server:
        judge = http_judge(server, tmp_path / "cache")
        result, rows = evaluate(conversational(), run, judge=judge, settings=ONLY)
        asked = [b for b in server.requests if _schema(b) == "ContradictionCheck"]
        again, _ = evaluate(conversational(), run, judge=http_judge(server, tmp_path / "cache"), settings=ONLY)
        later = [b for b in server.requests if _schema(b) == "ContradictionCheck"][len(asked) :]
        assert later and all("Birch" in json.dumps(b) for b in later)  # answers cached; failures never are
    by_id = {row.query_id: row for row in rows}
    assert by_id[qid(1)].metrics["contradiction"] is None and by_id[qid(1)].unscored["contradiction"]
    assert by_id[qid(4)].metrics["contradiction"] == 1.0  # the scripted judge: 30 days then 60, no number shared
    summary = result.runs[0].conversations
    assert summary is not None and summary.contradiction_unscored == 2
    assert summary.contradiction_conversations == 3  # c0 left out of the rate, not counted as 0 or 1
    assert again.runs[0].conversations == summary


def test_rates_by_hand_and_the_dry_run_counts_the_calls(tmp_path: Path) -> None:
    gold = conversational()

    def row(q: str, value: float | None) -> QueryResult:
        return QueryResult(run="r", query_id=q, metrics={"contradiction": value})

    rows = {qid(1): row(qid(1), 1.0), qid(2): row(qid(2), 0.0), qid(4): row(qid(4), None), qid(5): row(qid(5), 0.0)}
    assert contradiction_rates(gold, rows) == {"c0": 0.5, "c1": None}
    estimate = estimate_evaluation(gold, [_run(tmp_path / "t.jsonl", _lines(), "turns")],
                                   make_judge("offline", cache_dir=tmp_path / "cache"), FAST)  # fmt: skip
    assert estimate["contradiction"].calls == 8 and estimate["contradiction"].cached == 0


def test_a_repeated_run_rates_each_repeat_then_takes_the_mean(tmp_path: Path) -> None:
    head = {"assay": "runs", "version": 1, "target": "python:app:answer", "conversation_mode": "turns",
            "history": "own", "repeats": 2}  # fmt: skip
    lines = [{**line, "repeat": 0} for line in _lines()]  # c0's third turn contradicts its first
    lines += [{**line, "repeat": 1} for line in _turned(good_lines())]  # asked again, it does not
    path = tmp_path / "t.jsonl"
    path.write_text("\n".join(json.dumps(x) for x in [head, *lines]) + "\n", encoding="utf-8")
    result, rows = evaluate(conversational(), [path], judge=make_judge("offline", cache_dir=tmp_path / "cache"),
                            settings=ONLY)  # fmt: skip
    summary = result.runs[0].conversations
    assert summary is not None and summary.repeats == 2
    assert summary.contradiction_rate == pytest.approx((0.5 + 0.0) / 2 / 4)  # c0: 1/2 then 0; c1-c3: 0 in both
    assert (summary.contradicting, summary.contradiction_checked, summary.contradiction_unscored) == (1, 16, 0)
    assert {row.query_id: row.metrics.get("contradiction") for row in rows}[qid(2)] == 0.5  # the turn's mean
    assert "asked 2 times (a conversation's shares are its mean over the repeats" in render_markdown(result)
