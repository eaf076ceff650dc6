"""How runs are named (:mod:`assay.pipelines.evaluate.runs.given`): one rule, a row per step, and every caller
(``assay.evaluate``, the reader, ``assay eval``'s RUN arguments) going through it."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
from evaluate_fixture import good_lines, save_golden, weak_lines, write_run

from assay import EvalSettings, TargetSpec, evaluate
from assay.cli._eval_options import parse_runs
from assay.errors import InputError
from assay.formats.golden import GoldenSet
from assay.pipelines.evaluate.runs.given import NamedRun, named_runs
from assay.pipelines.evaluate.runs.read import load_runs

LINES = [{"query_id": "q00", "retrieved": ["c1"]}]


def answer(question: str) -> dict[str, Any]:
    return {"retrieved": [], "answer": question}


SPEC = TargetSpec("http://127.0.0.1:9/ask")

# step of the rule, what is given, the (name, source) pairs it names
NAMED: list[tuple[str, Any, list[tuple[str, Any]]]] = [
    ("2: a mapping's keys", {"v2": answer, "v1": "runs/v1.jsonl"}, [("v2", answer), ("v1", Path("runs/v1.jsonl"))]),
    ("2: a target in a mapping", {"app": SPEC}, [("app", SPEC)]),
    ("3: a path by its stem", ["runs/bm25.jsonl", Path("b/hybrid.txt")],
     [("bm25", Path("runs/bm25.jsonl")), ("hybrid", Path("b/hybrid.txt"))]),
    ("3: a function by its __name__", [answer], [("answer", answer)]),
    ("3: lines alone", [LINES], [("run", LINES)]),
    ("3: a pair names its source", [("mine", LINES), ("app", SPEC), ("old", "x.jsonl")],
     [("mine", LINES), ("app", SPEC), ("old", Path("x.jsonl"))]),
    ("3: a NamedRun is a pair", [NamedRun("kept", Path("k.jsonl"))], [("kept", Path("k.jsonl"))]),
    ("4: a path is never split at =", ["runs/a=b.jsonl"], [("a=b", Path("runs/a=b.jsonl"))]),
    ("1: a tuple of runs is a list", (("a", "x.jsonl"), "y.jsonl"), [("a", Path("x.jsonl")), ("y", Path("y.jsonl"))]),
]  # fmt: skip


@pytest.mark.parametrize(("step", "runs", "expected"), NAMED, ids=[row[0] for row in NAMED])
def test_each_step_names_the_runs(step: str, runs: Any, expected: list[tuple[str, Any]]) -> None:
    named = named_runs(runs)
    assert [(run.name, run.source) for run in named] == expected
    assert all(isinstance(run, NamedRun) for run in named)


REFUSED: list[tuple[str, Any, str]] = [
    ("1: a path alone", "runs/v1.jsonl", "give the runs as a mapping name -> run"),
    ("1: a function alone", answer, "give the runs as a mapping name -> run"),
    ("3: a target alone", [SPEC], "name the target 'http://127.0.0.1:9/ask'"),
    ("3: a tuple that is no pair", [("a", "x.jsonl", "y.jsonl")], "a (name, source) pair"),
    ("4: a number", {"n": 5}, "a run is a run file path, a list of dicts"),
    ("4: a list of texts", [["x.jsonl", "y.jsonl"]], "a run is a run file path"),
    ("5: an empty name", {"": "x.jsonl"}, "a run's name is text that is not empty"),
    ("5: a name given twice", ["a/run.jsonl", "b/run.jsonl"], "two runs are named 'run'"),
    ("5: two bare lists", [LINES, LINES], "two runs are named 'run'"),
]


@pytest.mark.parametrize(("step", "runs", "message"), REFUSED, ids=[row[0] for row in REFUSED])
def test_what_the_rule_refuses_names_the_fix(step: str, runs: Any, message: str) -> None:
    with pytest.raises(InputError, match=re.escape(message)):
        named_runs(runs)


def test_a_name_given_twice_shows_both_ways_to_name_runs() -> None:
    with pytest.raises(InputError) as caught:
        named_runs([("a", "x.jsonl"), ("a", "y.jsonl")])
    assert "NAME=PATH on the command line or a mapping name -> run in Python (e.g. other=y.jsonl)" in str(caught.value)


def test_the_command_line_splits_name_path_then_names_by_the_same_rule(tmp_path: Path) -> None:
    assert parse_runs(["a=x.jsonl", "y.jsonl"]) == [NamedRun("a", Path("x.jsonl")), NamedRun("y", Path("y.jsonl"))]
    with pytest.raises(InputError, match="two runs are named 'x'"):  # before any run is read or target asked
        parse_runs(["x=a.jsonl", "b/x.jsonl"])
    odd = tmp_path / "v=2.jsonl"
    odd.write_text("")
    assert parse_runs([str(odd)]) == [NamedRun("v=2", odd)]  # a file whose name holds "=" stays a path


def test_the_reader_reads_files_and_lines_and_refuses_a_system(tmp_path: Path) -> None:
    gold = GoldenSet.load(save_golden(tmp_path / "golden"))
    path = write_run(tmp_path / "good.jsonl", good_lines())
    assert [run.name for run in load_runs({"g": path, "w": weak_lines()}, gold)] == ["g", "w"]
    assert [run.name for run in load_runs([path, ("w", weak_lines())], gold)] == ["good", "w"]
    with pytest.raises(InputError, match="run 'answer' is a system to ask, not a run to read"):
        load_runs([answer], gold)


def test_evaluate_takes_runs_as_a_mapping_or_a_list(tmp_path: Path) -> None:
    golden = save_golden(tmp_path / "golden")
    good = write_run(tmp_path / "good.jsonl", good_lines())
    weak = write_run(tmp_path / "weak.jsonl", weak_lines())
    by_name, _ = evaluate(golden, {"new": good, "old": weak}, settings=EvalSettings(n_boot=200, add_labels=False))
    listed, _ = evaluate(golden, [good, ("old", weak)], settings=EvalSettings(n_boot=200, add_labels=False))
    assert [run.name for run in by_name.runs] == ["new", "old"]
    assert [run.name for run in listed.runs] == ["good", "old"]
    assert by_name.runs[0].metrics["ndcg@10"].mean == listed.runs[0].metrics["ndcg@10"].mean


class _Callable:
    """A system that is an object with ``__call__`` and no ``__name__``: named by its type."""

    def __call__(self, question: str) -> str:
        return question


def test_a_callable_object_is_named_by_its_type() -> None:
    assert [run.name for run in named_runs([_Callable()])] == ["_Callable"]


@pytest.mark.parametrize(
    ("runs", "message"),
    [
        # what was given is shown by its type and its repr, cut to 117 characters and "..." past 120
        (
            "a.jsonl",
            "give the runs as a mapping name -> run, e.g. {'v2': my_app.answer, 'v1': 'runs/v1.jsonl'}, or "
            "a list of runs; got str 'a.jsonl'",
        ),
        (len, "; got builtin_function_or_method <built-in function len>"),
        (
            [7],
            "a run is a run file path, a list of dicts (the JSONL run lines), a function or an assay.TargetSpec; "
            "got int 7",
        ),
        ({"": "a.jsonl"}, "a run's name is text that is not empty; got '' for str 'a.jsonl'"),
        ([["x" * 200]], "got list ['" + "x" * 115 + "..."),
        ([["y" * 116]], "got list ['" + "y" * 116 + "']"),  # a repr of 120 characters is shown whole
    ],
)
def test_a_refused_run_shows_what_was_given(runs: Any, message: str) -> None:
    with pytest.raises(InputError) as caught:
        named_runs(runs)
    assert message in str(caught.value)
    if "..." in message:
        assert str(caught.value).endswith(message)


def test_two_runs_of_lines_with_one_name_show_the_mapping_example() -> None:
    with pytest.raises(InputError, match=re.escape("(e.g. {'new': ..., 'old': ...})")):
        named_runs([[{"query_id": "q1"}], [{"query_id": "q2"}]])
