"""Offline questions read like a person's: several phrasings per type over a real corpus, the same on every run."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections import defaultdict
from pathlib import Path

import pytest

import assay
from assay.judge.offline_phrasing import choose, front, gerund, invert, topic, voice
from assay.judge.offline_questions import Source, generate

DEMO = Path(assay.__file__).parent / "_datasets" / "demo" / "corpus"
SINGLE = ["factoid", "numeric", "procedural", "conditional", "explanatory", "unanswerable"]
PAIRED = ["comparison", "multi-hop"]

_QUESTIONS = """
import json, sys
from pathlib import Path
from assay.judge.offline_questions import Source, generate
from assay.pipelines.bootstrap import DEMO_SETTINGS, prepare_corpus
_, chunks, _ = prepare_corpus(Path(sys.argv[1]), DEMO_SETTINGS)
sources = [Source(c.id, c.text, " > ".join(c.heading_path)) for c in chunks]
out = {}
for i, source in enumerate(sources):
    for kind in ("factoid", "numeric", "procedural", "conditional", "explanatory", "unanswerable"):
        out[f"{source.id}|{kind}"] = generate([source], kind).question
    for kind in ("comparison", "multi-hop"):
        out[f"{source.id}|{kind}"] = generate([source, sources[(i + 7) % len(sources)]], kind).question
print(json.dumps(out, sort_keys=True))
"""


def _demo_questions(seed: str) -> dict[str, str]:
    env = {**os.environ, "PYTHONHASHSEED": seed}
    command = [sys.executable, "-c", _QUESTIONS, str(DEMO)]
    run = subprocess.run(command, capture_output=True, text=True, env=env, check=False)
    assert run.returncode == 0, run.stderr
    questions: dict[str, str] = json.loads(run.stdout)
    return questions


@pytest.fixture(scope="module")
def demo_questions() -> dict[str, str]:
    return _demo_questions("1")


def test_demo_questions_are_the_same_whatever_the_hash_seed(demo_questions: dict[str, str]) -> None:
    assert _demo_questions("2") == demo_questions


def test_each_type_is_asked_in_several_forms_over_the_demo_corpus(demo_questions: dict[str, str]) -> None:
    # a form is how a question opens ("how many", "what if", "what is", "can i"): a person varies it
    forms: dict[str, set[str]] = defaultdict(set)
    for key, question in demo_questions.items():
        assert question.endswith("?") and question[0].isupper(), question
        forms[key.split("|")[1]].add(" ".join(question.casefold().split()[:2]))
    for kind in SINGLE + PAIRED:
        assert len(forms[kind]) >= 3, (kind, sorted(forms[kind]))


def test_questions_name_no_unseen_passage_and_rarely_echo(demo_questions: dict[str, str]) -> None:
    questions = list(demo_questions.values())
    assert not [q for q in questions if "the passage" in q.casefold() or "the text" in q.casefold()]
    # an echo question keeps the statement's order with the question words inside ("X is valid for how many days?")
    echoes = [q for q in questions if q.split()[0].casefold() not in _OPENERS]
    assert len(echoes) < 0.25 * len(questions), echoes[:10]


_OPENERS = set(
    "what how why when which who where can could do does is are for within in on after before by from at of over under "
    "about up to".split()
)


def test_topics_from_headings_read_as_noun_phrases() -> None:
    assert topic("Shipping policy", "") == "the shipping policy"
    assert topic("How to rent a tent (and other gear)", "") == "renting a tent"
    assert topic("3. Create the ticket", "") == "creating the ticket"
    assert topic("Mend Shop: repair service terms and prices", "The Mend Shop mends.") == "Mend Shop"
    assert topic("Our story", "") == "our story"
    assert [gerund(v) for v in ("rent", "make", "ship", "register", "see")] == [
        "renting", "making", "shipping", "registering", "seeing"
    ]  # fmt: skip


def test_statements_turn_into_question_order_in_the_askers_voice() -> None:
    assert invert("The link is valid", "") == ("is", "the link", "valid")
    assert invert("Ranger costs", "Scout and Ranger cost more.") == ("does", "Ranger", "cost")
    assert invert("refunds go to the card", "") == ("do", "refunds", "go to the card")
    assert invert("if you go there", "") is None
    assert voice("your parcel arrives and you call us") == "my parcel arrives and I call us"
    assert front("how many minutes", "The link is valid for ", "", "") == "For how many minutes is the link valid?"
    assert (
        front("how much", "Scout is free; Ranger costs ", "a year", "Scout or Ranger")
        == "How much does Ranger cost a year?"
    )


def test_choice_is_by_content_not_by_call_order() -> None:
    options = ["a", "b", "c"]
    picks = [choose(options, f"sentence {i}") for i in range(60)]
    assert picks == [choose(options, f"sentence {i}") for i in range(60)] and set(picks) == set(options)
    assert generate([Source("c", "If your order is late, contact us.")], "conditional").question in {
        "What happens if my order is late?", "What if my order is late?", "What should I do if my order is late?"
    }  # fmt: skip
