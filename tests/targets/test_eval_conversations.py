"""Conversational systems evaluated in one call: ``assay.evaluate(..., conversing=...)`` (the history each turn gets,
the rewrites, both ways with the history gain)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from targets_fixture import make_golden
from test_run_conversations import Recorder, conversational

import assay
from assay.errors import ConfigError
from assay.targets import Conversing

SETTINGS = assay.EvalSettings(k_values=(1,), metrics=("P@1",), n_boot=100)
REFERENCE = [
    {"role": "user", "content": "what is fact 1?"}, {"role": "assistant", "content": "ref 1"},
    {"role": "user", "content": "and the next one?"}, {"role": "assistant", "content": "ref 2"},
    {"role": "user", "content": "how does it compare?"},
]  # fmt: skip
OWN = [
    {"role": "user", "content": "what is fact 1?"}, {"role": "assistant", "content": "A(what is fact 1?)"},
    {"role": "user", "content": "and the next one?"}, {"role": "assistant", "content": "A(and the next one?)"},
    {"role": "user", "content": "how does it compare?"},
]  # fmt: skip


def _asked(conversing: Conversing | None) -> dict[str, tuple[str, Any]]:
    app = Recorder()
    assay.evaluate(conversational(), {"app": app}, settings=SETTINGS, conversing=conversing)
    return {qid: (question, messages) for qid, question, messages in app.calls}


@pytest.mark.parametrize(
    ("conversing", "q3"),
    [
        (None, ("how does it compare?", REFERENCE)),  # the default: the raw turn with the golden answers before it
        (Conversing(history="reference"), ("how does it compare?", REFERENCE)),
        (Conversing(history="own"), ("how does it compare?", OWN)),  # its own earlier answers
        (Conversing(mode="rewrites"), ("what is fact 3?", None)),  # the standalone rewrite, alone
    ],
)
def test_the_python_api_asks_the_turns_as_conversing_says(conversing: Conversing | None, q3: Any) -> None:
    asked = _asked(conversing)
    assert asked["q3"] == q3
    assert asked["q4"] == ("what is fact 4?", None)  # a single question, whatever the modes


def rewrite_helps(question: str, query_id: str, messages: Any = None) -> dict[str, Any]:
    """Finds the chunk of a turn asked as its rewrite ("what is fact 3?"), never that of a raw turn that leans on the
    history ("and the next one?": chunk c1)."""
    number = question.rstrip("?").rsplit(" ", 1)[-1]
    return {"retrieved": [f"c{number}" if number.isdigit() else "c1"], "answer": question}


def test_both_ways_are_two_runs_and_their_history_gain(tmp_path: Path) -> None:
    result, rows = assay.evaluate(conversational(), {"app": rewrite_helps}, settings=SETTINGS,
                                  conversing=Conversing(mode="both", history="own"), run_dir=tmp_path)  # fmt: skip
    assert [run.name for run in result.runs] == ["app", "app (rewrites)"]
    assert {path.name for path in tmp_path.iterdir()} == {"app.jsonl", "app (rewrites).jsonl"}
    [gain] = result.history_gain
    assert (gain.turns, gain.rewrites, gain.metric, gain.history) == ("app", "app (rewrites)", "P@1", "own")
    # turns: q1 found (c1), q2 and q3 miss; rewrites: all three found
    assert gain.all is not None and gain.all.n == 3 and gain.all.delta == pytest.approx(-2 / 3)
    assert len(rows) == 8


def test_both_ways_needs_conversations_and_asks_nothing_without() -> None:
    app = Recorder()
    with pytest.raises(ConfigError, match="--conversation-mode both asks app the raw turns and the rewrites"):
        assay.evaluate(make_golden(3), {"app": app}, settings=SETTINGS, conversing=Conversing(mode="both"))
    assert app.calls == []
    with pytest.raises(ConfigError, match="assay run writes one run: give turns or rewrites"):
        assay.run(conversational(), app, conversing=Conversing(mode="both"))
