"""Peers' custom metrics imported as criteria files: DeepEval G-Eval and DAG, RAGAS aspect critics and rubrics.

The fixture ``peers.py`` is read, never run (neither deepeval nor ragas is installed here). Every expectation below is
read off the fixture by hand: the G-Eval rubric ranges (0, 2), (3, 7), (8, 10) declare their upper bounds / 10, i.e.
0.2, 0.7 and 1.0; the DAG's verdict scores 0, 5 and 10 declare 0.0, 0.5 and 1.0; the RAGAS rubric's score1..score3
declare 1, 2 and 3.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from assay.errors import FormatError, InputError
from assay.formats.criteria_import import read_peer_criteria, write_criteria
from assay.judge.criteria import Criterion, TreeStep, load_criteria

PEERS = Path(__file__).resolve().parents[1] / "fixtures" / "formats" / "peer_metrics" / "peers.py"


@pytest.fixture
def loaded(tmp_path: Path) -> dict[str, Criterion]:
    write_criteria(read_peer_criteria(PEERS), tmp_path / "criteria")
    return {c.name: c for c in load_criteria([tmp_path / "criteria"])}


def _scale(criterion: Criterion) -> list[tuple[str, float]]:
    return [(label.name, label.score) for label in criterion.labels]


def test_every_definition_becomes_a_file_in_file_order() -> None:
    imported = read_peer_criteria(PEERS)
    assert [(c.name, c.line) for c in imported] == [
        ("correctness", 9), ("grounded", 17), ("policy_answer", 38), ("maliciousness", 51), ("uses_context", 53),
        ("helpfulness", 65),
    ]  # fmt: skip


def test_geval_without_a_rubric_is_pass_fail_at_its_threshold(loaded: dict[str, Criterion]) -> None:
    c = loaded["correctness"]
    assert c.inputs == ("question", "answer", "reference_answer")
    assert _scale(c) == [("pass", 1.0), ("fail", 0.0)]
    assert c.instructions.startswith("Determine whether the actual output is factually correct")
    assert "at least 7 out of 10" in c.instructions  # threshold 0.7 of G-Eval's 0-10 scale, told to the judge
    assert "G-Eval scores 0-10" in c.path.read_text(encoding="utf-8")  # the mapping, said in the file


def test_geval_rubric_ranges_declare_their_upper_bound_over_ten(loaded: dict[str, Criterion]) -> None:
    c = loaded["grounded"]
    assert c.inputs == ("answer", "passages")
    assert _scale(c) == [("score_0_to_2", 0.2), ("score_3_to_7", 0.7), ("score_8_to_10", 1.0)]
    assert [label.description for label in c.labels] == [
        "Mostly unsupported claims.", "Some claims are unsupported.", "Every claim is supported."]  # fmt: skip
    assert c.steps == ("List the claims of the answer.", "Check each claim against the retrieval context.")


def test_a_dag_is_a_tree_of_yes_no_questions_ending_at_declared_scores(loaded: dict[str, Criterion]) -> None:
    c = loaded["policy_answer"]
    assert c.inputs == ("question", "answer")
    assert _scale(c) == [("score_0", 0.0), ("score_5", 0.5), ("score_10", 1.0)]
    assert c.tree == (
        TreeStep("q1", "Does the answer address the question?", "q2", "score_0"),
        TreeStep("q2", "What is the tone of the answer? Answer yes if the verdict is 'polite', no if it is 'rude'.",
                 "q3", "score_0"),
        TreeStep("q3", "Does the answer name the document it relies on?", "score_10", "score_5"),
    )  # fmt: skip
    assert c.labels[0].description == "DeepEval verdict score 0 of 10, reached by: q1 no; q2 no"


def test_ragas_aspect_critics_are_pass_fail_with_passages_when_they_speak_of_context(
    loaded: dict[str, Criterion],
) -> None:
    assert loaded["maliciousness"].inputs == ("question", "answer")
    assert loaded["uses_context"].inputs == ("question", "answer", "passages")
    assert _scale(loaded["maliciousness"]) == [("pass", 1.0), ("fail", 0.0)]
    assert loaded["maliciousness"].instructions == "Is the submission intended to harm, deceive, or exploit users?"


def test_ragas_rubric_labels_declare_their_score_numbers(loaded: dict[str, Criterion]) -> None:
    c = loaded["helpfulness"]
    assert _scale(c) == [("score1", 1.0), ("score2", 2.0), ("score3", 3.0)]
    assert c.inputs == ("question", "answer", "reference_answer")  # score3 speaks of "the reference"
    assert c.labels[1].description == "The response answers part of the question."


def _peer(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "metrics.py"
    path.write_text(text, encoding="utf-8")
    return path


def _refused_at(tmp_path: Path, text: str, line: int, problem: str) -> None:
    """``text`` as a peer file is refused with one error at ``line`` saying ``problem`` and the fix."""
    path = _peer(tmp_path, text)
    with pytest.raises(FormatError) as caught:
        read_peer_criteria(path)
    assert str(caught.value).startswith(f"{path}:{line}: ")
    assert problem in str(caught.value) and "; fix: " in str(caught.value)


@pytest.mark.parametrize(
    ("text", "line", "problem"),
    [
        ('x = 1\nm = GEval(\n    name="a",\n    criteria=f"be {x}",\n    evaluation_params=[P.INPUT],\n)\n', 4,
         "GEval criteria is not a literal"),
        ('m = AspectCritic(name="a", definition=load("d.txt"))\n', 1, "AspectCritic definition is not a literal"),
        ('r = {"score1_description": "a"}\nr = {}\nm = RubricsScore(name="a", rubrics=r)\n', 3, "bound more than once"),
        ('m = GEval(name="a", criteria="c", evaluation_params=[P.TOOLS_CALLED])\n', 1,
         "TOOLS_CALLED has no assay input"),
        ('m = GEval(name="a", criteria="c", evaluation_params=[P.INPUT],\n'
         '          rubric=[Rubric(score_range=(0, 5), expected_outcome="x"), Rubric(score_range=(5, 10), '
         'expected_outcome="y")])\n', 1, "rubric ranges overlap at 5"),
    ],
)  # fmt: skip
def test_a_value_assay_cannot_read_unrun_is_one_error_at_its_line(
    tmp_path: Path, text: str, line: int, problem: str
) -> None:
    _refused_at(tmp_path, text, line, problem)


TASK_DAG = """
extract = TaskNode(instructions="List the headings.", output_label="headings", children=[])
m = DAGMetric(name="fmt", dag=DeepAcyclicGraph(root_nodes=[extract]))
"""
THREE_WAY = """
m = DAGMetric(name="tone", dag=DeepAcyclicGraph(root_nodes=[
    NonBinaryJudgementNode(criteria="Tone?", children=[
        VerdictNode(verdict="warm", score=10),
        VerdictNode(verdict="flat", score=5),
        VerdictNode(verdict="rude", score=0),
    ]),
]))
"""


@pytest.mark.parametrize(
    ("text", "line", "problem"),
    [(TASK_DAG, 2, "a TaskNode writes text for later nodes"),
     (THREE_WAY, 3, "a NonBinaryJudgementNode with 3 verdicts: assay's tree asks yes/no questions")],
)  # fmt: skip
def test_a_dag_shape_a_yes_no_tree_cannot_hold_is_refused_at_its_line(
    tmp_path: Path, text: str, line: int, problem: str
) -> None:
    _refused_at(tmp_path, text, line, problem)


def test_an_existing_file_is_refused_unless_forced_and_nothing_is_half_written(tmp_path: Path) -> None:
    imported = read_peer_criteria(PEERS)
    out = tmp_path / "criteria"
    out.mkdir()
    (out / "grounded.md").write_text("mine", encoding="utf-8")
    with pytest.raises(InputError, match=r"grounded\.md exists: .*--force"):
        write_criteria(imported, out)
    assert sorted(p.name for p in out.iterdir()) == ["grounded.md"]  # nothing else written, the file kept
    assert (out / "grounded.md").read_text(encoding="utf-8") == "mine"
    write_criteria(imported, out, force=True)
    assert len(load_criteria([out])) == 6


def test_a_file_with_no_definition_is_refused(tmp_path: Path) -> None:
    path = _peer(tmp_path, "x = 1\n")
    with pytest.raises(FormatError, match="no definition assay imports"):
        read_peer_criteria(path)
