"""Reading and checking the runs ``assay eval`` scores: JSONL runs (DESIGN.md section 3), TREC runs, RAGAS
evaluation data, and runs given in memory as lists of dicts.

:mod:`.sources` reads each kind of run into raw lines (what a line holds; a malformed line is an error),
:mod:`.assemble` checks them against the golden set, resolves and orders them (what a run gets wrong is counted,
never fatal), and :mod:`.loaded` holds the records they make (:class:`~.loaded.LoadedRun`, one per run).

A run of a system asked every question N times (``assay run --repeats N``) numbers its lines with ``repeat``
(0 to N - 1): it is read as N runs, ``NAME#0`` to ``NAME#N-1`` (:attr:`~.loaded.LoadedRun.repeat_of` names the run they
belong to), each scored on its own and merged per question by the evaluation. Every question the run answers must
have one line for every repeat, and either every line has ``repeat`` or none: otherwise a
:class:`~assay.errors.FormatError` names the line. N is the header's ``repeats`` when it has one (a line whose
repeat is N or more is the error), else the largest repeat + 1, the repeats used leaving no gap (a line whose repeat
lies past a number no line uses is the error: a typo, not a run asked that many times). A run whose every line is
repeat 0 is one asking of each question, read as a plain run and said in a note (its header may promise more:
``assay run --repeats 3`` stopped during the first asking).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from assay.errors import FormatError, InputError
from assay.formats.golden import GoldenSet
from assay.formats.jsonl import read_header
from assay.pipelines.evaluate.runs.assemble import assemble
from assay.pipelines.evaluate.runs.given import NamedRun, Runs, RunSource, named_runs
from assay.pipelines.evaluate.runs.loaded import LoadedRun
from assay.pipelines.evaluate.runs.locate import Resolver
from assay.pipelines.evaluate.runs.sources import RawLine, memory_where, raw_lines, run_kind
from assay.results import RunCounts
from assay.targets import TargetSpec

__all__ = ["NamedRun", "RunSpec", "Runs", "load_run", "load_runs", "specs_of"]

FAILED = "system_failed"
RunSpec = RunSource | tuple[str, RunSource]  # one run as a list of runs holds it (:mod:`.given`)


def specs_of(runs: Runs) -> list[NamedRun]:
    """The runs named by :func:`.given.named_runs`, each a file or lines (a function or a target is refused)."""
    named = named_runs(runs)
    for run in named:
        _readable(run)
    return named


def _readable(run: NamedRun) -> Path | Sequence[Mapping[str, Any]]:
    """The file or the lines of ``run``; a system is asked first, by :func:`assay.evaluate`, never read here."""
    source = run.source
    if isinstance(source, TargetSpec) or callable(source):
        raise InputError(f"run {run.name!r} is a system to ask, not a run to read: evaluate it with assay.evaluate, "
                         "which asks it every question first")  # fmt: skip
    return source


# ---------------------------------------------------------------------------------------------------- loading


def load_run(spec: RunSpec, golden: GoldenSet, resolver: Resolver | None = None) -> LoadedRun:
    """Read one run (a path, lines, or a ``(name, path or lines)`` pair) and check it against ``golden``; see the
    module docstring and :mod:`.assemble`'s. A run with repeats raises :class:`InputError` (read it with
    :func:`load_runs`, which splits it)."""
    [named] = specs_of([spec])
    loaded = _load(named, golden, resolver or Resolver(golden))
    if len(loaded) > 1 or loaded[0].repeat_of is not None:
        raise InputError(f"run {loaded[0].repeat_of} has repeats: read it with load_runs, which gives one per repeat")
    return loaded[0]


def _load(run: NamedRun, golden: GoldenSet, resolver: Resolver) -> list[LoadedRun]:
    """The run, or one run per repeat when its lines carry ``repeat``."""
    name, source = run.name, _readable(run)
    if isinstance(source, Path) and not source.is_file():
        raise InputError(f"run {source} does not exist (or is a folder): give a JSONL, TREC or RAGAS run file")
    kind = run_kind(source)
    counts, notes = RunCounts(), list[str]()
    raws = list(raw_lines(kind, name=name, source=source, golden=golden, counts=counts, notes=notes))
    path = source if isinstance(source, Path) else Path(f"<{name}>")
    where: str | Path = path if isinstance(source, Path) else memory_where(name)
    header = read_header(source) if kind == "jsonl" and isinstance(source, Path) else None
    repeats = _repeats(raws, golden, where, header.repeats if header is not None else None)
    if repeats == 1:
        notes.append(_one_asking_note(name, header.repeats if header is not None else None))
    if repeats <= 1:
        loaded = LoadedRun(name, path, kind, {}, counts, notes, header)
        return [assemble(loaded, iter(raws), golden=golden, resolver=resolver, where=where)]
    out = []
    for r in range(repeats):
        mine = [raw for raw in raws if raw.repeat == r]
        one = LoadedRun(f"{name}#{r}", path, kind, {}, RunCounts(), list(notes), header, repeat_of=name, repeat=r)
        out.append(assemble(one, iter(mine), golden=golden, resolver=resolver, where=where))
    return out


def _repeats(raws: Sequence[RawLine], golden: GoldenSet, where: str | Path, declared: int | None) -> int:
    """The number of repeats of a run whose lines carry ``repeat`` (0 without), checked: every line has it, the
    repeats are 0..N-1 (N: ``declared`` by the header, else as the module docstring says), and every known question
    has one line per repeat."""
    marked = [raw for raw in raws if raw.repeat is not None]
    if not marked:
        return 0
    if len(marked) < len(raws):
        bare = next(raw for raw in raws if raw.repeat is None)
        raise FormatError(where, bare.line, 'no "repeat" in a run whose other lines have one',
                          'a "repeat" on every line (0 to N - 1), or on none')  # fmt: skip
    count = 1 if all(raw.repeat == 0 for raw in marked) else _repeat_count(marked, where, declared)
    known = {q.id for q in golden.questions}
    seen: dict[str, dict[int, int]] = {}
    for raw in marked:
        if raw.query_id not in known:
            continue
        lines = seen.setdefault(raw.query_id, {})
        if raw.repeat in lines:
            raise FormatError(where, raw.line, f"query {raw.query_id!r} repeat {raw.repeat} is given twice "
                              f"(first on line {lines[raw.repeat]})", "one line per query and repeat")  # fmt: skip
        lines[raw.repeat or 0] = raw.line
    for qid, lines in seen.items():
        if len(lines) != count:
            missing = sorted(set(range(count)) - set(lines))
            raise FormatError(
                where, max(lines.values()),
                f"query {qid!r} has {len(lines)} repeat(s) where the run has {count} (missing: "
                f"{', '.join(map(str, missing))})",
                f"every question asked the same number of times (0 to {count - 1}); rerun assay run --repeats {count}",
            )  # fmt: skip
    return count


def _repeat_count(marked: Sequence[RawLine], where: str | Path, declared: int | None) -> int:
    """N: the header's ``repeats``, else the largest repeat + 1; a line past N, or past a gap, is the error."""
    if declared is not None and declared >= 1:
        for raw in marked:
            if (raw.repeat or 0) >= declared:
                raise FormatError(where, raw.line, f"repeat {raw.repeat}, but the run's header says it was asked "
                                  f"{declared} time(s)", f"a repeat from 0 to {declared - 1}")  # fmt: skip
        return declared
    used = {raw.repeat or 0 for raw in marked}
    gap = min(set(range(max(used) + 1)) - used, default=None)
    if gap is not None:
        stray = next(raw for raw in marked if (raw.repeat or 0) > gap)
        raise FormatError(where, stray.line, f"repeat {stray.repeat}, but no line of the run has repeat {gap}",
                          f"repeats numbered from 0 with no gap: 0 to {gap - 1} here")  # fmt: skip
    return max(used) + 1


def _one_asking_note(name: str, declared: int | None) -> str:
    promised = f" though its header says {declared} repeats" if declared is not None and declared > 1 else ""
    return (
        f"{name}: every line is repeat 0{promised}; the run is read as one asking of each question (no "
        "spread between repeats)."
    )


def load_runs(specs: Runs, golden: GoldenSet, resolver: Resolver | None = None) -> list[LoadedRun]:
    """Read every run, named by :func:`.given.named_runs` (one document index and alignment cache for all:
    ``resolver``, made here when None); two runs with the same name raise :class:`InputError` (name them with
    NAME=PATH), a run split by its repeats included."""
    if not specs:
        raise InputError("no run given: pass at least one run file (JSONL, TREC or RAGAS)")
    resolver = resolver or Resolver(golden)
    runs = [run for named in specs_of(specs) for run in _load(named, golden, resolver)]
    seen: set[str] = set()
    for run in runs:
        if run.name in seen:
            raise InputError(f"two runs are named {run.name!r}: name them apart with NAME=PATH, e.g. bm25={run.path}")
        seen.add(run.name)
    return runs
