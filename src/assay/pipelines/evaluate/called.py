"""Evaluate systems as well as run files: a callable or a target is asked every question first (:mod:`assay.targets`),
its run written, and the runs evaluated together.

``assay.evaluate(golden, {"v2": my_app.answer, "v1": "runs/v1.jsonl"})``: a mapping names the runs; in a list a
``(name, path or function)`` pair names one, a path is named by its file stem and a function by its ``__name__``. A
function or a :class:`~assay.targets.TargetSpec` is run into ``run_dir/NAME.jsonl`` (a temporary folder, removed
after the evaluation, when ``run_dir`` is None); a system that answers no question stops the evaluation with
:class:`~assay.errors.NothingProduced`.

A golden set with conversations: ``conversing`` (a :class:`~assay.targets.Conversing`, as ``assay eval
--target-conversation-mode`` and ``--target-history`` make it) says how every function and target is asked its
turns: the raw turns with the golden reference history (the default), with its own earlier answers
(``Conversing(history="own")``), each turn's standalone rewrite alone (``Conversing(mode="rewrites")``), or both ways
(``Conversing(mode="both")``: two runs, ``NAME`` the raw turns and ``NAME (rewrites)``, so the result carries their
``history_gain``; :mod:`assay.targets.conversations`).
"""

from __future__ import annotations

import tempfile
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from assay.errors import InputError
from assay.formats.golden import GoldenSet
from assay.pipelines.evaluate.pipeline import Evaluated, evaluate_detailed
from assay.pipelines.evaluate.runs.read import RunSpec
from assay.results import EvalResult, QueryResult
from assay.targets import Conversing, TargetSettings, TargetSpec, run_target
from assay.targets.conversations import ways

__all__ = ["RunSource", "evaluate", "evaluate_systems", "materialize"]

RunSource = str | Path | tuple[str, Any] | list[dict[str, Any]] | TargetSpec | Callable[..., Any]


def _named(runs: Mapping[str, RunSource] | Sequence[RunSource]) -> list[tuple[str | None, RunSource]]:
    if isinstance(runs, Mapping):
        return [(str(name), source) for name, source in runs.items()]
    if isinstance(runs, (str, Path)) or callable(runs):
        raise InputError("give the runs as a list or a mapping name -> run, e.g. {'v2': my_app.answer}")
    return [(source[0], source[1]) if isinstance(source, tuple) and _is_system(source[1]) else (None, source)
            for source in runs]  # fmt: skip


def _is_system(source: RunSource) -> bool:
    return isinstance(source, TargetSpec) or (callable(source) and not isinstance(source, (str, Path, tuple)))


def _name_of(name: str | None, source: RunSource) -> str:
    if name is not None:
        return name
    if isinstance(source, TargetSpec):
        raise InputError(f"name the target {source.display()!r}: pass runs as a mapping, e.g. {{'app': spec}}")
    return str(getattr(source, "__name__", type(source).__name__))


def materialize(
    golden: GoldenSet,
    runs: Mapping[str, RunSource] | Sequence[RunSource],
    run_dir: str | Path,
    *,
    targets: TargetSettings | None = None,
    label: str | None = None,
    secrets: Mapping[str, str] | None = None,
    repeats: int = 1,
    conversing: Conversing | None = None,
) -> list[RunSpec]:
    """The runs as paths (``(name, path)`` when named): each function or target asked every golden question
    (``repeats`` times, the turns of conversations as ``conversing`` says) and written to ``run_dir/NAME.jsonl``
    (and ``run_dir/NAME (rewrites).jsonl`` when asked both ways); paths and in-memory runs (lists of dicts) pass
    through."""
    out: list[RunSpec] = []
    for name, source in _named(runs):
        if not _is_system(source):
            out.append(_given(name, source))
            continue
        for called, how in ways(_name_of(name, source), conversing or Conversing(), golden):
            path = Path(run_dir) / f"{called}.jsonl"
            run_target(golden, source, path, label=label, settings=targets, secrets=secrets,  # type: ignore[arg-type]
                       repeats=repeats, conversing=how).check()  # fmt: skip
            out.append((called, path))
    return out


def _given(name: str | None, source: RunSource) -> RunSpec:
    """A run given as a path or in memory, as :func:`evaluate_detailed` reads it."""
    if isinstance(source, tuple):
        return source[0], source[1] if isinstance(source[1], list) else Path(source[1])
    if isinstance(source, list):
        return name or "run", source
    return (name, Path(source)) if name is not None else Path(source)  # type: ignore[arg-type]


@contextmanager
def _folder(run_dir: str | Path | None) -> Iterator[Path]:
    if run_dir is not None:
        yield Path(run_dir)
        return
    with tempfile.TemporaryDirectory(prefix="assay-runs-") as tmp:
        yield Path(tmp)


def evaluate_systems(
    golden: GoldenSet | str | Path,
    runs: Mapping[str, RunSource] | Sequence[RunSource],
    *,
    run_dir: str | Path | None = None,
    targets: TargetSettings | None = None,
    label: str | None = None,
    secrets: Mapping[str, str] | None = None,
    repeats: int = 1,
    conversing: Conversing | None = None,
    **options: Any,
) -> Evaluated:
    """:func:`~assay.pipelines.evaluate.evaluate_detailed` over run files, functions and targets (module docstring);
    ``repeats``: how many times each function or target is asked every question; ``conversing``: how they are asked
    the turns of conversations (module docstring); ``options`` go to evaluate_detailed (``judge``, ``settings``,
    ``progress``, ...)."""
    gold = golden if isinstance(golden, GoldenSet) else GoldenSet.load(golden)
    with _folder(run_dir) as folder:
        paths = materialize(gold, runs, folder, targets=targets, label=label, secrets=secrets, repeats=repeats,
                            conversing=conversing)  # fmt: skip
        return evaluate_detailed(golden, paths, **options)  # a folder again: labels judged now are added to it


def evaluate(
    golden: GoldenSet | str | Path,
    runs: Mapping[str, RunSource] | Sequence[RunSource],
    **options: Any,
) -> tuple[EvalResult, list[QueryResult]]:
    """Evaluate run files, Python functions and targets against ``golden``: an ``EvalResult`` and per-query rows.

    ``runs``: a list (paths, ``(name, path)``, functions) or a mapping name -> path, function or
    :class:`~assay.targets.TargetSpec`. Options: ``judge``, ``settings`` (:class:`EvalSettings`), ``run_dir`` (keep
    the runs of the functions there), ``targets`` (:class:`~assay.targets.TargetSettings`), ``label``, ``secrets``,
    ``repeats``, ``conversing`` (:class:`~assay.targets.Conversing`: how functions and targets are asked the turns
    of conversations, e.g. ``Conversing(history="own")``, or ``Conversing(mode="both")`` for two runs and their
    history gain; module docstring), and the rest of :func:`~assay.pipelines.evaluate.evaluate`'s.
    """
    done = evaluate_systems(golden, runs, **options)
    return done.result, done.per_query
