"""The offline conversation writer's and checker's rules, each on a small hand-made case: the ellipsis cut (the
preposition and the anchor left out, refused when too little is left), the faithfulness bands of a rewrite and what
it adds, the rewrite check's note and its pronoun penalty."""

from __future__ import annotations

import pytest

from assay.judge.offline_conversations import _ellipsis, _faithful, check_rewrite


@pytest.mark.parametrize(
    ("rewrite", "anchor", "utterance"),
    [
        ("How long does delivery take for the Ranger tent?", "Ranger tent", "And how long does delivery take?"),
        ("How long does delivery take, for the Ranger tent?", "Ranger tent", "And how long does delivery take?"),
        ("What colours come with your Ranger tent in stock?", "Ranger tent", "And what colours come in stock?"),
        ("Which poles suit tents ON A Ranger tent?", "ranger tent", "And which poles suit tents?"),
    ],
)
def test_the_ellipsis_drops_the_preposition_and_the_anchor(rewrite: str, anchor: str, utterance: str) -> None:
    assert _ellipsis(rewrite, anchor) == utterance


def test_no_ellipsis_without_a_preposition_before_the_anchor_or_with_too_little_left() -> None:
    assert _ellipsis("Is the Ranger tent waterproof?", "Ranger tent") is None  # no preposition before it
    assert _ellipsis("Tents for the Ranger tent?", "Ranger tent") is None  # one content word left ("Tents")
    assert _ellipsis("Does delivery take long for the Ranger tentpole?", "Ranger tent") is None  # not a whole word


@pytest.mark.parametrize(
    ("rewrite", "score", "kept"),
    [
        ("tent stove lamp rope pole", 5, "100%"),
        ("tent stove lamp rope", 5, "80%"),  # 4 of 5 kept
        ("tent stove lamp", 4, "60%"),
        ("tent stove", 3, "40%"),
        ("tent", 2, "20%"),
        ("", 1, "0%"),
    ],
)
def test_faithfulness_bands_by_the_share_of_the_utterance_kept(rewrite: str, score: int, kept: str) -> None:
    assert _faithful("tent stove lamp rope pole", rewrite, "") == (score, f"keeps {kept} of the utterance's terms")


def test_faithfulness_loses_a_point_per_term_found_nowhere_before_at_most_two() -> None:
    said = "tent stove lamp rope pole"
    assert _faithful(said, f"{said} knife", "") == (4, "keeps 100% of the utterance's terms; adds terms found "
                                                       "nowhere before: knif")  # fmt: skip
    assert _faithful(said, f"{said} knife", "a knife") == (5, "keeps 100% of the utterance's terms")  # history has it
    assert _faithful(said, f"{said} knife cup spoon", "")[0] == 3  # three added: two points off
    assert _faithful("tent", "cup spoon knife", "")[0] == 1  # never below 1
    assert _faithful("", "tent", "tent")[0] == 5  # nothing to keep: all of it kept
    many = _faithful("tent", "tent a1b cup spoon knife fork bowl", "")[1]
    assert many.endswith("adds terms found nowhere before: bowl, cup, fork, knif, spoon")  # sorted, first five


def test_the_rewrite_check_reads_the_history_and_penalises_a_kept_pronoun() -> None:
    history = [{"utterance": "Does the tent fit a stove?", "answer": "Yes, a small stove."}, {"answer": "A lamp."}]
    passages = ["The tent fits a small stove and a lamp."]
    plain = check_rewrite(history, "and a lamp?", "Does the tent fit a lamp?", "Yes.", passages)
    assert plain.faithful == 5 and "Rewrite vs utterance: keeps 100% of the utterance's terms." in plain.reason
    kept = check_rewrite(history, "does it fit a lamp?", "Does it fit a lamp?", "Yes.", passages)
    assert kept.reason.endswith(
        "Rewrite vs utterance: keeps 100% of the utterance's terms; the rewrite keeps a pronoun (it, they, them), so "
        "it is not standalone."
    )
    assert kept.self_contained == max(1, plain.self_contained - 2)
    assert (kept.answerable, kept.clear) == (plain.answerable, plain.clear)
    # "rope" appears nowhere in the utterance or the history (utterances and answers): one point off
    added = check_rewrite(history, "and a lamp?", "Does the tent fit a lamp and rope?", "Yes.", passages)
    assert added.faithful == 4 and "adds terms found nowhere before: rope" in added.reason
