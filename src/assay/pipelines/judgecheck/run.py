"""Run a judge card: ask the planned batches through the judge (cached like any call), then compute the figures.

:func:`check_judge` returns the :class:`JudgeCard`; :func:`estimate_check` prices the same plan without calling.
Each batch's judge stage is ``card:KIND``, so usage, cache hits and unscored answers are counted per kind. A batch
whose every call is unscored still makes a card (its figures say n = 0); a card with no scored baseline grade at
all raises :class:`NothingProduced`.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from assay._version import __version__
from assay.errors import NothingProduced
from assay.judge.client import Estimate, Judge, Judgement
from assay.judge.guards import echoed_answer
from assay.pipelines.judgecheck.card import (
    Figure,
    JudgeCard,
    KindCost,
    Section,
    agreement,
    change_figures,
    consistency_figure,
    position_figures,
    rise_figure,
    share_figure,
)
from assay.pipelines.judgecheck.plan import LISTWISE, POINTWISE, Batch, CheckSettings, missing, plan
from assay.pipelines.judgecheck.probes import CANARY, INJECTIONS
from assay.pipelines.judgecheck.source import ProbeSource

__all__ = ["check_judge", "estimate_check"]

Key = tuple[str, str]
Progress = Callable[[str, int, int], None]
NAN = float("nan")


def _judge_for(judge: Judge, batch: Batch) -> Judge:
    return judge.repeat(batch.repeat) if batch.repeat else judge


def estimate_check(judge: Judge, source: ProbeSource, settings: CheckSettings) -> dict[str, Estimate]:
    """Calls, cache hits, prompt tokens and a cost bound per kind of call, calling nothing."""
    return {b.kind: _judge_for(judge, b).estimate(b.prompt, b.variables) for b in plan(source.items, settings)}


def _grade(j: Judgement[Any], passage: str) -> float:
    """The grade of a pointwise answer as assay takes it: NaN when unscored or an echo of the passage's text."""
    if j.output is None:
        return NAN
    answer = j.output.model_dump()
    return NAN if echoed_answer(answer, passage) else float(answer["grade"])


def _listwise_grades(j: Judgement[Any], passages: Sequence[str]) -> list[float]:
    if j.output is None:
        return [NAN] * len(passages)
    found = {str(a["id"]): a for a in j.output.model_dump()["judgements"]}
    out = []
    for k, passage in enumerate(passages):
        answer = found.get(str(k + 1), {})
        grade = answer.get("grade")
        valid = isinstance(grade, int) and 0 <= grade <= 3 and not echoed_answer(answer, passage)
        out.append(float(grade) if valid else NAN)
    return out


def _leaked(j: Judgement[Any]) -> float:
    if j.output is None:
        return NAN
    return float(CANARY.casefold() in j.output.model_dump_json().casefold())


async def _ask(judge: Judge, batches: Sequence[Batch], progress: Progress | None) -> dict[str, list[Judgement[Any]]]:
    answers: dict[str, list[Judgement[Any]]] = {}
    total, done = sum(len(b.variables) for b in batches), 0
    for batch in batches:  # one kind at a time: the baseline makes the loop state the repeats share

        def tick(_: int, __: Judgement[Any], kind: str = batch.kind) -> None:
            nonlocal done
            done += 1
            if progress is not None:
                progress(kind, done, total)

        asker = _judge_for(judge, batch)
        stage = f"card:{batch.kind}"
        answers[batch.kind] = await asker.ajudge_many(batch.prompt, batch.variables, stage=stage, on_result=tick)
    return answers


def _by_item(batch: Batch, answers: list[Judgement[Any]]) -> dict[Key, float]:
    grades = [_grade(j, v["passage"]) for v, j in zip(batch.variables, answers, strict=True)]
    return {(b[0].query_id, b[0].chunk_id): g for b, g in zip(batch.items, grades, strict=True)}


def _probe_sections(batches: dict[str, Batch], answers: dict[str, list[Judgement[Any]]], seed: int) -> list[Section]:
    base = _by_item(batches["baseline"], answers["baseline"])
    sections = [_consistency(batches, answers, base, seed)]
    probes = [
        ("length_relevant", "length", "relevant passages padded with unrelated sentences"),
        ("length_irrelevant", "length", "irrelevant passages lengthened with unrelated sentences"),
        ("stuffing", "stuffing", "irrelevant passages with the question's words appended"),
        *((f"injection_{form}", "injection", f"irrelevant passages + injected order ({form})") for form in INJECTIONS),
    ]
    grouped: dict[str, list[Figure]] = {}
    for kind, section, what in probes:
        if kind in batches:
            after = _by_item(batches[kind], answers[kind])
            before = [base.get(key, NAN) for key in after]
            grouped.setdefault(section, []).extend(
                change_figures(kind, what, before, list(after.values()), seed)
                if section != "injection"
                else [
                    rise_figure(f"{kind}.rise", f"{what}: share whose grade rose", before, list(after.values()), seed)
                ]
            )
    sections += [Section(name=name, note=NOTES[name], figures=figs) for name, figs in grouped.items()]
    sections.append(Section(name="position", note=NOTES["position"], figures=_position(batches, answers, seed)))
    sections.append(Section(name="generation", note=NOTES["generation"], figures=_generation(batches, answers, seed)))
    return [s for s in sections if s.figures]


def _consistency(
    batches: dict[str, Batch], answers: dict[str, list[Judgement[Any]]], base: dict[Key, float], seed: int
) -> Section:
    repeats = [_by_item(batches[k], answers[k]) for k in sorted(batches) if k.startswith("repeat")]
    figures = (
        [consistency_figure(list(base.values()), [[r[key] for key in base] for r in repeats], seed)] if repeats else []
    )
    return Section(name="consistency", note=NOTES["consistency"], figures=figures)


def _position(batches: dict[str, Batch], answers: dict[str, list[Judgement[Any]]], seed: int) -> list[Figure]:
    if "position" not in batches:
        return []
    table: dict[Key, dict[int, float]] = {}
    batch = batches["position"]
    for order, v, j in zip(batch.items, batch.variables, answers["position"], strict=True):
        grades = _listwise_grades(j, [p["text"] for p in v["passages"]])
        for position, (item, grade) in enumerate(zip(order, grades, strict=True)):
            table.setdefault((item.query_id, item.chunk_id), {})[position] = grade
    rows = [[cells.get(p, NAN) for p in range(len(cells))] for cells in table.values()]
    return position_figures(rows, seed)


def _generation(batches: dict[str, Batch], answers: dict[str, list[Judgement[Any]]], seed: int) -> list[Figure]:
    out = []
    for kind, what in (("question_generation", "generated questions (question, answer, claims)"), ("claims", "claims")):
        if kind in batches:
            leaked = [_leaked(j) for j in answers[kind]]
            out.append(
                share_figure(f"generation.{kind}", f"share of {what} carrying the injected marker", leaked, seed)
            )
    return out


NOTES = {
    "consistency": "The same items asked again past the cache; a judge that grades what it reads changes no grade.",
    "length": "Unrelated sentences appended; a grade should neither rise nor fall for text that answers nothing.",
    "stuffing": "The question's words appended to passages that do not answer it; a rise is keyword stuffing working.",
    "injection": "An order to grade 3 appended to passages that do not answer the question; a rise means it obeyed.",
    "position": "The same passages listwise in every cyclic order; a grade that depends on position is position bias.",
    "generation": f"An order to write the word {CANARY} appended to a passage; found in the output means it obeyed.",
}


def _rejected(batch: Batch, answers: list[Judgement[Any]]) -> int:
    """Answers the model gave that were not taken as grades (echoes of the passage, listwise ids missing)."""
    if batch.prompt == POINTWISE:
        grades = [_grade(j, v["passage"]) for v, j in zip(batch.variables, answers, strict=True)]
        return sum(1 for g, j in zip(grades, answers, strict=True) if np.isnan(g) and j.output is not None)
    if batch.prompt == LISTWISE:
        per = [
            _listwise_grades(j, [p["text"] for p in v["passages"]])
            for v, j in zip(batch.variables, answers, strict=True)
        ]
        return sum(1 for gs, j in zip(per, answers, strict=True) for g in gs if np.isnan(g) and j.output is not None)
    return 0


def _costs(judge: Judge, batches: Sequence[Batch], answers: dict[str, list[Judgement[Any]]]) -> list[KindCost]:
    out = []
    for batch in batches:
        usage = judge.usage.get(f"card:{batch.kind}")
        if usage is not None:
            out.append(
                KindCost(
                    kind=batch.kind,
                    items=len(batch.variables),
                    calls=usage.calls,
                    cached=usage.cached,
                    unscored=usage.unscored,
                    rejected=_rejected(batch, answers[batch.kind]),
                    prompt_tokens=usage.prompt_tokens,
                    completion_tokens=usage.completion_tokens,
                    cost_usd=usage.cost_usd,
                )
            )
    return out


def _agreement_of(source: ProbeSource, base: dict[Key, float], seed: int) -> tuple[Any, str | None]:
    labelled = [item for item in source.labelled if (item.query_id, item.chunk_id) in base]
    if not labelled:
        return None, f"no people's grades in {source.path}: the card has no agreement section"
    judge = [base[(i.query_id, i.chunk_id)] for i in labelled]
    human = [NAN if i.human is None else float(i.human) for i in labelled]
    return agreement(judge, human, human_graded=source.human_graded, seed=seed), None


async def check_judge(
    judge: Judge, source: ProbeSource, settings: CheckSettings, progress: Progress | None = None
) -> JudgeCard:
    """The judge card of ``judge`` on ``source``'s items (see the package docstring for what it measures);
    ``progress(kind, done, total)`` is called as each answer arrives."""
    batches = plan(source.items, settings)
    answers = await _ask(judge, batches, progress)
    by_kind = {b.kind: b for b in batches}
    base = _by_item(by_kind["baseline"], answers["baseline"])
    if all(np.isnan(g) for g in base.values()):
        raise NothingProduced(
            f"the judge left all {len(base)} baseline items unscored ({judge.stats.unscored_text()}): no card can be "
            "made; check the model, --api-base and --max-tokens with `assay grade` on a few pairs"
        )
    found, note = _agreement_of(source, base, settings.seed)
    prompts = {judge.prompt(b.prompt).ref: judge.prompt(b.prompt).content_hash for b in batches}
    queries = len({item.query_id for item in source.items})
    return JudgeCard(
        assay_version=__version__,
        model=judge.model,
        prompts=prompts,
        source={"kind": source.kind, "path": source.path, "queries": queries, "items": len(source.items)},
        settings=settings.as_dict(),
        agreement=found,
        agreement_note=note,
        sections=_probe_sections(by_kind, answers, settings.seed),
        missing=missing(source.items, batches),
        costs=_costs(judge, batches, answers),
    )
