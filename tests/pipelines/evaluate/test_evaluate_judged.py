"""The evaluator with a judge: the offline judge end to end, and scripted answers through the fake OpenAI server and
the real aiohttp backend (calls counted at the server, unscored answers counted and excluded, labels reused)."""

from __future__ import annotations

import json
import re
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from evaluate_fixture import PRODUCTS, answer_id, good_lines, pair_set, qid, save_golden, weak_lines, write_run

from assay import EvalSettings, evaluate
from assay.formats.golden import GoldenSet
from assay.judge import Judge, make_judge
from assay.judge.limits import RetryPolicy
from assay.pipelines.evaluate import evaluate_detailed
from assay.testing import FakeOpenAIServer

N = len(PRODUCTS)
FAST = EvalSettings(n_boot=200, diagnosis="approx")  # the one-call reading: no per-(claim, chunk) checks to count
PASSAGE = re.compile(r'<passage-\w+ id="([^"]+)">\n(.*?)\n</passage-\w+>', re.S)
STATEMENT = re.compile(r'<statement-\w+ id="([^"]+)">')
QUESTION = re.compile(r"<question-\w+>\n(.*?)\n</question-\w+>", re.S)


def _schema(body: dict[str, Any]) -> str:
    return str(body["response_format"]["json_schema"]["name"])


def _user(body: dict[str, Any]) -> str:
    return str(next(m["content"] for m in body["messages"] if m["role"] == "user"))


def scripted(body: dict[str, Any]) -> str:
    """Answers per prompt: warranty passages grade 2 (others 0) unless the passage says SKIP (no judgement given);
    every statement supported by passage 1; an answer with BROKEN gets text that is not JSON (twice: unscored)."""
    text = _user(body)
    schema = _schema(body)
    if schema == "ListwiseRelevance":
        judgements = [
            {"id": pid, "reason": "scripted", "grade": 2 if "warranty" in passage else 0}
            for pid, passage in PASSAGE.findall(text)
            if "SKIP" not in passage
        ]
        return json.dumps({"judgements": judgements})
    if schema == "SupportAssignments":
        first = PASSAGE.findall(text)[0][0]
        items = [
            {"statement_id": sid, "reason": "scripted", "support": "support", "passage_ids": [first]}
            for sid in STATEMENT.findall(text)
        ]
        return json.dumps({"assignments": items})
    if schema == "AnswerAssessment":
        if any("BROKEN" in m["content"] for m in body["messages"]):
            return "I would say it is faithful."
        claim = {"claim": "scripted", "reason": "scripted", "verdict": "supported", "passage_ids": ["1"]}
        return json.dumps({"claims": [claim], "relevance_reason": "scripted", "relevance": 3, "noncommittal": False})
    raise AssertionError(f"unexpected prompt {schema}")


@pytest.fixture
def server() -> Iterator[FakeOpenAIServer]:
    with FakeOpenAIServer(scripted) as fake:
        yield fake


def http_judge(server: FakeOpenAIServer, cache: Path) -> Judge:
    return make_judge(
        "openai/judge-x", api_base=server.url, api_key="sk-test", cache_dir=cache, retry=RetryPolicy.immediate()
    )


def _requests(server: FakeOpenAIServer, schema: str) -> list[dict[str, Any]]:
    return [body for body in server.requests if _schema(body) == schema]


def _judged_pairs(server: FakeOpenAIServer) -> list[tuple[str, str]]:
    """(question, passage text) of every pair sent to listwise relevance."""
    out = []
    for body in _requests(server, "ListwiseRelevance"):
        text = _user(body)
        question = QUESTION.findall(text)[0]
        out += [(question, passage) for _, passage in PASSAGE.findall(text)]
    return out


def _texts(golden: GoldenSet, pairs: set[tuple[str, str]]) -> set[tuple[str, str]]:
    return {(golden.question(q).text, golden.chunk(c).text) for q, c in pairs}


def test_offline_judge_end_to_end_adds_labels_with_provenance(tmp_path: Path) -> None:
    folder = save_golden(tmp_path / "golden")
    good = write_run(tmp_path / "good.jsonl", good_lines())
    judge = make_judge("offline")
    result, rows = evaluate(folder, [good], judge=judge, settings=FAST)
    run = result.runs[0]
    # per query two unlabelled chunks in the top 10: the care chunk and the next product's answer chunk
    assert run.counts.labels_judged_now == 2 * N
    assert judge.usage["relevance"].calls == N  # one listwise call per question
    saved = GoldenSet.load(folder)
    new = [q for q in saved.qrels if q.provenance.model == "offline"]
    assert len(new) == 2 * N
    assert all(q.provenance.source == "judge" and q.provenance.prompt == "relevance_listwise@4" for q in new)
    assert all(q.provenance.rationale and "not an LLM" in q.provenance.rationale for q in new)
    assert run.judged_at_k["10"] == 1.0
    for name in ("context_recall", "faithfulness", "answer_relevance", "attribution_rate",
                 "ragas_context_precision@5", "nugget_recall_vital_strict"):  # fmt: skip
        assert run.metrics[name].n_scored == N, name
    assert result.warnings[0].startswith("offline judge: a lexical baseline, not an LLM")
    again = make_judge("offline")
    evaluate(folder, [good], judge=again, settings=FAST)
    assert "relevance" not in again.usage  # every retrieved chunk has a label now: no relevance call at all
    assert all(row.metrics["faithfulness"] == 1.0 for row in rows)


def test_calls_per_sample_and_a_second_system_pays_only_for_new_chunks(
    tmp_path: Path, server: FakeOpenAIServer
) -> None:
    folder = save_golden(tmp_path / "golden")
    golden = GoldenSet.load(folder)
    good, weak = good_lines(), weak_lines()
    cache = tmp_path / "cache"
    evaluate(folder, [write_run(tmp_path / "good.jsonl", good)], judge=http_judge(server, cache), settings=FAST)
    labelled = {(q.query_id, q.chunk_id) for q in golden.qrels}
    first = _judged_pairs(server)
    assert sorted(first) == sorted(_texts(golden, pair_set(good, 10) - labelled))
    per_sample = {
        s: len(_requests(server, s)) / N for s in ("ListwiseRelevance", "SupportAssignments", "AnswerAssessment")
    }
    # relevance 1, context recall 1 + nugget recall 1 (both "support"), answer 1
    assert per_sample == {"ListwiseRelevance": 1.0, "SupportAssignments": 2.0, "AnswerAssessment": 1.0}

    server.requests.clear()
    evaluate(folder, [write_run(tmp_path / "weak.jsonl", weak)], judge=http_judge(server, cache), settings=FAST)
    second = _judged_pairs(server)
    never_judged = pair_set(weak, 10) - labelled - pair_set(good, 10)
    assert sorted(second) == sorted(_texts(golden, never_judged))
    assert not set(second) & set(first)


def test_labels_are_reused_from_the_cache_across_golden_copies(tmp_path: Path, server: FakeOpenAIServer) -> None:
    folder = save_golden(tmp_path / "golden")
    shutil.copytree(folder, tmp_path / "copy")
    run = write_run(tmp_path / "good.jsonl", good_lines(answers=False))
    cache = tmp_path / "cache"
    evaluate(folder, [run], judge=http_judge(server, cache), settings=FAST)
    calls = server.calls
    judge = http_judge(server, cache)
    result, _ = evaluate(tmp_path / "copy", [run], judge=judge, settings=FAST)  # the copy has no new labels
    assert server.calls == calls  # every label and every context-recall answer came from the cache
    assert judge.usage["relevance"].cached == 2 * N
    assert result.runs[0].counts.labels_judged_now == 2 * N


def test_unscored_answers_are_counted_and_excluded(tmp_path: Path, server: FakeOpenAIServer) -> None:
    folder = save_golden(tmp_path / "golden")
    lines = good_lines()
    lines[3]["answer"] = "BROKEN " + lines[3]["answer"]
    result, rows = evaluate(
        folder, [write_run(tmp_path / "good.jsonl", lines)], judge=http_judge(server, tmp_path / "c"), settings=FAST
    )
    summary = result.runs[0].metrics["faithfulness"]
    assert (summary.n_scored, summary.n_unscored) == (N - 1, 1)
    assert summary.unscored_reasons == {"invalid_output": 1}
    assert summary.mean == 1.0  # the unscored answer is not averaged in as 0
    row = next(r for r in rows if r.query_id == qid(3))
    assert row.metrics["faithfulness"] is None and row.metrics["answer_relevance"] is None
    assert row.unscored["answer_relevance"] == "invalid_output"
    assert result.usage["answer"].unscored == 1
    broken = [b for b in _requests(server, "AnswerAssessment") if "BROKEN" in _user(b)]
    assert len(broken) == 2  # one repair attempt, then unscored


def test_an_unscored_relevance_label_makes_the_metrics_that_reach_it_unscored(
    tmp_path: Path, server: FakeOpenAIServer
) -> None:
    golden = GoldenSet.load(save_golden(tmp_path / "golden"))
    golden.chunks[2].text = "SKIP " + golden.chunks[2].text  # q00's care chunk: the judge gives it no grade
    golden.save(tmp_path / "golden", overwrite=True)
    run = write_run(tmp_path / "good.jsonl", good_lines(answers=False))
    result, rows = evaluate(tmp_path / "golden", [run], judge=http_judge(server, tmp_path / "c"), settings=FAST)
    row = next(r for r in rows if r.query_id == qid(0))
    assert row.metrics["P@1"] == 1.0  # rank 1 is judged
    assert row.metrics["P@3"] is None and row.unscored["P@3"] == "unscored_relevance_label"  # care chunk is rank 2
    assert row.metrics["ragas_context_precision@3"] is None
    assert result.runs[0].metrics["P@3"].n_unscored == 1
    assert result.runs[0].grade_histogram["unscored"] == 1
    saved = GoldenSet.load(tmp_path / "golden")
    [bad] = [q for q in saved.qrels if q.grade is None]
    assert bad.unscored is not None and "no judgement" in bad.unscored.reason


def test_ppi_corrects_pair_precision_with_audited_labels(tmp_path: Path) -> None:
    folder = save_golden(tmp_path / "golden")
    lines = good_lines(answers=False)
    run = write_run(tmp_path / "good.jsonl", lines)
    # a person agrees with the judge on the answer chunks and says the care chunks are not relevant
    human = {(qid(i), answer_id(i)): 3 for i in range(N)}
    human |= {(line["query_id"], line["retrieved"][1]): 0 for line in lines[:6]}
    result, _ = evaluate(folder, [run], judge=make_judge("offline"), settings=FAST, human_labels=human)
    corrected = {c.metric: c for c in result.corrected}
    assert set(corrected) == {"pair_precision@5", "pair_precision@10"}
    five = corrected["pair_precision@5"]
    assert five.n_audited == N + 6 and five.n_audited + five.n_unaudited == 4 * N
    assert five.low is not None and five.high is not None and five.low <= five.estimate <= five.high  # type: ignore[operator]
    assert five.lambda_ is not None and 0.0 <= five.lambda_ <= 1.0
    few = {(qid(i), answer_id(i)): 3 for i in range(5)}
    result, _ = evaluate(folder, [run], judge=None, settings=FAST, human_labels=few)
    assert result.corrected == []
    assert any(w.startswith("PPI skipped for good pair_precision@5: 5 audited pair(s)") for w in result.warnings)


def test_support_matrix_rows(tmp_path: Path) -> None:
    folder = save_golden(tmp_path / "golden")
    done = evaluate_detailed(
        folder, [write_run(tmp_path / "good.jsonl", good_lines())], judge=make_judge("offline"), settings=FAST
    )
    answer_rows = [r for r in done.support_rows if r.kind == "answer" and r.query_id == qid(0)]
    assert answer_rows[0].support[answer_id(0)] == 1.0
    assert list(answer_rows[0].support) == good_lines()[0]["retrieved"][:5]
    path = done.write_support_matrix(tmp_path / "support_matrix.jsonl")
    lines = path.read_text().splitlines()
    assert json.loads(lines[0]) == {"assay": "support_matrix", "version": 1}
    assert len(lines) == 1 + len(done.support_rows)


def test_usage_is_what_this_evaluation_spent_when_a_judge_is_reused(tmp_path: Path) -> None:
    folder = save_golden(tmp_path / "golden")
    judge = make_judge("offline")
    first, _ = evaluate(folder, [write_run(tmp_path / "good.jsonl", good_lines())], judge=judge, settings=FAST)
    second, _ = evaluate(folder, [tmp_path / "good.jsonl"], judge=judge, settings=FAST)
    assert first.usage["relevance"].calls == N and first.usage["answer"].calls == N
    assert "relevance" not in second.usage  # the labels are in the golden set now
    assert second.usage["answer"].calls == N  # the offline judge has no cache here: asked again, counted once
    assert judge.usage["answer"].calls == 2 * N
