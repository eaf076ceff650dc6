"""Judged criteria through the fake OpenAI-compatible server: the declared score of the label given, a decision
tree walked from the judge's answers (every answered step recorded), only the named inputs sent, unscored with the
reason (never 0) when the reply fails or leaves the scale, cached and keyed by the file, priced by the dry run, and a
panel's labels combined by its rule.

The golden set is evaluate_fixture's first four questions. The scripted judge reads the <answer> block: a label
``pass`` when it holds "days", else ``fail``; ``maybe`` (outside the scale) when it holds "ODD"; text that is not
JSON when it holds "BROKEN". For the tree: q1 "gives a number of days?" is yes when the answer holds a digit, q2
"names the product?" is yes when it holds "Alder" or "Birch"; q2 is left unanswered when the answer holds "SKIP".
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from evaluate_fixture import good_lines, make_golden, qid, save_golden, weak_lines, write_run
from test_evaluate_judged import _schema, _user, http_judge, scripted

from assay.cli import main
from assay.judge import make_judge
from assay.judge.panel import Panel
from assay.pipelines.evaluate import EvalSettings, estimate_evaluation, evaluate
from assay.report.verdict import build_verdict
from assay.results import EvalResult, QueryResult
from assay.testing import FakeOpenAIServer
from assay.testing.fake_batches import FakeBatchServer

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "report"))
from test_html import lazy_block

N = 4
DAYS = (
    '+++\nname = "days"\nversion = "1"\ninputs = ["answer"]\nscale = "pass_fail"\n'
    'steps = ["Find the duration the answer gives."]\n+++\n'
    "The answer says how many days the warranty lasts.\n"
)
TREE = """+++
name = "precise"
version = "1"
inputs = ["question", "answer"]
[[scale]]
label = "full"
description = "a number of days for the named product"
score = 1.0
[[scale]]
label = "partial"
description = "a number of days, product not named"
score = 0.5
[[scale]]
label = "none"
description = "no number of days"
score = 0.0
[[tree]]
id = "q1"
question = "Does the answer give a number of days?"
yes = "q2"
no = "none"
[[tree]]
id = "q2"
question = "Does the answer name the product?"
yes = "full"
no = "partial"
+++
The answer is precise about the warranty.
"""
ANSWER = re.compile(r"<answer-\w+>\n(.*?)\n</answer-\w+>", re.S)


def judge_criteria(body: dict[str, Any]) -> str:
    """The scripted judge of the module doc (other prompts: test_evaluate_judged's)."""
    schema = _schema(body)
    if schema not in ("CriterionVerdict", "CriterionTree"):
        return scripted(body)
    answer = ANSWER.findall(_user(body))[0]
    if "BROKEN" in answer:
        return "no JSON here"
    if schema == "CriterionVerdict":
        label = "maybe" if "ODD" in answer else "pass" if "days" in answer else "fail"
        return json.dumps({"reason": f"scripted: {label}", "label": label})
    q1 = "yes" if re.search(r"\d", answer) else "no"
    answers = [{"id": "q1", "reason": "digits" if q1 == "yes" else "no digits", "answer": q1}]
    if "SKIP" not in answer:
        named = "yes" if ("Alder" in answer or "Birch" in answer) else "no"
        answers.append({"id": "q2", "reason": f"named: {named}", "answer": named})
    return json.dumps({"answers": answers})


def _folder(tmp_path: Path, *texts: str) -> Path:
    folder = tmp_path / "criteria"
    folder.mkdir(exist_ok=True)
    for text in texts:
        name = text.split('name = "')[1].split('"')[0]
        (folder / f"{name}.md").write_text(text, encoding="utf-8")
    return folder


def _lines() -> list[dict[str, Any]]:
    """q00-q03 of the good run: q00 Alder (named, 14 days), q01 SKIP, q02 ODD, q03 BROKEN."""
    lines = good_lines(N)
    lines[1]["answer"] += " SKIP"
    lines[2]["answer"] += " ODD"
    lines[3]["answer"] += " BROKEN"
    return lines


def _by(rows: list[QueryResult], run: str, metric: str) -> dict[str, tuple[float | None, str | None]]:
    return {r.query_id: (r.metrics.get(metric), r.unscored.get(metric)) for r in rows if r.run == run}


def _requests(server: FakeOpenAIServer, schema: str) -> list[dict[str, Any]]:
    return [body for body in server.requests if _schema(body) == schema]


def test_the_metric_is_the_declared_score_and_every_failure_is_unscored_with_its_reason(tmp_path: Path) -> None:
    settings = EvalSettings(n_boot=200, metrics=("ndcg@10",), criteria=(_folder(tmp_path, DAYS, TREE),))
    with FakeOpenAIServer(responder=judge_criteria) as server:
        judge = http_judge(server, tmp_path / "cache")
        result, rows = evaluate(make_golden(n=N), [("good", _lines()), ("weak", weak_lines(N))], judge=judge,
                                settings=settings)  # fmt: skip
    q = [qid(i) for i in range(N)]
    assert _by(rows, "good", "criterion:days") == {q[0]: (1.0, None), q[1]: (1.0, None),
                                                   q[2]: (None, "label_not_in_scale"),
                                                   q[3]: (None, "invalid_output")}  # fmt: skip
    assert _by(rows, "weak", "criterion:days") == dict.fromkeys(q, (0.0, None))  # "lifetime guarantee": no days
    # The tree: q00 names the Alder kettle (full, 1.0); q01 never answered q2; q02 (the Cedar product) gives days
    # without a product the script knows: partial, 0.5 (a declared score, not a rescaled rank); q03 is not JSON.
    assert _by(rows, "good", "criterion:precise") == {q[0]: (1.0, None), q[1]: (None, "tree_question_unanswered"),
                                                      q[2]: (0.5, None), q[3]: (None, "invalid_output")}  # fmt: skip
    assert _by(rows, "weak", "criterion:precise") == dict.fromkeys(q, (0.0, None))
    means = {run.name: run.metrics["criterion:precise"] for run in result.runs}
    assert means["good"].mean == pytest.approx(0.75) and means["good"].n_unscored == 2
    assert "criterion:days" in {c.metric for c in result.comparisons}
    caveats = build_verdict(result).caveats
    assert any(
        c.startswith(
            "criterion:days (0 of 10 audited), criterion:precise (0 of 10 audited) not validated: audit 10 items"
        )
        for c in caveats
    )


def test_each_verdict_is_recorded_with_its_reason_and_the_answered_steps_of_its_walk(tmp_path: Path) -> None:
    settings = EvalSettings(n_boot=200, metrics=("ndcg@10",), criteria=(_folder(tmp_path, DAYS, TREE),))
    with FakeOpenAIServer(responder=judge_criteria) as server:
        result, _ = evaluate(make_golden(n=N), [("good", _lines())], judge=http_judge(server, tmp_path / "cache"),
                             settings=settings)  # fmt: skip
    saved = EvalResult.model_validate_json(result.model_dump_json())  # what results.json keeps
    records = {(r.criterion, r.query_id): r for r in saved.criterion_verdicts}
    assert len(records) == 2 * N
    walked = records[("precise", qid(0))]
    assert (walked.ref, walked.label, walked.score, walked.unscored) == ("precise@1", "full", 1.0, None)
    [vote] = walked.votes
    assert vote.model == "openai/judge-x"
    assert [(s.id, s.question, s.answer, s.reason) for s in vote.steps] == [
        ("q1", "Does the answer give a number of days?", "yes", "digits"),
        ("q2", "Does the answer name the product?", "yes", "named: yes"),
    ]
    stopped = records[("precise", qid(1))]
    assert stopped.label is None and stopped.unscored == "tree_question_unanswered"
    assert [s.id for s in stopped.votes[0].steps] == ["q1"]  # the step it answered is kept
    outside = records[("days", qid(2))]
    assert (outside.label, outside.votes[0].reason, outside.votes[0].unscored) == (None, "scripted: maybe",
                                                                                   "label_not_in_scale")  # fmt: skip


def test_only_the_inputs_the_criterion_names_are_sent(tmp_path: Path) -> None:
    settings = EvalSettings(n_boot=200, metrics=("ndcg@10",), criteria=(_folder(tmp_path, DAYS),))
    with FakeOpenAIServer(responder=judge_criteria) as server:
        evaluate(make_golden(n=N), [("good", good_lines(N))], judge=http_judge(server, tmp_path / "cache"),
                 settings=settings)  # fmt: skip
        sent = [_user(body) for body in _requests(server, "CriterionVerdict")]
    assert len(sent) == N
    for text in sent:
        assert "<answer-" in text and "warranty lasts" in text
        assert "<question-" not in text and "<passage-" not in text and "<reference-" not in text
        assert "Find the duration the answer gives." in text and "- pass:" in text and "- fail:" in text
        assert "score" not in text  # the declared scores stay with assay


def test_cached_answers_are_reused_and_an_edited_file_is_asked_again(tmp_path: Path) -> None:
    folder = _folder(tmp_path, DAYS)
    settings = EvalSettings(n_boot=200, metrics=("ndcg@10",), criteria=(folder,))
    with FakeOpenAIServer(responder=judge_criteria) as server:
        for _ in range(2):
            evaluate(make_golden(n=N), [("good", good_lines(N))], judge=http_judge(server, tmp_path / "cache"),
                     settings=settings)  # fmt: skip
        assert len(_requests(server, "CriterionVerdict")) == N  # the second evaluation read the cache
        (folder / "days.md").write_text(DAYS.replace('version = "1"', 'version = "2"'), encoding="utf-8")
        evaluate(make_golden(n=N), [("good", good_lines(N))], judge=http_judge(server, tmp_path / "cache"),
                 settings=EvalSettings(n_boot=200, metrics=("ndcg@10",), criteria=(folder,)))  # fmt: skip
        assert len(_requests(server, "CriterionVerdict")) == 2 * N  # another file: asked again


def test_the_dry_run_prices_one_call_per_run_question_and_criterion_and_makes_none(tmp_path: Path) -> None:
    settings = EvalSettings(n_boot=200, metrics=("ndcg@10",), criteria=(_folder(tmp_path, DAYS, TREE),))
    with FakeOpenAIServer(responder=judge_criteria) as server:
        judge = http_judge(server, tmp_path / "cache")
        estimates = estimate_evaluation(make_golden(n=N), [("good", _lines()), ("weak", weak_lines(N))], judge,
                                        settings)  # fmt: skip
        assert server.requests == []
    assert estimates["criterion:days"].calls == 2 * N
    assert estimates["criterion:precise"].calls == 2 * N
    assert estimates["criterion:days"].prompt_tokens > 0


def test_a_failed_or_empty_answer_is_unscored_without_a_call(tmp_path: Path) -> None:
    lines = good_lines(N)
    lines[0]["answer"] = "  "
    lines[1] = {"query_id": qid(1), "retrieved": [], "error": {"kind": "timeout"}}
    settings = EvalSettings(n_boot=200, metrics=("ndcg@10",), criteria=(_folder(tmp_path, DAYS),))
    with FakeOpenAIServer(responder=judge_criteria) as server:
        _, rows = evaluate(make_golden(n=N), [("good", lines)], judge=http_judge(server, tmp_path / "cache"),
                           settings=settings)  # fmt: skip
        assert len(_requests(server, "CriterionVerdict")) == N - 2
    found = _by(rows, "good", "criterion:days")
    assert found[qid(0)] == (None, "empty answer")
    assert found[qid(1)][0] is None and found[qid(1)][1] == "system_failed"
    assert found[qid(2)] == (1.0, None)


def test_a_panel_combines_the_labels_by_its_rule(tmp_path: Path) -> None:
    """Two judges: judge-x follows the script, judge-y fails every answer. ``min`` gives fail; each vote is kept."""

    def two(body: dict[str, Any]) -> str:
        if body["model"] == "judge-y" and _schema(body) == "CriterionVerdict":
            return json.dumps({"reason": "strict", "label": "fail"})
        return judge_criteria(body)

    settings = EvalSettings(n_boot=200, metrics=("ndcg@10",), criteria=(_folder(tmp_path, DAYS),))
    with FakeOpenAIServer(responder=two) as server:
        x = http_judge(server, tmp_path / "cache")
        y = make_judge("openai/judge-y", api_base=server.url, api_key="sk-test", cache_dir=tmp_path / "cache")
        result, rows = evaluate(make_golden(n=N), [("good", good_lines(N))], judge=Panel((x, y), combine="min"),
                                settings=settings)  # fmt: skip
        estimates = estimate_evaluation(make_golden(n=N), [("good", good_lines(N))], Panel((x, y), combine="min"),
                                        settings)  # fmt: skip
    assert _by(rows, "good", "criterion:days") == {qid(i): (0.0, None) for i in range(N)}
    record = result.criterion_verdicts[0]
    assert [(v.model, v.label) for v in record.votes] == [("openai/judge-x", "pass"), ("openai/judge-y", "fail")]
    assert {"criterion:days openai/judge-x", "criterion:days openai/judge-y"} <= set(estimates)


def test_the_offline_judge_asks_nothing_and_leaves_the_criterion_unscored(tmp_path: Path) -> None:
    settings = EvalSettings(n_boot=200, metrics=("ndcg@10",), criteria=(_folder(tmp_path, DAYS),))
    result, rows = evaluate(make_golden(n=N), [("good", good_lines(N))],
                            judge=make_judge("offline", cache_dir=tmp_path / "cache"), settings=settings)  # fmt: skip
    assert set(_by(rows, "good", "criterion:days").values()) == {(None, "needs a model judge")}
    assert result.criterion_verdicts == []


def _cli(*args: str | Path) -> tuple[int, str]:
    result = CliRunner().invoke(main, [str(a) for a in args])
    return result.exit_code, result.output


def _per_query(folder: Path, metric: str) -> dict[str, float | None]:
    rows = [json.loads(line) for line in (folder / "per_query.jsonl").read_text().splitlines()][1:]  # a header
    return {row["query_id"]: row["metrics"].get(metric) for row in rows}


def test_the_cli_asks_directly_or_through_batches_alike_and_prices_the_criterion(tmp_path: Path) -> None:
    golden = save_golden(tmp_path / "golden")
    run_file = write_run(tmp_path / "good.jsonl", _lines())
    folder = _folder(tmp_path, DAYS, TREE)
    common = ("eval", golden, run_file, "--judge", "openai/judge-x", "--api-key", "k", "-c", folder, "-m", "ndcg@10")
    with FakeOpenAIServer(responder=judge_criteria) as server:
        code, text = _cli(*common, "--api-base", server.url, "--cache-dir", tmp_path / "c1", "--dry-run")
        assert code == 0, text
        assert "criterion:days" in text and "criterion:precise" in text and server.requests == []
        code, text = _cli(*common, "--api-base", server.url, "--cache-dir", tmp_path / "c1", "-o", tmp_path / "direct")
        assert code == 0, text
    with FakeBatchServer(judge_criteria) as batches:
        code, text = _cli(*common, "--api-base", batches.url, "--cache-dir", tmp_path / "c2", "--batch",
                          "-o", tmp_path / "batched")  # fmt: skip
        assert code == 0, text
        assert batches.calls == 0  # every call went through a batch
    for metric in ("criterion:days", "criterion:precise"):
        direct = _per_query(tmp_path / "direct", metric)
        assert direct == _per_query(tmp_path / "batched", metric)
    assert _per_query(tmp_path / "direct", "criterion:precise") == {qid(0): 1.0, qid(1): None, qid(2): 0.5,
                                                                    qid(3): None}  # fmt: skip
    saved = json.loads((tmp_path / "direct" / "results.json").read_text())
    assert len(saved["criterion_verdicts"]) == 2 * N
    markdown = (tmp_path / "direct" / "report.md").read_text()
    labels = "full 1, partial 1, unscored (invalid_output) 1, unscored (tree_question_unanswered) 1"
    assert f"| precise@1 | good | {labels} |" in markdown
    page = (tmp_path / "direct" / "report.html").read_text()
    index = lazy_block(page, "data-explorer")
    block = lazy_block(page, f"data-q{[q for q, _ in index['questions']].index(qid(0))}")
    walked = next(v for v in block["k"] if v[1] == "precise")
    assert walked[:5] == ["good", "precise", "full", 1.0, None]
    [[model, label, _, steps, unscored]] = walked[5]
    assert (model, label, unscored) == ("openai/judge-x", "full", None)
    assert [step[:3] for step in steps] == [["q1", "Does the answer give a number of days?", "yes"],
                                            ["q2", "Does the answer name the product?", "yes"]]  # fmt: skip
