"""The rule that carries golden labels over to passages by span (carry.py's docstring), step by step on hand-made
spans: chunks [0, 100) graded 3 holding the evidence [40, 60), [100, 200) graded 1, [200, 300) graded 0, and text
from 300 on that no label covers."""

from __future__ import annotations

import pytest

from assay.corpus.align import Span
from assay.metrics.budget import resolve
from assay.pipelines.evaluate.runs.carry import decide
from assay.pipelines.evaluate.runs.painting import LabelSpan, painted_segments


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


def test_a_passage_judged_0_inside_a_relevant_chunk_erases_none_of_its_relevant_text() -> None:
    """The chunk [0, 100) is graded 3, and a passage [0, 40) of it judged 0 on its own joined the pool (issue 43: the
    shortest span used to decide, so the piece's 0 overrode its chunk's 3 for every run). Its verdict is about the
    piece's usefulness, not about its characters: they stay 3, and a fragment inside it stays undecided."""
    chunk, piece = LabelSpan(span(0, 100), 3), LabelSpan(span(0, 40), 0)
    painted = painted_segments([chunk], [piece])
    assert resolve(painted) == {"d": [(0, 100, 3)]}
    pool = [(span(0, 100), 3), (span(0, 40), 0)]
    assert decide(span(5, 33), pool, [], painted) == (None, "fragment")
    assert decide(span(0, 40), pool, [], painted) == (0, "same")  # that very piece: its own judgement


def test_quotes_say_which_characters_are_relevant() -> None:
    """The chunk [0, 100) graded 3 quotes [40, 60): only the quote is relevant; a piece without it is irrelevant by
    rule, a piece holding it whole takes the quote's grade, a piece cutting it is a fragment."""
    chunk = LabelSpan(span(0, 100), 3, (span(40, 60),))
    painted = painted_segments([chunk], [])
    assert resolve(painted) == {"d": [(0, 40, 0), (40, 60, 3), (60, 100, 0)]}
    pool = [(span(0, 100), 3), (span(40, 60), 3)]
    assert decide(span(5, 33), pool, [], painted) == (0, "irrelevant")
    assert decide(span(30, 75), pool, [], painted) == (3, "contains")
    assert decide(span(50, 90), pool, [], painted) == (None, "fragment")


def test_a_passage_adds_grades_only_where_no_chunk_label_covers() -> None:
    """A judged passage [80, 160) graded 2 quoting [120, 140) reaches past the chunk [0, 100) graded 0: it paints
    only the text beyond the chunk, and never lifts the chunk's own characters."""
    chunk = LabelSpan(span(0, 100), 0)
    passage = LabelSpan(span(80, 160), 2, (span(90, 95), span(120, 140)))
    assert resolve(painted_segments([chunk], [passage])) == {"d": [(0, 100, 0), (100, 120, 0), (120, 140, 2),
                                                                   (140, 160, 0)]}  # fmt: skip


@pytest.mark.parametrize(
    ("start", "end", "grade", "step"),
    [
        (0, 90, 3, "same"),  # IoU exactly 0.9 with the first chunk: the same text
        (102, 198, 1, "same"),  # IoU 0.96 with a chunk that does not start at 0
        (291, 301, 0, "irrelevant"),  # exactly 90% of it labelled (9 of 10 characters), all 0
        (250, 251, 0, "irrelevant"),  # one character inside the 0-graded chunk
        (50, 50, None, "unlabelled_text"),  # an empty span grades nothing
    ],
)
def test_the_rule_at_its_bounds(start: int, end: int, grade: int | None, step: str) -> None:
    assert decide(span(start, end), GRADED, EVIDENCE) == (grade, step)


def test_a_labelled_span_that_does_not_touch_the_passage_is_not_the_same_text() -> None:
    """One-character spans side by side, or at the same offsets of another document, share no character."""
    assert decide(span(5, 6), [(span(0, 1), 3)], []) == (None, "unlabelled_text")
    assert decide(span(0, 1), [(span(0, 1, doc="e"), 3)], []) == (None, "unlabelled_text")
