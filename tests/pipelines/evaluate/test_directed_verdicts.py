"""The verdicts of the diagnosis family read in each metric's direction: less wins on a lower-is-better measure,
nobody wins on one with no better side (the searches, tool calls and tokens a system spent, self-knowledge), and a
higher-is-better measure or a difference that is not significant keeps the sentence it was given."""

from __future__ import annotations

import pytest

from assay.pipelines.evaluate.judging.diagnosis import directed
from assay.results import Comparison


def _c(metric: str, delta: float, significant: bool = True) -> Comparison:
    return Comparison(a="one", b="two", metric=metric, n=20, delta=delta, low=delta - 0.1, high=delta + 0.1,
                      p_value=0.001, p_adjusted=0.002, significant=significant, verdict="as given")  # fmt: skip


@pytest.mark.parametrize(
    ("metric", "delta", "said"),
    [
        (
            "evidence_dropped",
            0.2,
            "one beats two on evidence_dropped (lower is better): two - one = +0.200 "
            "[0.100, 0.300], p = 0.002 adjusted: a real difference.",
        ),
        (
            "looped",
            -0.3,
            "two beats one on looped (lower is better): two - one = -0.300 [-0.400, -0.200], p = 0.002 "
            "adjusted: a real difference.",
        ),
        (
            "searches",
            1.0,
            "two has more searches than one (neither side is better): two - one = +1.000 [0.900, "
            "1.100], p = 0.002 adjusted: a real difference.",
        ),
        (
            "step_tokens",
            -50.0,
            "one has more step_tokens than two (neither side is better): two - one = -50.000 "
            "[-50.100, -49.900], p = 0.002 adjusted: a real difference.",
        ),
        (
            "self_knowledge",
            0.2,
            "two has more self_knowledge than one (neither side is better): two - one = +0.200 "
            "[0.100, 0.300], p = 0.002 adjusted: a real difference.",
        ),
        ("hop_coverage", 0.2, "as given"),
    ],
)
def test_each_direction_is_read(metric: str, delta: float, said: str) -> None:
    assert directed([_c(metric, delta)])[0].verdict == said


def test_a_difference_that_is_not_significant_keeps_its_sentence() -> None:
    assert [c.verdict for c in directed([_c("searches", 1.0, False), _c("looped", 0.5, False)])] == ["as given"] * 2
