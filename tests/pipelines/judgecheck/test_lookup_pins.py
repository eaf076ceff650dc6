"""Where a judge card is kept and the summary ``assay eval`` shows of it, on a card built by hand."""

from __future__ import annotations

from pathlib import Path

from card_fixture import small_card

from assay.pipelines.judgecheck.lookup import card_home, summarize_card
from assay.pipelines.judgecheck.render import write_card

PROMPTS = {"relevance@v2": "abc"}


def test_the_card_home_keeps_safe_characters_and_replaces_every_other_one(tmp_path: Path) -> None:
    assert card_home(tmp_path, "a.B_9-z") == tmp_path / "cards" / "a.B_9-z"
    assert card_home(tmp_path, "openai/gpt 4:x") == tmp_path / "cards" / "openai_gpt_4_x"


def test_no_card_says_where_it_looked_and_how_to_make_one(tmp_path: Path) -> None:
    summary = summarize_card(tmp_path / "nowhere", "openai/judge", PROMPTS)
    file = tmp_path / "nowhere" / "card.json"
    assert summary.found is False and summary.where == str(file) and summary.model is None
    assert summary.note == (
        f"no judge card for openai/judge (looked in {file}); measure the judge first: "
        "assay judge-check --judge openai/judge --labels GOLDEN_OR_CISI -o CARD/"
    )


def test_a_path_with_a_suffix_is_the_card_file_unless_it_is_a_folder(tmp_path: Path) -> None:
    assert summarize_card(tmp_path / "mine.json", "m", {}).where == str(tmp_path / "mine.json")
    write_card(small_card(), tmp_path / "card.v1")
    summary = summarize_card(tmp_path / "card.v1", "openai/judge", PROMPTS)
    assert summary.found is True and summary.where == str(tmp_path / "card.v1" / "card.json")
    kept = tmp_path / "card.v1" / "card.json"
    assert summarize_card(kept, "openai/judge", PROMPTS).where == str(kept)


def test_an_unreadable_card_is_not_found_and_the_note_names_the_file(tmp_path: Path) -> None:
    (tmp_path / "card.json").write_text("{not json")
    summary = summarize_card(tmp_path, "m", {})
    assert summary.found is False and summary.where == str(tmp_path / "card.json")
    assert summary.note is not None and summary.note.startswith(f"the judge card could not be read: {tmp_path}")


def test_a_found_card_gives_its_headline_model_and_time_to_the_second(tmp_path: Path) -> None:
    write_card(small_card(), tmp_path)
    summary = summarize_card(tmp_path, "openai/judge", PROMPTS)
    assert summary.found is True and summary.model == "openai/judge" and summary.note is None
    assert summary.created == "2026-03-04T05:06:07+00:00"
    # the headline keys held by the card, in the headline's order: kappa, consistency, stuffing
    assert summary.figures == {
        "kappa at 1": "0.500 [0.250, 0.750] (n=8)",
        "changed": "25.0% [0.0%, 50.0%] (n=4)",
        "rose": "- (n=0, 3 unscored)",
    }
    assert list(summary.figures) == ["kappa at 1", "changed", "rose"]


def test_a_card_of_another_model_made_with_other_prompts_says_both(tmp_path: Path) -> None:
    write_card(small_card(model="other/model"), tmp_path)
    prompts = {"relevance@v3": "abc", "claims@v1": "xyz", "answer@v1": "new", "claims@v0": "def"}
    summary = summarize_card(tmp_path, "openai/judge", prompts)
    # relevance: another version; claims@v1: another text; claims@v0 is another version of claims; answer: not in
    # the card, so nothing to compare
    assert summary.note == (
        "the card is of other/model, not of the judge in use (openai/judge); "
        "the card was made with other prompts than claims@v0, claims@v1, relevance@v3: run assay judge-check again"
    )


def test_the_same_prompts_by_name_version_and_text_give_no_note(tmp_path: Path) -> None:
    write_card(small_card(), tmp_path)
    summary = summarize_card(tmp_path, "openai/judge", {"relevance@v2": "abc", "claims@v1": "def", "x@v1": "q"})
    assert summary.note is None


def test_a_prompt_named_without_a_version_is_compared_by_its_whole_name(tmp_path: Path) -> None:
    write_card(small_card(prompts={"relevance": "abc"}), tmp_path)
    assert summarize_card(tmp_path, "openai/judge", {"relevance": "abc"}).note is None
    summary = summarize_card(tmp_path, "openai/judge", {"relevance": "new"})
    assert summary.note == "the card was made with other prompts than relevance: run assay judge-check again"
