"""Which runs cut their text alike (scoring/comparable.py), on hand-made spans and runs, and what is compared and
said when they do not."""

from __future__ import annotations

from pathlib import Path

from assay.corpus.align import Span
from assay.pipelines.evaluate.runs.loaded import LoadedRun, RunLine
from assay.pipelines.evaluate.runs.locate import Located
from assay.pipelines.evaluate.scoring.comparable import Comparable, _crossing, comparable, cut_alike
from assay.results import RunCounts


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


def _run(name: str, spans_by_query: dict[str, list[tuple[str, int, int] | None]]) -> LoadedRun:
    """A run whose lines rank passages at the given spans (None: a passage found in no document)."""
    lines = {}
    for qid, spans in spans_by_query.items():
        located = {
            f"{qid}-p{i}": Located(f"{qid}-p{i}", "offsets" if s else "none",
                                   Span(s[0], s[1], s[2], "offsets", 1.0) if s else None, None)
            for i, s in enumerate(spans)
        }  # fmt: skip
        lines[qid] = RunLine(qid, list(located), {}, located=located)
    return LoadedRun(name, Path(f"{name}.jsonl"), "jsonl", lines, RunCounts())


def test_runs_cut_alike_only_within_the_depth_and_the_same_document() -> None:
    whole = _run("whole", {"q1": [("d", 0, 100), None, ("e", 0, 10)]})
    halves = _run("halves", {"q1": [("d", 0, 50), ("d", 50, 100), None, ("e", 0, 10)]})
    assert not cut_alike([whole, halves], depth=3)
    assert cut_alike([whole, _run("other doc", {"q1": [("x", 0, 50), ("x", 50, 100)]})], depth=3)
    # within depth 1 too: the first half against the whole
    assert not cut_alike([whole, halves], depth=1)
    late = _run("late", {"q1": [None, ("e", 0, 10), ("d", 20, 30)]})
    assert cut_alike([whole, late], depth=2) and not cut_alike([whole, late], depth=3)
    # the spans of every question count together: q2's passage crosses q1's of the other run
    assert not cut_alike([whole, _run("shifted", {"q1": [("d", 200, 300)], "q2": [("d", 50, 150)]})], depth=3)
    assert cut_alike([whole], depth=3) and cut_alike([whole, whole, whole], depth=3)
    assert not cut_alike([whole, whole, halves], depth=3)  # the third run against the first two
    elsewhere = _run("elsewhere", {"q1": [("x", 0, 50)]})
    assert not cut_alike([whole, elsewhere, halves, elsewhere], depth=3)  # every pair: the first and the third


def test_comparable_when_runs_cut_alike_or_only_one_run() -> None:
    whole = _run("whole", {"q1": [("d", 0, 100)]})
    names = ["ndcg@10", "span_recall@3", "ndcg@100t"]
    for runs in ([whole], [whole, _run("again", {"q1": [("d", 0, 100)]})]):
        got = comparable(runs, names, depth=10, budgets=["100t"], primary=None, lengths={})
        assert got == Comparable(True, names, None, [])
    named = comparable([whole], names, depth=10, budgets=["100t"], primary="ndcg@10", lengths={})
    assert named.primary == "ndcg@10"


def test_comparable_when_runs_cut_differently_says_what_and_why() -> None:
    runs = [_run("whole", {"q1": [("d", 0, 100)]}), _run("halves", {"q1": [("d", 0, 50), ("d", 50, 100)]})]
    names = ["ndcg@10", "span_recall@3", "span_precision@3", "ndcg@100t", "recall@400c"]
    got = comparable(runs, names, depth=10, budgets=["100t", "400c"], primary=None,
                     lengths={"whole": 100.0, "halves": 50.4})  # fmt: skip
    assert got.alike is False
    assert got.compared == ["ndcg@10", "ndcg@100t", "recall@400c"]
    assert got.primary == "ndcg@100t"
    assert got.notes == [
        "The runs cut their text differently (median passage length in characters: whole 100, halves 50). Ranking "
        "measures count the golden chunks a run showed at least half of, and budget measures count characters of "
        "relevant text within a budget, so both depend on the text retrieved, not on how it was cut.",
        "The primary metric is ndcg@100t: relevant text first, within the first 100 tokens (400 characters) of each "
        "run's text; a run that retrieved less is scored on what it retrieved.",
        "No verdict on span_recall@3, span_precision@3: they are measured over a number of passages, and the same "
        "number of passages holds different amounts of text in these runs.",
    ]
    by_chars = comparable(runs, ["ndcg@400c"], depth=10, budgets=["400c"], primary=None, lengths={})
    assert by_chars.primary == "ndcg@400c"
    assert by_chars.notes == [
        "The runs cut their text differently. Ranking measures count the golden chunks a run showed at least half "
        "of, and budget measures count characters of relevant text within a budget, so both depend on the text "
        "retrieved, not on how it was cut.",
        "The primary metric is ndcg@400c: relevant text first, within the first 400 characters of each run's text; "
        "a run that retrieved less is scored on what it retrieved.",
    ]
    # no budget nDCG among the compared names (or no budget at all): no primary chosen, no note about it
    for budgets, listed in ((["100t"], ["ndcg@10"]), ([], ["ndcg@10", "ndcg@100t"])):
        none = comparable(runs, listed, depth=10, budgets=budgets, primary=None, lengths={})
        assert none.primary is None and len(none.notes) == 1


def test_comparable_reads_only_the_depth_given() -> None:
    late = [_run("late", {"q1": [("e", 0, 10), ("d", 0, 100)]}), _run("halves", {"q1": [("e", 0, 10), ("d", 0, 50)]})]
    assert comparable(late, ["ndcg@10"], depth=1, budgets=[], primary=None, lengths={}).alike
    assert not comparable(late, ["ndcg@10"], depth=2, budgets=[], primary=None, lengths={}).alike


def test_many_metrics_left_out_are_listed_six_then_counted() -> None:
    runs = [_run("whole", {"q1": [("d", 0, 100)]}), _run("halves", {"q1": [("d", 0, 50), ("d", 50, 100)]})]
    left = [f"span_recall@{k}" for k in range(1, 9)]
    got = comparable(runs, left, depth=10, budgets=[], primary=None, lengths={})
    assert got.notes[-1].startswith(
        "No verdict on span_recall@1, span_recall@2, span_recall@3, span_recall@4, span_recall@5, span_recall@6 and "
        "2 more: they"
    )
    six = comparable(runs, left[:6], depth=10, budgets=[], primary=None, lengths={})
    assert six.notes[-1].startswith("No verdict on span_recall@1, span_recall@2, span_recall@3, span_recall@4, "
                                    "span_recall@5, span_recall@6: they")  # fmt: skip
