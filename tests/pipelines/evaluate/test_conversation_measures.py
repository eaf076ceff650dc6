"""The conversation measures computed by hand on small inputs: token F1's empty texts, coverage and contradiction
rates (conversations left out, unscored, rounded to 6 places), the run summary's counts, the summary of a repeated
run, and the rewrite metrics (BM25 over the golden chunks, a turn without a relevant label)."""

from __future__ import annotations

from typing import Any

import pytest
from evaluate_fixture import answer_id, good_lines, make_golden, qid, related_id

from assay.corpus.pooling import Bm25Index
from assay.formats.golden import GoldenSet
from assay.pipelines.evaluate.runs.loaded import LoadedRun
from assay.pipelines.evaluate.runs.read import load_run
from assay.pipelines.evaluate.scoring.conversations import (
    TurnParts,
    _over_repeats,
    contradiction_rates,
    conversation_summary,
    repeated_summary,
    rewrite_values,
    token_f1,
    vital_coverage,
)
from assay.pipelines.evaluate.scoring.ranking import Labels
from assay.results import QueryResult
from assay.types import Conversation, Turn


def conversational() -> GoldenSet:
    """The evaluator's fixture as four conversations c0-c3 of three turns (q00-q02, q03-q05, ...)."""
    gold = make_golden()
    gold.conversations = [
        Conversation(id=f"c{c}", turns=[Turn(question_id=qid(3 * c + t), utterance=f"turn {t}",
                                             depends_on_history=t > 0, dependency="pronoun" if t else "none")
                                        for t in range(3)])
        for c in range(4)
    ]  # fmt: skip
    return gold


def run_of(gold: GoldenSet, lines: list[dict[str, Any]], name: str = "r") -> LoadedRun:
    turned = [{**line, "conversation_id": f"c{int(line['query_id'][1:]) // 3}"} for line in lines]
    return load_run((name, turned), gold)


def rows(values: dict[int, float | None]) -> dict[str, QueryResult]:
    return {qid(i): QueryResult(run="r", query_id=qid(i), metrics={"contradiction": v}) for i, v in values.items()}


THIRD = 0.333333  # 1/3 to 6 places
# three conversations at 1/3, 1/3 and 1: mean (0.333333 + 0.333333 + 1) / 3 = 0.5555553..., to 6 places
MEAN_OF_THREE = 0.555555


def test_token_f1_of_empty_texts() -> None:
    assert token_f1("", "") == 1.0 and token_f1("?!", " ") == 1.0  # nothing left after folding: they agree
    assert token_f1("", "the warranty") == 0.0 and token_f1("the warranty", "...") == 0.0


def test_vital_coverage_leaves_out_and_keeps_conversations_in_order() -> None:
    gold = conversational()
    # c0: nothing judged (left out); c1: 1 of 3 vital; c2: no vital nugget (left out); c3: a verdict missing
    supported = {qid(3): (1, 3), qid(6): (0, 0), qid(9): None, qid(10): (1, 1)}
    assert vital_coverage(gold, supported) == {"c1": THIRD, "c3": None}
    # a missing verdict first, then a conversation that is scored
    assert vital_coverage(gold, {qid(0): None, qid(3): (2, 3)}) == {"c0": None, "c1": 0.666667}


def test_contradiction_rates_leave_out_a_conversation_with_no_checked_turn() -> None:
    gold = conversational()
    # c0 unchecked; c1: one of three turns contradicts
    assert contradiction_rates(gold, rows({3: 1.0, 4: 0.0, 5: 0.0})) == {"c1": THIRD}
    assert contradiction_rates(gold, {}) == {}


def test_summary_counts_only_the_conversations_and_turns_the_run_answers() -> None:
    gold = conversational()
    run = run_of(gold, good_lines()[:8])  # c0, c1 whole, c2 two of its turns, c3 none
    supported = {qid(0): (1, 3), qid(3): (1, 3), qid(6): (1, 1), qid(9): None}
    summary = conversation_summary(gold, run, supported, rows({0: 1.0, 1: 0.0, 2: 0.0, 3: 1.0, 4: 0.0, 5: 0.0,
                                                                6: 1.0, 7: 1.0}))  # fmt: skip
    assert summary is not None
    assert (summary.conversations, summary.turns, summary.dependent, summary.rewrites) == (3, 8, 5, 0)
    # coverage: c0 1/3, c1 1/3, c2 1 -> 0.555555; c3 unscored
    assert (summary.vital_coverage, summary.covered, summary.coverage_unscored) == (MEAN_OF_THREE, 3, 1)
    # contradiction: c0 1/3, c1 1/3, c2 2/2 = 1 -> 0.555555; 4 of 8 turns contradict
    assert (summary.contradiction_rate, summary.contradiction_conversations) == (MEAN_OF_THREE, 3)
    assert (summary.contradicting, summary.contradiction_checked, summary.contradiction_unscored) == (4, 8, 0)
    # nothing rated: no rate (not a rate of nan)
    nothing = conversation_summary(gold, run, {qid(0): None}, rows({0: None, 1: 0.0}))
    assert nothing is not None and nothing.contradiction_rate is None and nothing.vital_coverage is None
    assert (nothing.coverage_unscored, nothing.contradiction_unscored, nothing.contradiction_checked) == (1, 1, 1)


def test_a_repeated_summary_means_each_conversation_over_its_repeats() -> None:
    gold = conversational()
    run = run_of(gold, good_lines())
    first = (run, {qid(0): (1, 3), qid(3): (1, 3), qid(6): (1, 1)}, rows({1: 1.0, 2: 0.0}))
    second = (run, {qid(0): (1, 3), qid(3): (1, 3), qid(6): (1, 1)}, rows({1: 0.0, 2: 1.0, 4: 0.0, 5: 0.0}))
    summary = repeated_summary(gold, [first, second])
    assert summary is not None and summary.repeats == 2
    assert (summary.vital_coverage, summary.covered, summary.coverage_unscored) == (MEAN_OF_THREE, 3, 0)
    # c0: 1/2 in both repeats; c1 rated only in the second (0): two conversations over the repeats, mean 0.25
    assert (summary.contradiction_rate, summary.contradiction_conversations) == (0.25, 2)
    assert (summary.contradicting, summary.contradiction_checked) == (2, 6)  # summed over the repeats
    # the same rates in both repeats: c0 1/3, c1 1/3, c2 1 -> 0.555555 (6 places)
    same = (run, {}, rows({0: 1.0, 1: 0.0, 2: 0.0, 3: 1.0, 4: 0.0, 5: 0.0, 6: 1.0, 7: 1.0}))
    thirds = repeated_summary(gold, [same, same])
    assert thirds is not None and (thirds.contradiction_rate, thirds.contradiction_conversations) == (MEAN_OF_THREE, 3)
    unrated = (run, {qid(0): None}, rows({1: None}))
    both = repeated_summary(gold, [unrated, unrated])
    assert both is not None and both.vital_coverage is None and both.contradiction_rate is None
    assert (both.coverage_unscored, both.contradiction_unscored) == (1, 2)
    plain = make_golden()  # no conversations: no summary, however many repeats
    assert repeated_summary(plain, [(run, {}, {}), (run, {}, {})]) is None


def test_over_repeats_means_the_repeats_that_scored_each_conversation() -> None:
    per_repeat = [{"a": THIRD, "b": None}, {"a": THIRD, "c": 1.0}, {"a": 1.0, "b": None}]
    assert _over_repeats(per_repeat) == {"a": MEAN_OF_THREE, "b": None, "c": 1.0}
    assert list(_over_repeats(per_repeat)) == ["a", "b", "c"]


def test_rewrite_values_with_and_without_the_bm25_index() -> None:
    gold = conversational()
    lines = good_lines()[:3]
    lines[0]["rewrite"] = "How many days does the Alder kettle warranty last?"  # the golden rewrite itself
    lines[1]["rewrite"] = "zzz qqq"  # no word of any chunk: BM25 finds nothing, nDCG 0
    lines[2]["rewrite"] = "Cedar stove"  # P = 1, R = 2/9: F1 = 2 (2/9) / (11/9) = 4/11
    run = run_of(gold, lines)
    # q00 has one relevant chunk at threshold 2; q01 none (its answer chunk's label removed); q02 is not labelled
    labels = Labels({qid(0): {answer_id(0): 3, related_id(0): 1}, qid(1): {related_id(1): 1}}, set(), False)
    plain = rewrite_values(run, gold, labels, 2, None)
    assert {q: v.metrics for q, v in plain.items()} == {qid(0): {"rewrite_f1": 1.0}, qid(1): {"rewrite_f1": 0.0},
                                                        qid(2): {"rewrite_f1": pytest.approx(4 / 11)}}  # fmt: skip
    found = rewrite_values(run, gold, labels, 2, Bm25Index.build(gold.chunks))
    ours, theirs = found[qid(0)].metrics["rewrite_bm25_ndcg@10"], found[qid(0)].metrics["gold_rewrite_bm25_ndcg@10"]
    assert ours == theirs == 1.0  # the Alder answer chunk is BM25's first for the golden rewrite
    for q in (qid(1), qid(2)):
        assert found[q].metrics["rewrite_bm25_ndcg@10"] is None
        assert found[q].unscored == {"rewrite_bm25_ndcg@10": "no_relevant_label",
                                     "gold_rewrite_bm25_ndcg@10": "no_relevant_label"}  # fmt: skip
    labels.qrels[qid(1)][answer_id(1)] = 3
    nothing = rewrite_values(run, gold, labels, 2, Bm25Index.build(gold.chunks))[qid(1)].metrics
    assert nothing["rewrite_bm25_ndcg@10"] == 0.0 and nothing["gold_rewrite_bm25_ndcg@10"] == 1.0


def test_turn_parts_leave_bm25_out_of_a_golden_set_without_chunk_text() -> None:
    gold = conversational()
    gold.chunks = [chunk.model_copy(update={"text": " "}) for chunk in gold.chunks]
    lines = good_lines()[:1]
    lines[0]["rewrite"] = "How many days does the Alder kettle warranty last?"
    run = run_of(gold, lines)
    parts = TurnParts.of(gold, [run], Labels.of(gold, strict_unscored=False), 2)
    assert parts is not None
    assert {q: v.metrics for q, v in parts.rewrites["r"].items()} == {qid(0): {"rewrite_f1": 1.0}}
    assert parts.strata[qid(1)] == {"depends_on_history": "yes", "dependency": "pronoun"}
    assert TurnParts.of(make_golden(), [run], Labels.of(gold, strict_unscored=False), 2) is None
