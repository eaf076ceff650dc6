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


INPUT_NAMES = "question, answer, passages, reference_answer, nuggets, history"
INPUTS_FIX = f"inputs = [...] naming some of {INPUT_NAMES}"
SCALE_FIX = 'scale = "pass_fail", or [[scale]] entries with label, description and score'
ONE_LABEL = '[[scale]]\nlabel = "full"\ndescription = "every claim is in a passage"\nscore = 1.0\n+++\n'

# (file text, line, the whole message: problem; fix) -- lines counted by hand as above
EXACT = [
    (CHECK.replace("[check]", 'owner = "me"\n[check]'), 5,
     "unknown field 'owner'; fix: fields are name, version, description, inputs, scale, steps, tree, expected, check"),
    (CHECK.replace('name = "cites_passage"\n', ""), None, 'the front matter lacks name; fix: name = "..."'),
    (CHECK.replace('name = "cites_passage"', 'name = ""'), 2, 'name must be a non-empty string; fix: name = "..."'),
    (CHECK.replace('name = "cites_passage"', 'name = "  "'), 2, 'name must be a non-empty string; fix: name = "..."'),
    (CHECK.replace('name = "cites_passage"', "name = true"), 2, 'name must be a non-empty string; fix: name = "..."'),
    (CHECK.replace('name = "cites_passage"', "name = 1.5"), 2, 'name must be a non-empty string; fix: name = "..."'),
    (CHECK.replace('name = "cites_passage"', 'name = "cites passage"'), 2,
     "name 'cites passage' is not letters, digits, '_' and '-'; fix: a name such as \"cites_policy\""),
    (CHECK.replace('version = "2"\n', ""), None, 'the front matter lacks version; fix: version = "..."'),
    (CHECK.replace('description = "cites a passage"', 'description = ""'), 4,
     'description must be a non-empty string; fix: description = "..."'),
    (CHECK.replace('[check]\nkind = "cites"', 'check = "cites"'), 5,
     'check must be a table; fix: [check] then kind = "contains" and its keys'),
    (CHECK.replace('kind = "cites"', 'kind = "vibes"'), 6,
     "check kind 'vibes' is not one assay has; fix: use one of contains, not_contains, regex, json_schema, length, "
     "cites, python"),
    (CHECK.replace("[check]", 'steps = ["a"]\n[check]'), 5,
     "a check scores 1 when it passes and 0 when not: steps does not apply; fix: remove steps, or remove [check] for "
     "a judged criterion"),
    (CHECK.replace("[check]", "inputs = [\"answer\"]\n[check]"), 5,
     "a cites check reads answer, passages, not answer; fix: inputs = ['answer', 'passages'], or leave inputs out"),
    (RUBRIC.replace('inputs = ["question", "answer", "passages"]\n', ""), None,
     f"a judged criterion lacks inputs (what the judge sees); fix: {INPUTS_FIX}"),
    (RUBRIC.replace('inputs = ["question", "answer", "passages"]', "inputs = []"), 5,
     f"inputs must be a non-empty list of names; fix: {INPUTS_FIX}"),
    (RUBRIC.replace('inputs = ["question", "answer", "passages"]', 'inputs = "answer"'), 5,
     f"inputs must be a non-empty list of names; fix: {INPUTS_FIX}"),
    (RUBRIC.replace('inputs = ["question", "answer", "passages"]', 'inputs = ["answer", 2]'), 5,
     f"inputs must be a non-empty list of names; fix: {INPUTS_FIX}"),
    (RUBRIC.replace('"passages"]', '"passages", "metadata"]'), 5,
     f"input 'metadata' is not one assay sends; fix: {INPUTS_FIX}"),
    (RUBRIC.replace('"passages"]', '"passages", "answer"]'), 5, "inputs names one input twice; fix: name each once"),
    (RUBRIC.replace('steps = ["Find the claims.", "Check each against the passages."]', 'steps = "Find them."'), 6,
     'steps must be a list of non-empty strings; fix: steps = ["Find ...", "Check ..."]'),
    (RUBRIC.replace('"Find the claims."', '" "'), 6,
     'steps must be a list of non-empty strings; fix: steps = ["Find ...", "Check ..."]'),
    (RUBRIC.split("[[scale]]", maxsplit=1)[0] + "+++\n", None,
     f"a judged criterion lacks a scale (two labels or more); fix: {SCALE_FIX}"),
    (RUBRIC.split("[[scale]]", maxsplit=1)[0] + 'scale = "five_stars"\n+++\n', 7,
     f"scale is not a scale (two labels or more); fix: {SCALE_FIX}"),
    (RUBRIC.split("[[scale]]", maxsplit=1)[0] + ONE_LABEL, 7,
     f"scale is not a scale (two labels or more); fix: {SCALE_FIX}"),
    (RUBRIC.replace('label = "none"', 'label = "full"'), 16, "label 'full' appears twice; fix: give each label once"),
    (RUBRIC.replace("score = 0.0", "score = 0.5"), 18,
     "labels 'partial' and 'none' declare the same score 0.5; fix: give each label its own score"),
    (RUBRIC.replace('label = "partial"', 'label = "partial"\nweight = 2'), 13,
     "unknown key 'weight' in a scale label; fix: label, description and score"),
    (RUBRIC.replace('label = "partial"', 'label = "part ial"'), 12,
     "a scale entry needs a label of letters, digits, '_' and '-'; fix: label = \"full\""),
    (RUBRIC.replace('label = "partial"\n', ""), 11,
     "a scale entry needs a label of letters, digits, '_' and '-'; fix: label = \"full\""),
    (RUBRIC.replace("score = 0.5", "score = true"), 14,
     "label 'partial' declares no score; fix: score = 1.0 (the metric when it is given)"),
    (RUBRIC.replace("score = 0.5", 'score = "0.5"'), 14,
     "label 'partial' declares no score; fix: score = 1.0 (the metric when it is given)"),
    (RUBRIC.replace('description = "some claims are"', 'description = " "'), 13,
     "label 'partial' has no description; fix: description = \"what the label means\""),
    (RUBRIC.replace('description = "some claims are"\n', ""), 11,
     "label 'partial' has no description; fix: description = \"what the label means\""),
    (RUBRIC.replace('version = "1"', 'version = "1"\nexpected = 1'), 4,
     "expected must be true or false; fix: expected = true (or leave it out)"),
    (TREE.replace('scale = "pass_fail"', 'scale = "pass_fail"\nsteps = ["Look."]'), 6,
     "steps and tree are two forms of the same thing; fix: keep one of them"),
    (TREE.split("[[tree]]", maxsplit=1)[0] + 'tree = "covered"\n+++\n', 6,
     "tree must be [[tree]] entries; fix: [[tree]] with id, question, yes and no"),
    (TREE.replace('id = "uses"', 'id = "uses"\nmaybe = "x"'), 13,
     "unknown key 'maybe' in a tree question; fix: id, question, yes and no"),
    (TREE.replace('question = "Does the answer use them?"\n', ""), 11,
     'a tree question lacks question; fix: question = "..."'),
    (TREE.replace('id = "admits"', 'id = " "'), 17, 'a tree question lacks id; fix: id = "..."'),
    (TREE.replace('id = "admits"', 'id = "uses"'), 17,
     "tree id 'uses' is already another question's id; fix: give each question its own id"),
    (TREE.replace('id = "admits"', 'id = "pass"'), 17,
     "tree id 'pass' is also a label of the scale; fix: give each question its own id"),
    (TREE.replace('yes = "pass"\nno = "fail"\n[[tree]]', 'yes = "passed"\nno = "fail"\n[[tree]]'), 14,
     "tree question 'uses': yes leads to 'passed', which is neither a question id nor a label (a dead end); fix: "
     "name a question id or one of the labels fail, pass"),
    (TREE.replace('no = "fail"\n+++', 'no = "failed"\n+++'), 20,
     "tree question 'admits': no leads to 'failed', which is neither a question id nor a label (a dead end); fix: "
     "name a question id or one of the labels fail, pass"),
    (TREE.replace('no = "fail"\n[[tree]]\nid = "admits"', 'no = "covered"\n[[tree]]\nid = "admits"'), 7,
     "tree loop: covered -> uses -> covered; fix: make every path end at a label"),
    (TREE.replace('no = "fail"\n+++', 'no = "uses"\n+++').replace('yes = "pass"\nno = "fail"\n[[tree]]',
                                                                 'yes = "pass"\nno = "admits"\n[[tree]]'), 12,
     "tree loop: covered -> uses -> admits -> uses; fix: make every path end at a label"),
    (TREE.replace('no = "admits"', 'no = "fail"'), 17,
     "tree question 'admits' is never reached from the first question 'covered'; fix: lead to it from a yes or no, "
     "or remove it"),
    (CHECK.replace("+++\nNotes", "Notes"), 7, "the front matter is never closed; fix: add a line '+++' after it"),
    ("", 1, "a criterion file starts with a line '+++' opening its TOML front matter; fix: write '+++', the front "
     "matter, '+++', then the body"),
    (" +++\n" + CHECK[4:], None, None),  # the fences may carry spaces: read
]  # fmt: skip


@pytest.mark.parametrize(("text", "line", "message"), EXACT)
def test_each_refusal_says_the_whole_problem_and_fix_at_its_line(
    tmp_path: Path, text: str, line: int | None, message: str | None
) -> None:
    path = _write(tmp_path, "bad.md", text)
    if message is None:
        assert parse_criterion(text.encode(), path).name == "cites_passage"
        return
    with pytest.raises(FormatError) as caught:
        parse_criterion(text.encode(), path)
    assert (caught.value.line, caught.value.problem) == (line, message)


def test_toml_that_does_not_parse_and_bytes_that_are_not_utf8(tmp_path: Path) -> None:
    with pytest.raises(FormatError) as caught:
        parse_criterion(CHECK.replace('version = "2"', "version = 2 2").encode(), tmp_path / "x.md")
    assert caught.value.line == 3
    assert caught.value.problem.startswith("the front matter is not valid TOML (")
    assert caught.value.problem.endswith("); fix: correct the TOML syntax at that line")
    with pytest.raises(FormatError) as caught:
        parse_criterion(b"+++\n\xff\n+++\n", tmp_path / "x.md")
    assert caught.value.line is None and caught.value.problem.startswith("not UTF-8 text (")
    assert caught.value.problem.endswith("; fix: save it as UTF-8")


def test_a_check_spec_error_is_placed_at_the_check_key_it_names(tmp_path: Path) -> None:
    text = CHECK.replace('kind = "cites"', 'kind = "cites"\nmin_quote_words = 0')
    with pytest.raises(FormatError) as caught:
        parse_criterion(text.encode(), tmp_path / "x.md")
    assert caught.value.line == 7
    assert caught.value.problem == ("min_quote_words must be a whole number >= 1; fix: write min_quote_words = 4")


def test_the_lines_of_each_field_are_kept_and_comments_and_quoted_keys_are_read(tmp_path: Path) -> None:
    rubric = parse_criterion(RUBRIC.encode(), tmp_path / "r.md")
    assert dict(rubric.lines) == {"name": 2, "version": 3, "description": 4, "inputs": 5, "steps": 6, "scale": 7}
    check = parse_criterion(CHECK.encode(), tmp_path / "c.md")
    assert dict(check.lines) == {"name": 2, "version": 3, "description": 4, "check": 5}
    tree = parse_criterion(TREE.encode(), tmp_path / "t.md")
    assert dict(tree.lines) == {"name": 2, "version": 3, "inputs": 4, "scale": 5, "tree": 6}
    # a commented header is no table; a quoted key is found at its line
    commented = RUBRIC.replace(
        '[[scale]]\nlabel = "partial"', '# [[scale]] the middle one\n[[scale]]\n"label" = "partial"'
    )
    broken = commented.replace("score = 0.5", "score = true")
    with pytest.raises(FormatError) as caught:
        parse_criterion(broken.encode(), tmp_path / "r.md")
    assert caught.value.line == 15  # one line lower than in RUBRIC: the comment
    quoted = commented.replace('"label" = "partial"', '"label" = "part ial"')
    with pytest.raises(FormatError) as caught:
        parse_criterion(quoted.encode(), tmp_path / "r.md")
    assert caught.value.line == 13


def test_the_pieces_of_a_criterion_are_kept_as_written(tmp_path: Path) -> None:
    text = RUBRIC.replace('version = "1"', "version = 3")
    one = parse_criterion(text.encode(), tmp_path / "r.md")
    assert (one.version, one.description, one.instructions) == ("3", "grounded in the passages",
                                                                "Judge whether the answer is grounded.")  # fmt: skip
    assert [(label.name, label.description, label.score) for label in one.labels][1] == ("partial", "some claims are",
                                                                                         0.5)  # fmt: skip
    assert isinstance(one.labels[0].score, float) and one.expected is False and one.tree == () and one.check is None
    assert one.path == tmp_path / "r.md"
    gaps = parse_criterion(TREE.encode(), tmp_path / "t.md")
    assert (gaps.tree[0].id, gaps.tree[0].question) == ("covered", "Do the passages answer the question?")
    assert [(label.name, label.description, label.score) for label in gaps.labels] == [
        ("pass", "the answer meets the criterion", 1.0), ("fail", "the answer does not meet it", 0.0)]  # fmt: skip
    assert gaps.steps == () and gaps.instructions == "" and gaps.description == ""
    plain = parse_criterion(CHECK.encode(), tmp_path / "c.md")
    assert plain.labels == () and plain.steps == () and plain.tree == () and plain.expected is False


def test_an_input_the_data_lacks_is_named_with_who_lacks_it(tmp_path: Path) -> None:
    text = RUBRIC.replace('"passages"]', '"passages", "nuggets", "history"]')
    one = parse_criterion(text.encode(), tmp_path / "g.md")
    expected = {
        "answer": "criterion grounded reads answer, which no run has; fix: give a golden set or run with answer, or "
        "take it out of inputs",
        "passages": "criterion grounded reads passages, which no run has; fix: give a golden set or run with "
        "passages, or take it out of inputs",
        "history": "criterion grounded reads history, which the golden set does not have (no conversation); fix: "
        "give a golden set or run with history, or take it out of inputs",
    }
    for name, message in expected.items():
        with pytest.raises(FormatError) as caught:
            one.check_inputs({name: False})
        assert (caught.value.line, caught.value.problem) == (5, message)
    one.check_inputs({})  # what ``has`` does not mention is taken as there
    check = parse_criterion(CHECK.encode(), tmp_path / "c.md")
    with pytest.raises(FormatError) as caught:
        check.check_inputs({"passages": False})
    assert caught.value.line == 5  # a check has no inputs line: its [check] line


def test_criteria_load_in_order_from_files_and_folders(tmp_path: Path) -> None:
    folder = tmp_path / "more"
    folder.mkdir()
    _write(folder, "z.md", TREE)
    _write(folder, "notes.txt", "not a criterion")
    (folder / "sub.md").mkdir()  # a folder named like a file is not one
    first = _write(tmp_path, "grounded.md", RUBRIC)
    assert [c.name for c in load_criteria([str(first), folder])] == ["grounded", "admits_gaps"]
    with pytest.raises(FormatError) as caught:
        load_criteria([first, first])
    assert caught.value.line == 2 and "'grounded' is also defined in" in caught.value.problem


def test_a_check_table_at_fault_as_a_whole_is_placed_at_its_header(tmp_path: Path) -> None:
    text = CHECK.replace('kind = "cites"', 'kind = "length"')
    with pytest.raises(FormatError) as caught:
        parse_criterion(text.encode(), tmp_path / "x.md")
    assert (caught.value.line, caught.value.problem) == (
        5,
        "a length check needs a bound; fix: add min_chars, max_chars, min_words or max_words",
    )


def test_a_check_refuses_a_tree_and_names_every_input_it_was_given(tmp_path: Path) -> None:
    with pytest.raises(FormatError, match="tree does not apply") as caught:
        parse_criterion(CHECK.replace("[check]", "tree = []\n[check]").encode(), tmp_path / "x.md")
    assert caught.value.line == 5
    with pytest.raises(FormatError) as caught:
        parse_criterion(
            CHECK.replace("[check]", 'inputs = ["answer", "question"]\n[check]').encode(), tmp_path / "x.md"
        )
    assert caught.value.problem.startswith("a cites check reads answer, passages, not answer, question; ")


def test_a_python_check_imports_its_module_from_beside_the_criterion_file(tmp_path: Path) -> None:
    folder = tmp_path / "criteria"
    folder.mkdir()
    (folder / "beside_checks.py").write_text("def short(question, answer, passages):\n    return len(answer) < 9\n")
    text = CHECK.replace('kind = "cites"', 'kind = "python"\nfunction = "beside_checks:short"')
    one = parse_criterion(text.encode(), folder / "short.md")
    assert one.check is not None and one.check.score("q", "brief", []) == 1.0


def test_an_input_nobody_lacks_by_name_is_said_plainly(tmp_path: Path) -> None:
    path = tmp_path / "g.md"
    one = parse_criterion(RUBRIC.encode(), path)
    with pytest.raises(FormatError) as caught:
        one.check_inputs({"question": False})
    assert caught.value.path == str(path)
    assert caught.value.problem == (
        "criterion grounded reads question, which the data does not have; fix: give a golden set or run with "
        "question, or take it out of inputs"
    )


def test_a_missing_path_an_empty_folder_and_a_twin_say_their_whole_message(tmp_path: Path) -> None:
    with pytest.raises(FormatError) as caught:
        load_criteria([tmp_path / "nope.md"])
    assert (caught.value.path, caught.value.line, caught.value.problem) == (
        str(tmp_path / "nope.md"),
        None,
        "no such criterion file or folder; fix: give the path of a NAME.md file or a folder of them",
    )
    with pytest.raises(FormatError) as caught:
        load_criteria([tmp_path])
    assert (caught.value.path, caught.value.problem) == (
        str(tmp_path),
        "a folder of criteria with no NAME.md file in it; fix: add criterion files NAME.md to it",
    )
    first = _write(tmp_path, "a.md", CHECK)
    with pytest.raises(FormatError) as caught:
        load_criteria([first, _write(tmp_path, "b.md", CHECK)])
    assert caught.value.problem == (
        f"criterion 'cites_passage' is also defined in {first}; fix: give each criterion its own name"
    )


def test_two_labels_make_a_scale_and_a_tree_of_non_tables_is_refused(tmp_path: Path) -> None:
    two = RUBRIC.replace('[[scale]]\nlabel = "none"\ndescription = "no claim is"\nscore = 0.0\n', "")
    assert [label.name for label in parse_criterion(two.encode(), tmp_path / "g.md").labels] == ["full", "partial"]
    with pytest.raises(FormatError) as caught:
        parse_criterion((TREE.split("[[tree]]", maxsplit=1)[0] + "tree = [1]\n+++\n").encode(), tmp_path / "t.md")
    assert caught.value.problem == "tree must be [[tree]] entries; fix: [[tree]] with id, question, yes and no"


def test_blank_lines_and_a_comment_after_a_header_keep_the_lines_right(tmp_path: Path) -> None:
    text = CHECK.replace("[check]", "\n[check]#kind=x").replace('kind = "cites"', 'kind = "vibes"')
    with pytest.raises(FormatError) as caught:
        parse_criterion(text.encode(), tmp_path / "x.md")
    assert caught.value.line == 7  # kind, one line lower for the blank line, in the [check] table


def test_the_fences_the_body_and_the_errors_without_a_line(tmp_path: Path) -> None:
    path = tmp_path / "x.md"
    with pytest.raises(FormatError) as caught:
        parse_criterion(b"+++\n+++\n", path)  # an empty front matter is closed on the second line
    assert caught.value.problem == 'the front matter lacks name; fix: name = "..."'
    with pytest.raises(FormatError) as caught:
        parse_criterion(b'+++\nname = "x"\n', path)
    assert (caught.value.path, caught.value.line) == (str(path), 2)
    with pytest.raises(FormatError) as caught:
        parse_criterion(b"+++\nname = [\n+++\n", path)  # TOML that says no line: the error has none
    assert caught.value.line is None and caught.value.problem.startswith("the front matter is not valid TOML")
    with pytest.raises(FormatError) as caught:
        parse_criterion(b"\xff", path)
    assert caught.value.path == str(path)
    two = parse_criterion(CHECK.replace("Notes for people.", "First line.\n\nSecond line.").encode(), path)
    assert two.instructions == "First line.\n\nSecond line."


def test_a_key_starting_with_a_capital_x_is_found_at_its_line(tmp_path: Path) -> None:
    text = RUBRIC.replace('label = "partial"', 'label = "partial"\nXtra = 2')
    with pytest.raises(FormatError, match="unknown key 'Xtra'") as caught:
        parse_criterion(text.encode(), tmp_path / "g.md")
    assert caught.value.line == 13
