"""Criteria per question without an evaluation (assay.pipelines.evaluate.scoring.criteria): an input the data lacks
refused before any call, a check run on the answer, the question and the texts of the top passages, unscored with
the reason when it cannot run, and a judged criterion taking what the judge found or waiting for a model judge.
Expectations read off evaluate_fixture by hand (product i's answer chunk first, then its care chunk, in the good
run)."""

from __future__ import annotations

from pathlib import Path

import pytest
from evaluate_fixture import answer_text, good_lines, make_golden, qid

from assay.errors import FormatError
from assay.judge.criteria import Criterion, parse_criterion
from assay.pipelines.evaluate.runs.read import load_run
from assay.pipelines.evaluate.scoring.available import Available
from assay.pipelines.evaluate.scoring.criteria import (
    NEEDS_MODEL_JUDGE,
    check_criteria,
    criterion_values,
    passage_texts,
)
from assay.pipelines.evaluate.scoring.ranking import QueryValues

N = 3


def _criterion(front: str, name: str, folder: Path = Path(".")) -> Criterion:
    text = f'+++\nname = "{name}"\nversion = "1"\n{front}+++\n'
    return parse_criterion(text.encode(), folder / f"{name}.md")


def _available(**given: bool) -> Available:
    base = {"judged": True, "nuggets": True, "support": True, "references": True, "text": True, "turns": True,
            "passages": True, "answers": True, "rewrites": False}  # fmt: skip
    return Available(**{**base, **given})  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("name", "lacking", "golden_change"),
    [
        ("answer", {"answers": False}, None),
        ("answer", {"answers": None}, None),
        ("passages", {"passages": False}, None),
        ("nuggets", {"nuggets": False}, None),
        ("history", {"turns": False}, None),
        ("reference_answer", {}, "no reference answers"),
    ],
)
def test_an_input_the_data_lacks_is_refused_before_any_call(
    name: str, lacking: dict[str, bool], golden_change: str | None
) -> None:
    gold = make_golden(n=N)
    reads = _criterion(f'inputs = ["{name}"]\nscale = "pass_fail"\n', "reads")
    check_criteria([reads], _available(), gold)  # everything there: nothing said
    if golden_change:
        for question in gold.questions:
            question.reference_answer = ""
    with pytest.raises(FormatError, match=f"criterion reads reads {name}"):
        check_criteria([reads], _available(**lacking), gold)


def test_a_reference_answer_on_one_question_is_enough_and_claims_alone_are_not() -> None:
    gold = make_golden(n=N)
    reads = _criterion('inputs = ["reference_answer"]\nscale = "pass_fail"\n', "reads")
    for question in gold.questions[1:]:
        question.reference_answer = ""
    check_criteria([reads], _available(), gold)
    gold.questions[0].reference_answer = ""
    assert gold.questions[0].claims  # the fixture's questions keep their claims
    with pytest.raises(FormatError):
        check_criteria([reads], _available(references=True), gold)


def test_the_passage_texts_are_the_top_ones_in_rank_order_and_a_passage_without_text_is_left_out() -> None:
    gold = make_golden(n=N)
    lines = good_lines(N)
    lines[0]["retrieved"] = ["d00#2-care", "own-passage", "d00#0-ans"]
    run = load_run(("good", lines), gold)
    line = run.lines[qid(0)]
    line.texts.pop("own-passage", None)
    assert passage_texts(line, gold, 3) == [
        "Clean the Alder kettle with mild soap and let it dry before storage.",
        answer_text(0),
    ]
    assert passage_texts(line, gold, 1) == ["Clean the Alder kettle with mild soap and let it dry before storage."]


def test_checks_read_the_question_answer_and_top_passages_and_say_why_they_cannot_run(tmp_path: Path) -> None:
    (tmp_path / "scoring_checks.py").write_text(
        "def seen(question, answer, passages):\n"
        "    return float(len(passages)) + (0.5 if 'Birch' in question else 0.0)\n",
        encoding="utf-8",
    )
    gold = make_golden(n=N)
    lines = good_lines(N)
    lines[2]["answer"] = "  "
    run = load_run(("good", lines), gold)
    seen = _criterion('[check]\nkind = "python"\nfunction = "scoring_checks:seen"\n', "seen", tmp_path)
    days = _criterion('[check]\nkind = "contains"\ntext = "days"\n', "days")
    got = criterion_values(run, gold, [seen, days], depth=2)
    assert got[qid(0)].metrics == {"criterion:seen": 2.0, "criterion:days": 1.0}
    assert got[qid(1)].metrics == {"criterion:seen": 2.5, "criterion:days": 1.0}  # the question names Birch
    assert got[qid(0)].unscored == {} and got[qid(1)].unscored == {}
    assert got[qid(2)].metrics == {"criterion:seen": None, "criterion:days": None}
    assert got[qid(2)].unscored == dict.fromkeys(["criterion:seen", "criterion:days"], "no answer for this question")
    assert criterion_values(run, gold, [seen], depth=3)[qid(0)].metrics["criterion:seen"] == 3.0


def test_a_judged_criterion_takes_what_the_judge_found_or_waits_for_a_model_judge() -> None:
    gold = make_golden(n=N)
    run = load_run(("good", good_lines(N)), gold)
    judged = _criterion('inputs = ["answer"]\nscale = "pass_fail"\nexpected = true\n', "tone")
    found = {
        qid(0): QueryValues({"criterion:tone": 1.0, "criterion:tone|expected": 0.8}, {}),
        qid(1): QueryValues({"criterion:tone": None, "criterion:tone|expected": None},
                            {"criterion:tone": "invalid_output", "criterion:tone|expected": "invalid_output"}),
        qid(2): QueryValues({"criterion:tone": 0.0}, {}),  # no expected score recorded
    }  # fmt: skip
    got = criterion_values(run, gold, [judged], depth=1, judged=found)
    assert (got[qid(0)].metrics, got[qid(0)].unscored) == ({"criterion:tone": 1.0, "criterion:tone|expected": 0.8},
                                                           {})  # fmt: skip
    assert got[qid(1)].unscored == {"criterion:tone": "invalid_output", "criterion:tone|expected": "invalid_output"}
    assert got[qid(1)].metrics == {"criterion:tone": None, "criterion:tone|expected": None}
    assert (got[qid(2)].metrics, got[qid(2)].unscored) == ({"criterion:tone": 0.0, "criterion:tone|expected": None},
                                                           {"criterion:tone|expected": NEEDS_MODEL_JUDGE})  # fmt: skip
    alone = criterion_values(run, gold, [judged], depth=1)
    assert {q: v.unscored for q, v in alone.items()} == {
        qid(i): {"criterion:tone": NEEDS_MODEL_JUDGE, "criterion:tone|expected": NEEDS_MODEL_JUDGE} for i in range(N)
    }
    assert all(v.metrics == {"criterion:tone": None, "criterion:tone|expected": None} for v in alone.values())
