"""``assay build`` end to end through click: offline build, dry run, overwrite guard, budget stop and resume."""

from __future__ import annotations

import html
import json
import re
from pathlib import Path
from typing import Any

from click.testing import CliRunner

from assay.cli import main
from assay.testing import FakeOpenAIServer

TINY = Path(__file__).resolve().parents[1] / "fixtures" / "corpus" / "tiny"
DEMO = Path(__file__).resolve().parents[2] / "datasets" / "demo" / "corpus"


def run(*args: str | Path) -> tuple[int, str]:
    result = CliRunner().invoke(main, [str(a) for a in args])
    return result.exit_code, result.output


def test_help_shows_an_example() -> None:
    code, out = run("build", "--help")
    assert code == 0 and "assay build datasets/demo/corpus -o golden/ --judge offline" in out


def test_offline_build_writes_the_golden_set_and_a_summary(tmp_path: Path) -> None:
    code, out = run("build", TINY, "-o", tmp_path / "g", "--judge", "offline", "--per-doc", "2")
    assert code == 0, out
    assert (
        "counts per stage" in out
        and "judge usage (offline)" in out
        and f"wrote the golden set to {tmp_path / 'g'}" in out
    )
    assert f"next: assay eval {tmp_path / 'g'} RUN.jsonl" in out
    manifest = json.loads((tmp_path / "g" / "manifest.json").read_text())
    assert manifest["counts"]["seeds"] == 2 and manifest["models"]["generator"] == "offline"


def test_dry_run_estimates_and_writes_nothing(tmp_path: Path) -> None:
    code, out = run("build", TINY, "-o", tmp_path / "g", "--judge", "offline", "--per-doc", "2", "--dry-run")
    assert code == 0, out
    assert "dry run: 1 documents" in out and "exact" in out and "estimate" in out
    assert not (tmp_path / "g").exists()


def test_dry_run_prints_ranges_that_hold_the_build(tmp_path: Path) -> None:
    args = ("build", DEMO, "-o", tmp_path / "g", "--judge", "offline")
    code, out = run(*args, "--dry-run")
    assert code == 0, out
    assert "Ranges are estimates" in out and "every seed accepted" in out and not (tmp_path / "g").exists()
    printed = dict(re.findall(r"│ (\w+) +│ +(\d+(?:-\d+)?) │", out))
    code, out = run(*args)
    assert code == 0, out
    usage = json.loads((tmp_path / "g" / "manifest.json").read_text())["usage"]
    assert printed["generation"] == str(usage["generation"]["calls"])
    for stage in ("critic", "relevance", "support"):
        low, high = map(int, printed[stage].split("-"))
        assert low <= usage[stage]["calls"] <= high, (stage, printed[stage], usage[stage]["calls"])


def test_existing_output_is_refused_without_overwrite(tmp_path: Path) -> None:
    (tmp_path / "g").mkdir()
    (tmp_path / "g" / "x").write_text("x")
    code, out = run("build", TINY, "-o", tmp_path / "g", "--judge", "offline")
    assert code == 1 and "--overwrite" in out
    code, out = run("build", TINY, "-o", tmp_path / "g", "--judge", "offline", "--overwrite")
    assert code == 0, out


def test_bad_mix_is_a_clear_error(tmp_path: Path) -> None:
    code, out = run("build", TINY, "-o", tmp_path / "g", "--judge", "offline", "--mix", "trivia=1")
    assert code == 1 and "unknown question type 'trivia'" in out


def _answer(body: dict[str, Any]) -> str:
    schema = body["response_format"]["json_schema"]["name"]
    user = body["messages"][-1]["content"]
    passages = [
        html.unescape(t) for t in re.findall(r'<passage-\w+ id="[^"]+"[^>]*>\n(.*?)\n</passage-\w+>', user, re.S)
    ]
    if schema == "GeneratedQuestion":
        quote = passages[0].split(".")[0] + "."
        kind = user.split("Question type: ", 1)[1].split("\n", 1)[0]
        return json.dumps(
            {
                "reason": "r",
                "question": f"What is said about this ({kind})?",
                "answer": quote,
                "evidence": [{"passage_id": "P1", "quote": quote}],
                "claims": [quote],
                "nuggets": [{"text": quote, "importance": "vital"}],
            }
        )
    if schema == "QuestionCritique":
        return json.dumps({"reason": "r", "answerable": 5, "self_contained": 5, "clear": 5})
    if schema == "RelevanceGrade":
        return json.dumps({"reason": "r", "grade": 3})
    if schema == "ListwiseRelevance":
        ids = re.findall(r'<passage-\w+ id="([^"]+)">', user)
        return json.dumps({"judgements": [{"id": i, "reason": "r", "grade": 3} for i in ids]})
    ids = re.findall(r'<statement-\w+ id="([^"]+)">', user)
    items = [{"statement_id": i, "reason": "r", "support": "support", "passage_ids": ["P1"]} for i in ids]
    return json.dumps({"assignments": items})


def test_budget_stop_is_clean_and_a_rerun_resumes(tmp_path: Path) -> None:
    args = ["build", TINY, "-o", tmp_path / "g", "--judge", "openai/fake", "--api-key", "k", "--per-doc", "3"]
    args += ["--cache-dir", tmp_path / "cache", "--price", "1000/1000", "--concurrency", "1", "--mix", "factoid=1"]
    with FakeOpenAIServer(_answer) as server:
        args += ["--api-base", server.url]
        code, out = run(*args, "--max-cost", "2")
        assert code == 1 and "Stopped:" in out and "Nothing was written" in out
        assert not (tmp_path / "g").exists()
        first = [json.dumps(r["messages"], sort_keys=True) for r in server.requests]
        code, out = run(*args)
        assert code == 0, out
        second = [json.dumps(r["messages"], sort_keys=True) for r in server.requests[len(first) :]]
    assert first and second and set(first).isdisjoint(second)
    assert (tmp_path / "g" / "manifest.json").is_file()


def test_fewer_questions_than_documents_draws_seed_documents_and_says_so_first(tmp_path: Path) -> None:
    code, out = run("build", DEMO, "-o", tmp_path / "g", "--judge", "offline", "--questions", "5", "--seed", "3")
    assert code == 0, out
    assert out.index("plan: 5 questions from 5 of 32 documents") < out.index("counts per stage")
    manifest = json.loads((tmp_path / "g" / "manifest.json").read_text())
    drawn = manifest["sampling"]["documents"]
    assert len(drawn) == 5 == manifest["counts"]["seeds"] == manifest["counts"]["seed_documents"]
    assert manifest["sampling"]["seed"] == 3
    questions = [json.loads(line) for line in (tmp_path / "g" / "questions.jsonl").read_text().splitlines()[1:]]
    assert {q["metadata"]["seed_chunk_ids"][0].split("#")[0] for q in questions} <= set(drawn)
    code, out = run("build", DEMO, "-o", tmp_path / "d", "--judge", "offline", "--questions", "5", "--dry-run")
    assert code == 0 and "plan: 5 questions from 5 of 32 documents" in out and "5 seeds" in out


def test_a_large_plan_not_asked_for_is_announced_before_any_call(tmp_path: Path) -> None:
    code, out = run("build", DEMO, "-o", tmp_path / "g", "--judge", "offline", "--per-doc", "40", "--dry-run")
    assert code == 0, out
    assert "plan: 1,280 questions over all 32 documents (--per-doc 40" in out
    assert "the plan is 1,280 questions, and --questions did not ask for them" in out


def test_tools_draft_reference_calls_priced_by_the_dry_run_and_recorded(tmp_path: Path) -> None:
    tools = tmp_path / "tools.json"
    tools.write_text(json.dumps([{"name": "calculator", "description": "Evaluate an arithmetic expression.",
                                  "parameters": {"type": "object", "properties": {"expression": {"type": "string"}},
                                                 "required": ["expression"]}}]), encoding="utf-8")  # fmt: skip
    args = ("build", TINY, "-o", tmp_path / "g", "--judge", "offline", "--per-doc", "2", "--tools", tools)
    code, out = run(*args, "--dry-run")
    assert code == 0, out
    printed = dict(re.findall(r"│ (\w+) +│ +(\d+(?:-\d+)?) │", out))
    code, out = run(*args)
    assert code == 0, out
    manifest = json.loads((tmp_path / "g" / "manifest.json").read_text())
    calls = manifest["usage"]["tool_calls"]["calls"]
    low, _, high = printed["tool_calls"].partition("-")
    assert int(low) <= calls <= int(high or low) and calls >= 1
    assert manifest["settings"]["tools"][0]["name"] == "calculator"
    assert "tool_calls_drafted" in manifest["counts"] and any("tool_calls" in p for p in manifest["prompts"])


def test_a_bad_tools_file_is_one_error_and_writes_nothing(tmp_path: Path) -> None:
    tools = tmp_path / "tools.json"
    tools.write_text('[{"description": "no name"}]', encoding="utf-8")
    code, out = run("build", TINY, "-o", tmp_path / "g", "--judge", "offline", "--tools", tools)
    assert code != 0 and "tool 1 has no name" in out and "Traceback" not in out
    assert not (tmp_path / "g").exists()
