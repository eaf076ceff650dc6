"""The rule that carries golden labels over to passages by span (carry.py's docstring), step by step on hand-made
spans: chunks [0, 100) graded 3 holding the evidence [40, 60), [100, 200) graded 1, [200, 300) graded 0, and text
from 300 on that no label covers."""

from __future__ import annotations

import pytest

from assay.corpus.align import Span
from assay.pipelines.evaluate.runs.carry import decide


def span(start: int, end: int, doc: str = "d") -> Span:
    return Span(doc, start, end, "exact", 1.0)


GRADED = [(span(0, 100), 3), (span(100, 200), 1), (span(200, 300), 0)]
EVIDENCE = [span(40, 60)]


@pytest.mark.parametrize(
    ("start", "end", "grade", "step"),
    [
        (2, 98, 3, "same"),  # IoU 0.96 with the first chunk
        (30, 150, 3, "evidence"),  # holds the evidence: the grade of the chunk holding it
        (220, 280, 0, "irrelevant"),  # inside the 0-graded chunk
        (100, 300, 1, "contains"),  # all labelled; holds the whole chunk with the top grade (1)
        (0, 150, 3, "evidence"),
        (60, 95, None, "fragment"),  # inside the 3-graded chunk, without the evidence: may have lost the answer
        (250, 400, None, "unlabelled_text"),  # half of it is text no label covers
        (10, 45, None, "fragment"),  # cuts the evidence
    ],
)
def test_each_step_of_the_rule(start: int, end: int, grade: int | None, step: str) -> None:
    assert decide(span(start, end), GRADED, EVIDENCE) == (grade, step)


def test_evidence_held_by_no_graded_chunk_is_undecided() -> None:
    assert decide(span(300, 400), GRADED, [span(320, 340)]) == (None, "evidence_ungraded")


def test_other_documents_do_not_count() -> None:
    assert decide(span(0, 100, doc="e"), GRADED, EVIDENCE) == (None, "unlabelled_text")


def test_evidence_inside_takes_the_best_whole_chunk_too() -> None:
    """The evidence is held by a chunk graded 1, and the passage also holds a whole chunk graded 3."""
    graded = [(span(0, 100), 1), (span(100, 200), 3)]
    assert decide(span(20, 200), graded, [span(40, 60)]) == (3, "evidence")


def test_a_passage_equal_to_two_near_identical_chunks_takes_the_higher_grade() -> None:
    """Two chunks of nearly the same text (IoU 0.98 with each other), graded 1 and 3: a passage equal to both is the
    same text as each, and takes the higher grade, in whichever order the labels come (issue 33: with ``min`` it
    took 1)."""
    near = [(span(0, 100), 1), (span(1, 100), 3)]
    assert decide(span(0, 100), near, []) == (3, "same")
    assert decide(span(0, 100), list(reversed(near)), []) == (3, "same")


def test_a_judged_passage_in_the_pool_grades_the_text_it_covers() -> None:
    """The chunk [0, 100) is graded 3, and a judged passage [0, 40) of it graded 0 joined the pool: the shorter span
    says more about its characters, so a fragment inside the passage is irrelevant; without the passage it is a
    fragment of a relevant chunk (undecided)."""
    pool = [(span(0, 100), 3), (span(0, 40), 0)]
    assert decide(span(5, 33), pool, []) == (0, "irrelevant")
    assert decide(span(5, 33), pool[:1], []) == (None, "fragment")
    # a span holding the judged passage and the relevant rest: graded 3 by the chunk's other characters, and it
    # contains no whole span graded 3, so it stays undecided
    assert decide(span(0, 80), pool, []) == (None, "fragment")
