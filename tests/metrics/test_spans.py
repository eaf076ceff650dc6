"""Span metrics against sets of characters (an independent computation) and hand-worked edge cases."""

from __future__ import annotations

import math
import random

import pytest

from assay.metrics.spans import overlap_length, span_scores, union_length


def characters(ranges: list[tuple[str, int, int]]) -> set[tuple[str, int]]:
    return {(doc, i) for doc, start, end in ranges for i in range(start, end)}


def random_ranges(rng: random.Random, n: int) -> list[tuple[str, int, int]]:
    out = []
    for _ in range(n):
        start = rng.randrange(0, 200)
        out.append((rng.choice("ab"), start, start + rng.randrange(0, 60)))
    return out


def test_against_character_sets() -> None:
    rng = random.Random(7)
    for _ in range(500):
        retrieved, evidence = random_ranges(rng, rng.randrange(0, 6)), random_ranges(rng, rng.randrange(1, 4))
        outside = rng.choice([0, 0, 25])
        r, e = characters(retrieved), characters(evidence)
        scores = span_scores(retrieved, evidence, outside)
        assert union_length(retrieved) == len(r)
        assert overlap_length(retrieved, evidence) == len(r & e)
        if not e:
            assert math.isnan(scores.recall) and math.isnan(scores.iou)
            continue
        assert scores.recall == pytest.approx(len(r & e) / len(e))
        assert scores.precision == pytest.approx(len(r & e) / (len(r) + outside) if r or outside else 0.0)
        assert scores.iou == pytest.approx(len(r & e) / (len(r | e) + outside))


def test_hand_cases() -> None:
    # evidence 10..20 in doc a; retrieved 0..15 and 12..30 (overlapping: counted once) -> R = 0..30
    scores = span_scores([("a", 0, 15), ("a", 12, 30)], [("a", 10, 20)])
    assert scores == pytest.approx((1.0, 10 / 30, 10 / 30))
    # the same offsets in another document do not count
    assert span_scores([("b", 10, 20)], [("a", 10, 20)]) == pytest.approx((0.0, 0.0, 0.0))
    # nothing retrieved: recall 0, precision 0 (as P@k of an empty list), IoU 0
    assert span_scores([], [("a", 0, 5)]) == pytest.approx((0.0, 0.0, 0.0))
    with pytest.raises(ValueError, match="outside"):
        span_scores([], [("a", 0, 5)], outside=-1)


def test_no_evidence_gives_nan_for_all_three() -> None:
    scores = span_scores([("a", 0, 10)], [("a", 5, 5)])  # an empty evidence range is no evidence
    assert all(isinstance(value, float) and math.isnan(value) for value in scores)
