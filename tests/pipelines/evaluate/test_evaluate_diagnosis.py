"""The diagnosis metrics end to end: scripted judge answers through the fake OpenAI server, values computed by hand,
one claim_check call per sample, nothing paid twice, and the offline judge's demo path."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from evaluate_fixture import PRODUCTS, answer_id, care_id, good_lines, save_golden, weak_lines, write_run

from assay import EvalSettings
from assay.judge import make_judge
from assay.judge.limits import RetryPolicy
from assay.pipelines.evaluate import evaluate_detailed
from assay.pipelines.evaluate.diagnosis import DIAGNOSIS_NAMES
from assay.testing import FakeOpenAIServer

N = len(PRODUCTS)
STATEMENT = re.compile(r'<statement id="([^"]+)">')
SETTINGS = EvalSettings(n_boot=200, metrics=(*DIAGNOSIS_NAMES, "faithfulness", "context_recall"))


def _schema(body: dict[str, Any]) -> str:
    return str(body["response_format"]["json_schema"]["name"])


def scripted(body: dict[str, Any]) -> str:
    """Reference claim supported by passage 1 (the answer chunk); the answer's two claims drawn from passage 1 and
    passage 2 (the care chunk); claim_check: a1 entailed by the reference, a2 neutral, r1 entailed by the answer.
    A question about the Linnet hammock gets a claim_check answer that is not JSON (unscored)."""
    text = body["messages"][-1]["content"]
    schema = _schema(body)
    if schema == "ListwiseRelevance":
        ids = re.findall(r'<passage id="([^"]+)">', text)
        return json.dumps({"judgements": [{"id": pid, "reason": "s", "grade": 0} for pid in ids]})
    if schema == "SupportAssignments":
        items = [{"statement_id": s, "reason": "s", "support": "support", "passage_ids": ["1"]}
                 for s in STATEMENT.findall(text)]  # fmt: skip
        return json.dumps({"assignments": items})
    if schema == "AnswerAssessment":
        claims = [
            {"claim": "the warranty fact", "reason": "s", "verdict": "supported", "passage_ids": ["1"]},
            {"claim": "a care fact", "reason": "s", "verdict": "supported", "passage_ids": ["2"]},
        ]
        return json.dumps({"claims": claims, "relevance_reason": "s", "relevance": 3, "noncommittal": False})
    if schema == "ClaimCheck":
        if any("Linnet" in m["content"] for m in body["messages"]):  # the repair retry too
            return "not json"
        check = {"a1": "entailed", "a2": "neutral", "r1": "entailed"}
        entries = [{"statement_id": s, "reason": f"why {s}", "verdict": check[s]} for s in STATEMENT.findall(text)]
        answer = [e for e in entries if e["statement_id"].startswith("a")]
        return json.dumps({"answer_claims": answer, "reference_claims": [e for e in entries if e not in answer]})
    raise AssertionError(f"unexpected prompt {schema}")


def _evaluate(tmp_path: Path, server: FakeOpenAIServer, folder: str = "golden") -> Any:
    golden = save_golden(tmp_path / folder)
    run = write_run(tmp_path / "good.jsonl", good_lines())
    judge = make_judge("openai/j", api_base=server.url, api_key="sk-test", cache_dir=tmp_path / "cache",
                       retry=RetryPolicy.immediate())  # fmt: skip
    return evaluate_detailed(golden, [("good", run)], judge=judge, settings=SETTINGS)


def test_values_calls_and_examples(tmp_path: Path) -> None:
    with FakeOpenAIServer(scripted) as server:
        done = _evaluate(tmp_path, server)
        checks = [b for b in server.requests if _schema(b) == "ClaimCheck"]
        assert len(checks) == N + 1  # one claim_check per sample, and one repair retry of the answer that is not JSON
        server.requests.clear()
        again = _evaluate(tmp_path, server, "golden-again")
        # everything cached but the failed answer (failures are never cached): asked again, with its repair retry
        assert [_schema(b) for b in server.requests] == ["ClaimCheck", "ClaimCheck"]
    # 4 retrieved chunks: the answer chunk (relevant: it entails the reference claim), care, related, next answer
    want = {
        "claim_precision": 1 / 2,  # a1 of a1, a2
        "claim_recall": 1.0,  # r1
        "claim_f1": 2 / 3,
        "retriever_context_precision": 1 / 4,
        "context_utilization": 1.0,
        "noise_sensitivity_relevant": 0.0,
        "noise_sensitivity_irrelevant": 1 / 2,  # a2, incorrect and drawn from the care chunk
        "hallucination": 0.0,
        "self_knowledge": 0.0,
        "faithfulness": 1.0,
        "context_recall": 1.0,
    }
    run = done.result.runs[0]
    for name, value in want.items():
        assert run.metrics[name].mean == pytest.approx(value), name
        expected_scored = N if name in ("faithfulness", "context_recall") else N - 1
        assert run.metrics[name].n_scored == expected_scored, name
    assert run.metrics["claim_precision"].unscored_reasons == {"invalid_output": 1}
    assert again.result.runs[0].metrics["claim_f1"] == run.metrics["claim_f1"]
    noise = [e for e in done.result.diagnosis_examples if e.category == "irrelevant_noise"]
    assert len(noise) == 3  # a few per category
    assert noise[0].query_id == "q00" and noise[0].chunk_id == care_id(0) and noise[0].claim == "a care fact"
    assert noise[0].reason == "against the reference: neutral: why a2; against the chunks: s" and "mild soap" in (
        noise[0].chunk_text or ""
    )
    assert {e.category for e in done.result.diagnosis_examples} == {"irrelevant_noise"}
    assert answer_id(0) in good_lines()[0]["retrieved"]


def test_offline_judge_diagnoses(tmp_path: Path) -> None:
    golden = save_golden(tmp_path / "golden")
    run = write_run(tmp_path / "good.jsonl", good_lines())
    done = evaluate_detailed(golden, [("good", run)], judge=make_judge("offline"), settings=SETTINGS)
    metrics = done.result.runs[0].metrics
    # the answer is the reference answer and the first chunk states it: every claim correct and grounded
    assert metrics["claim_precision"].mean == metrics["claim_recall"].mean == 1.0
    assert metrics["hallucination"].mean == metrics["self_knowledge"].mean == 0.0
    assert done.result.usage["diagnosis"].calls == N


def test_dry_run_counts_one_claim_check_per_answered_sample(tmp_path: Path) -> None:
    from assay.pipelines.evaluate import estimate_evaluation

    golden = save_golden(tmp_path / "golden")
    run = write_run(tmp_path / "good.jsonl", good_lines())
    estimate = estimate_evaluation(golden, [("good", run)], make_judge("offline"), SETTINGS)
    assert estimate["diagnosis"].calls == N and estimate["context"].calls == estimate["answer"].calls == N


def test_diagnosis_compared_as_its_own_family_with_directions(tmp_path: Path) -> None:
    golden = save_golden(tmp_path / "golden")
    runs = [("good", write_run(tmp_path / "good.jsonl", good_lines())),
            ("weak", write_run(tmp_path / "weak.jsonl", weak_lines()))]  # fmt: skip
    settings = EvalSettings(n_boot=200, metrics=("ndcg@10", *SETTINGS.metrics))
    result = evaluate_detailed(golden, runs, judge=make_judge("offline"), settings=settings).result
    compared = {c.metric for c in result.comparisons}
    assert {"ndcg@10", "faithfulness", "context_recall"} <= compared and not compared & set(DIAGNOSIS_NAMES)
    assert {c.metric for c in result.diagnosis_comparisons} == set(DIAGNOSIS_NAMES)
    hallucination = next(c for c in result.diagnosis_comparisons if c.metric == "hallucination")
    assert hallucination.delta > 0 and hallucination.significant  # the weak run invents its answers
    assert hallucination.verdict.startswith("good beats weak on hallucination (lower is better)")
