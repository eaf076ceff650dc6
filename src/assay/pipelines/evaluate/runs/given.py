"""The runs an evaluation is given, named by one rule: :func:`named_runs` turns what a caller passes into
:class:`NamedRun` records. Every caller goes through it: :func:`assay.evaluate` and the pytest plugin's ``assay_eval``
(:mod:`assay.pipelines.evaluate.called`), ``assay eval``'s RUN arguments (``cli/_eval_options.parse_runs``, after it
has split ``NAME=PATH``) and the reader (:func:`.read.load_runs`), so a run is named the same way wherever it comes
from.

The rule:

1. ``runs`` is a mapping name -> source, or a list (any sequence but a string); a path, a function or a target
   alone is an :class:`~assay.errors.InputError` that shows both forms.
2. In a mapping, each source takes its key as its name.
3. In a list, a ``(name, source)`` pair (a :class:`NamedRun` is one) names its source; a source alone is named by
   what it is: a path by its file stem, a function by its ``__name__``, in-memory lines by ``run``. A
   :class:`~assay.targets.TargetSpec` alone has no name to take: an error.
4. A source is a run file (``str`` or :class:`~pathlib.Path`, made a Path; never split at ``=``), in-memory lines
   (a list of dicts in the JSONL run format), a function (asked every question, sync or async) or a TargetSpec;
   anything else is an error naming the four.
5. Names are text that is not empty, and no two runs share one: an error names the name given twice.

A function or a target is a system to ask: the caller asks it and writes its run first
(:func:`assay.pipelines.evaluate.called.materialize`); the reader takes files and lines only (:func:`.read.specs_of`).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any, NamedTuple

from assay.errors import InputError
from assay.targets import TargetSpec

__all__ = ["NamedRun", "RunSource", "Runs", "named_runs"]

# what a run may be: a file, lines in memory, or a system asked every question (a function or a target)
RunSource = str | Path | Sequence[Mapping[str, Any]] | TargetSpec | Callable[..., Any]
# runs as an evaluation is given them: a mapping name -> source, or a list of sources and (name, source) pairs
Runs = Mapping[str, RunSource] | Sequence[RunSource | tuple[str, RunSource]]

_FORMS = "a mapping name -> run, e.g. {'v2': my_app.answer, 'v1': 'runs/v1.jsonl'}, or a list of runs"
_KINDS = "a run file path, a list of dicts (the JSONL run lines), a function or an assay.TargetSpec"


class NamedRun(NamedTuple):
    """One run and its name; ``source`` is a :class:`~pathlib.Path`, lines, a function or a TargetSpec."""

    name: str
    source: Path | Sequence[Mapping[str, Any]] | TargetSpec | Callable[..., Any]


def named_runs(runs: Runs) -> list[NamedRun]:
    """``runs`` named by the module docstring's rule, in the order given."""
    if isinstance(runs, Mapping):
        out = [_checked(name, source) for name, source in runs.items()]
    elif isinstance(runs, str | Path | TargetSpec) or callable(runs) or not isinstance(runs, Sequence):
        raise InputError(f"give the runs as {_FORMS}; got {_shown(runs)}")
    else:
        out = [_one(item) for item in runs]
    _check_apart(out)
    return out


def _one(item: RunSource | tuple[str, RunSource]) -> NamedRun:
    """A list's item: a pair names its source (step 3), a source alone is named by what it is."""
    if isinstance(item, tuple):
        if len(item) != 2 or not isinstance(item[0], str):
            raise InputError(f"a run in a list is a source or a (name, source) pair; got the tuple {item!r}")
        return _checked(item[0], item[1])
    source = _source(item)
    if isinstance(source, Path):
        return NamedRun(source.stem, source)
    if isinstance(source, list):
        return NamedRun("run", source)
    if isinstance(source, TargetSpec):
        raise InputError(f"name the target {source.display()!r}: pass the runs as a mapping, e.g. {{'app': spec}}")
    return NamedRun(str(getattr(source, "__name__", type(source).__name__)), source)


def _checked(name: object, source: RunSource) -> NamedRun:
    if not isinstance(name, str) or not name.strip():
        raise InputError(f"a run's name is text that is not empty; got {name!r} for {_shown(source)}")
    return NamedRun(name, _source(source))


def _source(source: object) -> Path | Sequence[Mapping[str, Any]] | TargetSpec | Callable[..., Any]:
    """Step 4: a path made a Path, lines and systems as they are, anything else an error."""
    if isinstance(source, str | Path):
        return Path(source)
    if isinstance(source, list) and all(isinstance(line, Mapping) for line in source):
        return source
    if isinstance(source, TargetSpec) or callable(source):
        return source
    raise InputError(f"a run is {_KINDS}; got {_shown(source)}")


def _shown(value: object) -> str:
    """What was given, for an error: its type and the start of its repr."""
    text = repr(value)
    return f"{type(value).__name__} {text if len(text) <= 120 else text[:117] + '...'}"


def _check_apart(runs: Sequence[NamedRun]) -> None:
    """Step 5: one run per name."""
    seen: set[str] = set()
    for run in runs:
        if run.name in seen:
            example = f"e.g. other={run.source}" if isinstance(run.source, Path) else "e.g. {'new': ..., 'old': ...}"
            raise InputError(
                f"two runs are named {run.name!r}: name them apart, with NAME=PATH on the command line or a mapping "
                f"name -> run in Python ({example})"
            )
        seen.add(run.name)
