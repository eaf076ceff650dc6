"""Relevance labels for (question, chunk) pairs, pointwise or listwise, on the TREC DL / UMBRELA 0-3 scale.

Pointwise: one ``relevance`` call per pair; the client's cache makes a label reusable across runs and systems.

Listwise (``listwise=N``): the pairs of each question are shuffled with a seeded RNG (against position bias) and
sent ``N`` at a time to ``relevance_listwise``; passages get short local ids ``1..N``. Because a group's cache key
depends on which chunks share it, each pair's result is ALSO stored under a per-pair derived key (model, listwise
prompt ref and hash, decoding params, question text, chunk text), and pairs whose derived key is cached are dropped
before grouping: a label is reused whatever the grouping. A listwise answer that lacks a passage's id, or gives it
a grade outside 0..3, leaves that pair unscored (never 0). An answer that copies an answer-shaped object written
inside the passage (:mod:`assay.judge.guards`) is unscored too, kind ``echo``: the passage was obeyed, not graded.
A group whose prompt does not fit the model's context (the server says so: unscored ``too_long``) is split in two
and each half judged again, down to one passage, so a small context costs more calls, not labels; only a single
passage too long for the context stays unscored.

A :class:`~assay.judge.panel.Panel` in place of the judge grades every pair with each of its judges (each with its
own cache, all at once) and combines the grades by the panel's rule; each combined label keeps every judge's vote.

What grading would cost, counted without calling a model, is :mod:`assay.judge.relevance_estimate`'s.
"""

from __future__ import annotations

import asyncio
import json
import random
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from assay.errors import BudgetExceeded
from assay.judge.cache import derived_key
from assay.judge.client import Judge, Judgement
from assay.judge.guards import ECHO, echoed_answer
from assay.judge.panel import NO_QUORUM, Grader, Panel, combine_grades
from assay.judge.quotes import checked_quotes
from assay.types import Provenance, RelevanceLabel, Unscored, Vote

__all__ = [
    "LISTWISE_PROMPT",
    "POINTWISE_PROMPT",
    "Graded",
    "Pair",
    "grade_pairs",
    "grade_pairs_detailed",
    "group_variables",
    "listwise_groups",
    "pair_keys",
]

POINTWISE_PROMPT = "relevance"
LISTWISE_PROMPT = "relevance_listwise"


@dataclass(frozen=True)
class Pair:
    """A (question, chunk) pair to grade."""

    query_id: str
    question: str
    chunk_id: str
    text: str


@dataclass(frozen=True)
class Graded:
    """A label with whether it came from the cache (nothing paid for it in this run)."""

    label: RelevanceLabel
    cached: bool


OnLabel = Callable[[Graded], None]
Groups = list[list[tuple[int, Pair]]]


def _label(
    judge: Judge,
    pair: Pair,
    j: Judgement[Any],
    *,
    grade: int | None = None,
    reason: str | None = None,
    unscored: Unscored | None = None,
    quotes: Sequence[str] = (),
) -> RelevanceLabel:
    provenance = Provenance(
        source="judge", model=judge.model, prompt=j.prompt, prompt_hash=j.prompt_hash, rationale=reason
    )
    kept, dropped = checked_quotes(quotes, pair.text, grade)
    return RelevanceLabel(
        query_id=pair.query_id, chunk_id=pair.chunk_id, grade=grade, provenance=provenance, unscored=unscored,
        quotes=kept or None, quotes_dropped=dropped,
    )  # fmt: skip


def _quotes(answer: Mapping[str, Any]) -> list[str]:
    """The answer's quotes (a judge that gives none, or not a list of strings, quotes nothing)."""
    quotes = answer.get("quotes")
    return [q for q in quotes if isinstance(q, str)] if isinstance(quotes, list) else []


def _echo(answer: Mapping[str, Any], pair: Pair) -> Unscored | None:
    why = echoed_answer(answer, pair.text)
    return None if why is None else Unscored(reason=why, kind=ECHO, raw=json.dumps(dict(answer)))


def _pointwise_graded(judge: Judge, pair: Pair, j: Judgement[Any]) -> Graded:
    if j.output is None:
        return Graded(_label(judge, pair, j, unscored=j.unscored), j.cached)
    data = j.output.model_dump()
    echo = _echo(data, pair)
    if echo is not None:
        return Graded(_label(judge, pair, j, unscored=echo), j.cached)
    label = _label(judge, pair, j, grade=int(data["grade"]), reason=str(data["reason"]), quotes=_quotes(data))
    return Graded(label, j.cached)


async def _pointwise(judge: Judge, pairs: Sequence[Pair], stage: str, on_label: OnLabel | None) -> list[Graded]:
    # Labels are made as answers arrive, in the idle time between responses, not all at once at the end.
    graded: list[Graded | None] = [None] * len(pairs)

    def forward(index: int, j: Judgement[Any]) -> None:
        label = graded[index] = _pointwise_graded(judge, pairs[index], j)
        if on_label is not None:
            on_label(label)

    variables = [{"question": p.question, "passage": p.text} for p in pairs]
    results = await judge.ajudge_many(POINTWISE_PROMPT, variables, stage=stage, on_result=forward)
    return [g or _pointwise_graded(judge, pair, j) for g, pair, j in zip(graded, pairs, results, strict=True)]


def pair_keys(judge: Judge, pairs: Sequence[Pair]) -> list[str]:
    """Each pair's derived key (the fields of the judge and the listwise prompt are gathered once)."""
    prompt = judge.prompt(LISTWISE_PROMPT)
    params = judge.params_for(prompt)  # the params the group calls send, --max-tokens included
    fields = {"model": judge.cache_model, "prompt": prompt.ref, "hash": prompt.content_hash, "params": params}
    return [derived_key("listwise-pair", {**fields, "question": p.question, "text": p.text}) for p in pairs]


def _cached_pair(judge: Judge, pair: Pair, raw: str | None, stage: str) -> Graded | None:
    if raw is None:
        return None
    try:
        stored = json.loads(raw)
        grade, reason = int(stored["grade"]), str(stored["reason"])
    except (ValueError, KeyError, TypeError):
        return None
    prompt = judge.prompt(LISTWISE_PROMPT)
    provenance = Provenance(
        source="judge", model=judge.model, prompt=prompt.ref, prompt_hash=prompt.content_hash, rationale=reason
    )
    judge.record_cache_hit(stage)
    kept, dropped = checked_quotes(_quotes(stored), pair.text, grade)
    label = RelevanceLabel(query_id=pair.query_id, chunk_id=pair.chunk_id, grade=grade, provenance=provenance,
                           quotes=kept or None, quotes_dropped=dropped)  # fmt: skip
    return Graded(label, True)


def listwise_groups(pairs: Sequence[tuple[int, Pair]], size: int, seed: int) -> list[list[tuple[int, Pair]]]:
    by_query: dict[str, list[tuple[int, Pair]]] = {}
    for item in pairs:
        by_query.setdefault(item[1].query_id, []).append(item)
    groups: list[list[tuple[int, Pair]]] = []
    for query_id, items in by_query.items():
        random.Random(f"{seed}:{query_id}").shuffle(items)
        groups.extend(items[i : i + size] for i in range(0, len(items), size))
    return groups


def group_variables(group: list[tuple[int, Pair]]) -> dict[str, Any]:
    passages = [{"id": str(k + 1), "text": pair.text} for k, (_, pair) in enumerate(group)]
    return {"question": group[0][1].question, "passages": passages}


def _split_answer(
    judge: Judge, group: list[tuple[int, Pair]], j: Judgement[Any]
) -> list[tuple[int, Graded, str | None]]:
    """One (index, graded, derived key to store or None) per pair of the group."""
    if j.output is None:
        return [(i, Graded(_label(judge, p, j, unscored=j.unscored), False), None) for i, p in group]
    answers: dict[str, Mapping[str, Any]] = {str(a.get("id")): a for a in j.output.model_dump().get("judgements", [])}
    out: list[tuple[int, Graded, str | None]] = []
    for k, (index, pair) in enumerate(group):
        answer = answers.get(str(k + 1))
        grade = answer.get("grade") if answer is not None else None
        if answer is None or not isinstance(grade, int) or not 0 <= grade <= 3:
            why = "no judgement for this passage" if answer is None else f"grade {grade!r} is not in 0..3"
            unscored = Unscored(reason=f"listwise answer: {why}", kind="invalid_output", raw=json.dumps(answer))
            out.append((index, Graded(_label(judge, pair, j, unscored=unscored), False), None))
            continue
        echo = _echo(answer, pair)
        if echo is not None:
            out.append((index, Graded(_label(judge, pair, j, unscored=echo), False), None))
            continue
        reason = str(answer.get("reason", ""))
        label = _label(judge, pair, j, grade=grade, reason=reason, quotes=_quotes(answer))
        out.append((index, Graded(label, j.cached), reason))
    return out


async def _listwise(
    judge: Judge, pairs: Sequence[Pair], *, size: int, seed: int, stage: str, on_label: OnLabel | None
) -> list[Graded]:
    results: list[Graded | None] = [None] * len(pairs)
    todo: list[tuple[int, Pair]] = []
    keys = pair_keys(judge, pairs)
    stored = judge.cache_get_many(keys)
    for index, pair in enumerate(pairs):
        hit = _cached_pair(judge, pair, stored.get(keys[index]), stage)
        if hit is None:
            todo.append((index, pair))
            continue
        results[index] = hit
        if on_label is not None:
            on_label(hit)
    pending = listwise_groups(todo, size, seed)
    while pending:
        groups, pending = pending, []

        def collect(group_index: int, j: Judgement[Any], groups: Groups = groups, later: Groups = pending) -> None:
            group = groups[group_index]
            if j.unscored is not None and j.unscored.kind == "too_long" and len(group) > 1:
                judge.retract_unscored(stage, "too_long")  # not a label: the halves are judged next
                later.extend((group[: len(group) // 2], group[len(group) // 2 :]))
                return
            _store(judge, keys, _split_answer(judge, group, j), results, on_label)

        variables = [group_variables(g) for g in groups]
        await judge.ajudge_many(LISTWISE_PROMPT, variables, stage=stage, on_result=collect)
    return [r for r in results if r is not None]


def _store(
    judge: Judge,
    keys: Sequence[str],
    split: list[tuple[int, Graded, str | None]],
    results: list[Graded | None],
    on_label: OnLabel | None,
) -> None:
    """Put a group's labels in place and store each scored one under its pair key, in one transaction."""
    derived: list[tuple[str, str]] = []
    for index, graded, reason in split:
        results[index] = graded
        if reason is not None and graded.label.grade is not None:
            quotes = graded.label.quotes or []
            derived.append((keys[index], json.dumps({"grade": graded.label.grade, "reason": reason, "quotes": quotes})))
        if on_label is not None:
            on_label(graded)
    judge.cache_put_many(derived)


def _vote(graded: Graded) -> Vote:
    label = graded.label
    prov = label.provenance
    return Vote(
        model=prov.model or "judge", grade=label.grade, prompt=prov.prompt, rationale=prov.rationale,
        unscored=label.unscored,
    )  # fmt: skip


def _combined(panel: Panel, pair: Pair, votes: Sequence[Graded]) -> Graded:
    """One pair's label from its judges' labels, by the panel's rule (module docstring of :mod:`.panel`)."""
    grade = combine_grades([v.label.grade for v in votes], panel.combine)
    given = ", ".join(f"{v.label.provenance.model} {_grade_text(v.label.grade)}" for v in votes)
    first = votes[0].label.provenance
    unscored = None
    if grade is None:
        why = "; ".join(
            f"{v.label.provenance.model}: {v.label.unscored.reason}" for v in votes if v.label.unscored is not None
        )
        scored = sum(v.label.grade is not None for v in votes)
        unscored = Unscored(
            reason=f"only {scored} of {len(votes)} judges scored this pair, and a panel label needs more than half "
            f"({why})",
            kind=NO_QUORUM,
        )
    provenance = Provenance(
        source="judge", model=panel.model, prompt=first.prompt, prompt_hash=first.prompt_hash,
        rationale=f"{panel.combine} of {len(votes)} judges: {given}",
    )  # fmt: skip
    quoted = [q for v in votes if (v.label.grade or 0) >= 1 for q in v.label.quotes or []]  # every judge's quotes
    kept, _ = checked_quotes(quoted, pair.text, grade)
    label = RelevanceLabel(
        query_id=pair.query_id, chunk_id=pair.chunk_id, grade=grade, provenance=provenance, unscored=unscored,
        votes=[_vote(v) for v in votes], quotes=kept or None,
    )  # fmt: skip
    return Graded(label, all(v.cached for v in votes))


def _grade_text(grade: int | None) -> str:
    return "unscored" if grade is None else str(grade)


async def _panel(
    panel: Panel, pairs: Sequence[Pair], *, listwise: int | None, seed: int, stage: str, on_label: OnLabel | None
) -> list[Graded]:
    """Every pair graded by each judge at once, then combined; ``on_label`` gets a pair's combined label as soon as
    its last judge has answered."""
    n = len(panel.judges)
    votes: dict[tuple[str, str], list[Graded | None]] = {}
    wanted: Counter[tuple[str, str]] = Counter((p.query_id, p.chunk_id) for p in pairs)
    received: Counter[tuple[str, str]] = Counter()
    by_key = {(p.query_id, p.chunk_id): p for p in pairs}

    def arrive(index: int) -> OnLabel:
        def take(graded: Graded) -> None:
            key = (graded.label.query_id, graded.label.chunk_id)
            votes.setdefault(key, [None] * n)[index] = graded
            received[key] += 1
            if on_label is not None and received[key] == n * wanted[key]:
                done = [v for v in votes[key] if v is not None]
                for _ in range(wanted[key]):
                    on_label(_combined(panel, by_key[key], done))

        return take

    tasks = [
        asyncio.ensure_future(
            grade_pairs_detailed(judge, pairs, listwise=listwise, seed=seed, stage=stage, on_label=arrive(i))
        )
        for i, judge in enumerate(panel.judges)
    ]
    try:
        results = await asyncio.gather(*tasks)
    except BudgetExceeded:  # the budget is shared: the other judges stop too, once their calls in flight are cached
        await asyncio.gather(*tasks, return_exceptions=True)
        raise
    except BaseException:  # a judge that cannot go on (a bad key, a missing model) stops the panel
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        raise
    return [_combined(panel, pair, [r[i] for r in results]) for i, pair in enumerate(pairs)]


async def grade_pairs_detailed(
    judge: Grader,
    pairs: Sequence[Pair],
    *,
    listwise: int | None = None,
    seed: int = 0,
    stage: str = "relevance",
    on_label: OnLabel | None = None,
) -> list[Graded]:
    """Grade ``pairs`` in order; like :func:`grade_pairs` with whether each label came from the cache."""
    if listwise is not None and listwise < 1:
        raise ValueError(f"listwise group size must be at least 1, got {listwise}")
    if isinstance(judge, Panel):
        return await _panel(judge, pairs, listwise=listwise, seed=seed, stage=stage, on_label=on_label)
    if listwise is None:
        return await _pointwise(judge, pairs, stage, on_label)
    return await _listwise(judge, pairs, size=listwise, seed=seed, stage=stage, on_label=on_label)


async def grade_pairs(
    judge: Grader, pairs: Sequence[Pair], *, listwise: int | None = None, seed: int = 0, stage: str = "relevance"
) -> list[RelevanceLabel]:
    """Relevance labels for ``pairs``, in order; unscored pairs have ``grade=None`` and ``unscored`` set. With a
    panel, each label is the panel's combined label with every judge's vote."""
    graded = await grade_pairs_detailed(judge, pairs, listwise=listwise, seed=seed, stage=stage)
    return [g.label for g in graded]
