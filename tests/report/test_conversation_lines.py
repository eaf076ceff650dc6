"""The conversation sentences the three reports share, written out whole for hand-made summaries: a run's turns,
repeats, coverage, unscored conversations, self-contradiction and rewrites; the history gain's parts; nothing for a
run without conversations."""

from __future__ import annotations

from assay.report._conversations import conversation_lines, gain_line, run_conversation_line
from assay.results import Comparison, ConversationSummary, EvalResult, HistoryGain, MetricSummary, RunResult


def comparison(delta: float, n: int, p: float, significant: bool) -> Comparison:
    return Comparison(a="rw", b="tu", metric="ndcg@10", n=n, delta=delta, low=delta - 0.1, high=delta + 0.1,
                      p_value=p, p_adjusted=p, significant=significant, verdict="")  # fmt: skip


def run(conversations: ConversationSummary | None, f1: float | None = None) -> RunResult:
    metrics = {} if f1 is None else {"rewrite_f1": MetricSummary(mean=f1, n_scored=2)}
    return RunResult(name="tu", path="tu.jsonl", metrics=metrics, conversations=conversations)


def test_a_plain_run_says_its_turns_only() -> None:
    line = run_conversation_line(run(ConversationSummary(conversations=4, turns=12, dependent=8)))
    assert line == "tu: 4 conversations, 12 turns (8 depend on the history)."
    assert run_conversation_line(run(None)) is None


def test_every_part_of_a_runs_sentence() -> None:
    summary = ConversationSummary(conversations=4, turns=12, dependent=8, rewrites=2, vital_coverage=0.5, covered=3,
                                  coverage_unscored=1, contradiction_rate=0.25, contradiction_conversations=3,
                                  contradicting=2, contradiction_checked=7, contradiction_unscored=1,
                                  repeats=2)  # fmt: skip
    assert run_conversation_line(run(summary, f1=0.75)) == (
        "tu: 4 conversations, 12 turns (8 depend on the history), asked 2 times (a conversation's shares are its mean "
        "over the repeats, the counts of turns add the repeats up); vital nuggets covered across a conversation's "
        "turns 0.500 (mean of 3 conversations); 1 conversations unscored (a nugget verdict missing); answers "
        "contradicting an earlier answer of the conversation 0.250 per conversation (mean of 3), 2 of 7 turns "
        "checked, 1 turns unscored (the judge failed); 2 turns carry the system's own rewrite, token F1 to the "
        "golden rewrite 0.750."
    )
    # the rewrites without their F1 (no value), and every checked turn unscored: the rate is unscored
    unscored = summary.model_copy(update={"repeats": 1, "vital_coverage": None, "coverage_unscored": 0,
                                          "contradiction_rate": None, "contradiction_checked": 0})  # fmt: skip
    assert run_conversation_line(run(unscored)) == (
        "tu: 4 conversations, 12 turns (8 depend on the history); answers contradicting an earlier answer of the "
        "conversation unscored per conversation (mean of 3), 2 of 0 turns checked, 1 turns unscored (the judge "
        "failed); 2 turns carry the system's own rewrite."
    )
    checked = unscored.model_copy(update={"contradiction_unscored": 0, "contradiction_checked": 4, "rewrites": 0})
    assert run_conversation_line(run(checked)) == (
        "tu: 4 conversations, 12 turns (8 depend on the history); answers contradicting an earlier answer of the "
        "conversation unscored per conversation (mean of 3), 2 of 4 turns checked."
    )
    no_mean = run(summary.model_copy(update={"repeats": 1}))
    no_mean.metrics["rewrite_f1"] = MetricSummary(mean=None)
    assert (run_conversation_line(no_mean) or "").endswith("; 2 turns carry the system's own rewrite.")


def test_the_history_gain_sentence() -> None:
    gain = HistoryGain(rewrites="rw", turns="tu", metric="ndcg@10", history="reference",
                       dependent=comparison(-0.2, 8, 0.0123, True), standalone=comparison(0.0, 4, 0.5, False),
                       all=comparison(-0.125, 12, 0.04, True))  # fmt: skip
    assert gain_line(gain) == (
        "History gain on ndcg@10, tu (raw turns with the reference history) minus rw (standalone rewrites), per turn, "
        "conversations resampled whole: dependent turns -0.200 [-0.300, -0.100] over 8 turns (p adj 0.0123, "
        "significant); standalone turns +0.000 [-0.100, 0.100] over 4 turns (p adj 0.5, not significant); all "
        "turns -0.125 [-0.225, -0.025] over 12 turns (p adj 0.04, significant). Negative: what the system loses to "
        "the history (coreference, ellipsis)."
    )
    bare = HistoryGain(rewrites="rw", turns="tu", metric="ndcg@10", standalone=comparison(0.0, 4, 0.5, False))
    assert gain_line(bare) == (
        "History gain on ndcg@10, tu (raw turns) minus rw (standalone rewrites), per turn, conversations resampled "
        "whole: standalone turns +0.000 [-0.100, 0.100] over 4 turns (p adj 0.5, not significant). Negative: what "
        "the system loses to the history (coreference, ellipsis)."
    )
    empty = HistoryGain(rewrites="rw", turns="tu", metric="ndcg@10")
    assert "resampled whole: fewer than two turns scored in both runs. Negative" in gain_line(empty)


def test_conversation_lines_gather_the_runs_then_the_gains() -> None:
    gain = HistoryGain(rewrites="rw", turns="tu", metric="ndcg@10")
    result = EvalResult(assay_version="x", golden="g", judge=None, k_values=[10], history_gain=[gain],
                        runs=[run(ConversationSummary(conversations=1, turns=2, dependent=1)), run(None)])  # fmt: skip
    assert conversation_lines(result) == ["tu: 1 conversations, 2 turns (1 depend on the history).", gain_line(gain)]
