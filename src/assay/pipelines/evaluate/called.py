"""Evaluate systems as well as run files, with typed settings: a callable or a target is asked every question first
(:mod:`assay.targets`), its run written, and the runs evaluated together.

``assay.evaluate(golden, {"v2": my_app.answer, "v1": "runs/v1.jsonl"})``: the runs are named by
:func:`~assay.pipelines.evaluate.runs.given.named_runs` (a mapping names them; in a list a ``(name, run)`` pair names
one, a path is named by its file stem and a function by its ``__name__``). A function or a
:class:`~assay.targets.TargetSpec` is run into ``run_dir/NAME.jsonl`` (a temporary folder, removed after the
evaluation, when ``run_dir`` is None); a system that answers no question stops the evaluation with
:class:`~assay.errors.NothingProduced`.

The settings are ``settings=`` an :class:`~.settings.EvalSettings` and its fields as keywords, typed for mypy by
:class:`SettingsKeywords` (``n_boot=500`` replaces that field of ``settings``); :func:`settings_of` merges them, and
refuses a keyword that is no field with a ``TypeError`` listing the keywords, the closest first. The pytest plugin's
``assay_eval`` takes them the same way.

A golden set with conversations: ``conversing`` (a :class:`~assay.targets.Conversing`, as ``assay eval
--target-conversation-mode`` and ``--target-history`` make it) says how every function and target is asked its
turns: the raw turns with the golden reference history (the default), with its own earlier answers
(``Conversing(history="own")``), each turn's standalone rewrite alone (``Conversing(mode="rewrites")``), or both ways
(``Conversing(mode="both")``: two runs, ``NAME`` the raw turns and ``NAME (rewrites)``, so the result carries their
``history_gain``; :mod:`assay.targets.conversations`).
"""

from __future__ import annotations

import dataclasses
import difflib
import tempfile
from collections.abc import Collection, Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import Any, TypedDict, Unpack

from assay.formats.golden import GoldenSet
from assay.judge.criteria import Criterion
from assay.judge.panel import Grader
from assay.pipelines.evaluate.judging.drive import Progress
from assay.pipelines.evaluate.pipeline import Evaluated, evaluate_detailed
from assay.pipelines.evaluate.runs.given import NamedRun, Runs, RunSource, named_runs
from assay.pipelines.evaluate.settings import EvalSettings
from assay.results import EvalResult, QueryResult
from assay.targets import Conversing, TargetSettings, TargetSpec, run_target
from assay.targets.conversations import ways

__all__ = ["RunSource", "Runs", "SettingsKeywords", "evaluate", "evaluate_systems", "materialize", "settings_of"]


class SettingsKeywords(TypedDict, total=False):
    """:class:`EvalSettings`' fields as keywords, so that mypy checks ``assay.evaluate(golden, runs, n_boot=500)``
    and the pytest plugin's ``assay_eval`` as it checks ``EvalSettings(n_boot=500)``. The same names and types as
    the dataclass's fields, in its order (a test compares the two)."""

    k_values: tuple[int, ...]
    metrics: tuple[str, ...]
    also: tuple[str, ...]
    seed: int
    n_boot: int
    confidence: float
    threshold: int
    cp_threshold: int
    context_k: int | None
    listwise: int | None
    add_labels: bool
    strata: tuple[str, ...]
    min_audited: int
    correction: str
    baseline: str | None
    primary: str | None
    budgets: tuple[str, ...]
    alpha: float
    diagnosis: str
    cluster_by: str
    judge_repeats: int
    judge_repeats_max: int
    detect: tuple[float, ...]
    criteria: tuple[Criterion | str | Path, ...]
    pairwise: Criterion | str | Path | None
    pairs: str


def settings_of(
    settings: EvalSettings | None,
    keywords: Mapping[str, Any],
    *,
    caller: str,
    takes: Collection[str] = (),
    default: EvalSettings | None = None,
) -> EvalSettings:
    """``settings`` (else ``default``, else ``EvalSettings()``) with the fields named in ``keywords`` replaced. A
    keyword that is no field raises :class:`TypeError` naming every keyword ``caller`` takes (the fields and
    ``takes``), the closest first: at run time, what mypy says of the typed keywords before."""
    fields = [field.name for field in dataclasses.fields(EvalSettings)]
    for word in keywords:
        if word not in fields:
            raise TypeError(_unexpected(caller, word, [*takes, *fields]))
    return dataclasses.replace(settings or default or EvalSettings(), **keywords)


def _unexpected(caller: str, word: str, known: list[str]) -> str:
    ranked = difflib.get_close_matches(word, known, n=len(known), cutoff=0.0)  # every name, the most alike first
    close = difflib.get_close_matches(word, known, n=1)
    guess = f" (did you mean {close[0]!r}?)" if close else ""
    listed = ", ".join(ranked)
    return f"{caller}() got an unexpected keyword argument {word!r}{guess}; its keywords, closest first: {listed}"


def materialize(
    golden: GoldenSet,
    runs: Runs,
    run_dir: str | Path,
    *,
    targets: TargetSettings | None = None,
    label: str | None = None,
    secrets: Mapping[str, str] | None = None,
    repeats: int = 1,
    conversing: Conversing | None = None,
) -> list[NamedRun]:
    """The runs named (:func:`~assay.pipelines.evaluate.runs.given.named_runs`) and readable: each function or
    target asked every golden question (``repeats`` times, the turns of conversations as ``conversing`` says) and
    written to ``run_dir/NAME.jsonl`` (and ``run_dir/NAME (rewrites).jsonl`` when asked both ways); paths and
    in-memory runs (lists of dicts) pass through."""
    out: list[NamedRun] = []
    for run in named_runs(runs):
        system = run.source
        if not (isinstance(system, TargetSpec) or callable(system)):  # a file or lines: read as they are
            out.append(run)
            continue
        for called, how in ways(run.name, conversing or Conversing(), golden):
            path = Path(run_dir) / f"{called}.jsonl"
            run_target(golden, system, path, label=label, settings=targets, secrets=secrets, repeats=repeats,
                       conversing=how).check()  # fmt: skip
            out.append(NamedRun(called, path))
    return out


@contextmanager
def _folder(run_dir: str | Path | None) -> Iterator[Path]:
    if run_dir is not None:
        yield Path(run_dir)
        return
    with tempfile.TemporaryDirectory(prefix="assay-runs-") as tmp:
        yield Path(tmp)


# the keywords of evaluate and evaluate_systems besides EvalSettings' fields, for the TypeError of a wrong one
_TAKES = ("settings", "judge", "run_dir", "targets", "label", "secrets", "repeats", "conversing", "progress",
          "human_labels", "annotations", "criterion_labels")  # fmt: skip


def evaluate_systems(
    golden: GoldenSet | str | Path,
    runs: Runs,
    *,
    settings: EvalSettings | None = None,
    judge: Grader | None = None,
    run_dir: str | Path | None = None,
    targets: TargetSettings | None = None,
    label: str | None = None,
    secrets: Mapping[str, str] | None = None,
    repeats: int = 1,
    conversing: Conversing | None = None,
    progress: Progress | None = None,
    human_labels: Mapping[tuple[str, str], int] | None = None,
    annotations: Mapping[tuple[str, str], Mapping[str, int]] | None = None,
    criterion_labels: Mapping[str, str] | None = None,
    **fields: Unpack[SettingsKeywords],
) -> Evaluated:
    """:func:`evaluate`, returning the whole :class:`~assay.pipelines.evaluate.evaluated.Evaluated` (the support
    and passage rows too)."""
    config = settings_of(settings, fields, caller="evaluate", takes=_TAKES)
    gold = golden if isinstance(golden, GoldenSet) else GoldenSet.load(golden)
    with _folder(run_dir) as folder:
        paths = materialize(gold, runs, folder, targets=targets, label=label, secrets=secrets, repeats=repeats,
                            conversing=conversing)  # fmt: skip
        # golden as given: a folder again, so that labels judged now are added to it
        return evaluate_detailed(golden, paths, judge=judge, settings=config, progress=progress,
                                 human_labels=human_labels, annotations=annotations,
                                 criterion_labels=criterion_labels)  # fmt: skip


def evaluate(
    golden: GoldenSet | str | Path,
    runs: Runs,
    *,
    settings: EvalSettings | None = None,
    judge: Grader | None = None,
    run_dir: str | Path | None = None,
    targets: TargetSettings | None = None,
    label: str | None = None,
    secrets: Mapping[str, str] | None = None,
    repeats: int = 1,
    conversing: Conversing | None = None,
    progress: Progress | None = None,
    human_labels: Mapping[tuple[str, str], int] | None = None,
    annotations: Mapping[tuple[str, str], Mapping[str, int]] | None = None,
    criterion_labels: Mapping[str, str] | None = None,
    **fields: Unpack[SettingsKeywords],
) -> tuple[EvalResult, list[QueryResult]]:
    """Evaluate run files, Python functions and targets against ``golden``: an ``EvalResult`` and per-query rows.

    ``runs``: a mapping name -> run, or a list of runs and ``(name, run)`` pairs; a run is a file path, a list of
    dicts (the JSONL run lines), a function or a :class:`~assay.targets.TargetSpec` (named by
    :mod:`~assay.pipelines.evaluate.runs.given`'s rule). The settings: ``settings`` (an :class:`EvalSettings`),
    and any of its fields as a keyword, which replaces that field (``n_boot=500``; a keyword that is no field is a
    ``TypeError`` naming those that are). ``judge``: a :class:`~assay.judge.Judge` or a
    :class:`~assay.judge.panel.Panel` (None: trec_eval's convention, no LLM metric). ``run_dir``: keep the runs of
    the functions there; ``targets`` (:class:`~assay.targets.TargetSettings`), ``label``, ``secrets``: how they are
    asked; ``repeats``: how many times each is asked every question; ``conversing``
    (:class:`~assay.targets.Conversing`): how they are asked the turns of conversations (module docstring).
    ``progress``, ``human_labels``, ``annotations`` and ``criterion_labels``: as
    :func:`~assay.pipelines.evaluate.evaluate`'s.
    """
    done = evaluate_systems(golden, runs, settings=settings, judge=judge, run_dir=run_dir, targets=targets,
                            label=label, secrets=secrets, repeats=repeats, conversing=conversing, progress=progress,
                            human_labels=human_labels, annotations=annotations,
                            criterion_labels=criterion_labels, **fields)  # fmt: skip
    return done.result, done.per_query
