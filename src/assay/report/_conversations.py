"""The conversations of an evaluation as plain sentences shared by the three reports: the history gain of each pair
of a rewrites run and a turns run (``EvalResult.history_gain``), and each run's conversation measures
(``RunResult.conversations``: turns, vital-nugget coverage, self-contradiction, the system's own rewrites). The
per-turn split (``depends_on_history``, ``dependency``) is in the strata tables. Nothing is said for a golden set
without conversations.
"""

from __future__ import annotations

from assay.report._format import fmt_delta, fmt_value
from assay.results import Comparison, ConversationSummary, EvalResult, HistoryGain, RunResult

__all__ = ["conversation_lines", "gain_line", "run_conversation_line"]


def _part(name: str, comparison: Comparison | None) -> str | None:
    if comparison is None:
        return None
    called = "significant" if comparison.significant else "not significant"
    return f"{name} {fmt_delta(comparison)} over {comparison.n} turns (p adj {comparison.p_adjusted:.3g}, {called})"


def gain_line(gain: HistoryGain) -> str:
    """History gain: turns (with history) minus rewrites (alone), per turn, on the dependent, standalone and all
    turns."""
    history = f" with the {gain.history} history" if gain.history else ""
    parts = [_part(name, c) for name, c in (("dependent turns", gain.dependent), ("standalone turns",
             gain.standalone), ("all turns", gain.all))]  # fmt: skip
    shown = "; ".join(p for p in parts if p) or "fewer than two turns scored in both runs"
    return (f"History gain on {gain.metric}, {gain.turns} (raw turns{history}) minus {gain.rewrites} (standalone "
            f"rewrites), per turn, conversations resampled whole: {shown}. Negative: what the system loses to the "
            "history (coreference, ellipsis).")  # fmt: skip


def run_conversation_line(run: RunResult) -> str | None:
    """A run's conversations: turns, the vital-nugget coverage per conversation, its own rewrites."""
    conv = run.conversations
    if conv is None:
        return None
    text = (
        f"{run.name}: {conv.conversations} conversations, {conv.turns} turns ({conv.dependent} depend on the history)"
    )
    if conv.repeats > 1:
        text += (f", asked {conv.repeats} times (a conversation's shares are its mean over the repeats, the counts of "
                 "turns add the repeats up)")  # fmt: skip
    if conv.vital_coverage is not None:
        text += (f"; vital nuggets covered across a conversation's turns {fmt_value(conv.vital_coverage)} (mean of "
                 f"{conv.covered} conversations)")  # fmt: skip
    if conv.coverage_unscored:
        text += f"; {conv.coverage_unscored} conversations unscored (a nugget verdict missing)"
    text += _contradiction_part(conv)
    if conv.rewrites:
        f1 = run.metrics.get("rewrite_f1")
        score = (
            f", token F1 to the golden rewrite {fmt_value(f1.mean)}" if f1 is not None and f1.mean is not None else ""
        )
        text += f"; {conv.rewrites} turns carry the system's own rewrite{score}"
    return text + "."


def _contradiction_part(conv: ConversationSummary) -> str:
    """Self-contradiction: the rate per conversation, the turns found contradicting, the unscored ones."""
    if not conv.contradiction_checked and not conv.contradiction_unscored:
        return ""
    rate = fmt_value(conv.contradiction_rate) if conv.contradiction_rate is not None else "unscored"
    text = (f"; answers contradicting an earlier answer of the conversation {rate} per conversation (mean of "
            f"{conv.contradiction_conversations}), {conv.contradicting} of {conv.contradiction_checked} turns "
            "checked")  # fmt: skip
    if conv.contradiction_unscored:
        text += f", {conv.contradiction_unscored} turns unscored (the judge failed)"
    return text


def conversation_lines(result: EvalResult) -> list[str]:
    """Every sentence of this module that applies to ``result``."""
    lines = [run_conversation_line(run) for run in result.runs]
    lines += [gain_line(gain) for gain in result.history_gain]
    return [line for line in lines if line]
