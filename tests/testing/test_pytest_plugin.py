"""assay's pytest plugin run by pytester: gates with intervals pass and fail with an explanation (metric, interval,
worst queries, judge's reasons), the comparison with a baseline, a cached judge that a rerun does not pay again, runs
passed as runs and settings as typed keywords, and a plugin that costs nothing when unused."""

from __future__ import annotations

import subprocess
import sys
from importlib.metadata import entry_points
from pathlib import Path
from typing import Any

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "pipelines" / "evaluate"))
from evaluate_fixture import good_lines, save_golden, weak_lines, write_run

from assay.testing import FakeOpenAIServer

pytest_plugins = ["pytester"]
PLUGIN = "assay.testing.pytest_plugin"


def _plugin_args() -> list[str]:
    """``-p`` the plugin unless the installed entry point loads it already (registering it twice is an error)."""
    installed = any(ep.value == PLUGIN for ep in entry_points(group="pytest11"))
    return [] if installed else ["-p", PLUGIN]


@pytest.fixture
def data(pytester: pytest.Pytester) -> dict[str, Path]:
    root = pytester.path
    return {
        "golden": save_golden(root / "golden"),
        "good": write_run(root / "good.jsonl", good_lines()),
        "weak": write_run(root / "weak.jsonl", weak_lines()),
    }


GATES = """
ARGS = dict(k_values=(5, 10), n_boot=200, metrics=("ndcg@10", "recall@5"))

def test_good_passes(assay_eval):
    ev = assay_eval("golden", ["good.jsonl", "weak.jsonl"], **ARGS)
    ev.assert_metric("ndcg@10", at_least=0.6, run="good")
    ev.assert_not_worse("good", baseline="weak", metric="ndcg@10")

def test_weak_interval_gate(assay_eval):
    assay_eval("golden", ["good.jsonl", "weak.jsonl"], **ARGS).assert_metric("ndcg@10", at_least=0.6, run="weak")

def test_weak_not_worse(assay_eval):
    ev = assay_eval("golden", ["good.jsonl", "weak.jsonl"], **ARGS)
    ev.assert_not_worse("weak", baseline="good", metric="ndcg@10")
"""


def test_gates_pass_and_fail_with_the_worst_queries(pytester: pytest.Pytester, data: dict[str, Path]) -> None:
    pytester.makepyfile(test_gates=GATES)
    result = pytester.runpytest_subprocess(*_plugin_args())
    result.assert_outcomes(passed=1, failed=2)
    out = result.stdout.str()
    assert "weak: ndcg@10 (interval low) = " in out and "< 0.6" in out
    assert "weak ndcg@10: mean 0." in out and "95% interval [" in out and "12 scored, 0 unscored" in out
    assert "worst queries of weak on ndcg@10:" in out
    assert "q00: ndcg@10 = " in out  # every third weak line misses the answer chunk: q00 is among the worst
    assert "rank 1 d03#1-rel: no relevance label (counted not relevant)" in out  # the labels behind the value
    assert "rank 3 d00#1-rel: grade 1 (judge: no rationale)" in out
    assert "weak is significantly worse than good on ndcg@10: weak − good = -" in out
    assert "good ndcg@10: mean 0.964" in out  # the baseline's figures beside the run's


JUDGED = """
def test_weak_answers(assay_eval):
    ev = assay_eval("golden", ["weak.jsonl"], metrics=("faithfulness", "claim_precision"), n_boot=200)
    ev.assert_metric("faithfulness", at_least=0.5, statistic="mean")
"""


def test_judge_reasons_in_the_failure(pytester: pytest.Pytester, data: dict[str, Path]) -> None:
    pytester.makepyfile(test_judged=JUDGED)
    result = pytester.runpytest_subprocess(*_plugin_args(), "--assay-judge", "offline")
    result.assert_outcomes(failed=1)
    out = result.stdout.str()
    assert "weak: faithfulness = 0.000 < 0.5" in out
    assert "answer claim 'It has a lifetime guarantee on every part.': unsupported (Offline lexical baseline" in out
    # the diagnosis example with both calls' reasons: the claim shares half the reference's terms (the offline
    # judge's entailment) but not the passages': what the answer knew from elsewhere
    assert "self knowledge: 'The Birch lantern is sold in stores.' (against the chunks: Offline lexical" in out
    assert "against the reference: entailed: Offline lexical baseline, not an LLM: the text holds 56%" in out


CRITERIA = """
import pathlib

pathlib.Path("warranty.md").write_text(
    '+++\\nname = "warranty"\\nversion = "1"\\n[check]\\nkind = "contains"\\ntext = "warranty"\\n+++\\n'
)

def test_good_says_warranty(assay_eval):
    ev = assay_eval("golden", ["good.jsonl", "weak.jsonl"], criteria=("warranty.md",), metrics=("ndcg@10",), n_boot=200)
    ev.assert_metric("criterion:warranty", at_least=1.0, statistic="mean", run="good")
    ev.assert_metric("criterion:warranty", at_least=0.5, statistic="mean", run="weak")
"""


def test_a_criterion_is_gated_like_any_metric(pytester: pytest.Pytester, data: dict[str, Path]) -> None:
    pytester.makepyfile(test_criteria=CRITERIA)
    result = pytester.runpytest_subprocess(*_plugin_args())
    result.assert_outcomes(failed=1)  # good passes its gate; the weak answers say "guarantee", never "warranty"
    assert "weak: criterion:warranty = 0.000 < 0.5" in result.stdout.str()


CACHED = """
def test_cached(assay_eval):
    ev = assay_eval("golden", ["good.jsonl"], metrics=("faithfulness",), n_boot=200)
    ev.assert_metric("faithfulness", at_least=0.9, statistic="mean")
"""


def _scripted(body: dict[str, Any]) -> str:
    import json

    if body["response_format"]["json_schema"]["name"] == "ListwiseRelevance":
        return json.dumps({"judgements": []})
    claim = {"claim": "c", "reason": "r", "verdict": "supported", "passage_ids": ["1"]}
    return json.dumps({"claims": [claim], "relevance_reason": "r", "relevance": 3, "noncommittal": False})


def test_a_rerun_costs_nothing(pytester: pytest.Pytester, data: dict[str, Path]) -> None:
    pytester.makepyfile(test_cached=CACHED)
    with FakeOpenAIServer(_scripted) as server:
        args = [*_plugin_args(), "--assay-judge", "openai/j", "--assay-api-base", server.url,
                "--assay-cache-dir", str(pytester.path / "cache")]  # fmt: skip
        pytester.runpytest_subprocess(*args).assert_outcomes(passed=1)
        first = len(server.requests)
        pytester.runpytest_subprocess(*args).assert_outcomes(passed=1)
        assert first > 0 and len(server.requests) == first  # the second session answered from the cache


def test_unused_plugin_has_no_effect_and_imports_nothing_heavy(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_plain="def test_one():\n    assert 1 + 1 == 2\n")
    pytester.runpytest_subprocess(*_plugin_args()).assert_outcomes(passed=1)
    code = (
        "import sys; import assay.testing.pytest_plugin; "
        "print(sorted(m for m in sys.modules if m.startswith(('assay.', 'numpy', 'pydantic', 'aiohttp', 'litellm'))))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    # assay._version: the package root's version (importlib.metadata only)
    assert out.strip() == "['assay.testing', 'assay.testing.pytest_plugin']"


def test_options_are_listed_in_help(pytester: pytest.Pytester) -> None:
    result = pytester.runpytest_subprocess(*_plugin_args(), "--help")
    assert "--assay-judge" in result.stdout.str() and "assay_cache_dir" in result.stdout.str()


APP = """
import json

CALLS = []
LINES = {json.loads(l)["query_id"]: json.loads(l) for l in open("good.jsonl").read().splitlines()[1:]}

def answer(question, query_id):
    CALLS.append(query_id)
    line = LINES[query_id]
    return {"retrieved": line["retrieved"], "answer": line["answer"], "citations": line["citations"]}
"""

CALLABLE = """
import my_app
ARGS = dict(k_values=(5, 10), n_boot=200, metrics=("ndcg@10", "recall@5"))

def test_candidate_function(assay_eval):
    ev = assay_eval("golden", {"candidate": my_app.answer, "baseline": "weak.jsonl"}, baseline="baseline", **ARGS)
    assert ev.run_names() == ["candidate", "baseline"]
    ev.assert_metric("ndcg@10", at_least=0.6, run="candidate")
    ev.assert_not_worse("candidate", baseline="baseline", metric="ndcg@10")

def test_same_arguments_ask_nothing_again(assay_eval):
    assay_eval("golden", {"candidate": my_app.answer, "baseline": "weak.jsonl"}, baseline="baseline", **ARGS)
    assert len(my_app.CALLS) == 12 and len(set(my_app.CALLS)) == 12  # every question once in the session

def test_the_candidate_loses_to_a_better_baseline(assay_eval):
    ev = assay_eval("golden", {"candidate": my_app.answer}, **ARGS)
    system = ev.result.runs[0].system
    assert system is not None and system.lines == 12 and system.failed == 0 and "p50" in system.latency_ms
    assert system.target.startswith("python:my_app:answer")
"""


def test_a_function_is_asked_every_question_and_gated(pytester: pytest.Pytester, data: dict[str, Path]) -> None:
    pytester.makepyfile(my_app=APP, test_callable=CALLABLE)
    result = pytester.runpytest_subprocess(*_plugin_args())
    result.assert_outcomes(passed=3)


REPEATED = """
import my_app
ARGS = dict(k_values=(5, 10), n_boot=200, metrics=("ndcg@10",))

def test_repeats_gate_on_question_means(assay_eval):
    runs = {"candidate": my_app.answer, "baseline": "weak.jsonl"}
    ev = assay_eval("golden", runs, baseline="baseline", repeats=3, **ARGS)
    assert len(my_app.CALLS) == 36 and len(set(my_app.CALLS)) == 12  # every question three times
    run = ev.result.runs[0]
    assert run.name == "candidate" and run.repeats is not None and run.repeats.repeats == 3
    assert run.repeats.metrics["ndcg@10"].within == 0.0  # this system answers the same every time
    ev.assert_not_worse("candidate", baseline="baseline", metric="ndcg@10")
"""


def test_the_gate_takes_repeats(pytester: pytest.Pytester, data: dict[str, Path]) -> None:
    pytester.makepyfile(my_app=APP, test_repeated=REPEATED)
    pytester.runpytest_subprocess(*_plugin_args()).assert_outcomes(passed=1)


TALK = """
import json

HISTORY = {}
LINES = {json.loads(l)["query_id"]: json.loads(l) for l in open("good.jsonl").read().splitlines()[1:]}

def answer(question, query_id, messages=None):
    HISTORY.setdefault(query_id, []).append(messages and [m["content"] for m in messages])
    line = LINES[query_id]
    return {"retrieved": line["retrieved"], "answer": f"said {query_id}"}
"""

CONVERSING = """
import my_talk
from assay.targets import Conversing

def test_both_ways_with_own_history(assay_eval):
    ev = assay_eval("golden", {"candidate": my_talk.answer}, conversing=Conversing(mode="both", history="own"),
                    n_boot=200, metrics=("ndcg@10",))
    assert ev.run_names() == ["candidate", "candidate (rewrites)"]
    assert [name for name, _ in ev.runs] == ["candidate", "candidate (rewrites)"]
    assert all(path.is_file() for _, path in ev.runs)
    [gain] = ev.result.history_gain
    assert (gain.turns, gain.rewrites, gain.history) == ("candidate", "candidate (rewrites)", "own")
    turns, alone = my_talk.HISTORY["q02"]  # the third turn of c0: its own earlier answers, then its rewrite alone
    assert turns == ["turn 0", "said q00", "turn 1", "said q01", "turn 2"] and alone is None
    ev.assert_metric("ndcg@10", at_least=0.9, statistic="mean", run="candidate (rewrites)")
"""


def test_the_gate_asks_conversations_as_told(pytester: pytest.Pytester, data: dict[str, Path]) -> None:
    from test_evaluate_conversations import conversational

    conversational().save(pytester.path / "golden", overwrite=True)
    pytester.makepyfile(my_talk=TALK, test_conversing=CONVERSING)
    pytester.runpytest_subprocess(*_plugin_args()).assert_outcomes(passed=1)


SHORT = """
ARGS = dict(k_values=(5, 10), n_boot=200)

def test_ndcg10_is_refused_for_short_passages(assay_eval):
    assay_eval("golden", ["chunks.jsonl", "pieces.jsonl"], **ARGS).assert_metric("ndcg@10", at_least=0.1, run="pieces")

def test_the_primary_passes_the_same_text(assay_eval):
    ev = assay_eval("golden", ["chunks.jsonl", "pieces.jsonl"], **ARGS)
    assert ev.result.primary_metric == "ndcg@1000t"
    ev.assert_metric(at_least=0.999, statistic="mean", run="pieces")
    ev.assert_not_worse("pieces", baseline="chunks")
"""


def test_the_gate_refuses_a_unit_measure_and_gates_on_the_primary(pytester: pytest.Pytester) -> None:
    from gates_fixture import chunk_lines, piece_lines
    from gates_fixture import save_golden as save_long_chunks

    save_long_chunks(pytester.path / "golden")
    write_run(pytester.path / "chunks.jsonl", chunk_lines())
    write_run(pytester.path / "pieces.jsonl", piece_lines())
    pytester.makepyfile(test_short=SHORT)
    result = pytester.runpytest_subprocess(*_plugin_args())
    result.assert_outcomes(passed=1, failed=1)
    out = result.stdout.str()
    assert "AssayAssertionError: pieces: ndcg@10 refused: it counts golden chunks" in out
    assert "Gate on ndcg@1000t instead" in out


NAMED = """
import pytest
from assay.errors import ConfigError, InputError

ARGS = dict(k_values=(5, 10), n_boot=200, metrics=("ndcg@10",))

def test_a_run_named_baseline_and_the_setting(assay_eval):
    ev = assay_eval("golden", {"good": "good.jsonl", "baseline": "weak.jsonl"}, baseline="baseline", **ARGS)
    assert ev.run_names() == ["good", "baseline"]
    assert {(c.a, c.b) for c in ev.result.comparisons} == {("baseline", "good")}  # the setting: baseline first

def test_baseline_is_the_name_of_a_run_even_when_a_file_has_that_name(assay_eval):
    with pytest.raises(ConfigError, match="--baseline weak.jsonl: no run of that name; runs: good, weak"):
        assay_eval("golden", ["good.jsonl", "weak.jsonl"], baseline="weak.jsonl", **ARGS)

def test_a_keyword_that_is_no_setting_is_a_type_error(assay_eval):
    with pytest.raises(TypeError) as caught:
        assay_eval("golden", ["good.jsonl"], candidate="weak.jsonl")
    assert str(caught.value).startswith(
        "assay_eval() got an unexpected keyword argument 'candidate'; its keywords, closest first: "
    )

def test_runs_are_a_mapping_or_a_list(assay_eval):
    with pytest.raises(InputError, match="give the runs as a mapping name -> run"):
        assay_eval("golden", "good.jsonl")
    assert assay_eval("golden", [("mine", "good.jsonl"), "weak.jsonl"], **ARGS).run_names() == ["mine", "weak"]
"""


def test_runs_are_runs_and_settings_are_settings(pytester: pytest.Pytester, data: dict[str, Path]) -> None:
    pytester.makepyfile(test_named=NAMED)
    pytester.runpytest_subprocess(*_plugin_args()).assert_outcomes(passed=4)


JUDGED_AND_PAIRWISE = """
import pathlib

pathlib.Path("days.md").write_text(
    '+++\\nname = "days"\\nversion = "1"\\ninputs = ["answer"]\\nscale = "pass_fail"\\n+++\\nGives the days.\\n'
)

def test_judged_criterion_and_pairwise(assay_eval):
    ev = assay_eval("golden", ["good.jsonl", "weak.jsonl"], criteria=("days.md",), pairwise="builtin",
                    metrics=("ndcg@10",), n_boot=200)
    ev.assert_metric("criterion:days", at_least=1.0, statistic="mean", run="good")
    [pair] = ev.result.preferences.pairs
    assert (pair.run_a, pair.better) == ("good", "good")
    ev.assert_metric("criterion:days", at_least=0.5, statistic="mean", run="weak")
"""


def _criteria_judge(body: dict[str, Any]) -> str:
    import json
    import re

    schema = body["response_format"]["json_schema"]["name"]
    text = body["messages"][-1]["content"]
    if schema == "ListwiseRelevance":
        return json.dumps({"judgements": []})
    if schema == "CriterionVerdict":
        answer = re.findall(r"<answer-\w+>\n(.*?)\n</answer-\w+>", text, re.S)[0]
        return json.dumps({"reason": "r", "label": "pass" if "days" in answer else "fail"})
    first = re.findall(r"<answer_a-\w+>\n(.*?)\n</answer_a-\w+>", text, re.S)[0]
    return json.dumps({"reason": "r", "preferred": "A" if "days" in first else "B"})


def test_judged_criteria_and_pairwise_gate_through_the_plugin(pytester: pytest.Pytester, data: dict[str, Path]) -> None:
    pytester.makepyfile(test_judged=JUDGED_AND_PAIRWISE)
    with FakeOpenAIServer(_criteria_judge) as server:
        args = [*_plugin_args(), "--assay-judge", "openai/j", "--assay-api-base", server.url,
                "--assay-cache-dir", str(pytester.path / "cache")]  # fmt: skip
        result = pytester.runpytest_subprocess(*args)
    result.assert_outcomes(failed=1)  # the pairwise verdict holds; the weak answers give no days
    assert "weak: criterion:days = 0.000 < 0.5" in result.stdout.str()
