"""Every metric name of the catalogue can lead (``--primary``) and gate (``--fail-under``, the pytest plugin's
``assert_metric``), with one grammar, and an evaluation reports it or says why it is unscored.

The golden set is the evaluator's fixture (twelve questions, each with a reference answer, a claim and two nuggets)
given documents with text (each document its three chunks joined by a space, chunk offsets set, each question's
answer sentence as its evidence quote) and its questions as four conversations of three turns; the run answers
every question, puts the answer chunk first, and carries its own rewrite on two turns. With the offline judge every
kind of metric exists for it: ranking, budget, span, RAG (context precision and recall, coverage recall), answer,
claim (the diagnosis), nugget, faithfulness and hallucination, conversation (contradiction, the rewrite measures),
trajectory (each line one search, a tool call and one model call; the first question has two hops and a
reference tool call).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from evaluate_fixture import answer_id, answer_text, good_lines, make_golden, qid, related_id

from assay.errors import ConfigError
from assay.formats.golden import GoldenSet
from assay.judge import make_judge
from assay.pipelines.evaluate import EvalSettings, evaluate
from assay.pipelines.evaluate.runs.loaded import LoadedRun, RunLine
from assay.pipelines.evaluate.scoring.available import Available
from assay.pipelines.evaluate.scoring.names import LLM_FAMILIES, catalogue, check_gate, family_members
from assay.pipelines.evaluate.statistics.gates import Gate, check_gates
from assay.report.verdict import build_verdict
from assay.results import EvalResult, RunCounts
from assay.types import Conversation, ToolCall, Turn

K = (1, 3, 5, 10)
NAMES = catalogue(K)
FAMILIES = [n for n in NAMES if n in LLM_FAMILIES and family_members(n, K) != [n]]  # nugget_recall
METRICS = [n for n in NAMES if n not in FAMILIES]


def _golden() -> GoldenSet:
    gold = make_golden()
    for doc in gold.documents:
        chunks = [c for c in gold.chunks if c.doc_id == doc.id]
        doc.text = " ".join(c.text for c in chunks)
        start = 0
        for chunk in chunks:
            chunk.start, chunk.end = start, start + len(chunk.text)
            start = chunk.end + 1
    for i, question in enumerate(gold.questions):
        question.evidence = [answer_text(i)]
    gold.questions[0].hops = [answer_id(0), related_id(0)]
    gold.questions[0].tool_calls = [ToolCall(name="days", arguments={"product": "kettle"})]
    gold.conversations = [
        Conversation(id=f"c{c}", turns=[Turn(question_id=qid(3 * c + t), utterance=f"turn {t}",
                                             depends_on_history=t > 0) for t in range(3)])
        for c in range(4)
    ]  # fmt: skip
    return gold


def _run(path: Path) -> Path:
    lines = [{**line, "conversation_id": f"c{i // 3}", "turn": i % 3} for i, line in enumerate(good_lines())]
    for line in lines:  # a system that searches, then answers
        line["steps"] = [{"kind": "retrieval", "query": "warranty days", "retrieved": line["retrieved"]},
                         {"kind": "tool", "name": "days", "arguments": {"product": "kettle"}},
                         {"kind": "llm", "prompt_tokens": 10, "completion_tokens": 5, "latency_ms": 40.0}]  # fmt: skip
    lines[1]["rewrite"] = "How long is the Birch lantern warranty?"
    lines[2]["rewrite"] = "How many days does the Cedar stove warranty last?"
    head = {"assay": "runs", "version": 1, "conversation_mode": "turns", "history": "reference"}
    path.write_text("\n".join(json.dumps(x) for x in [head, *lines]) + "\n", encoding="utf-8")
    return path


@pytest.fixture(scope="module")
def folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("every")
    _golden().save(root / "golden")
    _run(root / "run.jsonl")
    return root


@pytest.fixture(scope="module")
def result(folder: Path) -> EvalResult:
    """One evaluation asked for every metric of the catalogue (one run: nothing compared, so it is quick)."""
    settings = EvalSettings(k_values=K, metrics=tuple(METRICS), n_boot=200, diagnosis="approx")
    judge = make_judge("offline", cache_dir=folder / "cache")
    done, _ = evaluate(folder / "golden", [folder / "run.jsonl"], judge=judge, settings=settings)
    return done


def test_the_catalogue_holds_every_kind_of_metric() -> None:
    for name in ("ndcg@10", "P@5", "mrr", "ndcg@1000t", "span_iou@5", "coverage_recall@5", "context_recall",
                 "ragas_context_precision@5", "faithfulness", "answer_relevance", "claim_f1", "claim_recall",
                 "claim_precision", "hallucination", "nugget_recall_vital_strict", "self_knowledge", "contradiction",
                 "rewrite_f1", "rewrite_bm25_ndcg@10", "gold_rewrite_bm25_ndcg@10"):  # fmt: skip
        assert name in METRICS, name
    assert FAMILIES == ["nugget_recall"]


@pytest.mark.parametrize("name", METRICS)
def test_every_metric_is_accepted_as_primary_and_as_gate(name: str) -> None:
    for flag in ("--primary", "--fail-under"):
        check_gate(name, judged=True, flag=flag, k_values=K)
    EvalSettings(k_values=K, primary=name, also=(name,)).checked()


def test_a_family_is_refused_with_its_metrics_that_exist_here(folder: Path) -> None:
    with pytest.raises(ConfigError, match=r"--primary nugget_recall: give one metric, not a family; e\.g\. "
                                          r"nugget_recall_all_strict, nugget_recall_all_lenient"):  # fmt: skip
        check_gate("nugget_recall", judged=True, flag="--primary", k_values=K)
    bare = GoldenSet.load(folder / "golden")
    for question in bare.questions:
        question.nuggets = []
    keep = Available.of(bare, None, judged=True).keep
    with pytest.raises(ConfigError, match=r"none of its metrics exists for this golden set and these runs$"):
        check_gate("nugget_recall", judged=True, flag="--primary", k_values=K, keep=keep)


def test_every_metric_is_reported_and_scored(result: EvalResult) -> None:
    metrics = result.runs[0].metrics
    missing = [name for name in METRICS if name not in metrics]
    assert missing == []
    assert [name for name in METRICS if metrics[name].mean is None] == []  # this golden set and run have it all
    assert (metrics["rewrite_f1"].n_scored, metrics["contradiction"].n_scored) == (2, 8)  # 2 rewrites; turns 2, 3
    assert all(metrics[name].n_scored == 12 for name in ("ndcg@10", "ndcg@1000t", "span_iou@5", "claim_f1"))


def test_every_metric_gates_as_the_plugin_and_fail_under_do(result: EvalResult) -> None:
    for name in METRICS:
        assert check_gates(result, [Gate(name, -1.0)]) == [] or result.runs[0].metrics[name].mean is None, name
        assert check_gates(result, [Gate(name, 1e9)]) != [], name  # no value reaches it (dcg, num_ret are counts)


@pytest.mark.parametrize(
    "name",
    ["P@5", "ndcg@1000t", "span_iou@5", "coverage_recall@5", "context_recall", "answer_relevance", "claim_f1",
     "hallucination", "nugget_recall_vital_lenient", "contradiction", "rewrite_f1"],
)  # fmt: skip
def test_one_metric_of_each_kind_leads_an_evaluation_of_two_runs(folder: Path, name: str) -> None:
    settings = EvalSettings(k_values=K, primary=name, n_boot=200, diagnosis="approx")
    judge = make_judge("offline", cache_dir=folder / "cache")
    runs = [("one", folder / "run.jsonl"), ("two", folder / "run.jsonl")]
    done, _ = evaluate(folder / "golden", runs, judge=judge, settings=settings)
    assert done.primary_metric == name and build_verdict(done).metric == name


def test_the_offered_names_exist_for_this_golden_set_and_these_runs(folder: Path) -> None:
    """No nuggets in the golden set: no nugget_recall offered; runs with no passages: no ranking measure offered."""
    bare = GoldenSet.load(folder / "golden")
    for question in bare.questions:
        question.nuggets = []
    no_nuggets = Available.of(bare, None, judged=True)
    assert not [n for n in catalogue(K, keep=no_nuggets.keep) if n.startswith("nugget_recall")]
    assert no_nuggets.why_not("nugget_recall_all_strict") == "the golden set has no nuggets"
    with pytest.raises(ConfigError, match=r"unknown metric 'nuget_recall_all_strict'; no close name"):
        EvalSettings(metrics=("nuget_recall_all_strict",)).check_available(no_nuggets)
    lines = {qid(i): RunLine(query_id=qid(i), ranked=[], scores={}, answer="An answer.") for i in range(12)}
    answers_only = LoadedRun(name="a", path=folder / "a.jsonl", kind="jsonl", lines=lines,
                             counts=RunCounts(lines=12, with_answer=12))  # fmt: skip
    passageless = Available.of(GoldenSet.load(folder / "golden"), [answers_only], judged=True)
    offered = catalogue(K, keep=passageless.keep)
    assert "answer_relevance" in offered and "claim_f1" in offered and "nugget_recall_all_strict" in offered
    assert not [n for n in offered if n in ("ndcg@10", "P@5", "map", "mrr", "ndcg@1000t", "span_iou@5")]
    assert passageless.why_not("ndcg@10") == "no run has passages"
    with pytest.raises(ConfigError, match=r"^ndcg@10 cannot be computed for this golden set and these runs: no run "
                                          r"has passages; no close name exists here$"):  # fmt: skip
        EvalSettings(primary="ndcg@10").check_available(passageless)
    with pytest.raises(ConfigError, match=r"close names: answer_relevance\."):
        EvalSettings(primary="answer_relevanse").check_available(passageless)
