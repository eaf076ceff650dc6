"""The deterministic checks of criteria files, exact on a table of hand-made cases (the expected values are read off
each answer by hand), and the questions they cannot run on left unscored with the reason."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import jsonschema
import pytest

from assay.judge.checks import CannotRun, CheckSpecError, cites_passage, matches_schema, parse_check

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


# more hand-made cases, at the edges of each kind (bounds included, case kept unless ignored, search not match)
EDGES: list[tuple[dict[str, Any], str, float]] = [
    ({"kind": "not_contains", "text": "promise"}, "We Promise a refund.", 1.0),  # case kept without ignore_case
    ({"kind": "not_contains", "text": ["promise", "guarantee"], "ignore_case": False}, "A GUARANTEE.", 1.0),
    ({"kind": "contains", "text": "Days", "ignore_case": False}, "30 days", 0.0),
    ({"kind": "contains", "text": ["DAYS", "Receipt"], "ignore_case": True}, "30 days with the receipt", 1.0),
    ({"kind": "regex", "pattern": "^refund"}, "Refund in 5 days", 0.0),  # case kept
    ({"kind": "regex", "pattern": "days"}, "within 30 days", 1.0),  # found anywhere, not only at the start
    ({"kind": "length", "min_words": 2}, "two words", 1.0),
    ({"kind": "length", "min_words": 3}, "two words", 0.0),
    ({"kind": "length", "max_chars": 9}, "two words", 1.0),
    ({"kind": "length", "max_chars": 8}, "two words", 0.0),
    ({"kind": "length", "min_chars": 9, "max_chars": 9}, "two words", 1.0),  # equal bounds are allowed
    ({"kind": "length", "min_words": 1, "max_chars": 3}, "two words", 0.0),  # every bound must hold
    ({"kind": "cites"}, 'It says "accepted within 30 days".', 1.0),  # exactly four words
    ({"kind": "cites"}, 'It says "two year warranty against".', 1.0),  # the second passage
    ({"kind": "cites"}, 'It says "a quote" and "the Alder kettle carries".', 1.0),  # a later quotation
    ({"kind": "cites"}, "It says \u201cthe Alder kettle carries\u201d.", 1.0),
    ({"kind": "cites", "min_quote_words": 5}, 'It says "accepted within 30 days".', 0.0),
    ({"kind": "json_schema", "schema": {"type": "array"}}, '```\n["a"]\n```', 1.0),  # a fence without "json"
    ({"kind": "json_schema", "schema": {"type": "array"}}, '  ["a"]  ', 1.0),
    ({"kind": "json_schema", "schema": {"type": ["string", "null"]}}, "null", 1.0),
    ({"kind": "json_schema", "schema": {"type": ["string", "null"]}}, "3", 0.0),
    ({"kind": "json_schema", "schema": {"type": "integer"}}, "3.0", 1.0),  # JSON Schema: a whole number
    ({"kind": "json_schema", "schema": {"type": "number"}}, "true", 0.0),  # a boolean is not a number
    ({"kind": "json_schema", "schema": {"type": "integer"}}, "false", 0.0),
    ({"kind": "json_schema", "schema": {"type": "boolean"}}, "false", 1.0),
    ({"kind": "json_schema", "schema": {"type": "string"}}, '"x"', 1.0),
    ({"kind": "json_schema", "schema": {"type": "object"}}, "[]", 0.0),
    ({"kind": "json_schema", "schema": {"type": "array"}}, "{}", 0.0),
    ({"kind": "json_schema", "schema": {"enum": ["a", "b"]}}, '"b"', 1.0),
    ({"kind": "json_schema", "schema": {"enum": ["a", "b"]}}, '"c"', 0.0),
    ({"kind": "json_schema", "schema": {"const": 3}}, "3", 1.0),
    ({"kind": "json_schema", "schema": {"const": 3}}, "4", 0.0),
    ({"kind": "json_schema", "schema": {"minLength": 2, "maxLength": 3}}, '"ab"', 1.0),
    ({"kind": "json_schema", "schema": {"minLength": 2, "maxLength": 3}}, '"abc"', 1.0),
    ({"kind": "json_schema", "schema": {"minLength": 2}}, '"a"', 0.0),
    ({"kind": "json_schema", "schema": {"maxLength": 3}}, '"abcd"', 0.0),
    ({"kind": "json_schema", "schema": {"minimum": 2, "maximum": 4}}, "2", 1.0),
    ({"kind": "json_schema", "schema": {"minimum": 2, "maximum": 4}}, "4", 1.0),
    ({"kind": "json_schema", "schema": {"minimum": 2, "maximum": 4}}, "4.5", 0.0),
    ({"kind": "json_schema", "schema": {"minimum": 2}}, '"a"', 1.0),  # bounds of numbers only
    ({"kind": "json_schema", "schema": {"minItems": 2}}, "[1]", 0.0),
    ({"kind": "json_schema", "schema": {"minItems": 1, "maxItems": 1}}, "[1]", 1.0),
    ({"kind": "json_schema", "schema": {"items": {"type": "integer"}}}, "[1, 2]", 1.0),
    ({"kind": "json_schema", "schema": {"items": {"type": "integer"}}}, '[1, "2"]', 0.0),
    ({"kind": "json_schema", "schema": {"additionalProperties": {"type": "integer"}}}, '{"a": 1}', 1.0),
    ({"kind": "json_schema", "schema": {"additionalProperties": {"type": "integer"}}}, '{"a": "1"}', 0.0),
    ({"kind": "json_schema", "schema": {"properties": {"a": {"type": "string"}}}}, '{"a": 1}', 0.0),
    ({"kind": "json_schema", "schema": {"properties": {"a": {"type": "string"}}}}, '{"b": 1}', 1.0),
    ({"kind": "json_schema", "schema": {"required": ["a"], "additionalProperties": True}}, '{"a": 1, "b": 2}', 1.0),
    ({"kind": "json_schema", "schema": {"type": "object", "required": ["a"]}}, "{}", 0.0),
]


@pytest.mark.parametrize(("table", "answer", "expected"), EDGES)
def test_each_check_scores_the_edge_cases(table: dict[str, Any], answer: str, expected: float) -> None:
    check = parse_check(table, Path("."))
    assert check.score("How long do returns take?", answer, PASSAGES) == expected


@pytest.mark.parametrize(("table", "answer"), [(t, a) for t, a, _ in EDGES if t["kind"] == "json_schema"])
def test_the_edge_schemas_agree_with_jsonschema(table: dict[str, Any], answer: str) -> None:
    import json

    text = answer.strip().removeprefix("```\n").removesuffix("\n```")
    expected = jsonschema.Draft202012Validator(table["schema"]).is_valid(json.loads(text))
    assert matches_schema(json.loads(text), table["schema"]) is expected


def test_each_kind_says_what_it_reads_and_only_cites_needs_a_passage(tmp_path: Path) -> None:
    tables = {
        "contains": {"kind": "contains", "text": "a"},
        "not_contains": {"kind": "not_contains", "text": "a"},
        "regex": {"kind": "regex", "pattern": "a"},
        "json_schema": {"kind": "json_schema", "schema": {"type": "string"}},
        "length": {"kind": "length", "max_chars": 5},
        "cites": {"kind": "cites"},
        "python": {"kind": "python", "function": "reads_checks:count"},
    }
    folder = _named(tmp_path, "reads_checks", "def count(question, answer, passages):\n    return len(passages)\n")
    checks = {kind: parse_check(table, folder) for kind, table in tables.items()}
    assert {kind: (c.kind, c.reads) for kind, c in checks.items()} == {
        "contains": ("contains", ("answer",)), "not_contains": ("not_contains", ("answer",)),
        "regex": ("regex", ("answer",)), "json_schema": ("json_schema", ("answer",)),
        "length": ("length", ("answer",)), "cites": ("cites", ("answer", "passages")),
        "python": ("python", ("question", "answer", "passages")),
    }  # fmt: skip
    assert checks["contains"].score("q", "abc", []) == 1.0  # no passage: only a citation needs one
    assert checks["python"].score("q", "abc", []) == 0.0
    assert checks["python"].score("q", "abc", ("x", "y")) == 2.0  # a number of its own


def test_a_python_callable_is_imported_beside_the_file_and_its_odd_returns_are_refused(tmp_path: Path) -> None:
    import sys

    before = list(sys.path)
    folder = _named(
        tmp_path,
        "odd_checks",
        "import math\n"
        "def kinds(question, answer, passages):\n"
        "    return isinstance(passages, list)\n"
        "def nan(question, answer, passages):\n"
        "    return math.nan\n"
        "def whole(question, answer, passages):\n"
        "    return 1\n"
        "def nothing(question, answer, passages):\n"
        "    return None\n"
        "NOT_A_FUNCTION = 3\n",
    )
    kinds = parse_check({"kind": "python", "function": "odd_checks:kinds"}, folder)
    assert sys.path == before  # the folder was on the path for the import only
    assert kinds.score("q", "a", ("p",)) == 1.0  # the passages arrive as a list
    assert parse_check({"kind": "python", "function": "odd_checks:whole"}, folder).score("q", "a", []) == 1.0
    for name in ("nan", "nothing"):
        check = parse_check({"kind": "python", "function": f"odd_checks:{name}"}, folder)
        with pytest.raises(CannotRun, match=f"odd_checks:{name} returned"):
            check.score("q", "a", [])
    with pytest.raises(CheckSpecError, match="'odd_checks:NOT_A_FUNCTION' is not callable") as caught:
        parse_check({"kind": "python", "function": "odd_checks:NOT_A_FUNCTION"}, folder)
    assert caught.value.key == "function" and caught.value.fix == "name a function of the module"
    with pytest.raises(CheckSpecError, match=r"cannot be imported \(AttributeError") as missing:
        parse_check({"kind": "python", "function": "odd_checks:absent"}, folder)
    assert "beside the criterion file" in missing.value.fix


@pytest.mark.parametrize(
    ("table", "key", "words"),
    [
        ({}, "kind", "check kind None is not one assay has"),
        ({"kind": "contains", "text": "x", "ignore_case": "yes"}, "ignore_case", "ignore_case must be true or false"),
        ({"kind": "regex", "pattern": "x", "ignore_case": 1}, "ignore_case", "ignore_case must be true or false"),
        ({"kind": "contains", "text": []}, "text", "non-empty string"),
        ({"kind": "contains", "text": ["a", ""]}, "text", "non-empty string"),
        ({"kind": "contains", "text": ["a", 3]}, "text", "non-empty string"),
        ({"kind": "contains", "text": ""}, "text", "non-empty string"),
        ({"kind": "contains", "text": 3}, "text", "non-empty string"),
        (
            {"kind": "not_contains", "text": "x", "pattern": "y"},
            "pattern",
            "unknown key 'pattern' for a not_contains check; a not_contains check takes ignore_case, kind, text",
        ),
        ({"kind": "regex"}, "pattern", "pattern must be a non-empty string"),
        ({"kind": "regex", "pattern": ""}, "pattern", "pattern must be a non-empty string"),
        ({"kind": "length", "min_chars": -1}, "min_chars", "min_chars must be a whole number >= 0"),
        ({"kind": "length", "max_words": True}, "max_words", "max_words must be a whole number"),
        ({"kind": "length", "max_chars": 2.5}, "max_chars", "max_chars must be a whole number"),
        ({"kind": "length", "min_chars": 9, "max_chars": 3}, "max_chars", "max_chars 3 is below min_chars 9"),
        ({"kind": "cites", "min_quote_words": 0}, "min_quote_words", "min_quote_words must be a whole number >= 1"),
        ({"kind": "cites", "min_quote_words": True}, "min_quote_words", "min_quote_words must be"),
        ({"kind": "cites", "min_quote_words": "4"}, "min_quote_words", "min_quote_words must be"),
        ({"kind": "json_schema"}, "schema", "schema must be a table"),
        (
            {"kind": "json_schema", "schema": {"properties": {"a": {"pattern": "x"}}}},
            "schema",
            "schema.properties.a uses 'pattern'",
        ),
        ({"kind": "json_schema", "schema": {"items": {"type": "float"}}}, "schema", "schema.items: type 'float'"),
        (
            {"kind": "json_schema", "schema": {"additionalProperties": {"format": "x"}}},
            "schema",
            "schema.additionalProperties uses 'format'",
        ),
        ({"kind": "json_schema", "schema": {"type": ["string", "text"]}}, "schema", "type 'text' is not a JSON type"),
        ({"kind": "python", "function": ":f"}, "function", "not module:function"),
        ({"kind": "python", "function": "team_checks:"}, "function", "not module:function"),
        ({"kind": "python", "function": 3}, "function", "function 3 is not module:function"),
    ],
)
def test_more_checks_that_cannot_work_name_their_key(table: dict[str, Any], key: str | None, words: str) -> None:
    with pytest.raises(CheckSpecError, match=re_escape(words)) as caught:
        parse_check(table, Path("."))
    assert caught.value.key == key
    assert caught.value.fix and str(caught.value) == f"{caught.value.problem}; {caught.value.fix}"


def re_escape(text: str) -> str:
    import re

    return re.escape(text)


def _named(tmp_path: Path, name: str, body: str) -> Path:
    """A module of its own name (a module imported once stays in sys.modules for the session)."""
    (tmp_path / f"{name}.py").write_text(body, encoding="utf-8")
    return tmp_path


def test_length_bounds_may_be_zero_and_a_bad_length_table_says_exactly_what_to_write() -> None:
    assert parse_check({"kind": "length", "min_chars": 0}, Path(".")).score("q", "a", []) == 1.0
    assert parse_check({"kind": "length", "max_words": 0}, Path(".")).score("q", "a", []) == 0.0
    with pytest.raises(CheckSpecError) as caught:
        parse_check({"kind": "length"}, Path("."))
    assert (caught.value.problem, caught.value.fix) == (
        "a length check needs a bound",
        "add min_chars, max_chars, min_words or max_words",
    )
    with pytest.raises(CheckSpecError) as caught:
        parse_check({"kind": "length", "min_chars": 9, "max_chars": 3}, Path("."))
    assert (caught.value.problem, caught.value.fix) == ("max_chars 3 is below min_chars 9", "swap them")


def test_a_python_reference_splits_at_its_first_colon_and_each_refusal_says_what_to_write(tmp_path: Path) -> None:
    folder = _named(tmp_path, "colon_checks", "def f(question, answer, passages):\n    return True\n")
    with pytest.raises(CheckSpecError, match=r"'colon_checks:f:g' cannot be imported \(AttributeError") as caught:
        parse_check({"kind": "python", "function": "colon_checks:f:g"}, folder)  # attribute "f:g" of colon_checks
    assert caught.value.fix == "put the module beside the criterion file or on PYTHONPATH, and check the name"
    with pytest.raises(CheckSpecError) as caught:
        parse_check({"kind": "python", "function": "colon_checks"}, folder)
    assert caught.value.fix == 'write function = "my_checks:polite" (my_checks.py beside the file or importable)'


def test_folding_reads_the_answer_too_and_the_quote_bounds_say_what_to_write() -> None:
    shout = parse_check({"kind": "contains", "text": "days", "ignore_case": True}, Path("."))
    assert shout.score("q", "30 DAYS", []) == 1.0
    one_word = parse_check({"kind": "cites", "min_quote_words": 1}, Path("."))
    assert one_word.score("q", 'It says "warranty".', PASSAGES) == 1.0
    assert cites_passage('See "within 30 days of".', PASSAGES)  # four words: the default least
    assert not cites_passage('See "within 30 days".', PASSAGES)
    with pytest.raises(CheckSpecError) as caught:
        parse_check({"kind": "cites", "min_quote_words": 0}, Path("."))
    assert (caught.value.problem, caught.value.fix) == (
        "min_quote_words must be a whole number >= 1",
        "write min_quote_words = 4",
    )
    with pytest.raises(CheckSpecError) as caught:
        parse_check({"kind": "contains", "text": []}, Path("."))
    assert (caught.value.problem, caught.value.fix) == (
        "text must be a non-empty string or a list of them",
        'write text = "refund" or text = ["refund", "policy"]',
    )


@pytest.mark.parametrize(
    ("table", "problem", "fix"),
    [
        ({"kind": "regex", "pattern": 3}, "pattern must be a non-empty string",
         "write pattern = '\\d+ days' (a TOML literal string keeps backslashes)"),
        ({"kind": "regex", "pattern": "(open"}, "pattern '(open' is not a valid regular expression (missing ), "
         "unterminated subpattern at position 0)", "fix the expression (Python re syntax)"),
        ({"kind": "vibes"}, "check kind 'vibes' is not one assay has",
         "use one of contains, not_contains, regex, json_schema, length, cites, python"),
        ({"kind": "json_schema", "schema": "object"}, "schema must be a table",
         'write schema = { type = "object", required = ["a"] }'),
        ({"kind": "json_schema", "schema": {"format": "date"}},
         "schema uses 'format', a JSON Schema keyword this check does not read",
         "use only additionalProperties, const, description, enum, items, maxItems, maxLength, maximum, minItems, "
         "minLength, minimum, properties, required, title, type"),
        ({"kind": "json_schema", "schema": {"type": "dict"}}, "schema: type 'dict' is not a JSON type",
         "use one of object, array, string, number, integer, boolean, null"),
    ],
)  # fmt: skip
def test_a_bad_pattern_or_schema_says_exactly_what_to_write(table: dict[str, Any], problem: str, fix: str) -> None:
    with pytest.raises(CheckSpecError) as caught:
        parse_check(table, Path("."))
    assert (caught.value.problem, caught.value.fix) == (problem, fix)
