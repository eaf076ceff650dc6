"""Judge noise (``--judge-repeats``) through the fake OpenAI server: a judge that changes some grades when asked again.

The scripted judge grades a passage with the warranty fact 3 and others 0, except the answer chunks of the products
with an odd index: those it grades 3, 2, 3, ... on the 1st, 2nd, 3rd time it sees that (question, passage) pair. The
share of re-asked pairs whose grade changed is therefore known exactly: the pairs whose chunk is such an answer chunk,
over the pairs in the runs' top k.
"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from evaluate_fixture import PRODUCTS, answer_id, good_lines, pair_set, save_golden, weak_lines, write_run
from test_evaluate_judged import PASSAGE, QUESTION, _schema, _user

from assay import EvalSettings, evaluate
from assay.errors import ConfigError
from assay.judge import make_judge
from assay.judge.limits import RetryPolicy
from assay.judge.panel import Panel
from assay.testing import FakeOpenAIServer

NOISY = {answer_id(i) for i in range(len(PRODUCTS)) if i % 2}
NOISY_NAMES = [PRODUCTS[i][0] for i in range(len(PRODUCTS)) if i % 2]


class NoisyJudge:
    def __init__(self) -> None:
        self.seen: Counter[tuple[str, str]] = Counter()

    def __call__(self, body: dict[str, Any]) -> str:
        assert _schema(body) == "ListwiseRelevance", _schema(body)
        text = _user(body)
        question = QUESTION.findall(text)[0]
        out = []
        for pid, passage in PASSAGE.findall(text):
            self.seen[(question, passage)] += 1
            grade = 3 if "warranty lasts" in passage else 0
            noisy = "warranty lasts" in passage and any(f"The {name} " in passage for name in NOISY_NAMES)
            if noisy and self.seen[(question, passage)] % 2 == 0:
                grade = 2
            out.append({"id": pid, "reason": "scripted", "grade": grade})
        return json.dumps({"judgements": out})


SETTINGS = EvalSettings(k_values=(10,), metrics=("ndcg@10",), cluster_by="none", judge_repeats=2)


def test_the_share_of_changed_grades_and_the_metric_spread(tmp_path: Path) -> None:
    golden = save_golden(tmp_path / "golden")
    good, weak = good_lines(answers=False), weak_lines(answers=False)
    runs = [write_run(tmp_path / "good.jsonl", good), write_run(tmp_path / "weak.jsonl", weak)]
    with FakeOpenAIServer(NoisyJudge()) as server:
        judge = make_judge("openai/judge-x", api_base=server.url, api_key="sk-test", cache_dir=tmp_path / "cache",
                           retry=RetryPolicy.immediate())  # fmt: skip
        result, _ = evaluate(golden, runs, judge=judge, settings=SETTINGS)
    noise = result.judge_noise
    assert noise is not None and noise.source == "repeats" and noise.repeats == 2
    pairs = pair_set(good, 10) | pair_set(weak, 10)
    assert noise.labels == noise.eligible == len(pairs) and noise.coverage == 1.0
    expected = sum(cid in NOISY for _, cid in pairs) / len(pairs)
    assert noise.changed == pytest.approx(expected, abs=1e-6) and 0 < expected < 1
    assert noise.metric == "ndcg@10" and noise.failed == 0
    assert set(noise.sd) == {"good", "weak"} and all(v is not None and v > 0 for v in noise.sd.values())
    assert list(noise.sd_delta) == ["weak - good"]


def test_a_capped_sample_is_the_same_on_every_run_and_says_its_coverage(tmp_path: Path) -> None:
    golden = save_golden(tmp_path / "golden")
    runs = [write_run(tmp_path / "good.jsonl", good_lines(answers=False))]
    found = []
    for attempt in range(2):
        with FakeOpenAIServer(NoisyJudge()) as server:
            judge = make_judge("openai/judge-x", api_base=server.url, api_key="sk-test",
                               cache_dir=tmp_path / f"cache{attempt}", retry=RetryPolicy.immediate())  # fmt: skip
            settings = EvalSettings(k_values=(10,), metrics=("ndcg@10",), judge_repeats=1, judge_repeats_max=5)
            result, _ = evaluate(golden, runs, judge=judge, settings=settings)
        assert result.judge_noise is not None
        found.append(result.judge_noise)
    assert found[0] == found[1]
    assert found[0].labels == 5 and found[0].coverage == pytest.approx(5 / found[0].eligible, abs=1e-6)


def test_judge_repeats_needs_one_judge(tmp_path: Path) -> None:
    golden = save_golden(tmp_path / "golden")
    run = write_run(tmp_path / "good.jsonl", good_lines())
    with pytest.raises(ConfigError, match="--judge-repeats re-asks the judge"):
        evaluate(golden, [run], settings=SETTINGS)
    other = make_judge("openai/judge-x", api_base="http://127.0.0.1:9/v1", api_key="sk-test")  # never called
    panel = Panel((make_judge("offline"), other))
    with pytest.raises(ConfigError, match="one --judge"):
        evaluate(golden, [run], judge=panel, settings=SETTINGS)
