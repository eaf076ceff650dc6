"""The expected score of a judged criterion from token probabilities (assay.judge.label_probs), on hand-built
tokens: the label's place found in the text, the alternatives there mapped to labels (prefix, case, closing quote),
normalised over the labels named, and the cases with no expected score."""

from __future__ import annotations

import math

import pytest

from assay.judge.base import TokenLogprob
from assay.judge.label_probs import (
    AMBIGUOUS,
    LOW_COVERAGE,
    NO_LOGPROBS,
    NOT_FOUND,
    NOT_NAMED,
    TREE_UNANSWERED,
    expected_score,
    field_starts,
    tree_expected_score,
)

PASS_FAIL = {"pass": 1.0, "fail": 0.0}


def _tokens(*parts: str | tuple[str, list[tuple[str, float]]]) -> list[TokenLogprob]:
    """Certain tokens, except a (token, [(alternative, probability), ...]) part."""
    out = []
    for part in parts:
        if isinstance(part, str):
            out.append(TokenLogprob(part, 0.0, ((part, 0.0),)))
        else:
            token, alternatives = part
            top = tuple((t, math.log(p)) for t, p in alternatives)
            out.append(TokenLogprob(token, dict(top)[token], top))
    return out


def test_the_expected_score_weighs_each_label_by_its_probability() -> None:
    alternatives = [("pass", 0.7), ("fail", 0.2), ("Pass", 0.05), ("maybe", 0.05)]
    tokens = _tokens('{"', "reason", '":"', "fine", '","', "label", '":"', ("pass", alternatives), '"}')
    expected, coverage = expected_score(tokens, PASS_FAIL)  # type: ignore[misc]
    # pass 0.7 + Pass 0.05 (case-blind) = 0.75, fail 0.2, maybe names no label: 0.75 / 0.95 of the labels' mass
    assert expected == pytest.approx(0.75 / 0.95)
    assert coverage == pytest.approx(0.95)


def test_a_token_that_carries_the_opening_quote_is_read_after_it() -> None:
    # the value's first token is ' "fail' (space and quote before the label): alternatives must share that prefix
    alternatives = [("pass", 0.1), (' "fail', 0.6), (' "pass', 0.3)]  # the one without the prefix first
    tokens = _tokens('{"reason": "x", "label":', (' "fail', alternatives), '"}')
    expected, coverage = expected_score(tokens, PASS_FAIL)  # type: ignore[misc]
    assert expected == pytest.approx(0.3 / 0.9) and coverage == pytest.approx(0.9)  # 'pass' lacks the prefix


def test_a_closing_quote_asks_for_the_whole_label() -> None:
    scores = {"full": 1.0, "fully_wrong": 0.0}
    tokens = _tokens('{"label": "', ('full"', [('full"', 0.5), ("fully", 0.3), ('fully_wrong", "', 0.2)]), "}")
    expected, coverage = expected_score(tokens, scores)  # type: ignore[misc]
    # full" is exactly full; fully starts only fully_wrong; 'fully_wrong", "' is fully_wrong up to its first quote
    assert expected == pytest.approx(0.5) and coverage == pytest.approx(1.0)
    # 'ful"' is closed but no whole label; "full" starts both labels: nothing named
    cut = _tokens('{"label": "', ('ful"', [('ful"', 0.9), ("full", 0.1)]), "}")
    assert expected_score(cut, scores) == NOT_NAMED


def test_labels_that_share_the_first_token_have_no_expected_score() -> None:
    scores = {"partial": 0.5, "pass": 1.0}
    tokens = _tokens('{"label": "', ("pa", [("pa", 0.9), ("no", 0.1)]), 'ss"}')
    assert expected_score(tokens, scores) == AMBIGUOUS


def test_no_probabilities_no_label_field_or_no_label_named() -> None:
    assert expected_score(None, PASS_FAIL) == NO_LOGPROBS
    assert expected_score([], PASS_FAIL) == NO_LOGPROBS
    assert expected_score(_tokens('{"reason": "x"}'), PASS_FAIL) == NOT_FOUND
    tokens = _tokens('{"label": "', ("maybe", [("maybe", 0.8), ("perhaps", 0.2)]), '"}')
    assert expected_score(tokens, PASS_FAIL) == NOT_NAMED


def test_the_last_label_field_counts() -> None:
    text = '{"reason": "the \\"label\\": \\"fail\\" rule", "label": "'
    assert field_starts(text + 'pass"}', "label") == [len(text)]


def test_a_tree_weighs_every_path_by_the_yes_and_no_probabilities() -> None:
    """q1 yes -> q2, no -> none (0); q2 yes -> full (1), no -> partial (0.5). P(yes q1) = 0.8, P(yes q2) = 0.5:
    E = 0.8 x (0.5 x 1 + 0.5 x 0.5) + 0.2 x 0 = 0.6."""
    tree = {"q1": ("q2", "none"), "q2": ("full", "partial")}
    scores = {"full": 1.0, "partial": 0.5, "none": 0.0}
    tokens = _tokens(
        '{"answers": [{"id": "q1", "reason": "r", "answer": "',
        ("yes", [("yes", 0.8), ("no", 0.2)]),
        '"}, {"id": "q2", "reason": "r", "answer": "',
        ("no", [("yes", 0.5), ("no", 0.5)]),
        '"}]}',
    )
    expected, coverage = tree_expected_score(tokens, ["q1", "q2"], tree, scores, "q1")  # type: ignore[misc]
    assert expected == pytest.approx(0.6) and coverage == pytest.approx(1.0)
    # answered in the other order: the answers are matched to their ids in the text's order
    swapped = _tokens(
        '{"answers": [{"id": "q2", "answer": "',
        ("no", [("yes", 0.5), ("no", 0.5)]),
        '"}, {"id": "q1", "answer": "',
        ("yes", [("yes", 0.8), ("no", 0.2)]),
        '"}]}',
    )
    assert tree_expected_score(swapped, ["q2", "q1"], tree, scores, "q1")[0] == pytest.approx(0.6)  # type: ignore[index]
    one = _tokens('{"answers": [{"id": "q1", "answer": "', ("yes", [("yes", 0.8), ("no", 0.2)]), '"}]}')
    assert tree_expected_score(one, ["q1"], tree, scores, "q1") == TREE_UNANSWERED  # q2 is on a path
    assert tree_expected_score(None, ["q1"], tree, scores, "q1") == NO_LOGPROBS
    # a looping tree (a file's would be refused when read) ends, with no expected score
    loop = {"q1": ("q2", "none"), "q2": ("q1", "full")}
    assert tree_expected_score(tokens, ["q1", "q2"], loop, scores, "q1") == TREE_UNANSWERED
    by_no = {"q1": ("none", "q2"), "q2": ("full", "q1")}  # the loop through the no answers
    assert tree_expected_score(tokens, ["q1", "q2"], by_no, scores, "q1") == TREE_UNANSWERED


def test_the_servers_logprobs_are_read_or_left_out_when_not_of_their_shape() -> None:
    from assay.judge.backends.http import parse_completion, token_logprobs

    given = {
        "content": [
            {
                "token": "pass",
                "logprob": -0.1,
                "top_logprobs": [{"token": "pass", "logprob": -0.1}, {"token": "fail", "logprob": -2.3}],
            }
        ]
    }
    assert token_logprobs(given) == (TokenLogprob("pass", -0.1, (("pass", -0.1), ("fail", -2.3))),)
    assert token_logprobs(None) is None and token_logprobs({"content": []}) is None
    assert token_logprobs({"content": [{"logprob": -1}]}) is None  # no token text: not read at all
    data = {"choices": [{"message": {"content": "{}"}, "finish_reason": "stop", "logprobs": given}], "usage": {}}
    assert parse_completion(data, "u").logprobs == token_logprobs(given)
    data["choices"][0].pop("logprobs")
    assert parse_completion(data, "u").logprobs is None


def test_labels_holding_under_half_the_probability_give_no_expected_score() -> None:
    """Normalised over the labels, 0.3 pass and 0.1 fail would say 0.75, but the judge wrote something else 60% of
    the time there: the labels' distribution is not its certainty. At exactly half the score stands."""
    minority = _tokens('{"label": "', ("pass", [("pass", 0.3), ("fail", 0.1), ("maybe", 0.6)]), '"}')
    assert expected_score(minority, PASS_FAIL) == LOW_COVERAGE
    half = _tokens('{"label": "', ("pass", [("pass", 0.5), ("unsure", 0.5)]), '"}')
    assert expected_score(half, PASS_FAIL) == (1.0, 0.5)
    tree = {"q1": ("full", "q2"), "q2": ("partial", "none")}
    scores = {"full": 1.0, "partial": 0.5, "none": 0.0}
    low = _tokens(
        '{"answers": [{"id": "q1", "answer": "', ("no", [("no", 0.9), ("yes", 0.1)]),
        '"}, {"id": "q2", "answer": "', ("yes", [("yes", 0.3), ("no", 0.1), ("perhaps", 0.6)]), '"}]}',
    )  # fmt: skip
    assert tree_expected_score(low, ["q1", "q2"], tree, scores, "q1") == LOW_COVERAGE  # q2 is on a path
