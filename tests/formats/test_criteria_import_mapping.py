"""Each peer definition's mapping, pinned on small files written here: the criterion file's exact text (comments,
front matter, body), the inputs read from params or from the words of a definition, the threshold of a pass/fail
G-Eval, the order of rubric ranges, labels and tree paths, and every shape that is refused, with its line and fix.
The expected texts are written by hand from the mapping in the module doc of ``assay.formats.criteria_import``.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from assay.errors import FormatError, InputError
from assay.formats.criteria_import import ImportedCriterion, read_peer_criteria, write_criteria
from assay.judge.criteria import load_criteria

RAGAS_NOTE = (
    "# RAGAS sends the question and response, with the retrieved contexts and reference when a sample\n"
    "# has them; this file names its inputs: question and answer, plus passages or reference_answer\n"
    "# when the text speaks of them.\n"
)


def _peer(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "metrics.py"
    path.write_text(text, encoding="utf-8")
    return path


def _read(tmp_path: Path, text: str) -> dict[str, ImportedCriterion]:
    return {c.name: c for c in read_peer_criteria(_peer(tmp_path, text))}


def _only(tmp_path: Path, text: str) -> ImportedCriterion:
    (imported,) = read_peer_criteria(str(_peer(tmp_path, text)))
    return imported


def _refusal(tmp_path: Path, text: str, line: int | None) -> str:
    """The one error ``text`` gets, after its ``metrics.py:LINE:`` prefix (checked)."""
    path = _peer(tmp_path, text)
    with pytest.raises(FormatError) as caught:
        read_peer_criteria(path)
    where = f"{path}:{line}: " if line is not None else f"{path}: "
    assert str(caught.value).startswith(where), str(caught.value)
    return str(caught.value)[len(where) :]


def test_a_pass_fail_geval_file_word_for_word(tmp_path: Path) -> None:
    imported = _only(tmp_path, 'm = GEval(name="Be Brief!", criteria="  Short answers.  ",\n'
                               '          evaluation_params=["actual_output", LLMTestCaseParams.INPUT])\n')  # fmt: skip
    assert (imported.name, imported.source, imported.line) == ("be_brief", "GEval 'Be Brief!'", 1)
    assert imported.text == (
        "+++\n"
        "# Imported from DeepEval GEval 'Be Brief!' (metrics.py line 1).\n"
        "# G-Eval scores 0-10 and reports the score / 10, passing at score / 10 >= threshold; with no rubric\n"
        "# its scale has no labels, so this criterion is pass/fail: pass (score 1) when the answer would score\n"
        "# at least 5 of 10 (threshold 0.5), fail (score 0) otherwise.\n"
        'name = "be_brief"\n'
        'version = "1"\n'
        "description = \"DeepEval G-Eval 'Be Brief!': pass when it would score >= 5 of 10\"\n"
        'inputs = ["question", "answer"]\n'
        'scale = "pass_fail"\n'
        "+++\n"
        "Short answers.\n"
        "\n"
        "Pass when the answer would score at least 5 out of 10 on this; fail otherwise.\n"
    )


def test_a_rubric_geval_file_word_for_word(tmp_path: Path) -> None:
    imported = _only(tmp_path, "\n".join([
        "m = GEval(",
        '    name="steps",',
        '    evaluation_steps=[" Read it. ", "Check \\"quotes\\", caf\\u00e9 and \\x7f."],',
        "    evaluation_params=[P.CONTEXT, P.EXPECTED_OUTPUT, P.RETRIEVAL_CONTEXT],",
        '    rubric=[Rubric(score_range=(7, 10), expected_outcome=" Good. "),',
        '            Rubric(score_range=(0, 5), expected_outcome="Bad."),',
        '            Rubric(score_range=[6, 6], expected_outcome="Edge.")],',
        ")",
    ]))  # fmt: skip
    assert imported.text == (
        "+++\n"
        "# Imported from DeepEval GEval 'steps' (metrics.py line 1).\n"
        "# G-Eval scores 0-10 and reports the score / 10; each label is one rubric range of that 0-10 scale\n"
        "# and declares its upper bound / 10, the most G-Eval would report for it.\n"
        'name = "steps"\n'
        'version = "1"\n'
        "description = \"DeepEval G-Eval 'steps': rubric ranges of 0-10, each declaring its upper bound / 10\"\n"
        'inputs = ["passages", "reference_answer"]\n'
        'steps = ["Read it.", "Check \\"quotes\\", café and \\u007f."]\n'
        "\n[[scale]]\n"
        'label = "score_0_to_5"\ndescription = "Bad."\nscore = 0.5\n'
        "\n[[scale]]\n"
        'label = "score_6"\ndescription = "Edge."\nscore = 0.6\n'
        "\n[[scale]]\n"
        'label = "score_7_to_10"\ndescription = "Good."\nscore = 1.0\n'
        "+++\n"
        "Judge the answer by the steps.\n"
    )


@pytest.mark.parametrize(
    ("arguments", "tenths", "threshold"),
    [("threshold=0.75", "7.5", "0.75"), ("threshold=1", "10", "1"), ("threshold=0", "0", "0"),
     ("strict_mode=True, threshold=0.2", "10", "1"), ("strict_mode=False, threshold=0.2", "2", "0.2"),
     ("strict_mode=1, threshold=0.2", "2", "0.2"), ("rubric=[]", "5", "0.5")],
)  # fmt: skip
def test_a_geval_without_rubric_passes_at_its_threshold_out_of_ten(
    tmp_path: Path, arguments: str, tenths: str, threshold: str
) -> None:
    text = _only(tmp_path, f'm = GEval(name="t", criteria="c", evaluation_params=[P.INPUT], {arguments})\n').text
    assert f"# at least {tenths} of 10 (threshold {threshold}), fail (score 0) otherwise.\n" in text
    assert f"Pass when the answer would score at least {tenths} out of 10 on this; fail otherwise.\n" in text


def test_criteria_and_steps_together_keep_the_criteria_as_the_body(tmp_path: Path) -> None:
    text = _only(tmp_path, 'm = GEval("n", [P.INPUT], "Be right.", ["Look."])\n').text
    assert 'steps = ["Look."]\n+++\nBe right.\n\nPass when' in text
    assert 'inputs = ["question"]\n' in text


GEVAL = 'm = GEval(name="g", evaluation_params=[P.INPUT], {})\n'


@pytest.mark.parametrize(
    ("arguments", "problem"),
    [
        ('criteria="c", threshold=1.5', "threshold must be a number from 0 to 1; fix: threshold=0.5"),
        ('criteria="c", threshold=-0.1', "threshold must be a number from 0 to 1; fix: threshold=0.5"),
        ('criteria="c", threshold=True', "threshold must be a number from 0 to 1; fix: threshold=0.5"),
        ('criteria="c", threshold="0.5"', "threshold must be a number from 0 to 1; fix: threshold=0.5"),
        ('evaluation_steps="Read."',
         'evaluation_steps must be a list of non-empty strings; fix: evaluation_steps=["..."]'),
        ('evaluation_steps=["Read.", " "]', "evaluation_steps must be a list of non-empty strings; fix: "),
        ('evaluation_steps=["Read.", 2]', "evaluation_steps must be a list of non-empty strings; fix: "),
        ('criteria=" "', 'criteria must be a non-empty string; fix: criteria="..."'),
        ("criteria=3", 'criteria must be a non-empty string; fix: criteria="..."'),
        ("criteria=None", 'a GEval needs criteria or evaluation_steps; fix: criteria="..."'),
        ("evaluation_steps=[]", 'a GEval needs criteria or evaluation_steps; fix: criteria="..."'),
        ('criteria="c", rubric="low"', "rubric must be a list of Rubric(...); fix: rubric=[Rubric(...), ...]"),
        ('criteria="c", rubric=Rubric(score_range=(0, 1), expected_outcome="x")', "rubric must be a list of Rubric("),
        ('criteria="c",\n    rubric=[Rubric(score_range=(0, 10), expected_outcome="x")]',
         "a rubric of one range is a scale of one label; fix: give two Rubric(...) ranges or more, or no rubric for "
         "pass/fail"),
        ('criteria=load("c.txt")', 'GEval criteria is not a literal ("load(\'c.txt\')"); fix: write the value'),
        ('criteria="c", rubric=[Score(score_range=(0, 1), expected_outcome="x")]',
         'a rubric entry is not Rubric(...); fix: Rubric(score_range=(0, 2), expected_outcome="...")'),
        ('criteria="c", rubric=[[0, 1]]', "a rubric entry is not Rubric(...); fix: "),
        ('criteria="c", rubric=[Rubric(score_range=(0, 1))]',
         'Rubric needs expected_outcome as a non-empty string; fix: expected_outcome="..."'),
        ('criteria="c", rubric=[Rubric(score_range=(0, 5), expected_outcome="a"), '
         'Rubric(score_range=(2, 3), expected_outcome="b")]', "rubric ranges overlap at 2; fix: make the score ranges "
         "disjoint"),
    ],
)  # fmt: skip
def test_a_geval_argument_out_of_shape_is_refused(tmp_path: Path, arguments: str, problem: str) -> None:
    assert _refusal(tmp_path, GEVAL.format(arguments), 1).startswith(problem)


@pytest.mark.parametrize(
    "span", ["(2, 1)", "(0, 11)", "(-1, 2)", "(0,)", "(0, 1, 2)", "(0.0, 2)", "(True, 2)", '("0", "2")', "None", "3"]
)
def test_a_rubric_range_not_two_whole_numbers_in_order_is_refused_at_its_line(tmp_path: Path, span: str) -> None:
    text = (f'm = GEval(name="g", criteria="c", evaluation_params=[P.INPUT],\n    rubric=[\n'
            f'        Rubric(score_range={span}, expected_outcome="x")])\n')  # fmt: skip
    assert _refusal(tmp_path, text, 3) == (
        "score_range must be two whole numbers 0 <= a <= b <= 10; fix: score_range=(0, 2)"
    )


@pytest.mark.parametrize(
    ("text", "line", "problem"),
    [
        ('m = GEval(criteria="c", evaluation_params=[P.INPUT])\n', 1,
         'GEval needs name as a non-empty string; fix: name="..."'),
        ('m = GEval(name=" ", criteria="c", evaluation_params=[P.INPUT])\n', 1,
         'GEval needs name as a non-empty string; fix: name="..."'),
        ('m = AspectCritic(name="--", definition="d")\n', 1,
         "name '--' has no letter or digit; fix: name=\"my_metric\""),
        ('m = GEval(name="g", criteria="c")\n', 1,
         "evaluation_params must be a non-empty list; fix: evaluation_params=[LLMTestCaseParams.INPUT, "
         "LLMTestCaseParams.ACTUAL_OUTPUT]"),
        ('m = GEval(name="g", criteria="c", evaluation_params=[])\n', 1, "evaluation_params must be a non-empty list"),
        ('m = GEval(name="g", criteria="c", evaluation_params=P.INPUT)\n', 1,
         "evaluation_params must be a non-empty list"),
        ('m = GEval(name="g", criteria="c", evaluation_params="INPUT")\n', 1,
         "evaluation_params must be a non-empty list"),
        ('m = GEval(name="g", criteria="c", evaluation_params=[\n    P.INPUT,\n    P.TOOLS_CALLED])\n', 3,
         "evaluation param TOOLS_CALLED has no assay input (assay sends question, answer, passages, reference_answer); "
         "fix: keep only INPUT, ACTUAL_OUTPUT, EXPECTED_OUTPUT, CONTEXT, RETRIEVAL_CONTEXT"),
        ('m = GEval(name="g", criteria="c",\n    evaluation_params=["input", "tools"])\n', 1,
         "evaluation param TOOLS has no assay input"),
        ('m = RubricsScore("n", {"score1_description": "a", "score2_description": "b"})\n', 1,
         "RubricsScore is given positional arguments assay cannot name; fix: pass them by keyword (name=...)"),
        ('m = AspectCritic(name="a")\n', 1,
         'AspectCritic needs definition as a non-empty string; fix: definition="..."'),
    ],
)  # fmt: skip
def test_a_name_or_params_out_of_shape_is_refused(tmp_path: Path, text: str, line: int, problem: str) -> None:
    assert _refusal(tmp_path, text, line).startswith(problem)


def test_a_name_is_cut_to_letters_digits_and_inner_underscores_in_lower_case(tmp_path: Path) -> None:
    found = _read(tmp_path, 'a = AspectCritic(name="X-ray", definition="d")\nb = AspectCritic(name="_Tone 2_", '
                            'definition="d")\n')  # fmt: skip
    assert list(found) == ["x_ray", "tone_2"]


def test_a_rubric_can_be_the_fifth_positional_argument(tmp_path: Path) -> None:
    text = _only(tmp_path, 'm = GEval("n", [P.INPUT], "c", ["s"], [Rubric(score_range=(0, 4), expected_outcome="o"),\n'
                           '    Rubric(score_range=(5, 10), expected_outcome="p")])\n').text  # fmt: skip
    assert 'label = "score_0_to_4"\ndescription = "o"\nscore = 0.4\n' in text


def test_rubric_texts_are_read_as_separate_words(tmp_path: Path) -> None:
    text = _only(tmp_path, 'm = RubricsScore(name="r", rubrics={"score1_description": "Ignores context",\n'
                           '                                     "score2_description": "Good."})\n').text  # fmt: skip
    assert 'inputs = ["question", "answer", "passages"]\n' in text


def test_positional_arguments_follow_each_peers_signature(tmp_path: Path) -> None:
    found = _read(tmp_path, 'a = AspectCritic("one", "Is it kind?")\n'
                            'd = DAGMetric("two", DeepAcyclicGraph([BinaryJudgementNode("Q?", [\n'
                            "    VerdictNode(True, 10), VerdictNode(False, 0)])]))\n")  # fmt: skip
    assert [(c.name, c.source, c.line) for c in found.values()] == [
        ("one", "AspectCritic 'one'", 1), ("two", "DAGMetric 'two'", 2)]  # fmt: skip
    assert found["one"].text.endswith("+++\nIs it kind?\n")
    assert 'question = "Q?"\nyes = "score_10"\nno = "score_0"\n' in found["two"].text


DAG = 'm = DAGMetric(name="d", dag=DeepAcyclicGraph(root_nodes=[{}]))\n'
BINARY = 'BinaryJudgementNode(criteria="{}?", children=[VerdictNode(verdict=True, {}), VerdictNode(verdict=False, {})])'


def test_a_dag_file_word_for_word(tmp_path: Path) -> None:
    imported = _only(tmp_path, DAG.format(BINARY.format("Q1", "score=10", "score=0")))
    assert imported.text == (
        "+++\n"
        "# Imported from DeepEval DAGMetric 'd' (metrics.py line 1).\n"
        "# Each judgement node is a yes/no question; each verdict's score S (0-10) is the label score_S,\n"
        "# declaring S / 10 as DAGMetric reports it. No node named evaluation_params: the judge sees the question and "
        "answer.\n"
        'name = "d"\n'
        'version = "1"\n'
        "description = \"DeepEval DAG 'd': verdict scores of 0-10, each declaring S / 10\"\n"
        'inputs = ["question", "answer"]\n'
        "\n[[scale]]\n"
        'label = "score_0"\ndescription = "DeepEval verdict score 0 of 10, reached by: q1 no"\nscore = 0.0\n'
        "\n[[scale]]\n"
        'label = "score_10"\ndescription = "DeepEval verdict score 10 of 10, reached by: q1 yes"\nscore = 1.0\n'
        "\n[[tree]]\n"
        'id = "q1"\nquestion = "Q1?"\nyes = "score_10"\nno = "score_0"\n'
        "+++\n"
        "Answer each question about the answer yes or no.\n"
    )


def test_a_dag_naming_params_says_nothing_of_the_default_inputs(tmp_path: Path) -> None:
    node = BINARY.format("Q1", "score=10", "score=0").replace("children=", "evaluation_params=[P.RETRIEVAL_CONTEXT, "
                                                               "P.ACTUAL_OUTPUT], children=")  # fmt: skip
    text = _only(tmp_path, DAG.format(node)).text
    assert "# declaring S / 10 as DAGMetric reports it.\nname" in text
    assert 'inputs = ["answer", "passages"]\n' in text


def test_a_node_reached_twice_is_one_question(tmp_path: Path) -> None:
    text = "\n".join([
        "shared = " + BINARY.format("Shared", "score=10", "score=5"),
        "mid = " + BINARY.format("Mid", "child=shared", "score=0"),
        "other = " + BINARY.format("Other", "child=shared", "score=0"),
        DAG.format(BINARY.format("Root", "child=mid", "child=other")),
    ])  # fmt: skip
    loaded = _only(tmp_path, text).text
    trees = loaded.split("[[tree]]\n")[1:]
    assert [t.split("+++")[0].strip() for t in trees] == [
        'id = "q1"\nquestion = "Root?"\nyes = "q2"\nno = "q4"',
        'id = "q2"\nquestion = "Mid?"\nyes = "q3"\nno = "score_0"',
        'id = "q3"\nquestion = "Shared?"\nyes = "score_10"\nno = "score_5"',
        'id = "q4"\nquestion = "Other?"\nyes = "q3"\nno = "score_0"',
    ]
    assert "reached by: q2 no; q4 no" in loaded


def test_paths_to_a_score_list_in_the_order_of_their_questions_past_nine(tmp_path: Path) -> None:
    chain = ["n11 = " + BINARY.format("Q11", "score=10", "score=0")]
    chain += [f"n{i} = " + BINARY.format(f"Q{i}", f"child=n{i + 1}", "score=0") for i in range(10, 1, -1)]
    chain.append(DAG.format(BINARY.format("Q1", "child=n2", "score=0")))
    loaded = _only(tmp_path, "\n".join(chain)).text
    every = "; ".join(f"q{i} no" for i in range(1, 12))
    assert f'description = "DeepEval verdict score 0 of 10, reached by: {every}"' in loaded
    assert 'id = "q10"\nquestion = "Q10?"\nyes = "q11"\nno = "score_0"' in loaded


NON_BINARY = (
    'NonBinaryJudgementNode(criteria="Tone?", children=[VerdictNode(verdict={}, score=10), '
    "VerdictNode(verdict={}, score=0)])"
)


@pytest.mark.parametrize(
    ("text", "line", "problem"),
    [
        ('m = DAGMetric(name="d")\n', 1, "DAGMetric needs dag=DeepAcyclicGraph(root_nodes=[...]); fix: pass dag=..."),
        ('m = DAGMetric(name="d", dag=Graph(root_nodes=[]))\n', 1, "DAGMetric needs dag=DeepAcyclicGraph("),
        ('m = DAGMetric(name="d", dag="graph")\n', 1, "DAGMetric needs dag=DeepAcyclicGraph("),
        ('m = DAGMetric(name="d",\n    dag=DeepAcyclicGraph(root_nodes=[a, b]))\na = 1\nb = 2\n', 2,
         "assay's tree starts at one question; this graph has 2 root nodes; fix: give root_nodes one judgement node, "
         "or import each root as its own DAGMetric"),
        ('m = DAGMetric(name="d", dag=DeepAcyclicGraph(root_nodes=[]))\n', 1,
         "assay's tree starts at one question; this graph has 0 root nodes"),
        ('m = DAGMetric(name="d", dag=DeepAcyclicGraph(root_nodes=' + BINARY.format("Q", "score=1", "score=0") + "))\n",
         1, "assay's tree starts at one question; this graph has no root nodes"),
        ('m = DAGMetric(name="d", dag=DeepAcyclicGraph())\n', 1,
         "assay's tree starts at one question; this graph has no root nodes"),
        (DAG.format(BINARY.format("Q", "score=5", "score=5")), 1,
         "every path of the graph ends at score 5: a scale needs two; fix: give the verdicts different scores"),
        (DAG.format('VerdictNode(verdict=True, score=1)'), 1, "DAG node not imported: a VerdictNode is not a judgement "
         "node assay's yes/no tree can ask; fix: rewrite it as a BinaryJudgementNode, or write the criterion file by "
         "hand"),
        ('m = DAGMetric(name="d",\n    dag=DeepAcyclicGraph(root_nodes=["node"]))\n', 2,
         "DAG node not imported: a value is not a judgement node"),
        ('m = DAGMetric(name="d", dag=DeepAcyclicGraph(root_nodes=[\n    GEval(name="g", criteria="c")]))\n', 2,
         "DAG node not imported: a GEval is not a judgement node"),
        ("loop = " + BINARY.format("L", "child=loop", "score=0") + "\n" + DAG.format("loop"), 1,
         "the graph loops back to this node; fix: make every path end at a score"),
        (DAG.format('BinaryJudgementNode(criteria="Q?")'), 1, "a BinaryJudgementNode with 0 verdicts: assay's tree "
         "asks yes/no questions; fix: two verdicts, or split the choice into yes/no BinaryJudgementNodes"),
        (DAG.format('BinaryJudgementNode(criteria="Q?", children=[VerdictNode(verdict=True, score=1)])'), 1,
         "a BinaryJudgementNode with 1 verdicts"),
        (DAG.format('BinaryJudgementNode(criteria="Q?", children=[VerdictNode(verdict=True, score=1), Leaf()])'), 1,
         "a child of a BinaryJudgementNode is not a VerdictNode; fix: VerdictNode(...)"),
        (DAG.format('BinaryJudgementNode(criteria="Q?", children=[VerdictNode(verdict=True, score=1), "no"])'), 1,
         "a child of a BinaryJudgementNode is not a VerdictNode"),
        (DAG.format(BINARY.format("Q", "score=1", "score=0").replace("verdict=False", 'verdict="no"')), 1,
         "verdict 'no' does not fit a BinaryJudgementNode; fix: verdict=True or False (a string for a "
         "NonBinaryJudgementNode)"),
        (DAG.format(BINARY.format("Q", "score=1", "score=0").replace("verdict=False", "verdict=True")), 1,
         "verdict True appears twice; fix: give each verdict once"),
        (DAG.format(NON_BINARY.format("True", "False")), 1, "verdict True does not fit a NonBinaryJudgementNode"),
        (DAG.format(NON_BINARY.format('"warm"', '"warm"')), 1, "verdict 'warm' appears twice"),
        (DAG.format(BINARY.format("Q", "score=1, child=x", "score=0")), 1,
         "a VerdictNode needs a score or a child, not both; fix: score=10, or child=another judgement node"),
        (DAG.format(BINARY.format("Q", "score=1", "")), 1, "a VerdictNode needs a score or a child, not both"),
        (DAG.format('TaskNode(instructions="List.", output_label="l", children=[])'), 1,
         "DAG node not imported: a TaskNode writes text for later nodes, which a yes/no tree cannot carry; fix: "),
        (DAG.format(BINARY.format("Q", "score=1", "score=0").replace("children=", "evaluation_params=P.INPUT, "
                                                                     "children=")), 1,
         "evaluation_params must be a non-empty list; fix: "),
        (DAG.format('BinaryJudgementNode(criteria="Q?", children=VerdictNode(verdict=True, score=1))'), 1,
         "a BinaryJudgementNode with 0 verdicts"),
        ("other = " + BINARY.format("O", "score=1", "score=0") + "\n"
         + DAG.format(BINARY.format("Q", "score=1", "score=0").replace("verdict=True, score=1", "True, 10, other")), 2,
         "a VerdictNode needs a score or a child, not both"),
        (DAG.format(BINARY.format("Q", 'child="next"', "score=0")), 1,
         "DAG node not imported: a value is not a judgement node"),
        (DAG.format(BINARY.format("Q", "child=missing", "score=0")), 1,
         "VerdictNode child is the name 'missing', never bound at module level"),
        (DAG.format(BINARY.format("Q", "score=points", "score=0")), 1,
         "VerdictNode score is the name 'points', never bound at module level"),
        (DAG.format(BINARY.format("Q", "score=11", "score=0")), 1,
         "score 11 is not a whole number 0-10; fix: score=0 ... score=10"),
        (DAG.format(BINARY.format("Q", "score=-1", "score=0")), 1, "score -1 is not a whole number 0-10"),
        (DAG.format(BINARY.format("Q", "score=2.5", "score=0")), 1, "score 2.5 is not a whole number 0-10"),
        (DAG.format(BINARY.format("Q", "score=True", "score=0")), 1, "score True is not a whole number 0-10"),
        (DAG.format('BinaryJudgementNode(children=[VerdictNode(verdict=True, score=1), '
                    'VerdictNode(verdict=False, score=0)])'), 1,
         'BinaryJudgementNode needs criteria as a non-empty string; fix: criteria="..."'),
    ],
)  # fmt: skip
def test_a_dag_out_of_shape_is_refused_at_its_line(tmp_path: Path, text: str, line: int, problem: str) -> None:
    assert _refusal(tmp_path, text, line).startswith(problem)


def test_an_aspect_critic_file_word_for_word(tmp_path: Path) -> None:
    imported = _only(tmp_path, 'm = AspectCritic(name="Cites sources", definition=" Does it cite the retrieved '
                               'documents? ")\n')  # fmt: skip
    assert imported.text == (
        "+++\n"
        "# Imported from RAGAS AspectCritic 'Cites sources' (metrics.py line 1).\n"
        "# RAGAS's verdict is 1 or 0: pass declares 1, fail 0.\n"
        f"{RAGAS_NOTE}"
        'name = "cites_sources"\n'
        'version = "1"\n'
        "description = \"RAGAS aspect critic 'Cites sources': pass 1, fail 0\"\n"
        'inputs = ["question", "answer", "passages"]\n'
        'scale = "pass_fail"\n'
        "+++\n"
        "Does it cite the retrieved documents?\n"
    )


def test_a_rubrics_score_file_word_for_word_with_its_labels_in_number_order(tmp_path: Path) -> None:
    imported = _only(tmp_path, 'm = RubricsScore(rubrics={"score10_description": "Matches the ground truth.",\n'
                               '                          "score2_description": " Poor. "})\n')  # fmt: skip
    assert (imported.name, imported.source) == ("rubrics_score", "RubricsScore 'rubrics_score'")
    assert imported.text == (
        "+++\n"
        "# Imported from RAGAS RubricsScore 'rubrics_score' (metrics.py line 1).\n"
        "# Each rubric entry scoreN_description is the label scoreN, declaring N: RAGAS's score is that number.\n"
        f"{RAGAS_NOTE}"
        'name = "rubrics_score"\n'
        'version = "1"\n'
        "description = \"RAGAS rubric 'rubrics_score': label scoreN declares N\"\n"
        'inputs = ["question", "answer", "reference_answer"]\n'
        "\n[[scale]]\n"
        'label = "score2"\ndescription = "Poor."\nscore = 2.0\n'
        "\n[[scale]]\n"
        'label = "score10"\ndescription = "Matches the ground truth."\nscore = 10.0\n'
        "+++\n"
        "Score the answer by the rubric: give the label whose description fits it.\n"
    )


@pytest.mark.parametrize(
    ("definition", "extra"),
    [
        ("Is it kind?", ""), ("Does it use the context?", ', "passages"'), ("Are the Contexts used?", ', "passages"'),
        ("Is the passage quoted?", ', "passages"'), ("Are passages quoted?", ', "passages"'),
        ("Is the document named?", ', "passages"'), ("Are documents named?", ', "passages"'),
        ("Is retrieval used?", ', "passages"'), ("Is what was retrieved used?", ', "passages"'),
        ("Is the source named?", ', "passages"'), ("Are sources named?", ', "passages"'),
        ("Is it contextual?", ""), ("Is it resourceful?", ""),
        ("Does it match the reference?", ', "reference_answer"'), ("Is it the ground truth?", ', "reference_answer"'),
        ("Is it the ground-truth?", ', "reference_answer"'), ("Is it the ground_truth?", ', "reference_answer"'),
        ("Is it the groundtruth?", ', "reference_answer"'), ("Is it the expected answer?", ', "reference_answer"'),
        ("Is it the expected output?", ', "reference_answer"'), ("Is it expected?", ""), ("Any preference?", ""),
        ("Does the context match the reference?", ', "passages", "reference_answer"'),
    ],
)  # fmt: skip
def test_an_aspect_critic_names_passages_or_the_reference_when_its_words_do(
    tmp_path: Path, definition: str, extra: str
) -> None:
    text = _only(tmp_path, f'm = AspectCritic(name="a", definition="{definition}")\n').text
    assert f'inputs = ["question", "answer"{extra}]\n' in text


@pytest.mark.parametrize(
    ("rubrics", "problem"),
    [
        ("None", "RubricsScore needs rubrics, a dict of two entries or more (RAGAS's default rubric is not copied); "
         'fix: rubrics={"score1_description": "...", ...}'),
        ('{"score1_description": "a"}', "RubricsScore needs rubrics, a dict of two entries or more"),
        ('["score1_description", "score2_description"]', "RubricsScore needs rubrics, a dict of two entries or more"),
        ('{"score1_description": "a", "score_2": "b"}',
         "rubric entry 'score_2' is not scoreN_description with a text; fix: \"score1_description\": \"what a score "
         'of 1 means"'),
        ('{"score1_description": "a", "xscore2_description": "b"}', "rubric entry 'xscore2_description' is not"),
        ('{"score1_description": "a", "score2_descriptions": "b"}', "rubric entry 'score2_descriptions' is not"),
        ('{"score1_description": "a", "score2_description": " "}', "rubric entry 'score2_description' is not"),
        ('{"score1_description": "a", "score2_description": 2}', "rubric entry 'score2_description' is not"),
        ('{"score1_description": "a", 2: "b"}', "rubric entry 2 is not"),
        ('{"score2_description": "a", "score1_description": "b", "score01_description": "c"}',
         "rubric entries 'score01_description' and 'score1_description' both declare score 1; fix: give each score "
         "one entry"),
    ],
)  # fmt: skip
def test_a_rubrics_score_out_of_shape_is_refused(tmp_path: Path, rubrics: str, problem: str) -> None:
    assert _refusal(tmp_path, f'\nm = RubricsScore(name="r", rubrics={rubrics})\n', 2).startswith(problem)


def test_two_definitions_of_one_name_are_refused_at_the_second(tmp_path: Path) -> None:
    text = 'a = AspectCritic(name="Is kind", definition="d")\n\nb = AspectCritic(name="is-kind", definition="e")\n'
    assert _refusal(tmp_path, text, 3) == (
        "criterion name 'is_kind' is also made from line 1; fix: give the two metrics different names"
    )


def test_definitions_in_a_list_are_each_imported_and_one_inside_a_graph_is_not(tmp_path: Path) -> None:
    found = _read(tmp_path, 'metrics = [AspectCritic(name="a", definition="d"), AspectCritic(name="b", '
                            'definition="e")]\n')  # fmt: skip
    assert list(found) == ["a", "b"]
    text = DAG.format(BINARY.format("Q", 'child=GEval(name="inner", criteria="c")', "score=0"))
    assert _refusal(tmp_path, text, 1).startswith("DAG node not imported: a GEval is not a judgement node")


def test_a_definition_written_inside_another_ones_arguments_is_no_criterion_of_its_own(tmp_path: Path) -> None:
    found = _read(tmp_path, 'a = GEval(name="outer", criteria="c", evaluation_params=[P.INPUT],\n'
                            '          model=Wrap(AspectCritic(name="inner", definition="d")))\n'
                            'b = AspectCritic(name="after", definition="e")\n')  # fmt: skip
    assert [(c.name, c.line) for c in found.values()] == [("outer", 1), ("after", 3)]


def test_a_file_with_no_definition_names_the_kinds_it_reads(tmp_path: Path) -> None:
    assert _refusal(tmp_path, "x = Other(name='a')\n", None) == (
        "no definition assay imports (GEval, DAGMetric, AspectCritic, RubricsScore); fix: give the file that defines "
        "the metrics"
    )


def test_criteria_are_written_into_a_new_folder_and_never_over_a_file(tmp_path: Path) -> None:
    imported = read_peer_criteria(_peer(tmp_path, 'a = AspectCritic(name="a", definition="d")\n'))
    out = tmp_path / "new" / "criteria"
    assert write_criteria(imported, str(out)) == [out / "a.md"]
    assert (out / "a.md").read_text(encoding="utf-8") == imported[0].text
    assert [c.name for c in load_criteria([out])] == ["a"]
    afile = tmp_path / "afile"
    afile.write_text("x", encoding="utf-8")
    with pytest.raises(InputError, match=f"^{afile} is a file: give a folder for the criteria$"):
        write_criteria(imported, afile)
