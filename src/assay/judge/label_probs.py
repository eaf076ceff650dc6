"""A judged criterion's expected score from the judge's token probabilities (``expected = true`` in its file).

The label the judge writes is one draw; the probabilities of the tokens it could have written there say how sure it
was. Where the server returns them (``logprobs`` with ``top_logprobs``), the expected score is the declared scores
weighted by the probability of each label, a second metric beside the label's own score (``criterion:NAME|expected``;
the label's score stays the metric of record, never rescaled).

The rule, on the answer's tokens (:class:`~assay.judge.base.TokenLogprob`) joined back into its text:

1. Find where a string field's value starts (the last ``"label": "`` of a scale's verdict; each ``"answer": "`` of a
   decision tree's answers, in order) and the token that covers that place. What that token holds before the place
   (an opening quote, a space) is its prefix.
2. Each alternative at that place (``top``, the token itself among them) that starts with the prefix names the value
   by what follows: a choice (a label, ``yes``/``no``) is named when the text is the start of exactly that one
   choice, compared case-blind (text up to a closing quote must be the whole choice). An alternative that names no
   choice is left out; one that starts several choices cannot be told apart at the first token.
3. Each choice's probability is the sum of its alternatives' probabilities, normalised over the choices named
   (``coverage`` is that sum before normalising: how much of the place's probability the choices hold).

No expected score, with the reason, when the answer has no probabilities (:data:`NO_LOGPROBS`), the field is not
found in the text (:data:`NOT_FOUND`), the token written there starts several choices (:data:`AMBIGUOUS`), no
alternative names a choice (:data:`NOT_NAMED`), or the choices hold less than half of the place's probability
(:data:`LOW_COVERAGE`, below :data:`MIN_COVERAGE`): normalised over the choices, such a distribution would describe
what the judge does in the minority of its draws where it writes a choice at all, not how sure it is of the one it
wrote. (The caller also gives none when the vote itself is unscored, e.g. a label outside the scale: there is no
label whose certainty to weigh.)

A decision tree's expected score walks every path: at each question the judge's probability of ``yes``, leaves
scored by their declared score, E(question) = P(yes) E(yes branch) + P(no) E(no branch). Every question a path
reaches must have its answer's probabilities (:data:`TREE_UNANSWERED` otherwise), with yes and no holding at least
:data:`MIN_COVERAGE` of them (:data:`LOW_COVERAGE` otherwise).
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from assay.judge.base import TokenLogprob

__all__ = [
    "AMBIGUOUS",
    "LOW_COVERAGE",
    "MIN_COVERAGE",
    "NOT_FOUND",
    "NOT_NAMED",
    "NO_LOGPROBS",
    "TREE_UNANSWERED",
    "Choices",
    "choice_probabilities",
    "expected_score",
    "field_starts",
    "tree_expected_score",
]

NO_LOGPROBS = "no_token_probabilities"
NOT_FOUND = "label_not_found_in_tokens"
AMBIGUOUS = "labels_share_first_token"
NOT_NAMED = "no_label_among_top_tokens"
TREE_UNANSWERED = "tree_question_without_probabilities"
LOW_COVERAGE = "labels_hold_under_half_the_probability"
MIN_COVERAGE = 0.5  # the choices must hold at least half of the place's probability (a majority, not a fitted value)


@dataclass(frozen=True)
class Choices:
    """The probability of each choice at one place (normalised over the choices named) and the place's coverage."""

    probs: Mapping[str, float]
    coverage: float


def field_starts(text: str, key: str) -> list[int]:
    """Where each string value of ``key`` starts in ``text`` (the character after its opening quote), in order."""
    pattern = re.compile(r'"' + re.escape(key) + r'"\s*:\s*"')
    return [found.end() for found in pattern.finditer(text)]


def choice_probabilities(tokens: Sequence[TokenLogprob], at: int, choices: Sequence[str]) -> Choices | str:
    """Steps 1-3 at character ``at`` of the tokens' text: each choice's probability, or why there is none."""
    start = 0
    for token in tokens:
        end = start + len(token.token)
        if start <= at < end:
            return _at(token, token.token[: at - start], choices)
        start = end
    return NOT_FOUND


def _named(rest: str, choices: Sequence[str]) -> list[str]:
    """The choices ``rest`` (what an alternative writes after the prefix) can be the start of."""
    word, quote, _ = rest.partition('"')
    closed, word = bool(quote), word.casefold()
    if not word:
        return []
    if closed:
        return [c for c in choices if c.casefold() == word]
    return [c for c in choices if c.casefold().startswith(word)]


def _at(token: TokenLogprob, prefix: str, choices: Sequence[str]) -> Choices | str:
    if len(_named(token.token[len(prefix) :], choices)) > 1:
        return AMBIGUOUS
    mass = dict.fromkeys(choices, 0.0)
    for text, logprob in token.top or ((token.token, token.logprob),):
        if not text.startswith(prefix):
            continue
        named = _named(text[len(prefix) :], choices)
        if len(named) == 1:
            mass[named[0]] += math.exp(logprob)
    total = sum(mass.values())
    if total <= 0.0:
        return NOT_NAMED
    return Choices({c: p / total for c, p in mass.items()}, total)


def expected_score(tokens: Sequence[TokenLogprob] | None, scores: Mapping[str, float]) -> tuple[float, float] | str:
    """A scale's expected score: (sum of P(label) x declared score, coverage), from the last ``"label"`` value of the
    answer; or why there is none (module doc)."""
    if not tokens:
        return NO_LOGPROBS
    starts = field_starts("".join(t.token for t in tokens), "label")
    if not starts:
        return NOT_FOUND
    found = choice_probabilities(tokens, starts[-1], list(scores))
    if isinstance(found, str):
        return found
    if found.coverage < MIN_COVERAGE:
        return LOW_COVERAGE
    return sum(p * scores[c] for c, p in found.probs.items()), found.coverage


def tree_expected_score(
    tokens: Sequence[TokenLogprob] | None,
    order: Sequence[str],
    tree: Mapping[str, tuple[str, str]],
    scores: Mapping[str, float],
    first: str,
) -> tuple[float, float] | str:
    """A decision tree's expected score (module doc): ``order`` the question ids as the judge answered them (one
    ``"answer"`` value each, in the text's order), ``tree`` id -> (yes target, no target), ``scores`` the labels'.
    Returns (expected score, the lowest coverage of a question on the paths), or why there is none."""
    if not tokens:
        return NO_LOGPROBS
    starts = field_starts("".join(t.token for t in tokens), "answer")
    if len(starts) != len(order):
        return NOT_FOUND
    found = {q: choice_probabilities(tokens, starts[i], ["yes", "no"]) for i, q in enumerate(order)}
    p_yes = {q: one for q, one in found.items() if isinstance(one, Choices)}
    used: list[float] = []

    def value(node: str, path: frozenset[str]) -> float | None:
        if node in scores:
            return scores[node]
        if node in path or node not in p_yes:  # a loop (a tree read from a file has none) or no probabilities
            return None
        used.append(p_yes[node].coverage)
        yes, no = value(tree[node][0], path | {node}), value(tree[node][1], path | {node})
        if yes is None or no is None:
            return None
        return p_yes[node].probs["yes"] * yes + p_yes[node].probs["no"] * no

    result = value(first, frozenset())
    if result is None:
        return TREE_UNANSWERED
    if min(used) < MIN_COVERAGE:
        return LOW_COVERAGE
    return result, min(used)
