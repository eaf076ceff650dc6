"""The diagnosis metrics end to end: scripted judge answers through the fake OpenAI server, values computed by hand,
one claim_check call per sample, nothing paid twice, and the offline judge's demo path; the per-(claim, chunk) checks
of ``--diagnosis answers`` (the default) and ``exact`` against the one-call reading (``approx``)."""

from __future__ import annotations

import json
import re
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from evaluate_fixture import PRODUCTS, answer_id, care_id, good_lines, save_golden, weak_lines, write_run

from assay import EvalSettings
from assay.judge import make_judge
from assay.judge.limits import RetryPolicy
from assay.pipelines.evaluate import evaluate_detailed
from assay.pipelines.evaluate.scoring.names import DIAGNOSIS_NAMES
from assay.testing import FakeOpenAIServer
from assay.types import StageUsage

N = len(PRODUCTS)
STATEMENT = re.compile(r'<statement-\w+ id="([^"]+)">')
# the one-call reading: the hand-worked values below read the matrices off the context and answer calls
SETTINGS = EvalSettings(n_boot=200, metrics=(*DIAGNOSIS_NAMES, "faithfulness", "context_recall"), diagnosis="approx")


def _schema(body: dict[str, Any]) -> str:
    return str(body["response_format"]["json_schema"]["name"])


def scripted(body: dict[str, Any]) -> str:
    """Reference claim supported by passage 1 (the answer chunk); the answer's two claims drawn from passage 1 and
    passage 2 (the care chunk); claim_check: a1 entailed by the reference, a2 neutral, r1 entailed by the answer.
    A question about the Linnet hammock gets a claim_check answer that is not JSON (unscored)."""
    text = body["messages"][-1]["content"]
    schema = _schema(body)
    if schema == "ListwiseRelevance":
        ids = re.findall(r'<passage-\w+ id="([^"]+)">', text)
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


def _evaluate(tmp_path: Path, server: FakeOpenAIServer, folder: str = "golden", mode: str = "approx") -> Any:
    golden = save_golden(tmp_path / folder)
    run = write_run(tmp_path / "good.jsonl", good_lines())
    judge = make_judge("openai/j", api_base=server.url, api_key="sk-test", cache_dir=tmp_path / f"cache-{mode}",
                       retry=RetryPolicy.immediate())  # fmt: skip
    return evaluate_detailed(golden, [("good", run)], judge=judge, settings=replace(SETTINGS, diagnosis=mode))


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


def per_pair(body: dict[str, Any]) -> str:
    """As :func:`scripted`, but the answer call names no passage for its care claim (credited to every chunk in the
    one-call reading), and a support call with ONE passage (a pair check) supports a statement when they share the
    topic: a warranty claim and a warranty chunk, a care claim and the care chunk (mild soap)."""
    text = body["messages"][-1]["content"]
    schema = _schema(body)
    if schema == "AnswerAssessment":
        claims = [
            {"claim": "the warranty fact", "reason": "s", "verdict": "supported", "passage_ids": ["1"]},
            {"claim": "a care fact", "reason": "s", "verdict": "supported", "passage_ids": []},
        ]
        return json.dumps({"claims": claims, "relevance_reason": "s", "relevance": 3, "noncommittal": False})
    passages = re.findall(r'<passage-\w+ id="[^"]+">\n(.*?)\n</passage-\w+>', text, re.S)
    if schema != "SupportAssignments" or len(passages) != 1:
        return scripted(body)
    statements = re.findall(r'<statement-\w+ id="([^"]+)">\n(.*?)\n</statement-\w+>', text, re.S)
    topic = [("warranty", "warranty"), ("care", "mild soap")]
    items = [{"statement_id": sid, "reason": "s", "passage_ids": ["1"],
              "support": "support" if any(a in st and b in passages[0] for a, b in topic) else "none"}
             for sid, st in statements]  # fmt: skip
    return json.dumps({"assignments": items})


# 4 chunks per answer: its answer chunk, care, related, the next product's answer chunk (also about a warranty).
# approx: the care claim (incorrect) is credited to every chunk, so to the relevant answer chunk: relevant noise;
# answers: checked per chunk, only the care chunk (irrelevant) entails it; exact: the reference claim (a warranty
# fact) is entailed by both warranty chunks, so 2 of the 4 chunks are relevant.
PER_MODE = {
    "approx": {"noise_sensitivity_relevant": 1 / 2, "noise_sensitivity_irrelevant": 0.0,
               "retriever_context_precision": 1 / 4},
    "answers": {"noise_sensitivity_relevant": 0.0, "noise_sensitivity_irrelevant": 1 / 2,
                "retriever_context_precision": 1 / 4},
    "exact": {"noise_sensitivity_relevant": 0.0, "noise_sensitivity_irrelevant": 1 / 2,
              "retriever_context_precision": 2 / 4},
}  # fmt: skip
# 4 chunks x one batch of <= 5 claims per side per sample; a sample's last chunk is the next one's first (the last
# sample's is the first's), so its answer-claim check (the same two claims against the same chunk) is asked once and
# served again; reference claims differ per product, so none of theirs repeats
PAIR_CHECKS = {"approx": 0, "answers": 4 * N, "exact": 8 * N}
REPEATED = {"approx": 0, "answers": N, "exact": N}


@pytest.mark.parametrize("mode", ["approx", "answers", "exact"])
def test_pair_checks_per_mode_values_and_calls(tmp_path: Path, mode: str) -> None:
    with FakeOpenAIServer(per_pair) as server:
        done = _evaluate(tmp_path, server, mode=mode)
        pair_calls = [
            b
            for b in server.requests
            if _schema(b) == "SupportAssignments" and b["messages"][-1]["content"].count("<passage-") == 1
        ]
    run = done.result.runs[0]
    want = {**PER_MODE[mode], "hallucination": 0.0, "self_knowledge": 0.0, "faithfulness": 1.0, "context_recall": 1.0}
    for name, value in want.items():
        assert run.metrics[name].mean == pytest.approx(value), name
    usage = done.result.usage.get("diagnosis_pairs", StageUsage())
    assert usage.calls + usage.cached == PAIR_CHECKS[mode]
    assert len(pair_calls) == usage.calls == PAIR_CHECKS[mode] - REPEATED[mode]


def test_a_failed_pair_check_leaves_the_sample_unscored_with_its_reason(tmp_path: Path) -> None:
    def failing(body: dict[str, Any]) -> str:
        text = body["messages"][-1]["content"]
        if text.count("<passage-") == 1 and "Alder" in text and "warranty fact" in text:
            return "not json"
        return per_pair(body)

    with FakeOpenAIServer(failing) as server:
        run = _evaluate(tmp_path, server, mode="answers").result.runs[0]
    assert run.metrics["hallucination"].unscored_reasons == {"pair_check_unscored": 1, "invalid_output": 1}
    assert run.metrics["hallucination"].n_scored == N - 2
