"""The deterministic checks of criteria files, exact on a table of hand-made cases (the expected values are read off
each answer by hand), and the questions they cannot run on left unscored with the reason."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import jsonschema
import pytest

from assay.judge.checks import CannotRun, CheckSpecError, matches_schema, parse_check

PASSAGES = [
    "Returns are accepted within 30 days of delivery with the receipt.",
    "The Alder kettle carries a two year warranty against defects.",
]
SCHEMA = {
    "type": "object",
    "required": ["days", "needs_receipt"],
    "properties": {
        "days": {"type": "integer", "minimum": 1, "maximum": 365},
        "needs_receipt": {"type": "boolean"},
        "notes": {"type": "array", "items": {"type": "string", "maxLength": 10}, "maxItems": 2},
    },
    "additionalProperties": False,
}

# (check table, answer, expected score)
CASES: list[tuple[dict[str, Any], str, float]] = [
    ({"kind": "contains", "text": "30 days"}, "You have 30 days to return it.", 1.0),
    ({"kind": "contains", "text": "30 Days"}, "You have 30 days to return it.", 0.0),
    ({"kind": "contains", "text": "30 Days", "ignore_case": True}, "You have 30 days to return it.", 1.0),
    ({"kind": "contains", "text": ["30 days", "receipt"]}, "You have 30 days to return it.", 0.0),
    ({"kind": "contains", "text": ["30 days", "receipt"]}, "30 days, with the receipt.", 1.0),
    ({"kind": "not_contains", "text": ["guarantee", "promise"]}, "We promise a refund by Friday.", 0.0),
    ({"kind": "not_contains", "text": ["guarantee", "promise"]}, "Refunds follow the policy.", 1.0),
    ({"kind": "not_contains", "text": "PROMISE", "ignore_case": True}, "We promise.", 0.0),
    ({"kind": "regex", "pattern": r"\b\d+ days\b"}, "within 30 days", 1.0),
    ({"kind": "regex", "pattern": r"\b\d+ days\b"}, "within thirty days", 0.0),
    ({"kind": "regex", "pattern": r"^refund", "ignore_case": True}, "Refund in 5 days", 1.0),
    ({"kind": "length", "max_words": 5}, "one two three four five", 1.0),
    ({"kind": "length", "max_words": 5}, "one two three four five six", 0.0),
    ({"kind": "length", "min_chars": 10, "max_chars": 12}, "abcdefghij", 1.0),
    ({"kind": "length", "min_chars": 10, "max_chars": 12}, "abcdefghi", 0.0),
    ({"kind": "length", "min_chars": 10, "max_chars": 12}, "abcdefghijklm", 0.0),
    ({"kind": "cites"}, "Returns take 30 days [1].", 1.0),
    ({"kind": "cites"}, "Returns take 30 days [2].", 1.0),
    ({"kind": "cites"}, "Returns take 30 days [3].", 0.0),  # only two passages
    ({"kind": "cites"}, "Returns take 30 days [0].", 0.0),
    ({"kind": "cites"}, 'The policy says "accepted within 30  DAYS of delivery".', 1.0),  # case and spaces folded
    ({"kind": "cites"}, "The policy says \u201cwithin 30 days of delivery\u201d.", 1.0),  # curly quotes
    ({"kind": "cites"}, 'The policy says "within 30 days".', 0.0),  # three words: under the four asked for
    ({"kind": "cites", "min_quote_words": 3}, 'The policy says "within 30 days".', 1.0),
    ({"kind": "cites"}, 'It says "returns are welcome for a whole year".', 0.0),  # not in any passage
    ({"kind": "json_schema", "schema": SCHEMA}, '{"days": 30, "needs_receipt": true}', 1.0),
    ({"kind": "json_schema", "schema": SCHEMA}, '```json\n{"days": 30, "needs_receipt": true}\n```', 1.0),
    ({"kind": "json_schema", "schema": SCHEMA}, '{"days": 30}', 0.0),  # a required key missing
    ({"kind": "json_schema", "schema": SCHEMA}, '{"days": 0, "needs_receipt": true}', 0.0),  # under the minimum
    ({"kind": "json_schema", "schema": SCHEMA}, '{"days": 30.5, "needs_receipt": true}', 0.0),  # not an integer
    ({"kind": "json_schema", "schema": SCHEMA}, '{"days": 30, "needs_receipt": "yes"}', 0.0),
    ({"kind": "json_schema", "schema": SCHEMA}, '{"days": 30, "needs_receipt": true, "x": 1}', 0.0),  # extra key
    ({"kind": "json_schema", "schema": SCHEMA}, '{"days": 3, "needs_receipt": false, "notes": ["a", "b"]}', 1.0),
    ({"kind": "json_schema", "schema": SCHEMA}, '{"days": 3, "needs_receipt": false, "notes": ["a", "b", "c"]}', 0.0),
    ({"kind": "json_schema", "schema": SCHEMA}, '{"days": 3, "needs_receipt": false, "notes": ["far too long"]}', 0.0),
    ({"kind": "json_schema", "schema": SCHEMA}, "30 days, receipt needed", 0.0),  # not JSON at all
]


@pytest.mark.parametrize(("table", "answer", "expected"), CASES)
def test_each_check_scores_the_hand_made_case(table: dict[str, Any], answer: str, expected: float) -> None:
    check = parse_check(table, Path("."))
    assert check.score("How long do returns take?", answer, PASSAGES) == expected


@pytest.mark.parametrize("answer", [case[1] for case in CASES if case[0]["kind"] == "json_schema"])
def test_the_schema_subset_agrees_with_jsonschema(answer: str) -> None:
    import json

    text = answer.removeprefix("```json\n").removesuffix("\n```")
    try:
        value = json.loads(text)
    except ValueError:
        return
    expected = jsonschema.Draft202012Validator(SCHEMA).is_valid(value)
    assert matches_schema(value, SCHEMA) is expected


def test_a_check_cannot_run_without_an_answer_or_without_a_passage_to_cite() -> None:
    contains = parse_check({"kind": "contains", "text": "x"}, Path("."))
    for missing in (None, "", "  \n"):
        with pytest.raises(CannotRun, match="no answer for this question"):
            contains.score("q", missing, PASSAGES)
    cites = parse_check({"kind": "cites"}, Path("."))
    with pytest.raises(CannotRun, match="no retrieved passage"):
        cites.score("q", "See [1].", [])


def _module(tmp_path: Path, body: str) -> Path:
    (tmp_path / "team_checks.py").write_text(body, encoding="utf-8")
    return tmp_path


def test_a_python_callable_gets_question_answer_and_passages(tmp_path: Path) -> None:
    folder = _module(
        tmp_path,
        "def mentions(question, answer, passages):\n"
        "    return question.split(',')[0].lower() in answer.lower() and len(passages) == 2\n"
        "def share(question, answer, passages):\n"
        "    return sum(p in answer for p in passages) / len(passages)\n"
        "def broken(question, answer, passages):\n"
        "    raise KeyError('nope')\n"
        "def words(question, answer, passages):\n"
        "    return 'many'\n",
    )
    mentions = parse_check({"kind": "python", "function": "team_checks:mentions"}, folder)
    assert mentions.reads == ("question", "answer", "passages")
    assert mentions.score("Returns, how long?", "Returns take 30 days.", PASSAGES) == 1.0
    assert mentions.score("Refunds, how long?", "Returns take 30 days.", PASSAGES) == 0.0
    share = parse_check({"kind": "python", "function": "team_checks:share"}, folder)
    assert share.score("q", PASSAGES[1], PASSAGES) == 0.5
    broken = parse_check({"kind": "python", "function": "team_checks:broken"}, folder)
    with pytest.raises(CannotRun, match="team_checks:broken raised KeyError"):
        broken.score("q", "a", PASSAGES)
    words = parse_check({"kind": "python", "function": "team_checks:words"}, folder)
    with pytest.raises(CannotRun, match="returned 'many', not a bool or a finite number"):
        words.score("q", "a", PASSAGES)


@pytest.mark.parametrize(
    ("table", "key", "words"),
    [
        ({"kind": "spellcheck"}, "kind", "use one of contains"),
        ({"kind": "contains"}, "text", "text must be a non-empty string"),
        ({"kind": "contains", "text": "x", "case": True}, "case", "unknown key 'case'"),
        ({"kind": "regex", "pattern": "(unclosed"}, "pattern", "not a valid regular expression"),
        ({"kind": "length"}, None, "needs a bound"),
        ({"kind": "length", "min_words": 9, "max_words": 3}, "max_words", "below min_words"),
        ({"kind": "json_schema", "schema": {"type": "object", "oneOf": []}}, "schema", "'oneOf'"),
        ({"kind": "json_schema", "schema": {"type": "dict"}}, "schema", "not a JSON type"),
        ({"kind": "python", "function": "team_checks"}, "function", "not module:function"),
        ({"kind": "python", "function": "no_such_module_here:f"}, "function", "cannot be imported"),
    ],
)
def test_a_check_that_cannot_work_names_its_key_and_the_fix(table: dict[str, Any], key: str | None, words: str) -> None:
    with pytest.raises(CheckSpecError, match=words) as caught:
        parse_check(table, Path("."))
    assert caught.value.key == key
    assert caught.value.fix
