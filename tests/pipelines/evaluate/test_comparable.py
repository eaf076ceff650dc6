"""Which runs cut their text alike (scoring/comparable.py), on hand-made spans."""

from __future__ import annotations

from assay.pipelines.evaluate.scoring.comparable import _crossing


def test_the_same_spans_or_disjoint_ones_cut_alike() -> None:
    assert not _crossing({(0, 10), (10, 20)}, {(0, 10), (30, 40)})


def test_halves_of_a_chunk_cut_differently() -> None:
    assert _crossing({(0, 100)}, {(0, 50), (50, 100)})


def test_windows_of_one_overlapping_chunking_cut_alike_where_they_share_or_do_not_touch() -> None:
    """Windows [0, 20), [10, 30), [20, 40): one run has the first two, the other the last two; a window only one run
    has that partly overlaps one only the other has reads as cut differently (fewer verdicts, never more)."""
    assert not _crossing({(0, 20), (10, 30)}, {(10, 30), (20, 40)})
    assert _crossing({(0, 20)}, {(10, 30)})


def test_a_span_the_other_run_lacks_inside_a_span_only_it_has() -> None:
    assert _crossing({(0, 100), (200, 210)}, {(200, 210), (20, 30)})
