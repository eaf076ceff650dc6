"""`assay import ragas --judge`: claims and nuggets drafted from the reference answers, priced by --dry-run, cached,
and resumed after a stop without asking the judge anything twice."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from click.testing import CliRunner

from assay.cli import main
from assay.formats.golden import GoldenSet
from assay.testing import FakeOpenAIServer

ROWS = [
    {
        "user_input": "How long is the Alder kettle warranty?",
        "reference": "The Alder kettle warranty lasts 14 days. It starts on the date of purchase.",
        "reference_contexts": ["The Alder kettle warranty lasts 14 days from the date of purchase."],
    },
    {"user_input": "What colour is the Birch lantern?", "reference": "The Birch lantern comes in green and grey."},
    {"user_input": "Who sells the Cedar stove?", "reference": "Cedar Outdoor sells it online. Shops stock it too."},
]


def run(*args: str | Path) -> tuple[int, str]:
    result = CliRunner().invoke(main, [str(a) for a in args])
    return result.exit_code, result.output


def _testset(tmp_path: Path, rows: list[dict[str, Any]] = ROWS) -> Path:
    path = tmp_path / "testset.jsonl"
    path.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    return path


def _answer(body: dict[str, Any]) -> str:
    """Claims: the reference's sentences; nuggets: its first sentence, vital (read from the rendered prompt)."""
    schema = body["response_format"]["json_schema"]["name"]
    user = body["messages"][-1]["content"]
    tag = "answer" if schema == "Claims" else "reference_answer"
    text = re.search(rf"<{tag}-\w+>\n(.*?)\n</{tag}-\w+>", user, re.S)
    assert text is not None, user
    sentences = [s.strip() + "." for s in text.group(1).split(".") if s.strip()]
    if schema == "Claims":
        return json.dumps({"claims": sentences})
    return json.dumps({"nuggets": [{"text": sentences[0], "importance": "vital"}]})


def test_offline_import_drafts_claims_and_nuggets_from_each_reference(tmp_path: Path) -> None:
    args = ["import", "ragas", _testset(tmp_path), "-o", tmp_path / "g", "--judge", "offline"]
    code, out = run(*args)
    assert code == 0, out
    assert "claims for 3, nuggets for 3 of 3 reference answer(s) (6 call(s), 0 cached; 0 unscored)" in out
    golden = GoldenSet.load(tmp_path / "g")
    alder, birch, cedar = golden.questions
    # the offline judge: claims are the reference's sentences; nuggets too, vital with a number, a name or a
    # question term (the nugget list puts the vital ones first)
    assert [c.text for c in alder.claims] == [
        "The Alder kettle warranty lasts 14 days.",
        "It starts on the date of purchase.",
    ]
    assert [(n.text, n.importance) for n in alder.nuggets] == [
        ("The Alder kettle warranty lasts 14 days.", "vital"),
        ("It starts on the date of purchase.", "okay"),
    ]
    assert [c.id for c in birch.claims] == [f"{birch.id}-c1"] and [n.id for n in birch.nuggets] == [f"{birch.id}-n1"]
    assert len(cedar.claims) == 2 and alder.reference_answer == ROWS[0]["reference"]  # the reference stays as given
    assert all(q.flags["claims_drafted"] for q in golden.questions)
    manifest = golden.manifest
    assert manifest.models["drafts"] == "offline" and {"claims@2", "nuggets@2"} <= set(manifest.prompts)
    assert manifest.counts["drafted_claims"] == 3 and manifest.usage["draft"].calls == 6


def test_without_a_judge_nothing_is_drafted_and_the_note_says_how(tmp_path: Path) -> None:
    code, out = run("import", "ragas", _testset(tmp_path), "-o", tmp_path / "g")
    assert code == 0, out
    assert "note: 3 reference answer(s) have no claims or nuggets; import with --judge MODEL" in out
    assert all(not q.claims and not q.nuggets for q in GoldenSet.load(tmp_path / "g").questions)
    code, out = run("import", "ragas", _testset(tmp_path), "-o", tmp_path / "h", "--dry-run")
    assert code == 1 and "--dry-run prices drafting the claims and nuggets: give --judge MODEL" in out


def test_dry_run_prices_the_calls_and_the_import_makes_them(tmp_path: Path) -> None:
    testset = _testset(tmp_path)
    with FakeOpenAIServer(_answer) as server:
        args = ["import", "ragas", testset, "-o", tmp_path / "g", "--judge", "openai/fake", "--api-key", "k"]
        args += ["--api-base", server.url, "--cache-dir", tmp_path / "cache", "--price", "1/2"]
        code, out = run(*args, "--dry-run")
        assert code == 0, out
        assert server.calls == 0 and not (tmp_path / "g").exists()
        priced = re.findall(
            r"  (claims|nuggets): (\d+) calls \((\d+) cached\), (\d+) prompt tokens, cost \$([\d.]+)", out
        )
        assert [(p, int(n), int(c)) for p, n, c, _, _ in priced] == [("claims", 3, 0), ("nuggets", 3, 0)]
        for _, calls, _, tokens, cost in priced:  # 1 USD per million prompt tokens + 2 per million of the 1024 max
            assert float(cost) == round((int(tokens) * 1 + int(calls) * 1024 * 2) / 1e6, 4)
        assert "total: 6 call(s) to make" in out
        code, out = run(*args)
        assert code == 0, out
        assert server.calls == 6
        code, out = run(*args, "--dry-run")  # once made, every call is cached
        assert "claims: 0 calls (3 cached)" in out and "total: 0 call(s) to make" in out
    golden = GoldenSet.load(tmp_path / "g")
    assert [c.text for c in golden.questions[2].claims] == ["Cedar Outdoor sells it online.", "Shops stock it too."]
    assert [n.text for n in golden.questions[2].nuggets] == ["Cedar Outdoor sells it online."]


def test_a_stopped_import_resumes_and_asks_nothing_twice(tmp_path: Path) -> None:
    testset = _testset(tmp_path)
    with FakeOpenAIServer(_answer) as server:
        args = ["import", "ragas", testset, "-o", tmp_path / "g", "--judge", "openai/fake", "--api-key", "k"]
        args += ["--api-base", server.url, "--cache-dir", tmp_path / "cache", "--price", "1000/1000"]
        code, out = run(*args, "--concurrency", "1", "--max-cost", "0.5")
        assert code == 1 and "Stopped:" in out and "Nothing was written" in out
        assert not (tmp_path / "g").exists()
        first = [json.dumps(r["messages"], sort_keys=True) for r in server.requests]
        code, out = run(*args)
        assert code == 0, out
        second = [json.dumps(r["messages"], sort_keys=True) for r in server.requests[len(first) :]]
        code, out = run(*args, "--overwrite")  # a third run: everything is cached
        assert code == 0, out
        third = server.requests[len(first) + len(second) :]
    assert 0 < len(first) < 6 and len(first) + len(second) == 6 and set(first).isdisjoint(second)
    assert third == [] and "(0 call(s), 6 cached; 0 unscored)" in out


def test_an_imported_set_evaluates_answers_with_no_passages(tmp_path: Path) -> None:
    """The issue's path: a RAGAS test set imported with the offline judge, then a RAGAS run of answers only."""
    code, out = run("import", "ragas", _testset(tmp_path), "-o", tmp_path / "g", "--judge", "offline")
    assert code == 0, out
    answers = [
        "The Alder kettle warranty lasts 14 days.",  # the vital nugget, not the okay one: 1/2
        "",  # empty: 0
        "Cedar Outdoor sells it online. Shops stock it too.",  # both nuggets: 1
    ]
    rows = [
        {"user_input": r["user_input"], "response": a, "retrieved_contexts": []}
        for r, a in zip(ROWS, answers, strict=True)
    ]
    answer_run = _testset(tmp_path / "g", rows).rename(tmp_path / "answers.jsonl")
    code, out = run("eval", tmp_path / "g", answer_run, "-o", tmp_path / "r", "--judge", "offline", "--n-boot", "200")
    assert code == 0, out
    results = json.loads((tmp_path / "r" / "results.json").read_text())
    assert results["primary_metric"] == "nugget_recall_all_strict"
    metrics = results["runs"][0]["metrics"]
    assert metrics["nugget_recall_all_strict"]["mean"] == 0.5  # (0.5 + 0 + 1) / 3
    for name in ("ndcg@10", "ndcg@1000t", "recall@1000t", "faithfulness", "context_recall"):
        assert metrics[name]["mean"] is None and metrics[name]["unscored_reasons"] == {"no passages in this run": 3}
    assert results["runs"][0]["counts"]["empty_answers"] == 1
    assert "answers: nugget_recall_all_strict 0.500" in " ".join(out.split())
    assert "1 empty answer(s)" in out
