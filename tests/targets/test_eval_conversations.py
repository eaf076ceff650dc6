"""Conversational systems evaluated in one call: ``assay.evaluate(..., conversing=...)`` (the history each turn gets,
the rewrites, both ways with the history gain) and ``assay eval --target-conversation-mode both`` on a golden set the
offline judge built."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from targets_fixture import make_golden
from test_run_conversations import Recorder, conversational

import assay
from assay.cli import main
from assay.errors import ConfigError
from assay.judge import make_judge
from assay.pipelines.bootstrap import DEMO_CONVERSATIONS, build_golden
from assay.targets import Conversing

ROOT = Path(__file__).resolve().parents[2]
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


# -- assay eval --target-conversation-mode both, on a golden set the offline judge built ------------------------------

APP = """
import json
from pathlib import Path

CHUNKS = [json.loads(line) for line in Path("golden/chunks.jsonl").read_text().splitlines()[1:]]


def _words(text):
    return {w.strip("?.,!'\\"").lower() for w in text.split()} - {""}


def answer(question, query_id):
    '''The five chunks sharing most words with what was asked: a raw turn ("and for that one?") finds less.'''
    asked = _words(question)
    ranked = sorted(CHUNKS, key=lambda c: (-len(asked & _words(c["text"])), c["id"]))[:5]
    return {"retrieved": [c["id"] for c in ranked], "answer": ranked[0]["text"]}
"""


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("talks") / "golden"
    build_golden(ROOT / "datasets" / "demo" / "corpus", judge=make_judge("offline"), settings=DEMO_CONVERSATIONS,
                 output=folder)  # fmt: skip
    return folder


@pytest.fixture
def project(built: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    (tmp_path / "golden").symlink_to(built, target_is_directory=True)
    (tmp_path / "talk_app.py").write_text(APP, encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    return tmp_path


def _eval(*args: str) -> Any:
    flags = ["-o", "report", "--no-judge", "--n-boot", "100", "--target-cache-dir", "cache", *args]
    return CliRunner().invoke(main, ["eval", "golden", "--target", "app=python:talk_app:answer", *flags])


def test_eval_asks_a_target_both_ways_and_reports_the_history_gain(project: Path) -> None:
    result = _eval("--target-conversation-mode", "both", "--target-history", "own")
    assert result.exit_code == 0, result.output
    output = " ".join(result.output.split())
    assert "app: wrote report/runs/app.jsonl" in output
    assert "app (rewrites): wrote report/runs/app (rewrites).jsonl" in output
    results = json.loads((project / "report" / "results.json").read_text())
    assert [run["name"] for run in results["runs"]] == ["app", "app (rewrites)"]
    [gain] = results["history_gain"]
    assert (gain["turns"], gain["rewrites"], gain["metric"], gain["history"]) == ("app", "app (rewrites)", "ndcg@10",
                                                                                   "own")  # fmt: skip
    talks = assay.GoldenSet.load(project / "golden").conversations
    turns = [t for c in talks for t in c.turns if t.judged]  # context turns are never scored
    rows = [json.loads(line) for line in (project / "report" / "per_query.jsonl").read_text().splitlines()[1:]]
    score = {(row["run"], row["query_id"]): row["metrics"]["ndcg@10"] for row in rows}
    both = [(score["app", t.question_id], score["app (rewrites)", t.question_id]) for t in turns
            if None not in (score["app", t.question_id], score["app (rewrites)", t.question_id])]  # fmt: skip
    assert gain["all"]["n"] == len(both) >= 10  # unanswerable turns have no relevant chunk: unscored
    assert gain["all"]["delta"] == pytest.approx(sum(a - b for a, b in both) / len(both), abs=1e-6)
    headers = [json.loads((project / "report" / "runs" / name).read_text().splitlines()[0])
               for name in ("app.jsonl", "app (rewrites).jsonl")]  # fmt: skip
    assert [(h["conversation_mode"], h.get("history")) for h in headers] == [("turns", "own"), ("rewrites", None)]
    assert (
        "History gain on ndcg@10, app (raw turns with the own history) minus app (rewrites)"
        in (project / "report" / "report.md").read_text()
    )
    again = _eval("--target-conversation-mode", "both", "--target-history", "own")  # every answer from the cache
    assert again.exit_code == 0, again.output
    # with its own history the target is asked the context turns before a judged turn too; the rewrites, never
    asked = len(turns) + sum(not t.judged and any(u.judged for u in c.turns[i:]) for c in talks
                             for i, t in enumerate(c.turns))  # fmt: skip
    shown = " ".join(again.output.split())
    assert asked > len(turns) and f"{asked} answered ({asked} from the cache)" in shown
    assert f"{len(turns)} answered ({len(turns)} from the cache)" in shown


def test_both_is_refused_without_conversations_and_by_run(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    make_golden(3).save(tmp_path / "golden")
    (tmp_path / "talk_app.py").write_text(APP, encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    result = _eval("--target-conversation-mode", "both")
    assert result.exit_code == 1 and "--conversation-mode both asks app the raw turns" in result.output
    assert "has none (no conversations.jsonl)" in " ".join(result.output.split())
    assert not (tmp_path / "report" / "runs").exists()  # nothing asked
    run = CliRunner().invoke(main, ["run", "golden", "--target", "python:talk_app:answer", "-o", "r.jsonl",
                                    "--conversation-mode", "both"])  # fmt: skip
    assert run.exit_code == 2 and "'both' is not one of 'turns', 'rewrites'" in run.output
