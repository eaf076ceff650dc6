"""``judge-check --criterion``: a judged criterion measured on people's answers through the fake server. Three
scripted judges, each with one known behaviour, and the probe that must see it:

- ``steady``: pass when the answer holds "days", whatever else it holds: consistency 1, no label moved by padding
  or by the injected order;
- ``wordy``: pass when the answer is over 25 words: padding turns every short answer into a pass;
- ``obedient``: pass whenever the answer tells the grader to pass: injection moves every failing answer.
Consistency is measured past the cache: a judge that changes its label when asked again gives 0.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from assay.cli import main
from assay.testing import FakeOpenAIServer

CRITERION = ('+++\nname = "says_days"\nversion = "1"\ninputs = ["question", "answer"]\nscale = "pass_fail"\n+++\n'
             "The answer gives the number of days.\n")  # fmt: skip
ANSWERS = [
    ("How long is the kettle warranty?", "14 days."),
    ("How long is the lantern warranty?", "It lasts 30 days."),
    ("How long is the stove warranty?", "Ask the shop."),
    ("How long is the tent warranty?", "No idea, sorry."),
]
ANSWER = re.compile(r"<answer-\w+>\n(.*?)\n</answer-\w+>", re.S)


def _responder(kind: str) -> Any:
    seen: dict[str, int] = {}

    def respond(body: dict[str, Any]) -> str:
        answer = ANSWER.findall(body["messages"][-1]["content"])[0]
        seen[answer] = seen.get(answer, 0) + 1
        if kind == "steady":
            passed = "days" in answer.split("It is worth adding")[0].split("Note to the grader")[0]
        elif kind == "wordy":
            passed = len(answer.split()) > 25
        elif kind == "obedient":
            passed = "Note to the grader" in answer or "days" in answer
        else:  # flipping: pass the first time it sees an answer, fail when asked again
            passed = seen[answer] == 1
        return json.dumps({"reason": kind, "label": "pass" if passed else "fail"})

    return respond


def _check(tmp_path: Path, server: FakeOpenAIServer, *more: str) -> Any:
    """``assay judge-check --criterion`` on the four answers, against ``server``."""
    (tmp_path / "says_days.md").write_text(CRITERION, encoding="utf-8")
    lines = [{"question": q, "reference": "", "answer": a, "ratings": {"overall": 1}} for q, a in ANSWERS]
    (tmp_path / "answers.jsonl").write_text("".join(json.dumps(x) + "\n" for x in lines), encoding="utf-8")
    return CliRunner().invoke(main, ["judge-check", "--judge", "openai/j", "--api-key", "k", "--api-base", server.url,
                                     "--cache-dir", str(tmp_path / "cache"), "--answers",
                                     str(tmp_path / "answers.jsonl"), "--criterion", str(tmp_path / "says_days.md"),
                                     "-o", str(tmp_path / "card"), *more])  # fmt: skip


def _card(tmp_path: Path, kind: str) -> dict[str, Any]:
    with FakeOpenAIServer(responder=_responder(kind)) as server:
        result = _check(tmp_path, server, "--concurrency", "1")
    assert result.exit_code == 0, result.output
    card = json.loads((tmp_path / "card" / "criterion.json").read_text())
    assert (tmp_path / "card" / "criterion.md").read_text().startswith("# Criterion card")
    return {p["probe"]: p for p in card["probes"]} | {"card": card}


def test_a_steady_judge_is_consistent_and_moved_by_nothing(tmp_path: Path) -> None:
    found = _card(tmp_path, "steady")
    assert found["card"]["labels"] == {"pass": 2, "fail": 2}
    assert (found["repeat"]["rate"], found["repeat"]["compared"]) == (1.0, 4)
    assert (found["verbose"]["rate"], found["verbose"]["mean_shift"]) == (0.0, 0.0)
    assert (found["injected"]["rate"], found["injected"]["compared"]) == (0.0, 2)


def test_padding_that_buys_a_pass_is_seen(tmp_path: Path) -> None:
    found = _card(tmp_path, "wordy")
    assert found["card"]["labels"] == {"fail": 4}
    assert (found["verbose"]["rate"], found["verbose"]["mean_shift"]) == (1.0, 1.0)


def test_an_order_in_the_answer_that_is_obeyed_is_seen(tmp_path: Path) -> None:
    found = _card(tmp_path, "obedient")
    assert (found["injected"]["rate"], found["injected"]["compared"]) == (1.0, 2)


def test_a_judge_that_changes_its_mind_is_not_consistent(tmp_path: Path) -> None:
    found = _card(tmp_path, "flipping")
    assert found["repeat"]["rate"] == 0.0


def test_a_check_or_a_missing_answers_file_is_refused(tmp_path: Path) -> None:
    check = tmp_path / "c.md"
    check.write_text('+++\nname = "c"\nversion = "1"\n[check]\nkind = "cites"\n+++\n', encoding="utf-8")
    result = CliRunner().invoke(main, ["judge-check", "--judge", "offline", "--criterion", str(check), "-o",
                                       str(tmp_path / "o"), "--labels", str(tmp_path)])  # fmt: skip
    assert result.exit_code != 0
    answers = tmp_path / "a.jsonl"
    answers.write_text(json.dumps({"question": "q", "reference": "", "answer": "a", "ratings": {"x": 1}}) + "\n")
    result = CliRunner().invoke(main, ["judge-check", "--judge", "offline", "--criterion", str(check), "--answers",
                                       str(answers), "-o", str(tmp_path / "o")])  # fmt: skip
    assert result.exit_code != 0 and "deterministic check" in result.output


@pytest.mark.parametrize("kind", ["steady"])
def test_the_dry_run_prices_four_calls_per_answer_and_makes_none(tmp_path: Path, kind: str) -> None:
    with FakeOpenAIServer(responder=_responder(kind)) as server:
        result = _check(tmp_path, server, "--dry-run")
        assert server.requests == []
    assert result.exit_code == 0, result.output
    assert "16 calls to make in all" in result.output
