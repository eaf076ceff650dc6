"""Budget measures (assay.metrics.budget) against a reference written here on character lists, hand-computed cases,
and hypothesis-generated re-chunkings of the same text, which must leave every measure unchanged."""

from __future__ import annotations

import itertools
import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from assay.metrics.budget import Fill, budget_scores, fill, stream

# Two documents: "a" of 100 characters, "b" of 60.
GRADES = {"a": [(10, 30, 3), (30, 50, 0), (70, 80, 1)], "b": [(0, 20, 2)]}


def reference(passages, grades, budget, threshold=1):
    """Every character a ranked document: expand the stream into (doc, offset) characters, drop repeats, cut."""
    grade_of = {(doc, i): g for doc, segs in grades.items() for s, e, g in segs for i in range(s, e)}
    chars, seen = [], set()
    for p in passages:
        if isinstance(p, int):
            chars += [None] * p
            continue
        doc, s, e = p
        for i in range(s, e):
            if (doc, i) not in seen:
                seen.add((doc, i))
                chars.append((doc, i))
    chars = chars[:budget]
    gains = [0 if c is None else grade_of.get(c, 0) for c in chars]
    rel = [g >= threshold for g in gains]
    n = sum(g >= threshold for g in grade_of.values())
    found = sum(rel)
    ap, hits = 0.0, 0
    for i, r in enumerate(rel, start=1):
        if r:
            hits += 1
            ap += hits / i
    dcg = sum(g / math.log2(i + 1) for i, g in enumerate(gains, start=1))
    ideal_gains = sorted(grade_of.values(), reverse=True)[:budget]
    idcg = sum(g / math.log2(i + 1) for i, g in enumerate(ideal_gains, start=1))
    ndcg = dcg / idcg if idcg > 0 else math.nan
    if n == 0:
        return (math.nan, 0.0, math.nan, ndcg)
    return (found / n, found / budget, ap / n, ndcg)


def close(a, b):
    return all((math.isnan(x) and math.isnan(y)) or abs(x - y) < 1e-9 for x, y in zip(a, b, strict=True))


def test_hand_computed_case():
    # stream: a[0:20] (10 unjudged, then 10 of grade 3), 5 characters found nowhere, b[10:30] (10 of grade 2, 10
    # unjudged); budget 40 cuts b at 35 + 5 = its first 5... 20 + 5 + 15 = 40: b[10:25]
    got = budget_scores([("a", 0, 20), 5, ("b", 10, 30)], GRADES, 40)
    n = 20 + 10 + 20  # a[10:30] grade 3, a[70:80] grade 1, b[0:20] grade 2
    found = 10 + 10  # a[10:20] and b[10:20]
    assert got.recall == pytest.approx(found / n)
    assert got.precision == pytest.approx(found / 40)
    # AP: relevant characters at positions 11..20 (hits 1..10) and 26..35 (hits 11..20)
    ap = sum(h / p for h, p in zip(range(1, 11), range(11, 21), strict=True))
    ap += sum(h / p for h, p in zip(range(11, 21), range(26, 36), strict=True))
    assert got.map == pytest.approx(ap / n)
    dcg = sum(3 / math.log2(i + 1) for i in range(11, 21)) + sum(2 / math.log2(i + 1) for i in range(26, 36))
    ideal = [3] * 20 + [2] * 20
    idcg = sum(g / math.log2(i + 1) for i, g in enumerate(ideal, start=1))
    assert got.ndcg == pytest.approx(dcg / idcg)
    assert (got.found, got.shown, got.n_relevant) == (20, 40, 50)


def test_repeated_text_counts_once_and_the_budget_is_the_denominator():
    once = budget_scores([("a", 10, 30)], GRADES, 100)
    twice = budget_scores([("a", 10, 30), ("a", 15, 25), ("a", 10, 30)], GRADES, 100)
    assert once == twice
    assert once.precision == pytest.approx(20 / 100)  # less text than the budget: still divided by B


def test_nothing_relevant_is_nan_not_zero():
    got = budget_scores([("a", 0, 50)], {"a": [(0, 50, 0)]}, 100)
    assert math.isnan(got.recall) and math.isnan(got.map) and math.isnan(got.ndcg)
    assert got.precision == 0.0


def test_an_empty_stream_scores_zero():
    got = budget_scores([], GRADES, 100)
    assert (got.recall, got.precision, got.map, got.ndcg) == (0.0, 0.0, 0.0, 0.0)


def test_a_budget_below_one_character_is_refused():
    with pytest.raises(ValueError, match="at least 1"):
        stream([("a", 0, 5)], 0)


passage = st.one_of(
    st.tuples(st.sampled_from(["a", "b"]), st.integers(0, 59), st.integers(1, 40)).map(
        lambda t: (t[0], t[1], min(t[1] + t[2], 100 if t[0] == "a" else 60))
    ),
    st.integers(1, 15),
)


@settings(max_examples=300, deadline=None)
@given(st.lists(passage, max_size=12), st.integers(1, 200), st.integers(1, 3))
def test_matches_the_character_reference(passages, budget, threshold):
    got = budget_scores(passages, GRADES, budget, threshold)
    assert close(got[:4], reference(passages, GRADES, budget, threshold))


def recut(passages, cuts):
    """The same text cut differently: each located passage split at the given fractions, pieces kept in order."""
    out = []
    for p in passages:
        if isinstance(p, int):
            out.append(p)
            continue
        doc, s, e = p
        points = sorted({s + int((e - s) * c) for c in cuts} | {s, e})
        out += [(doc, a, b) for a, b in itertools.pairwise(points) if b > a]
    return out


@settings(max_examples=300, deadline=None)
@given(
    st.lists(passage, max_size=10),
    st.lists(st.floats(0.05, 0.95), max_size=4),
    st.integers(1, 200),
)
def test_the_same_text_cut_differently_scores_the_same(passages, cuts, budget):
    assert close(budget_scores(passages, GRADES, budget), budget_scores(recut(passages, cuts), GRADES, budget))


@settings(max_examples=200, deadline=None)
@given(st.lists(passage, max_size=10), st.integers(1, 200))
def test_overlapping_windows_of_the_same_text_score_the_same(passages, budget):
    # each passage shown as two windows overlapping by a third: the new characters are the same, in the same order
    windows = []
    for p in passages:
        if isinstance(p, int):
            windows.append(p)
            continue
        doc, s, e = p
        third = (e - s) // 3
        windows += [(doc, s, s + 2 * third or e), (doc, s + third, e)]
    assert close(budget_scores(passages, GRADES, budget), budget_scores(windows, GRADES, budget))


def test_overlapping_labels_resolve_to_the_highest_grade_so_no_label_erases_relevant_text():
    from assay.metrics.budget import resolve

    labels = [("a", 0, 100, 2), ("a", 20, 40, 0), ("a", 30, 50, 1), ("a", 35, 45, 3), ("b", 5, 9, 1), ("b", 7, 8, 0)]
    # a[20:40] judged 0 on its own cannot lower a[0:100]'s 2; a[35:45]'s quote at 3 raises those characters only
    assert resolve(labels) == {
        "a": [(0, 35, 2), (35, 45, 3), (45, 100, 2)],
        "b": [(5, 9, 1)],
    }
    assert resolve(list(reversed(labels))) == resolve(labels)  # the order labels come in does not matter


def test_fill_hand_computed():
    # a[0:20]: 10 unjudged then 10 graded 3; 5 characters found nowhere; a[25:45]: 5 graded 3, 15 graded 0 (judged)
    assert fill([("a", 0, 20), 5, ("a", 25, 45)], GRADES, 100) == Fill(shown=45, judged=10 + 20, used=0)
    # budget 30: a[0:20], the 5 found nowhere, then a[25:30] fills it at the third passage
    assert fill([("a", 0, 20), 5, ("a", 25, 45), ("b", 0, 10)], GRADES, 30) == Fill(shown=30, judged=15, used=3)
    # repeated text fills nothing: the second passage adds no character, the third fills the budget
    assert fill([("b", 0, 10), ("b", 0, 10), ("b", 10, 40)], GRADES, 20).used == 3
    assert fill([], GRADES, 10) == Fill(0, 0, 0)


def reference_fill(passages, grades, budget):
    """Characters of the stream within the budget, those with any grade, and the passage that reached the budget."""
    graded = {(doc, i) for doc, segs in grades.items() for s, e, _ in segs for i in range(s, e)}
    chars, seen, used = [], set(), 0
    for index, p in enumerate(passages, start=1):
        new = [None] * p if isinstance(p, int) else [(p[0], i) for i in range(p[1], p[2]) if (p[0], i) not in seen]
        seen.update(c for c in new if c is not None)
        chars += new
        if len(chars) >= budget:
            used = index
            break
    chars = chars[:budget]
    return Fill(len(chars), sum(c in graded for c in chars), used)


@settings(max_examples=300, deadline=None)
@given(st.lists(passage, max_size=12), st.integers(1, 200))
def test_fill_matches_the_character_reference(passages, budget):
    assert fill(passages, GRADES, budget) == reference_fill(passages, GRADES, budget)


def test_a_budget_beyond_all_the_text_costs_what_the_text_costs_not_the_budget():
    """A budget of 10^15 characters reads no more positions than the text retrieved and graded (it once asked for
    terabytes): recall, MAP and nDCG equal the budget that holds everything; precision still divides by B."""
    passages = [("a", 0, 20), 5, ("b", 10, 30)]
    everything = budget_scores(passages, GRADES, 200)
    huge = budget_scores(passages, GRADES, 10**15)  # prefix sums over B positions would not fit in memory
    assert (huge.recall, huge.map, huge.ndcg) == (everything.recall, everything.map, everything.ndcg)
    assert huge.precision == pytest.approx(everything.found / 10**15)
    assert fill(passages, GRADES, 10**15).shown == everything.shown


# Edges the mutation habit (scripts/mutation.sh) found untested.


def test_a_document_with_no_graded_text_is_unjudged_text():
    """A passage of a document ``grades`` does not name (nothing of it was labelled) counts as text that is not
    relevant, as text found in no document does."""
    got = budget_scores([("z", 0, 10), ("a", 10, 20)], GRADES, 20)
    assert got == budget_scores([10, ("a", 10, 20)], GRADES, 20)
    assert (got.found, got.shown) == (10, 20)
    assert fill([("z", 0, 10), ("a", 10, 20)], GRADES, 20) == Fill(shown=20, judged=10, used=2)


def test_nothing_relevant_counts_nothing_found_and_what_was_shown():
    got = budget_scores([("a", 0, 50)], {"a": [(0, 50, 0)]}, 30)
    assert (got.found, got.shown, got.n_relevant) == (0, 30, 0)


def test_a_single_relevant_character_of_grade_1_scores_ndcg_1():
    """The ideal DCG is then exactly 1: still a score, not "nothing to find"."""
    got = budget_scores([("a", 70, 71)], {"a": [(70, 80, 1)]}, 1)
    assert got.ndcg == 1.0 and got.recall == pytest.approx(1 / 10)


def test_the_stream_has_no_empty_pieces():
    assert stream([0, ("a", 0, 5), 0], 10) == [("a", 0, 5)]
    # the budget runs out inside a passage that repeats text: its later, unseen part adds nothing, not an empty piece
    assert stream([("a", 10, 20), ("a", 0, 30)], 20) == [("a", 10, 20), ("a", 0, 10)]


def test_the_prefix_sums_cover_every_position_from_the_first_call(monkeypatch):
    """The sums are grown on demand; a fresh table answers the first call's positions (here the last character of
    the stream is relevant, so the last position is read)."""
    from assay.metrics import budget

    monkeypatch.setattr(budget, "_SUMS", budget._Sums())
    got = budget_scores([("a", 70, 80)], {"a": [(70, 80, 1)]}, 10)
    assert (got.recall, got.map, got.ndcg) == (1.0, 1.0, pytest.approx(1.0))
    sums = budget._Sums()
    sums.ensure(1)
    assert list(sums.harmonic[:2]) == [0.0, 1.0] and list(sums.discount[:2]) == [0.0, 1.0]
    sums.ensure(10)
    assert len(sums.harmonic) > 10 and len(sums.discount) > 10
    assert sums.harmonic[10] == pytest.approx(sum(1 / i for i in range(1, 11)))
    assert sums.discount[10] == pytest.approx(sum(1 / math.log2(i + 1) for i in range(1, 11)))


def test_resolve_keeps_disjoint_labels_and_splits_none_at_shared_edges():
    from assay.metrics.budget import resolve

    assert resolve([("a", 0, 10, 1), ("a", 20, 30, 1), ("a", 25, 40, 2)]) == {
        "a": [(0, 10, 1), (20, 25, 1), (25, 40, 2)]
    }
    assert resolve([("a", 0, 10, 1), ("a", 0, 5, 2)]) == {"a": [(0, 5, 2), (5, 10, 1)]}
    assert resolve([("a", 0, 10, 1), ("a", 5, 10, 2)]) == {"a": [(0, 5, 1), (5, 10, 2)]}


def test_resolve_skips_empty_labels_and_reads_the_ones_after():
    from assay.metrics.budget import resolve

    assert resolve([("a", 5, 5, 1), ("a", 0, 10, 2), ("a", 8, 3, 3)]) == {"a": [(0, 10, 2)]}
    assert resolve([("a", 0, 10, 2), ("a", 5, 5, 3)]) == {"a": [(0, 10, 2)]}


def test_resolve_cuts_equal_grades_the_same_whatever_their_order():
    from assay.metrics.budget import resolve

    labels = [("a", 0, 10, 2), ("a", 0, 5, 2), ("b", 0, 4, 1), ("b", 2, 4, 1)]
    for order in itertools.permutations(labels):
        assert resolve(list(order)) == resolve(labels)
