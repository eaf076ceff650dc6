"""The ``real_model`` tier: the commands users run, over a real llama.cpp server with SmolLM2-135M-Instruct.

A 135M model is a poor judge; these tests do not check its grades. They check what only a real model reveals: the
protocol and structured output, token limits and context fit, that every answer is parsed or counted unscored with
a cause the user can act on, that a small model's truncations and loops are not retried without end, that a build
accepts questions or fails naming the stage, and that a rerun is served from the cache. Each command must parse at
least one answer of the model (a grade, a generated question, an LLM metric): a run where everything is unscored
fails, naming the unscored kinds, so a parser that rejects every answer cannot pass. Quality is measured against
human labels in ``bench/agreement.py``.
"""

from __future__ import annotations

import json
import re
import shutil
import sys
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from assay.cli import main
from assay.formats.golden import GoldenSet
from assay.pipelines.evaluate.scoring.names import LLM_FAMILIES

pytestmark = pytest.mark.real_model

ROOT = Path(__file__).resolve().parents[2]
PAIRS = ROOT / "tests" / "fixtures" / "real_model" / "pairs.jsonl"
DEMO = ROOT / "datasets" / "demo" / "corpus"
# metrics whose every value comes from a parsed answer of the judge (not from the golden set's labels alone)
LLM_METRICS = {name for name, kind in LLM_FAMILIES.items() if kind not in ("", "relevance")}
# What an unscored label may say: each kind comes with a fix in its reason.
ACTIONABLE = {
    "truncated": "--max-tokens",
    "loop": "larger model",
    "too_long": "--listwise",
    "invalid_output": "invalid answer",
}


def unscored_kinds(text: str) -> dict[str, int]:
    """The kinds in a failure message's ``unscored judge answers: truncated 3, invalid_output 2`` part."""
    found = re.search(r"unscored judge answers: ([^;.]*)", text)
    pairs = re.findall(r"(\d+) ([a-z_]+)", found.group(1)) if found else []
    return {kind: int(n) for n, kind in pairs}


def run(*args: Any) -> tuple[int, str]:
    result = CliRunner().invoke(main, [str(a) for a in args])
    return result.exit_code, result.output + (str(result.exception) if result.exception else "")


def judge_args(real_model: Any, cache: Path) -> list[Any]:
    """The judge options every command takes, as the README gives them for the local model."""
    return ["--judge", real_model.judge, "--api-base", real_model.api_base, "--concurrency", real_model.slots,
            "--cache-dir", cache]  # fmt: skip


MODEL_CAUSED = {"loop", "truncated", "too_long"}  # what SmolLM2-135M's own answers cause; never a parser's verdict


def require_parsed(parsed: int, unscored: dict[str, int], command: str, *, model_may_fail: bool = False) -> None:
    """Fail unless ``parsed`` > 0, naming the unscored kinds (and counts) that took every answer. With
    ``model_may_fail`` (a task SmolLM2-135M is measured to fail: generating a question, listwise lists) a run without
    a parsed answer passes only when every answer was stopped for what the model did (a loop, a cut answer, a
    prompt over the context), never as ``invalid_output``: a parser that rejects every answer still fails."""
    if parsed <= 0 and model_may_fail and unscored and set(unscored) <= MODEL_CAUSED:
        return
    if parsed <= 0:
        kinds = ", ".join(f"{kind} {n}" for kind, n in sorted(unscored.items())) or "none recorded"
        pytest.fail(f"{command}: not one answer of the real model was parsed; unscored kinds: {kinds}")


def check_labels(lines: list[dict[str, Any]]) -> dict[str, int]:
    """Every line graded 0..3, or unscored with an actionable cause; returns the count per outcome."""
    counts: dict[str, int] = {}
    for line in lines:
        if line["grade"] is not None:
            assert line["grade"] in (0, 1, 2, 3) and isinstance(line["reason"], str)
            counts["graded"] = counts.get("graded", 0) + 1
            continue
        unscored = line["unscored"]
        assert unscored["kind"] in ACTIONABLE, unscored
        assert ACTIONABLE[unscored["kind"]] in unscored["reason"], unscored
        counts[unscored["kind"]] = counts.get(unscored["kind"], 0) + 1
    return counts


@pytest.mark.parametrize("listwise", [None, 3])
def test_grade_parses_every_answer_or_says_why_and_a_rerun_makes_no_call(
    real_model: Any, tmp_path: Path, listwise: int | None
) -> None:
    cache = tmp_path / "cache"
    mode = ["--listwise", listwise] if listwise else []
    out = tmp_path / "labels.jsonl"
    code, text = run("grade", PAIRS, "-o", out, *judge_args(real_model, cache), *mode)
    lines = [json.loads(line) for line in out.read_text().splitlines()]
    counts = check_labels(lines)
    graded = counts.pop("graded", 0)
    require_parsed(graded, counts, "assay grade", model_may_fail=listwise is not None)
    assert len(lines) == 6, text
    if graded:
        assert code == 0, text
    else:  # the listwise lists SmolLM2 may loop on, every one: a run that produced nothing says so, never exit 0
        assert code != 0 and "every one of the 6 pairs is unscored" in text, text
    assert "retries" in text
    again = tmp_path / "again.jsonl"
    code, text = run("grade", PAIRS, "-o", again, *judge_args(real_model, cache), *mode)
    reread = [json.loads(line) for line in again.read_text().splitlines()]
    graded_first = {(r["query_id"], r["chunk_id"]): r["grade"] for r in lines if r["grade"] is not None}
    served = {(r["query_id"], r["chunk_id"]): r["grade"] for r in reread if r["cached"]}
    assert served == graded_first, text  # every scored label from the cache; unscored ones are asked again
    if len(graded_first) == len(lines):
        assert ": 0 calls" in text, text


def test_a_panel_with_the_real_model_combines_its_votes_and_never_reads_a_missing_one_as_0(
    real_model: Any, tmp_path: Path
) -> None:
    out = tmp_path / "labels.jsonl"
    code, text = run("grade", PAIRS, "-o", out, "--judge", "offline", *judge_args(real_model, tmp_path / "cache"))
    assert code == 0, text
    lines = [json.loads(line) for line in out.read_text().splitlines()]
    model_votes = [{**line["votes"][1], "reason": line["votes"][1]["rationale"]} for line in lines]
    counts = check_labels(model_votes)
    require_parsed(counts.pop("graded", 0), counts, "assay grade with a panel")
    for line in lines:
        offline, model = line["votes"]
        assert offline["model"] == "offline" and offline["grade"] in (0, 1, 2, 3)
        if model["grade"] is None:  # one of two votes: no majority of scored votes, never a 0
            assert line["grade"] is None and line["unscored"]["kind"] == "no_quorum", line
        else:  # majority of two that disagree is the lower grade
            assert line["grade"] == min(offline["grade"], model["grade"]), line
    assert f"2 judges (offline, {real_model.judge}), combined by majority, on 6 pairs" in text


def test_a_passage_over_the_servers_context_is_unscored_not_a_stopped_run(real_model: Any, tmp_path: Path) -> None:
    pairs = tmp_path / "pairs.jsonl"
    lines = PAIRS.read_text().splitlines()[:2]
    huge = {"query_id": "q9", "question": "What is in this log?", "chunk_id": "log", "text": "error line " * 4000}
    pairs.write_text("\n".join([*lines, json.dumps(huge)]) + "\n")
    out = tmp_path / "labels.jsonl"
    code, text = run("grade", pairs, "-o", out, *judge_args(real_model, tmp_path / "cache"))
    by_chunk = {line["chunk_id"]: line for line in map(json.loads, out.read_text().splitlines())}
    assert by_chunk["log"]["unscored"]["kind"] == "too_long", by_chunk["log"]
    assert "prompt tokens" in by_chunk["log"]["unscored"]["reason"]  # the server's own sizes
    counts = check_labels(list(by_chunk.values()))
    require_parsed(counts.pop("graded", 0), counts, "assay grade with a passage over the context")
    assert code == 0, text  # the run went on past the long passage


def test_build_on_demo_documents_accepts_questions_or_names_the_stage(real_model: Any, tmp_path: Path) -> None:
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    for name in ("policies/returns-policy.md", "policies/shipping-policy.md", "policies/warranty.md"):
        shutil.copy(DEMO / name, corpus / Path(name).name)
    out = tmp_path / "golden"
    args = ["build", corpus, "-o", out, *judge_args(real_model, tmp_path / "cache"), "--questions", 3, "--pool-k", 3,
            "--max-tokens", 512]  # fmt: skip
    code, text = run(*args)
    if code != 0:  # a 135M model may well fail here; then the message must say where and why
        assert "no question was accepted" in text or "is unscored" in text, text
        assert not out.exists()
        generated = re.search(r"(\d+) generated", text)  # questions the model wrote that parsed
        parsed = int(generated.group(1)) if generated else 0
        require_parsed(parsed, unscored_kinds(text), "assay build", model_may_fail=True)
        return
    golden = GoldenSet.load(out)
    assert golden.questions, text
    graded = [label for label in golden.qrels if label.provenance.source == "judge" and label.grade is not None]
    unscored: dict[str, int] = {}
    for label in golden.qrels:
        if label.unscored is not None:
            unscored[label.unscored.kind] = unscored.get(label.unscored.kind, 0) + 1
    require_parsed(len(graded), unscored, "assay build (relevance grades)")
    judged = {label.query_id for label in golden.qrels}
    assert all(q.id in judged for q in golden.questions)  # every accepted question has pooled labels
    assert golden.nuggets or all(not q.nuggets for q in golden.questions)
    code, again = run(*args, "--overwrite")
    assert code == 0 and GoldenSet.load(out).manifest.counts == golden.manifest.counts
    assert all(usage.calls == 0 for usage in GoldenSet.load(out).manifest.usage.values()), again


def test_eval_with_the_real_judge_and_a_rerun_from_the_cache(real_model: Any, tmp_path: Path) -> None:
    golden_dir = tmp_path / "golden"
    code, text = run("build", DEMO / "policies", "-o", golden_dir, "--judge", "offline", "--questions", 3,
                     "--pool-k", 1)  # fmt: skip
    assert code == 0, text
    golden = GoldenSet.load(golden_dir)
    labelled = {(label.query_id, label.chunk_id) for label in golden.qrels}
    run_file = tmp_path / "run.jsonl"
    with run_file.open("w") as handle:  # a source chunk, then a chunk without a label: the real judge grades it
        for question in golden.questions:
            fresh = [c.id for c in golden.chunks if (question.id, c.id) not in labelled][:1]
            retrieved = [*question.source_chunk_ids[:1], *fresh]
            answer = question.reference_answer or "I do not know."
            handle.write(json.dumps({"query_id": question.id, "retrieved": retrieved, "answer": answer}) + "\n")
    report = tmp_path / "report"
    args = ["eval", golden_dir, run_file, "-o", report, *judge_args(real_model, tmp_path / "cache"), "-k", "1,2",
            "--max-tokens", 512, "--listwise", 0]  # a small model that loops stops at 512 tokens, not 2048  # fmt: skip
    code, text = run(*args, "--n-boot", 200)
    assert code == 0, text
    results = json.loads((report / "results.json").read_text())
    assert results["runs"], results.keys()
    first = results.get("usage", {})
    judged = [s for name, s in results["runs"][0]["metrics"].items() if name in LLM_METRICS]  # need a parsed answer
    reasons: dict[str, int] = {}
    for summary in judged:
        for kind, n in summary["unscored_reasons"].items():
            reasons[kind] = reasons.get(kind, 0) + n
    graded_now = [label for label in GoldenSet.load(golden_dir).qrels
                  if label.provenance.model == real_model.judge and label.grade is not None]  # fmt: skip
    require_parsed(sum(s["n_scored"] for s in judged) + len(graded_now), reasons, "assay eval (grades, LLM metrics)")
    code, text = run(*args, "--n-boot", 200, "--no-add-labels")
    assert code == 0, text
    again = json.loads((report / "results.json").read_text()).get("usage", {})
    for stage, usage in again.items():  # what was scored comes from the cache; only unscored items are asked again
        before = first.get(stage, {"calls": 0, "unscored": 0})
        assert usage["calls"] <= before["unscored"], (stage, first, again)
        assert usage["cached"] >= before["calls"] - before["unscored"], (stage, first, again)


def test_judge_check_writes_a_card_for_the_real_model_and_a_rerun_makes_no_scored_call(
    real_model: Any, tmp_path: Path
) -> None:
    sys.path.insert(0, str(ROOT / "tests" / "pipelines" / "judgecheck"))
    from smart_fixture import write_collection

    labels = write_collection(tmp_path / "toy")
    args = ["judge-check", "--labels", labels, "-o", tmp_path / "card", *judge_args(real_model, tmp_path / "cache"),
            "--queries", 1, "--repeats", 1, "--per-probe", 2, "--groups", 1, "--max-tokens", 512]  # fmt: skip
    code, text = run(*args)
    if code != 0:  # a model that scores nothing makes no card, and says why
        assert "unscored" in text and not (tmp_path / "card").exists(), text
        return
    card = json.loads((tmp_path / "card" / "card.json").read_text())
    assert card["model"] == real_model.judge and {"baseline", "stuffing", "position"} <= {
        c["kind"] for c in card["costs"]
    }
    for section in card["sections"]:
        for figure in section["figures"]:  # every figure says how many items are behind it and how many were not
            assert figure["n"] + figure["unscored"] > 0 and (figure["value"] is None) == (figure["n"] == 0), figure
    first = {c["kind"]: c for c in card["costs"]}
    code, text = run(*args)
    assert code == 0, text
    for cost in json.loads((tmp_path / "card" / "card.json").read_text())["costs"]:
        assert cost["calls"] <= first[cost["kind"]]["unscored"], cost  # scored answers came from the cache


def test_conversations_build_or_name_the_stage_and_eval_checks_contradictions(real_model: Any, tmp_path: Path) -> None:
    """``assay build --conversations`` with the real model writes conversations whose every turn is pooled and
    graded, or fails naming the stage and the unscored kinds, writing nothing; ``assay eval`` of answers given turn
    by turn asks the real model the contradiction prompt, and each answer is parsed or unscored with a cause."""
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    for name in ("policies/returns-policy.md", "policies/shipping-policy.md"):
        shutil.copy(DEMO / name, corpus / Path(name).name)
    out = tmp_path / "golden"
    args = ["build", corpus, "-o", out, *judge_args(real_model, tmp_path / "cache"), "--questions", 0,
            "--conversations", 2, "--turns", "2-3", "--pool-k", 3, "--max-tokens", 768]  # fmt: skip
    code, text = run(*args)
    if code != 0:  # SmolLM2-135M may not write a conversation that parses; then it says where and why
        assert "no conversation was" in text, text
        assert not out.exists()
        written = re.search(r"(\d+) written", text)
        require_parsed(int(written.group(1)) if written else 0, unscored_kinds(text), "assay build --conversations",
                       model_may_fail=True)  # fmt: skip
    else:
        golden = GoldenSet.load(out)
        assert golden.conversations and all(len(c.turns) >= 2 for c in golden.conversations), text
        judged = {label.query_id for label in golden.qrels}
        assert all(t.question_id in judged for c in golden.conversations for t in c.turns if t.judged)
        code, again = run(*args, "--overwrite")
        assert code == 0 and all(u.calls == 0 for u in GoldenSet.load(out).manifest.usage.values()), again

    offline = tmp_path / "offline-golden"
    code, text = run("build", DEMO / "policies", "-o", offline, "--judge", "offline", "--questions", 0,
                     "--conversations", 6, "--turns", "3-3", "--pool-k", 1)  # fmt: skip
    assert code == 0, text
    golden = GoldenSet.load(offline)
    run_file = tmp_path / "run.jsonl"
    with run_file.open("w") as handle:  # each turn answered with its reference answer, the last with a changed number
        for conversation in golden.conversations:
            turns = [turn for turn in conversation.turns if turn.judged]  # a context turn is no question
            for n, turn in enumerate(turns, 1):
                question = golden.question(turn.question_id)
                answer = question.reference_answer or "I do not know."
                if n == len(turns):
                    answer += " Refunds are paid within 99 days."
                handle.write(json.dumps({"query_id": question.id, "retrieved": question.source_chunk_ids[:1],
                                         "answer": answer}) + "\n")  # fmt: skip
    report = tmp_path / "report"
    args = ["eval", offline, run_file, "-o", report, *judge_args(real_model, tmp_path / "cache-eval"), "-k", "1",
            "-m", "contradiction", "--max-tokens", 512, "--listwise", 0, "--n-boot", 200]  # fmt: skip
    code, text = run(*args)
    assert code == 0, text
    results = json.loads((report / "results.json").read_text())
    summary = results["runs"][0]["metrics"]["contradiction"]
    require_parsed(summary["n_scored"], summary["unscored_reasons"], "assay eval (contradiction)")
    assert all(kind in ACTIONABLE for kind in summary["unscored_reasons"]), summary
