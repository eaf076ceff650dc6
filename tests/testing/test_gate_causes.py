"""The pytest gate on a golden set of 1,200-character chunks (tests/pipelines/evaluate/gates_fixture.py): a run of
300-character passages of the same text is refused on a measure counted in golden chunks with the reason and the
budget measure, gates on the evaluation's own primary when no metric is named and passes there (the same text in the
ideal order: nDCG 1 by hand), and a failure says why each first passage counts what it counts."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "pipelines" / "evaluate"))
from gates_fixture import CHUNK, PIECE, chunk_lines, make_golden, mixed_lines, piece_lines

from assay.pipelines.evaluate import EvalSettings, evaluate_detailed
from assay.pipelines.evaluate.evaluated import PassageRow
from assay.testing.causes import Causes
from assay.testing.evaluation import AssayAssertionError, Evaluation

SETTINGS = EvalSettings(k_values=(5, 10), n_boot=200, add_labels=False)


def _evaluation(**runs: list[dict[str, Any]]) -> Evaluation:
    gold = make_golden()
    done = evaluate_detailed(gold, runs, settings=SETTINGS)
    return Evaluation(done, gold, list(runs.items()))


@pytest.fixture(scope="module")
def cut() -> Evaluation:
    return _evaluation(chunks=chunk_lines(), pieces=piece_lines())


def test_a_unit_measure_is_refused_for_passages_under_half_a_chunk(cut: Evaluation) -> None:
    with pytest.raises(AssayAssertionError) as caught:
        cut.assert_metric("ndcg@10", at_least=0.1, run="pieces")
    message = str(caught.value)
    assert message.startswith("pieces: ndcg@10 refused: it counts golden chunks")
    assert "the half-a-unit rule" in message
    assert f"median passage is {PIECE} characters, under half the median relevant golden chunk ({CHUNK})" in message
    assert "Gate on ndcg@1000t instead" in message
    cut.assert_metric("ndcg@10", at_least=0.99, statistic="mean", run="chunks")  # whole chunks reach their units
    with pytest.raises(AssayAssertionError, match="pieces: map refused"):
        cut.assert_not_worse("pieces", baseline="chunks", metric="map")
    with pytest.raises(AssayAssertionError, match="pieces: P@5 refused"):
        cut.assert_metric("P@5", at_least=0.0)  # every run: the one that cannot reach its units is named


def test_no_metric_gates_on_the_evaluations_primary_and_the_same_text_passes(cut: Evaluation) -> None:
    assert cut.result.primary_metric == "ndcg@1000t"  # the runs cut their text differently
    cut.assert_metric(at_least=0.999, statistic="mean")  # relevant text first: the ideal order, nDCG 1 for both
    cut.assert_not_worse("pieces", baseline="chunks")
    with pytest.raises(AssayAssertionError, match=r"pieces: ndcg@1000t = 1\.000 < 1\.01"):
        cut.assert_metric(at_least=1.01, statistic="mean", run="pieces")  # the gate can fail: it is on ndcg@1000t


def test_a_failure_gives_the_real_cause_of_each_passage() -> None:
    ev = _evaluation(mixed=mixed_lines())
    assert ev.result.runs[0].passage_lengths["median"] >= CHUNK / 2  # so ndcg@10 is not refused for it
    with pytest.raises(AssayAssertionError) as caught:
        ev.assert_metric("ndcg@10", at_least=0.99, statistic="mean")
    message = str(caught.value)
    # projected: d0#1 (1), d0#2 (0); ideal 3, 1, 0: nDCG = 1 / (3 + 1 / log2 3) = 0.275 (linear gain, trec_eval)
    assert "mixed: ndcg@10 = 0.275 < 0.99" in message
    share = f"{PIECE / CHUNK:.0%}"  # the first piece is 300 of the chunk's 1,200 characters
    assert (
        f"rank 1 p:d0:0-{PIECE}: graded 3 by rule, but shows {share} of chunk d0#0 "
        "(a unit counts once half of it is shown)" in message
    )
    assert "rank 2 d0#1: grade 1 (human: no rationale)" in message
    assert "rank 3 d0#2: grade 0 (human: no rationale)" in message
    assert "no relevance label (counted not relevant)" not in message


def test_the_causes_of_unlabelled_and_unlocated_passages() -> None:
    ev = _evaluation(pieces=piece_lines(), mixed=mixed_lines())
    causes = ev._causes
    pieces = causes.reasons("pieces", "q0", "ndcg@10", 3)
    assert pieces[0] == (
        f"rank 1 p:d0:0-{PIECE}: graded 3 by rule, but shows 25% of chunk d0#0 (a unit counts once half of it is shown)"
    )
    assert pieces[1] == (
        f"rank 2 p:d0:{PIECE}-{2 * PIECE}: unlabelled (no judge: counted not relevant), reaches chunk d0#0 "
        "(grade 3 (human: no rationale))"
    )
    assert pieces[2].endswith("but chunk d0#0 was already counted at rank 2 (a unit counts once)")
    budget = causes.reasons("pieces", "q0", "ndcg@1000t", 2)  # a budget measure: no unit to reach
    assert budget[1] == f"rank 2 p:d0:{PIECE}-{2 * PIECE}: unlabelled (no judge: counted not relevant)"
    last = causes.reasons("mixed", "q0", "ndcg@10", 4)[3]
    assert last.endswith(": found in no golden document (never relevant)")
    zero = causes.reasons("pieces", "q0", "ndcg@1000t", 12)[-1]  # ranks 9-12 hold d0#2, graded 0
    assert zero.endswith("graded 0 by rule")


def test_a_run_asked_several_times_is_explained_by_its_first_asking() -> None:
    def row(repeat: int, rank: int, unit: str) -> PassageRow:
        return PassageRow(run="app", query_id="q1", rank=rank, unit=unit, match="id", doc_id="d1", start=0, end=1,
                          score=None, grade=None, labelled_by="chunk", repeat=repeat)  # fmt: skip

    rows = [row(2, 1, "d1#2"), row(1, 1, "d1#0"), row(1, 2, "d1#1"), row(2, 2, "d1#0")]
    causes = Causes(make_golden(), rows, judged=False)
    assert causes.reasons("app", "q1", "ndcg@10", 3) == [
        "rank 1 d1#0: grade 3 (human: no rationale)",
        "rank 2 d1#1: grade 1 (human: no rationale)",
    ]


def test_the_rule_measures_passages_against_the_relevant_chunks_not_every_chunk() -> None:
    """Forty short chunks no question grades (headings, say) pull the median of every chunk down to 100 characters;
    the chunks a run must reach to score are still 1,200, so 300-character passages are still refused."""
    from dataclasses import replace

    from assay.types import Chunk, Document

    gold = make_golden()
    notes = "\n\n".join(f"Heading number {n} of the notes page, kept short on purpose." for n in range(40))
    starts = [sum(len(p) + 2 for p in notes.split("\n\n")[:n]) for n in range(40)]
    extra = [Chunk(id=f"notes#{n}", doc_id="notes", ordinal=n, text=part, start=s, end=s + len(part))
             for n, (part, s) in enumerate(zip(notes.split("\n\n"), starts, strict=True))]  # fmt: skip
    page = Document(id="notes", source="notes.md", text=notes, content_hash="notes")
    gold = replace(gold, documents=[*gold.documents, page], chunks=[*gold.chunks, *extra])
    done = evaluate_detailed(gold, {"chunks": chunk_lines(), "pieces": piece_lines()}, settings=SETTINGS)
    assert sorted(len(c.text) for c in gold.chunks)[len(gold.chunks) // 2] < PIECE  # every chunk's median: short
    ev = Evaluation(done, gold, [("chunks", chunk_lines()), ("pieces", piece_lines())])
    with pytest.raises(AssayAssertionError, match=r"median relevant golden chunk \(1200\)"):
        ev.assert_metric("ndcg@10", at_least=0.1, run="pieces")
