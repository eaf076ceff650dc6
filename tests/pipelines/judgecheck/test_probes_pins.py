"""Pins of the judge card's probes on passages built by hand: the original passage kept first and whole, filler about
as long as the passage and no longer, every injection form appended as written, and listwise groups of the asked
size that keep a question's relevant passage."""

from __future__ import annotations

import pytest

from assay.pipelines.judgecheck.probes import INJECTIONS, groups, injected, padded, stuffed
from assay.pipelines.judgecheck.source import ProbeItem


def _item(qid: str, chunk: str, text: str, relevant: bool | None = False) -> ProbeItem:
    return ProbeItem(qid, f"Question {qid} about herons?", chunk, text, None, relevant)


def test_a_probe_keeps_leading_text_and_drops_only_trailing_space() -> None:
    item = _item("q1", "a", "  Indented first line.\n  Second line.  \n\n")
    for altered in (*injected([item], "plain"), *stuffed([item])):
        assert altered.text.startswith("  Indented first line.\n  Second line.\n\n")


@pytest.mark.parametrize("form", sorted(INJECTIONS))
def test_every_injection_form_is_appended_after_a_blank_line_as_written(form: str) -> None:
    item = _item("q1", "a", "Herons nest in colonies.")
    [altered] = injected([item], form)
    assert altered.item is item
    assert altered.text == f"Herons nest in colonies.\n\n{INJECTIONS[form]}"


def test_filler_stops_once_it_is_as_long_as_the_passage() -> None:
    item = _item("q1", "a", "x" * 20)  # 20 characters
    # other questions' passages: sentences of exactly 10 characters each ("Aaaaaaaaa." and so on)
    others = [_item("q2", f"o{k}", " ".join(f"{c * 9}." for c in "ABCDEFGH"[2 * k : 2 * k + 2])) for k in range(4)]
    [altered] = padded([item], [item, *others], seed=1)
    head, filler = altered.text.split("\n\n")
    assert head == "x" * 20
    chosen = filler.split(" ")
    assert len(chosen) == 2 and all(len(s) == 10 and s.endswith(".") for s in chosen)  # 10 + 10 reaches 20: stop
    assert filler == " ".join(chosen)


def test_filler_takes_no_sentence_of_the_item_own_question() -> None:
    item = _item("q1", "a", "Herons stand still for a long time.")
    sibling = _item("q1", "b", "Sibling sentence one. Sibling sentence two.")
    other = _item("q2", "c", "Other sentence one. Other sentence two. Other sentence three.")
    [altered] = padded([item], [item, sibling, other], seed=0)
    assert "Sibling" not in altered.text and "Other sentence" in altered.text


def test_groups_have_the_asked_size_and_a_short_question_does_not_stop_the_others() -> None:
    items = [_item("a", "a0", "only one", True)]  # sorts first and has too few passages
    for qid in ("b", "c"):
        items += [_item(qid, f"{qid}{k}", f"text {k}", k == 0) for k in range(6)]
    for size in (2, 3, 4, 5):
        made = groups(items, size=size, count=5, seed=0)
        assert [len(g) for g in made] == [size, size]
        assert [{item.query_id for item in g} for g in made] == [{"b"}, {"c"}]
        assert all(len({item.chunk_id for item in g}) == size for g in made)
    assert len(groups(items, size=4, count=1, seed=0)) == 1


def test_a_question_with_one_relevant_passage_has_it_in_every_group() -> None:
    # one relevant, one known irrelevant and six of unknown relevance per question: the relevant passage goes first
    items = []
    for q in range(12):
        items.append(_item(f"q{q:02}", f"q{q}r", "relevant", True))
        items.append(_item(f"q{q:02}", f"q{q}x", "irrelevant", False))
        items += [_item(f"q{q:02}", f"q{q}u{k}", "unknown", None) for k in range(6)]
    for seed in range(3):
        made = groups(items, size=2, count=12, seed=seed)
        assert len(made) == 12
        assert all(any(item.relevant is True for item in g) for g in made)
