"""Pins of the trajectory measures found by the mutation habit (scripts/mutation.sh): cases the hand-computed tests
of tests/metrics/test_trajectory.py left open."""

from __future__ import annotations

import math

from assay.metrics.trajectory import trajectory


def test_no_search_over_a_question_without_relevant_text_is_nan_not_zero() -> None:
    # N = 0 (the only text is graded 0): with no search at all the recall is undefined, as with one search
    got = trajectory([], [], {"a": [(0, 5, 0)]}, 1, [[("a", 0, 5)]])
    assert got.n_relevant == 0
    assert math.isnan(got.recall) and math.isnan(got.dropped)
    assert got.recall_after == () and got.added == () and got.hop_found == (None,)
