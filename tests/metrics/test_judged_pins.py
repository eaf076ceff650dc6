"""Pins of the qrels/run arrays and their join found by the mutation habit, each on a hand-made case."""

from __future__ import annotations

import numpy as np
import pytest

from assay.metrics import MetricError
from assay.metrics.judged import NOT_RETRIEVED, Qrels, Run, docid_hashes, find_duplicate, join

BARE = r"^run has neither docids nor a source mapping; build it with Run\.from_dict/from_arrays$"


def bare_run() -> Run:
    """A run built by hand with scores only: nothing to read a docid from."""
    return Run(["q"], np.array([1.0, 0.5]), np.array([0, 2], dtype=np.int64))


def test_docids_of_entries_come_from_the_arrays_or_the_mappings() -> None:
    arrays = Run.from_arrays(["q", "q", "r"], ["b", "a", "c"], [1.0, 2.0, 0.5])
    assert arrays.docids_at(np.array([1, 0, 2])) == ["a", "b", "c"]
    mappings = Run.from_dict({"q": {"x": 1.0, "y": 2.0}, "r": {"z": 0.5}})
    assert mappings.docids_at(np.array([2, 0, 1])) == ["z", "x", "y"]
    with pytest.raises(MetricError, match=BARE):
        bare_run().docids_at(np.array([0]))
    with pytest.raises(MetricError, match=BARE):
        bare_run().tie_docids(np.array([0]), np.array([0]))


def test_a_run_without_docids_cannot_be_joined_nor_checked_for_repeats() -> None:
    with pytest.raises(MetricError, match=BARE):
        join(Qrels.from_dict({"q": {"a": 1}}), bare_run())
    assert bare_run().first_duplicate() is None
    # docids without their hashes (not built by a constructor): no repeat check, and no lookup
    half = Run(["q"], np.array([1.0]), np.array([0, 1], dtype=np.int64), docids=np.array([b"a"]))
    assert half.first_duplicate() is None
    with pytest.raises(MetricError, match=BARE):
        join(Qrels.from_dict({"q": {"a": 1}}), half)


def test_qrels_from_parallel_arrays_group_by_query_and_refuse_a_repeated_pair() -> None:
    qrels = Qrels.from_arrays(["q2", "q1", "q2"], ["a", "b", "c"], [1, 2, 0])
    assert qrels.to_dict() == {"q1": {"b": 2}, "q2": {"a": 1, "c": 0}}
    assert qrels.query_ids == ["q1", "q2"] and qrels.grades.dtype == np.int64
    with pytest.raises(MetricError, match="qrels judge document 'a' twice for query 'q2'; keep one judgment per pair"):
        Qrels.from_arrays(["q2", "q1", "q2"], ["a", "b", "a"], [1, 2, 0])
    # the same docid under two queries is two judgments
    assert Qrels.from_arrays(["q1", "q2"], ["a", "a"], [1, 3]).to_dict() == {"q1": {"a": 1}, "q2": {"a": 3}}


def test_qrels_docids_as_a_list_and_as_an_array() -> None:
    from_files = Qrels(["q"], np.array([0, 2], dtype=np.int64), np.array(["a", "b"]), np.array([1, 0]))
    listed = from_files.doc_list()
    assert type(listed) is list and listed == ["a", "b"]
    assert Qrels.from_dict({"q": {"a": 2}}).grades.dtype == np.int64


def test_duplicates_in_qrels_are_found_among_colliding_keys() -> None:
    # Query 0: with keys mixed by xor the two 'a' sort next to each other; the pair reported is the two entries.
    docids = np.array([b"a", b"b", b"c", b"d", b"e", b"a"])
    qidx = np.zeros(6, dtype=np.int64)
    assert find_duplicate(qidx, docid_hashes(docids), docids) == (0, 5)
    # The same docid under different queries is no repeat, and neither is a hash collision of two docids.
    other = np.array([0, 1, 0, 0, 0, 0], dtype=np.int64)
    assert find_duplicate(other, docid_hashes(docids), np.array([b"a", b"a", b"c", b"d", b"e", b"f"])) is None
    same_hash = np.zeros(3, dtype=np.uint64)
    assert find_duplicate(np.zeros(3, dtype=np.int64), same_hash, np.array([b"x", b"y", b"z"])) is None
    assert find_duplicate(np.array([0, 1, 1]), same_hash, np.array([b"x", b"x", b"y"])) is None
    assert find_duplicate(np.array([0, 1, 1]), np.zeros(3, np.uint64), np.array([b"x", b"y", b"y"])) == (1, 2)


def test_duplicates_found_wherever_they_sit_in_query_order() -> None:
    for n in (3, 9, 40):
        docids = np.array([f"d{i}".encode() for i in range(n)] + [b"d1"])
        qidx = np.zeros(n + 1, dtype=np.int64)
        assert find_duplicate(qidx, docid_hashes(docids), docids) == (1, n)


def test_join_keeps_missing_queries_empty_only_when_complete() -> None:
    qrels = Qrels.from_dict({"q1": {"a": 2, "b": 0, "c": -1}, "q2": {"x": 1}})
    run = Run.from_dict({"q1": {"a": 1.0, "b": 0.5, "z": 0.2}, "q3": {"y": 1.0}})
    partial = join(qrels, run)
    assert partial.query_ids == ["q1"] and partial.n_missing == 1 and partial.n_ret.tolist() == [3]
    complete = join(qrels, run, complete=True)
    assert complete.query_ids == ["q1", "q2"] and complete.n_ret.tolist() == [3, 0]
    assert complete.rank.tolist() == [0, 1, NOT_RETRIEVED, NOT_RETRIEVED] and complete.q.tolist() == [0, 0, 0, 1]
    positive = join(qrels, run, complete=True, positive_only=True)
    assert positive.grade.tolist() == [2, 1] and positive.q.tolist() == [0, 1]
    arrays = Run.from_arrays(["q1", "q1", "q1", "q3"], ["a", "b", "z", "y"], [1.0, 0.5, 0.2, 1.0])
    for run_ in (run, arrays):
        assert join(qrels, run_, complete=True).n_ret.tolist() == [3, 0]


def test_sums_and_counts_per_query_with_and_without_a_mask() -> None:
    qrels = Qrels.from_dict({"q1": {"a": 2, "b": 1}, "q2": {"c": 1}})
    judged = join(qrels, Run.from_dict({"q1": {"a": 1.0, "b": 0.5}, "q2": {"d": 1.0}}))
    grades = judged.grade.astype(np.float64)
    assert judged.per_query(grades).tolist() == [3.0, 1.0]
    retrieved = judged.rank != NOT_RETRIEVED
    assert judged.per_query(grades, retrieved).tolist() == [3.0, 0.0]
    assert judged.count(retrieved).tolist() == [2.0, 0.0]
    assert judged.per_query(grades).dtype == np.float64 and judged.count(retrieved).dtype == np.float64


def test_runs_from_entries_keep_queries_without_entries() -> None:
    run = Run.from_entries(
        ["a", "b", "c"], np.array([1, 0, 1]), np.array([1.0, 2.0, 3.0]), np.array([b"x", b"y", b"z"])
    )
    assert run.lengths().tolist() == [1, 2, 0]
    assert run.docids_at(run.entries(np.array([1, 1]), np.array([0, 1]))) == ["x", "z"]


def test_a_run_from_arrays_keeps_utf8_bytes_and_reads_numbers() -> None:
    run = Run.from_arrays(["q", "q"], np.array(["café".encode(), b"b"]), [1, 2])
    assert run.docids_at(np.array([0, 1])) == ["café", "b"]
    assert run.scores.dtype == np.float64
    judged = join(Qrels.from_dict({"q": {"café": 1}}), run)
    assert judged.rank.tolist() == [1]


def test_ranked_lists_empty_and_long() -> None:
    assert len(Run.from_ranked_lists({})) == 0
    docs = [f"d{i}" for i in range(60)]  # longer than 48: far below the float32 limit
    run = Run.from_ranked_lists({"q": docs})
    judged = join(Qrels.from_dict({"q": {"d59": 1, "d0": 1}}), run)
    assert judged.rank.tolist() == [0, 59]


def test_join_of_no_judged_query_is_empty_and_qrels_arrays_must_be_parallel() -> None:
    judged = join(Qrels.from_dict({}), Run.from_dict({"q": {"a": 1.0}}))
    assert judged.n_queries == 0 and judged.rank.size == 0 and judged.n_missing == 0
    with pytest.raises(ValueError, match="zip"):
        Qrels.from_arrays(["q"], ["a", "b"], [1, 2])


def test_a_document_judged_many_times_is_reported_at_its_first_two_entries() -> None:
    docids = np.array([b"a" if i % 40 == 0 else f"d{i}".encode() for i in range(200)])  # 'a' at 0, 40, ..., 160
    qidx = np.zeros(200, dtype=np.int64)
    assert find_duplicate(qidx, docid_hashes(docids), docids) == (0, 40)


def test_a_repeat_is_found_when_a_colliding_key_sorts_between_its_two_entries() -> None:
    # All three keys collide (forced hashes, one query): x, y, x in file order, so the two x are not neighbours
    # after the stable sort and only a check of the whole run of equal keys sees the repeat.
    same_hash = np.zeros(3, dtype=np.uint64)
    assert find_duplicate(np.zeros(3, dtype=np.int64), same_hash, np.array([b"x", b"y", b"x"])) == (0, 2)
    # A collision across queries between them: key(q, h) = h ^ q*MIX, so hashes 0, MIX, 0 under queries 0, 1, 0 give
    # one key three times; entries 0 and 2 are the repeat, entry 1 (another query) is not.
    mix = np.uint64(0x9E3779B97F4A7C15)
    hashes = np.array([0, mix, 0], dtype=np.uint64)
    found = find_duplicate(np.array([0, 1, 0], dtype=np.int64), hashes, np.array([b"a", b"a", b"a"]))
    assert found == (0, 2)


def _run_of(queries: list[list[bytes]]) -> Run:
    """A run from arrays, one query per list of docids, entries in file order."""
    docids = np.array([doc for docs in queries for doc in docs])
    qidx = np.repeat(np.arange(len(queries), dtype=np.int64), [len(docs) for docs in queries])
    scores = np.arange(len(docids), 0, -1, dtype=np.float64)
    return Run.from_entries([f"q{i}" for i in range(len(queries))], qidx, scores, docids)


def test_a_run_repeat_is_found_in_any_row_of_a_chunk() -> None:
    # six queries of one width (4, and 2): only the last repeats a docid; its row must be found as the sixth
    four = [[b"a", b"b", b"c", b"d"] for _ in range(5)] + [[b"a", b"b", b"a", b"d"]]
    assert _run_of(four).first_duplicate() == (20, 22)
    two = [[b"a", b"b"] for _ in range(5)] + [[b"c", b"c"]]
    assert _run_of(two).first_duplicate() == (10, 11)


def test_the_run_repeat_reported_is_the_one_whose_second_entry_comes_first() -> None:
    # x y y x: the repeat of y ends at entry 2, before the repeat of x (entries 0 and 3)
    assert _run_of([[b"x", b"y", b"y", b"x"]]).first_duplicate() == (1, 2)
    # a long query first in the file (width 8) and a short one after it (width 2, looked at first): (0, 7) ends first
    long_first = [[b"a", b"b", b"c", b"d", b"e", b"f", b"g", b"a"], [b"z", b"z"]]
    assert _run_of(long_first).first_duplicate() == (0, 7)
