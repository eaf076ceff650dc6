"""A judged criterion's expected score (``expected = true``) through the fake server: asked with ``logprobs`` and
``top_logprobs``, the second metric ``criterion:NAME|expected`` weighs the declared scores by the label tokens'
probabilities, it is cached with the answer, a server that returns no probabilities leaves it unscored with the
reason (the label's own score stands), and the CLI accepts it in ``-m`` and ``--fail-under``.

The scripted judge (test_criteria_judged's) passes the good run's answers and fails the weak run's. Its label token
carries alternatives: after ``pass``, P(pass) 0.9 and P(fail) 0.1 (expected 0.9); after ``fail``, P(pass) 0.3 and
P(fail) 0.7 (expected 0.3).
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

from click.testing import CliRunner
from evaluate_fixture import PRODUCTS, good_lines, qid, save_golden, weak_lines, write_run
from test_criteria_judged import DAYS, _by, _folder, _requests, judge_criteria
from test_evaluate_judged import http_judge

from assay.cli import main
from assay.judge import make_judge
from assay.pipelines.evaluate import EvalSettings, evaluate
from assay.testing import FakeOpenAIServer
from assay.testing.fake_server import certain_logprobs

M = len(PRODUCTS)
EXPECTED = DAYS.replace('scale = "pass_fail"', 'scale = "pass_fail"\nexpected = true')
UNSURE = {"pass": [("pass", 0.9), ("fail", 0.1)], "fail": [("pass", 0.3), ("fail", 0.7)]}


def unsure(body: dict[str, Any], content: str) -> list[dict[str, Any]]:
    """Certain tokens, except the label's (module doc)."""
    tokens = certain_logprobs(body, content)
    text = ""
    for token in tokens:
        if text.rstrip().endswith('"label": "') and token["token"] in UNSURE:
            top = [{"token": t, "logprob": math.log(p)} for t, p in UNSURE[token["token"]]]
            token["top_logprobs"], token["logprob"] = (
                top,
                next(a["logprob"] for a in top if a["token"] == token["token"]),
            )
        text += token["token"]
    return tokens


def test_the_expected_score_is_a_second_metric_asked_with_logprobs_and_cached(tmp_path: Path) -> None:
    settings = EvalSettings(n_boot=200, metrics=("ndcg@10",), criteria=(_folder(tmp_path, EXPECTED),))
    runs = [("good", good_lines(M)), ("weak", weak_lines(M))]
    with FakeOpenAIServer(responder=judge_criteria, logprobs=unsure) as server:
        result, rows = evaluate(save_golden(tmp_path / "golden"), runs, judge=http_judge(server, tmp_path / "cache"),
                                settings=settings)  # fmt: skip
        asked = _requests(server, "CriterionVerdict")
        assert len(asked) == 2 * M
        assert all(body["logprobs"] is True and body["top_logprobs"] == 10 for body in asked)
        again, _ = evaluate(save_golden(tmp_path / "golden2"), runs, judge=http_judge(server, tmp_path / "cache"),
                            settings=settings)  # fmt: skip
        assert len(_requests(server, "CriterionVerdict")) == 2 * M  # the second evaluation read the cache
    assert _by(rows, "good", "criterion:days") == {qid(i): (1.0, None) for i in range(M)}
    assert _by(rows, "good", "criterion:days|expected") == {qid(i): (0.9, None) for i in range(M)}
    assert _by(rows, "weak", "criterion:days|expected") == {qid(i): (0.3, None) for i in range(M)}
    means = {run.name: run.metrics["criterion:days|expected"].mean for run in again.runs}
    assert means == {"good": 0.9, "weak": 0.3}  # from the cache too: the probabilities are kept with the answer
    record = result.criterion_verdicts[0]
    assert (record.expected, record.votes[0].expected, record.votes[0].coverage) == (0.9, 0.9, 1.0)
    assert "criterion:days|expected" in {c.metric for c in result.comparisons}


def test_a_server_without_probabilities_leaves_the_expected_score_unscored(tmp_path: Path) -> None:
    settings = EvalSettings(n_boot=200, metrics=("ndcg@10",), criteria=(_folder(tmp_path, EXPECTED),))
    with FakeOpenAIServer(responder=judge_criteria, logprobs=lambda body, content: []) as server:
        _, rows = evaluate(save_golden(tmp_path / "golden"), [("good", good_lines(M))],
                           judge=http_judge(server, tmp_path / "cache"), settings=settings)  # fmt: skip
    assert set(_by(rows, "good", "criterion:days|expected").values()) == {(None, "no_token_probabilities")}
    assert set(_by(rows, "good", "criterion:days").values()) == {(1.0, None)}  # the label's score stands
    _, offline = evaluate(save_golden(tmp_path / "golden3"), [("good", good_lines(M))],
                          judge=make_judge("offline", cache_dir=tmp_path / "c"), settings=settings)  # fmt: skip
    assert set(_by(offline, "good", "criterion:days|expected").values()) == {(None, "needs a model judge")}


def test_the_cli_gates_on_the_expected_score(tmp_path: Path) -> None:
    golden = save_golden(tmp_path / "golden")
    write_run(tmp_path / "weak.jsonl", weak_lines(M))
    folder = _folder(tmp_path, EXPECTED)
    with FakeOpenAIServer(responder=judge_criteria, logprobs=unsure) as server:
        args = ["eval", golden, tmp_path / "weak.jsonl", "--judge", "openai/judge-x", "--api-key", "k",
                "--api-base", server.url, "--cache-dir", tmp_path / "cache", "-c", folder, "-m",
                "criterion:days|expected", "-o", tmp_path / "out"]  # fmt: skip
        passed = CliRunner().invoke(main, [str(a) for a in [*args, "--fail-under", "criterion:days|expected=0.25"]])
        failed = CliRunner().invoke(main, [str(a) for a in [*args, "--fail-under", "criterion:days|expected=0.35"]])
        unknown = CliRunner().invoke(main, [str(a) for a in [*args, "--fail-under", "criterion:tone|expected=0.5"]])
    assert passed.exit_code == 0, passed.output
    assert failed.exit_code == 1, failed.output
    assert unknown.exit_code != 0 and "no criterion of that name" in unknown.output, unknown.output
    saved = json.loads((tmp_path / "out" / "results.json").read_text())
    assert saved["runs"][0]["metrics"]["criterion:days|expected"]["mean"] == 0.3
