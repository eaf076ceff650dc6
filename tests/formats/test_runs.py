"""JSONL runs for ranking, and telling them from TREC runs."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from assay.errors import FormatError
from assay.formats.runs import ranked_lists, read_any_run, read_jsonl_run, sniff_run_format
from assay.metrics import Run, evaluate

QRELS = {"q1": {"c": 1, "a": 2}, "q2": {"x": 1}}


def write(path: Path, *records: object) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    return path


def test_ids_in_rank_order(tmp_path: Path) -> None:
    path = write(tmp_path / "run.jsonl", {"query_id": "q1", "retrieved": ["b", "c", "a"], "answer": "..."})
    ev = evaluate(QRELS, read_jsonl_run(path), ["mrr", "map"])
    assert ev.means() == {"mrr": 0.5, "map": (1 / 2 + 2 / 3) / 2}


def test_scored_items_and_header(tmp_path: Path) -> None:
    path = write(
        tmp_path / "run.jsonl",
        {"assay": "runs", "version": 1},
        {"query_id": "q1", "retrieved": [{"id": "b", "score": 1}, {"id": "c", "score": 1}, {"id": "a", "score": 3}]},
        {"query_id": "q2", "retrieved": []},
    )
    ev = evaluate(QRELS, read_any_run(path), ["mrr"])  # a, then the tie c > b by docid descending
    assert ev.per_query["mrr"].tolist() == [1.0, 0.0]
    assert sniff_run_format(path) == "jsonl"


@pytest.mark.parametrize(
    ("record", "message"),
    [
        ({"query_id": "q1", "retrieved": ["a", "a"]}, "'a' is listed twice"),
        ({"query_id": "q1", "retrieved": [{"id": "a", "score": 1}, {"id": "b"}]}, "1 of 2 items have a score"),
        ({"query_id": "q1", "retrieved": [{"id": "a", "score": "x"}]}, "is not a number"),
        ({"query_id": "q1", "retrieved": [3]}, "neither an id"),
        ({"retrieved": ["a"]}, "missing 'query_id'"),
    ],
)
def test_bad_lines_name_the_line(tmp_path: Path, record: object, message: str) -> None:
    path = write(tmp_path / "run.jsonl", {"query_id": "q0", "retrieved": ["z"]}, record)
    with pytest.raises(FormatError, match=message) as info:
        read_jsonl_run(path)
    assert info.value.line == 2


def test_query_on_two_lines(tmp_path: Path) -> None:
    path = write(tmp_path / "run.jsonl", {"query_id": "q1", "retrieved": ["a"]}, {"query_id": "q1", "retrieved": []})
    with pytest.raises(FormatError, match="first at line 1"):
        read_jsonl_run(path)


def test_trec_is_sniffed(tmp_path: Path) -> None:
    (tmp_path / "run.txt").write_text("q1 Q0 a 1 1.0 x\n")
    assert sniff_run_format(tmp_path / "run.txt") == "trec"
    assert read_any_run(tmp_path / "run.txt").query_ids == ["q1"]


def test_a_jsonl_file_with_a_broken_first_line_is_reported_as_bad_json(tmp_path: Path) -> None:
    (tmp_path / "run.jsonl").write_text('not json\n{"query_id": "q1", "retrieved": ["a"]}\n')
    assert sniff_run_format(tmp_path / "run.jsonl") == "jsonl"
    with pytest.raises(FormatError, match=r"run\.jsonl:1: invalid JSON"):
        read_any_run(tmp_path / "run.jsonl")


def test_ranked_lists_follow_trec_eval_order(tmp_path: Path) -> None:
    # a's 1.00000001 beats b's 1.0 in float64 but not in float32, where they tie and the docid decides, descending:
    # so trec_eval's order is c, b, a, d.
    scores = {"a": 1.00000001, "b": 1.0, "c": 2.0, "d": 0.5}
    (tmp_path / "run.txt").write_text("".join(f"q1 Q0 {d} 1 {s!r} x\n" for d, s in scores.items()) + "q0 Q0 z 1 1 x\n")
    expected = {"q1": ["c", "b", "a", "d"], "q0": ["z"]}
    assert ranked_lists(read_any_run(tmp_path / "run.txt")) == expected
    assert ranked_lists(Run.from_dict({"q1": scores, "q0": {"z": 1.0}})) == expected
