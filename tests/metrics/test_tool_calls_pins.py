"""Pins of the tool-call measures (the mutation habit): F1 below 1 on both sides, arguments nested in objects and
lists, key order, Unicode case, numbers as argument values."""

from __future__ import annotations

import pytest

from assay.metrics.tool_calls import same_terms, tool_scores


def test_f1_when_precision_and_recall_add_up_to_less_than_one() -> None:
    reference = [("a", {}), ("b", {})]
    system = [("a", {}), ("c", {}), ("c", {}), ("d", {})]
    got = tool_scores(reference, system)
    assert (got.name_precision, got.name_recall) == (0.25, 0.5)
    assert got.name_f1 == pytest.approx(2 * 0.25 * 0.5 / 0.75)


@pytest.mark.parametrize(
    ("reference", "made", "exact"),
    [
        ({"where": {"city": "Oslo", "near": ["A", "B"]}}, {"where": {"city": "oslo", "near": ["a", "b"]}}, 1.0),
        ({"where": {"city": "Oslo"}}, {"where": {"town": "Oslo"}}, 0.0),  # a nested key differs
        ({"near": ["A", "B"]}, {"near": ["A", "C"]}, 0.0),  # a list item differs
        ({"a": 1, "b": 2}, {"b": 2, "a": 1}, 1.0),  # key order is not a difference
        ({"flag": True}, {"flag": 1}, 0.0),  # a boolean is not a number
        ({"flag": None}, {"flag": "none"}, 0.0),  # null is not the word
        ({"street": "Straße"}, {"street": "STRASSE"}, 1.0),  # Unicode case folding
    ],
)
def test_exact_arguments_fold_what_is_written_differently_and_nothing_else(
    reference: dict[str, object], made: dict[str, object], exact: float
) -> None:
    assert tool_scores([("t", reference)], [("t", made)]).args_exact == exact


def test_same_terms_reads_numbers_given_as_numbers_and_objects() -> None:
    assert same_terms(("c", {"n": 12}), ("c", {"n": 12.0}))
    assert not same_terms(("c", {"n": 12}), ("c", {"n": 13}))
    assert same_terms(("c", {"q": {"x": "Straße"}}), ("c", {"q": {"x": "STRASSE"}}))


def test_same_terms_reads_a_string_as_written_not_as_its_json() -> None:
    # a line break is a space between words, not the letter n of an escape
    assert same_terms(("search", {"q": "tent\nweight"}), ("search", {"q": "weight tent"}))
