"""Criteria files: the two forms read, and every bad file refused with one error naming the file, the line and the
fix (line numbers counted by hand in the texts below; line 1 is the opening '+++')."""

from __future__ import annotations

from pathlib import Path

import pytest

from assay.errors import FormatError
from assay.judge.criteria import Criterion, load_criteria, parse_criterion

CHECK = """+++
name = "cites_passage"
version = "2"
description = "cites a passage"
[check]
kind = "cites"
+++
Notes for people.
"""

RUBRIC = """+++
name = "grounded"
version = "1"
description = "grounded in the passages"
inputs = ["question", "answer", "passages"]
steps = ["Find the claims.", "Check each against the passages."]
[[scale]]
label = "full"
description = "every claim is in a passage"
score = 1.0
[[scale]]
label = "partial"
description = "some claims are"
score = 0.5
[[scale]]
label = "none"
description = "no claim is"
score = 0.0
+++
Judge whether the answer is grounded.
"""

TREE = """+++
name = "admits_gaps"
version = "1"
inputs = ["question", "answer", "passages"]
scale = "pass_fail"
[[tree]]
id = "covered"
question = "Do the passages answer the question?"
yes = "uses"
no = "admits"
[[tree]]
id = "uses"
question = "Does the answer use them?"
yes = "pass"
no = "fail"
[[tree]]
id = "admits"
question = "Does the answer say the documents do not cover it?"
yes = "pass"
no = "fail"
+++
"""


def _write(folder: Path, name: str, text: str) -> Path:
    path = folder / name
    path.write_text(text, encoding="utf-8")
    return path


def test_a_check_criterion_reads_its_inputs_from_the_check(tmp_path: Path) -> None:
    path = _write(tmp_path, "cites.md", CHECK)
    (one,) = load_criteria([path])
    assert (one.name, one.version, one.metric, one.ref) == ("cites_passage", "2", "criterion:cites_passage",
                                                             "cites_passage@2")  # fmt: skip
    assert one.inputs == ("answer", "passages")
    assert not one.judged and one.check is not None and one.check.kind == "cites"
    assert one.instructions == "Notes for people."
    changed = parse_criterion(CHECK.replace("Notes", "More notes").encode(), path)
    assert changed.content_hash != one.content_hash  # the body is hashed with the file


def test_a_rubric_keeps_its_declared_scores_in_order(tmp_path: Path) -> None:
    (one,) = load_criteria([_write(tmp_path, "grounded.md", RUBRIC)])
    assert one.judged
    assert [(label.name, label.score) for label in one.labels] == [("full", 1.0), ("partial", 0.5), ("none", 0.0)]
    assert one.steps == ("Find the claims.", "Check each against the passages.")
    assert one.inputs == ("question", "answer", "passages")


def test_a_decision_tree_and_pass_fail(tmp_path: Path) -> None:
    (one,) = load_criteria([_write(tmp_path, "gaps.md", TREE)])
    assert [label.name for label in one.labels] == ["pass", "fail"]
    assert [(s.id, s.yes, s.no) for s in one.tree] == [("covered", "uses", "admits"), ("uses", "pass", "fail"),
                                                        ("admits", "pass", "fail")]  # fmt: skip


def test_a_folder_loads_its_files_by_name_and_refuses_two_of_one_name(tmp_path: Path) -> None:
    _write(tmp_path, "b.md", RUBRIC)
    _write(tmp_path, "a.md", CHECK)
    assert [c.name for c in load_criteria([tmp_path])] == ["cites_passage", "grounded"]
    _write(tmp_path, "c.md", CHECK.replace('version = "2"', 'version = "3"'))
    with pytest.raises(FormatError, match=r"c\.md:2: criterion 'cites_passage' is also defined in .*a\.md"):
        load_criteria([tmp_path])


def test_expected_adds_a_second_metric(tmp_path: Path) -> None:
    (plain,) = load_criteria([_write(tmp_path, "grounded.md", RUBRIC)])
    assert (plain.expected, plain.metrics) == (False, ("criterion:grounded",))
    (asked,) = load_criteria(
        [_write(tmp_path, "grounded.md", RUBRIC.replace('version = "1"', 'version = "1"\nexpected = true'))]
    )
    assert asked.metrics == ("criterion:grounded", "criterion:grounded|expected")


def test_loaded_criteria_pass_through(tmp_path: Path) -> None:
    (one,) = load_criteria([_write(tmp_path, "cites.md", CHECK)])
    assert load_criteria([one]) == (one,)
    assert isinstance(one, Criterion)


BAD = [
    # unknown field
    (CHECK.replace("[check]", 'owner = "me"\n[check]'), 5, "unknown field 'owner'"),
    # an input assay does not send
    (RUBRIC.replace('"passages"]', '"passages", "metadata"]'), 5, "input 'metadata' is not one assay sends"),
    # duplicate label, at the second one's line
    (RUBRIC.replace('label = "none"', 'label = "full"'), 16, "label 'full' appears twice"),
    # duplicate score
    (RUBRIC.replace("score = 0.5", "score = 1.0"), 14, "declare the same score 1"),
    # a label with no score
    (RUBRIC.replace("score = 0.5\n", ""), 11, "label 'partial' declares no score"),
    # unknown key in a label
    (RUBRIC.replace('label = "partial"', 'label = "partial"\nweight = 2'), 13, "unknown key 'weight'"),
    # a judged criterion with no scale
    (RUBRIC.split("[[scale]]", maxsplit=1)[0] + "+++\n", None, "lacks a scale"),
    # a judged criterion with no inputs
    (RUBRIC.replace('inputs = ["question", "answer", "passages"]\n', ""), None, "lacks inputs"),
    # a tree with a dead end
    (
        TREE.replace('yes = "pass"\nno = "fail"\n[[tree]]', 'yes = "passed"\nno = "fail"\n[[tree]]'),
        14,
        "yes leads to 'passed'",
    ),
    # a tree with a loop: uses -> covered
    (
        TREE.replace('no = "fail"\n[[tree]]\nid = "admits"', 'no = "covered"\n[[tree]]\nid = "admits"'),
        7,
        "tree loop: covered -> uses -> covered",
    ),
    # a question never reached
    (TREE.replace('no = "admits"', 'no = "fail"'), 17, "'admits' is never reached"),
    # a check with a scale
    (CHECK.replace("[check]", 'scale = "pass_fail"\n[check]'), 5, "scale does not apply"),
    # a check with an expected score (its score is exact)
    (CHECK.replace("[check]", "expected = true\n[check]"), 5, "expected does not apply"),
    # expected that is not true or false
    (RUBRIC.replace('version = "1"', 'version = "1"\nexpected = "yes"'), 4, "expected must be true or false"),
    # a check's unknown key
    (CHECK.replace('kind = "cites"', 'kind = "cites"\nstrict = true'), 7, "unknown key 'strict'"),
    # a check whose inputs are not what it reads
    (CHECK.replace("[check]", 'inputs = ["answer"]\n[check]'), 5, "reads answer, passages, not answer"),
    # a callable that cannot be imported
    (CHECK.replace('kind = "cites"', 'kind = "python"\nfunction = "no_such_team_module:f"'), 7, "cannot be imported"),
    # TOML that does not parse
    (CHECK.replace('version = "2"', "version = 2 2"), 3, "not valid TOML"),
    # no opening fence
    (CHECK[4:], 1, "starts with a line '\\+\\+\\+'"),
]


@pytest.mark.parametrize(("text", "line", "words"), BAD)
def test_a_bad_file_is_one_error_naming_file_line_and_fix(tmp_path: Path, text: str, line: int | None,
                                                           words: str) -> None:  # fmt: skip
    path = _write(tmp_path, "bad.md", text)
    with pytest.raises(FormatError, match=words) as caught:
        load_criteria([path])
    assert caught.value.path == str(path)
    assert caught.value.line == line
    assert "; fix: " in str(caught.value)


def test_a_missing_path_and_an_empty_folder_are_refused(tmp_path: Path) -> None:
    with pytest.raises(FormatError, match="no such criterion file or folder"):
        load_criteria([tmp_path / "nope.md"])
    with pytest.raises(FormatError, match=r"no NAME\.md file in it"):
        load_criteria([tmp_path])


def test_an_input_the_data_lacks_is_refused_at_the_inputs_line(tmp_path: Path) -> None:
    text = RUBRIC.replace('"passages"]', '"passages", "nuggets"]')
    (one,) = load_criteria([_write(tmp_path, "grounded.md", text)])
    with pytest.raises(FormatError, match="reads nuggets, which the golden set does not have") as caught:
        one.check_inputs({"nuggets": False, "answer": True})
    assert caught.value.line == 5
    one.check_inputs({"nuggets": True})
