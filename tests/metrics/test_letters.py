"""Compact letter display: hand cases, bad input, and its two defining properties over random significance matrices.

The property test reads nothing from the algorithm: it draws a matrix, then checks the letters against the matrix
alone (a significant pair shares no letter, any other pair shares one, every run has one, the same call gives the
same letters).
"""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from assay.metrics import MetricError
from assay.metrics.letters import compact_letters

MATRICES = 600


def _random_matrix(rng: np.random.Generator) -> tuple[list[str], list[tuple[str, str]]]:
    """2..9 runs; each pair significant with a probability drawn per matrix (sparse to dense), in a shuffled order,
    some pairs given twice or reversed."""
    runs = [f"r{i}" for i in range(int(rng.integers(2, 10)))]
    share = float(rng.random())
    pairs = [(a, b) for a, b in itertools.combinations(runs, 2) if rng.random() < share]
    pairs = [pairs[i] for i in rng.permutation(len(pairs))]
    return runs, pairs + [(b, a) for a, b in pairs[: int(rng.integers(0, len(pairs) + 1))]]


def test_random_matrices_letters_separate_exactly_the_significant_pairs() -> None:
    rng = np.random.default_rng(20040301)
    seen = set()
    for _ in range(MATRICES):
        runs, pairs = _random_matrix(rng)
        letters = compact_letters(runs, pairs)
        different = {frozenset(pair) for pair in pairs}
        assert list(letters) == runs and all(letters[run] for run in runs)  # every run has a letter
        for a, b in itertools.combinations(runs, 2):
            shared = set(letters[a]) & set(letters[b])
            assert bool(shared) == (frozenset((a, b)) not in different), (runs, pairs, letters)
        assert compact_letters(runs, list(reversed(pairs))) == letters  # the same matrix, the same letters
        assert letters[runs[0]].startswith("a")  # the first (best) run holds the first letter
        seen.add((len(runs), len(different) == 0, len(different) == len(runs) * (len(runs) - 1) // 2))
    assert {n for n, *_ in seen} == set(range(2, 10))  # every size was drawn
    assert any(none for _, none, _ in seen) and any(every for *_, every in seen)  # and both extremes


def test_the_chain_of_ties_with_significant_ends_is_two_groups() -> None:
    """The issue's chain: every neighbour a tie, the ends significantly different."""
    runs = ["golden", "halves", "w1000", "w600", "md", "w300", "shuffled"]
    letters = compact_letters(runs, [("golden", "shuffled")])
    assert letters["golden"] == "a" and letters["shuffled"] == "b"
    assert all(letters[run] == "ab" for run in runs[1:-1])


def test_two_separated_blocks_and_a_bridge() -> None:
    """A, B tie; C, D tie; A and B each differ from C and D; E differs from nobody, so it holds both letters."""
    letters = compact_letters(list("ABCDE"), [("A", "C"), ("A", "D"), ("B", "C"), ("B", "D")])
    assert letters == {"A": "a", "B": "a", "C": "b", "D": "b", "E": "ab"}


def test_all_ties_share_one_letter_and_all_different_get_their_own() -> None:
    runs = list("ABCDE")
    assert compact_letters(runs, []) == dict.fromkeys(runs, "a")
    assert compact_letters(runs, list(itertools.combinations(runs, 2))) == dict(zip(runs, "abcde", strict=True))
    assert compact_letters([], []) == {} and compact_letters(["only"], []) == {"only": "a"}


@pytest.mark.parametrize(
    ("runs", "pairs", "message"),
    [
        (["a", "b", "a"], [], "run 'a' is listed twice"),
        (["a", "b"], [("a", "c")], "no run 'c'; runs: a, b"),
        (["a", "b"], [("b", "b")], "never compared with itself"),
    ],
)
def test_bad_input_is_refused_with_the_item(runs: list[str], pairs: list[tuple[str, str]], message: str) -> None:
    with pytest.raises(MetricError, match=message):
        compact_letters(runs, pairs)


def test_a_matrix_needing_more_groups_than_the_bound_is_refused_not_swept() -> None:
    from assay.metrics.letters import MAX_COLUMNS

    runs = [f"r{i}" for i in range(20)]
    pairs = [(runs[2 * k], runs[2 * k + 1]) for k in range(10)]  # 2^10 maximal groups
    assert MAX_COLUMNS < 2**10
    with pytest.raises(MetricError, match="cross too often"):
        compact_letters(runs, pairs)
    assert compact_letters(runs[:12], pairs[:6])  # 2^6 = 64 groups: lettered
