"""The checks that a build produced something: no accepted question, or every relevance label unscored, stops it
with a :class:`~assay.errors.NothingProduced` that names the stage that dropped the most, its likely cause, and what
the judge's unscored answers were."""

from __future__ import annotations

from assay.errors import NothingProduced
from assay.judge.panel import Grader, judges_of

__all__ = ["check_something_built", "unscored_note"]


# Why a stage may drop every question, in the words a user can act on.
_CAUSES = {
    "dropped_by_generation_unscored": "the model's answers did not parse as questions",
    "dropped_by_evidence": "the evidence quotes were not found in their source passages: the model paraphrases or "
    "invents instead of quoting, typical of a model too small to follow the generation prompt",
    "dropped_by_leakage": "the questions copy long runs of their source passages",
    "dropped_by_near_duplicate": "the questions are near-copies of each other",
    "dropped_by_critic": "the critic found the questions unclear or unanswerable from their passages",
    "dropped_by_critic_unscored": "the critic's answers did not parse",
    "dropped_by_unanswerable_answered": "the 'unanswerable' questions were answered by a passage",
    "dropped_by_conversation_cut": "the conversations' turns followed a turn dropped by the evidence, rewrite or "
    "unanswerable check",
}


def unscored_note(judge: Grader) -> str:
    """``; unscored judge answers: truncated 3, invalid_output 2`` (per judge of a panel), or "" when none was."""
    judges = judges_of(judge)
    texts = [(one.model, one.stats.unscored_text()) for one in judges]
    unscored = "; ".join(f"{model}: {text}" if len(judges) > 1 else text for model, text in texts if text)
    return f"; unscored judge answers: {unscored}" if unscored else ""


def check_something_built(counts: dict[str, int], judge: Grader) -> None:
    """Raise :class:`NothingProduced` when no question was accepted or every relevance label is unscored.

    The message names the stage that dropped the most, the likely cause, and what the judge's unscored answers
    were (truncated, loops, over the context, invalid; per judge of a panel), so a too-small model or an unfollowed
    prompt is plain.
    """
    note = unscored_note(judge)
    if counts.get("accepted", 0) == 0:
        stages = {key: counts.get(key, 0) for key in _CAUSES}
        worst = max(stages, key=lambda key: stages[key])
        if stages[worst] == 0:
            raise NothingProduced(f"no question was generated from {counts.get('seeds', 0)} seeds{note}")
        lost = ", ".join(f"{key.removeprefix('dropped_by_')} {n}" for key, n in stages.items() if n)
        raise NothingProduced(
            f"no question was accepted: {counts.get('seeds', 0)} seeds, {counts.get('generated', 0)} generated, "
            f"dropped by {lost}{note}. Most were lost at {worst.removeprefix('dropped_by_')}: "
            f"{_CAUSES[worst]}. Nothing was written; try a larger model with --judge (or the offline judge to "
            "check the corpus)"
        )
    if counts.get("pooled_pairs", 0) and counts.get("qrels_unscored_pairs", 0) == counts["pooled_pairs"]:
        raise NothingProduced(
            f"every one of the {counts['pooled_pairs']} relevance labels is unscored{note}: the judge "
            "cannot grade with this model or these settings (see the kinds; --max-tokens, --listwise). "
            "Nothing was written"
        )
