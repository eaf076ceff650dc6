"""Repeated runs (a system asked every question N times) and clustered questions, through the evaluator.

* A repeated run is read as one run per repeat, merged per question: each metric's value is the mean over the
  repeats, checked against each repeat evaluated alone as a plain run; the variance split is checked by hand.
* Bad input: a line without ``repeat`` among lines with it, a question asked fewer times than the others, a
  repeat given twice, a repeat out of range (past a gap, or past the header's ``repeats``); each names the file and
  line. A run of repeat 0 alone is one asking, said in a note, whatever its header promised.
* ``--cluster-by``: documents link questions (a question of two documents joins their clusters), a field that
  questions lack is refused before any work, naming the file and a question; a field holding lists says so.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from click.testing import CliRunner
from evaluate_fixture import good_lines, make_golden, save_golden, weak_lines, write_run

from assay import EvalSettings, evaluate
from assay.cli import main
from assay.errors import ConfigError, FormatError
from assay.pipelines.evaluate.statistics.clustering import question_clusters

SETTINGS = EvalSettings(k_values=(1, 3, 5, 10), metrics=("ndcg@10", "P@1", "mrr"), cluster_by="none")


def repeated(*lines_per_repeat: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [{**line, "repeat": r} for r, lines in enumerate(lines_per_repeat) for line in lines]


def test_a_repeated_run_is_the_per_question_mean_of_its_repeats(tmp_path: Path) -> None:
    golden = save_golden(tmp_path / "golden")
    good, weak = good_lines(answers=False), weak_lines(answers=False)
    mixed = [g if i % 2 else w for i, (g, w) in enumerate(zip(good, weak, strict=True))]
    write_run(tmp_path / "rep.jsonl", repeated(good, weak, mixed))
    result, rows = evaluate(golden, [("rep", tmp_path / "rep.jsonl")], settings=SETTINGS)
    alone = [evaluate(golden, [(f"r{r}", write_run(tmp_path / f"r{r}.jsonl", lines))], settings=SETTINGS)[1]
             for r, lines in enumerate((good, weak, mixed))]  # fmt: skip
    (run,) = result.runs
    assert run.name == "rep" and run.counts.lines == 3 * len(good)
    for name in ("ndcg@10", "P@1", "mrr"):
        per_repeat = np.array([[row.metrics[name] for row in sorted(one, key=lambda r: r.query_id)] for one in alone])
        merged = [row.metrics[name] for row in sorted(rows, key=lambda r: r.query_id)]
        assert merged == pytest.approx(per_repeat.mean(axis=0).tolist(), abs=1e-12)
        assert run.metrics[name].mean == pytest.approx(per_repeat.mean(), abs=1e-6)
        # the split by hand: within = mean over questions of the variance over repeats, between = var of the means
        # minus within / 3
        within = float(np.mean(np.var(per_repeat, axis=0, ddof=1)))
        between = max(float(np.var(per_repeat.mean(axis=0), ddof=1)) - within / 3, 0.0)
        assert run.repeats is not None and run.repeats.repeats == 3
        split = run.repeats.metrics[name]
        assert (split.within, split.between) == pytest.approx((within, between), abs=1e-6)
        assert run.repeats.spread[name] == pytest.approx(float(np.std(per_repeat.mean(axis=1), ddof=1)), abs=1e-6)


def test_two_repeated_runs_are_compared_on_their_question_means(tmp_path: Path) -> None:
    golden = save_golden(tmp_path / "golden")
    good, weak = good_lines(answers=False), weak_lines(answers=False)
    write_run(tmp_path / "a.jsonl", repeated(weak, weak))
    write_run(tmp_path / "b.jsonl", repeated(good, weak))
    result, _ = evaluate(golden, [tmp_path / "a.jsonl", tmp_path / "b.jsonl"], settings=SETTINGS)
    assert [run.name for run in result.runs] == ["a", "b"]
    (primary,) = [c for c in result.comparisons if c.primary]
    assert (primary.a, primary.b, primary.n) == ("a", "b", len(good))


@pytest.mark.parametrize(
    ("edit", "problem"),
    [
        (lambda lines: [*lines[:-1], {k: v for k, v in lines[-1].items() if k != "repeat"}], 'no "repeat"'),
        (lambda lines: lines[:-1], re.escape("has 1 repeat(s) where the run has 2 (missing: 1)")),
        (lambda lines: [*lines, lines[0]], "is given twice"),
    ],
)
def test_repeats_that_do_not_add_up_name_the_file_and_line(tmp_path: Path, edit: Any, problem: str) -> None:
    golden = save_golden(tmp_path / "golden")
    lines = repeated(good_lines(answers=False), good_lines(answers=False))
    path = write_run(tmp_path / "rep.jsonl", edit(lines))
    with pytest.raises(FormatError, match=problem) as caught:
        evaluate(golden, [path], settings=SETTINGS)
    assert str(path) in str(caught.value) and caught.value.line is not None


def test_an_out_of_range_repeat_is_the_error_not_a_larger_run(tmp_path: Path) -> None:
    """Three repeats (0, 1, 2) and one line numbered 5: the error is that line, never "rerun --repeats 6"."""
    golden = save_golden(tmp_path / "golden")
    good = good_lines(answers=False)
    lines = repeated(good, good, good)
    lines[-1] = {**lines[-1], "repeat": 5}  # the last line of repeat 2, mistyped
    path = write_run(tmp_path / "rep.jsonl", lines)
    with pytest.raises(FormatError) as caught:
        evaluate(golden, [path], settings=SETTINGS)
    assert "--repeats 6" not in str(caught.value)
    assert caught.value.line == len(lines) + 1  # the header is line 1
    assert "repeat 5, but no line of the run has repeat 3" in str(caught.value)
    with_header = tmp_path / "head.jsonl"
    rows = [json.dumps({"assay": "runs", "version": 1, "repeats": 3}), *map(json.dumps, lines)]
    with_header.write_text("\n".join(rows) + "\n", encoding="utf-8")
    with pytest.raises(FormatError, match=r"repeat 5, but the run's header says it was asked 3 time\(s\)") as caught:
        evaluate(golden, [with_header], settings=SETTINGS)
    assert caught.value.line == len(lines) + 1


def test_a_header_of_three_repeats_over_repeat_0_alone_is_one_asking_and_said(tmp_path: Path) -> None:
    golden = save_golden(tmp_path / "golden")
    good = good_lines(answers=False)
    path = tmp_path / "rep.jsonl"
    rows = [json.dumps({"assay": "runs", "version": 1, "repeats": 3}), *map(json.dumps, repeated(good))]
    path.write_text("\n".join(rows) + "\n", encoding="utf-8")
    result, _ = evaluate(golden, [path], settings=SETTINGS)
    plain, _ = evaluate(golden, [write_run(tmp_path / "plain.jsonl", good)], settings=SETTINGS)
    (run,) = result.runs
    assert run.name == "rep" and run.repeats is None  # not "asked repeatedly"
    assert run.metrics["ndcg@10"].mean == plain.runs[0].metrics["ndcg@10"].mean
    said = " ".join(result.warnings)  # the run's notes are the result's warnings
    assert "rep: every line is repeat 0 though its header says 3 repeats; the run is read as one asking" in said


def test_cluster_by_a_field_holding_lists_says_so(tmp_path: Path) -> None:
    gold = make_golden()
    for i, question in enumerate(gold.questions):
        question.metadata["products"] = [f"p{i}", f"p{i + 1}"]
    golden = tmp_path / "golden"
    gold.save(golden)
    run = write_run(tmp_path / "good.jsonl", good_lines())
    with pytest.raises(ConfigError) as caught:
        evaluate(golden, [run], settings=EvalSettings(cluster_by="products"))
    message = str(caught.value)
    assert "have no field" not in message
    assert "12 of 12 questions hold a list in 'products', not one value" in message
    assert "store one products per question" in message and "--cluster-by doc" in message


def test_cluster_by_doc_links_questions_through_shared_documents() -> None:
    gold = make_golden()
    first, second, third = gold.questions[:3]
    first.source_doc_ids, second.source_doc_ids, third.source_doc_ids = ["d05"], ["d05", "d07"], ["d07"]
    gold.questions[3].source_doc_ids = []
    found = question_clusters(gold, "doc")
    assert found[first.id] == found[second.id] == found[third.id] == "doc:d05"
    assert found[gold.questions[3].id] is None
    assert found["q05"] == found["q07"] == "doc:d05"  # their own documents joined the cluster
    assert [found[q.id] for q in gold.questions[4:] if q.id not in ("q05", "q07")] == [
        f"doc:d{i:02d}" for i in (4, 6, 8, 9, 10, 11)
    ]
    assert set(question_clusters(gold, "none").values()) == {None}


def test_cluster_by_a_field_questions_lack_fails_before_any_work(tmp_path: Path) -> None:
    golden = save_golden(tmp_path / "golden")
    run = write_run(tmp_path / "good.jsonl", good_lines())
    with pytest.raises(ConfigError, match=r"12 of 12 questions have no field 'region'.*questions\.jsonl"):
        evaluate(golden, [run], settings=EvalSettings(cluster_by="region"))
    out = tmp_path / "report"
    result = CliRunner().invoke(main, ["eval", str(golden), str(run), "-o", str(out), "--no-judge",
                                       "--cluster-by", "region"])  # fmt: skip
    assert result.exit_code != 0 and "--cluster-by region" in result.output
    assert not out.exists()


def test_results_name_the_clustering(tmp_path: Path) -> None:
    gold = make_golden()
    for i, question in enumerate(gold.questions):
        question.metadata["product_line"] = f"line{i % 4}"
    golden = tmp_path / "golden"
    gold.save(golden)
    runs = [write_run(tmp_path / "good.jsonl", good_lines()), write_run(tmp_path / "weak.jsonl", weak_lines())]
    result, rows = evaluate(golden, runs, settings=EvalSettings(cluster_by="product_line"))
    assert result.clustering is not None
    assert (result.clustering.by, result.clustering.questions, result.clustering.clusters) == ("product_line", 12, 4)
    assert result.clustering.mean_size == 3.0 and result.clustering.note is not None  # 4 clusters: too few
    assert "Only 4 values of product_line" in result.clustering.note
    assert {row.cluster for row in rows} == {f"product_line:line{i}" for i in range(4)}
    primary = next(c for c in result.comparisons if c.primary)
    assert primary.clusters == 4


def test_the_turns_of_a_conversation_are_one_cluster_with_their_documents(tmp_path: Path) -> None:
    from assay.formats.golden import GoldenSet
    from assay.types import Conversation, Turn

    gold = make_golden()
    gold.conversations = [Conversation(id="c1", turns=[Turn(question_id="q00", utterance="How long for the Alder?"),
                          Turn(question_id="q03", utterance="and the tent?", depends_on_history=True,
                               dependency="ellipsis")])]  # fmt: skip
    found = question_clusters(gold, "doc")
    assert found["q00"] == found["q03"] == "conversation:c1" and found["q01"] == "doc:d01"
    gold.save(tmp_path / "golden")
    again = GoldenSet.load(tmp_path / "golden")
    assert again.conversations == gold.conversations and again.turn_of("q03") == (again.conversations[0], 1)
    assert again.turn_of("q01") is None


def test_a_turn_naming_an_unknown_question_is_refused(tmp_path: Path) -> None:
    from assay.errors import DatasetError
    from assay.types import Conversation, Turn

    gold = make_golden()
    gold.conversations = [Conversation(id="c1", turns=[Turn(question_id="q99", utterance="what?")])]
    with pytest.raises(DatasetError, match=re.escape("conversations.jsonl record 1 names unknown question 'q99'")):
        gold.save(tmp_path / "golden")
