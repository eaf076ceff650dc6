"""The mutation habit: run mutmut 3 over each named module against its own tests, report the score and the survivors.

Called by ``scripts/mutation.sh`` (see its header for the usage). Per module:

1. The module's tests come from ``scripts/mutation_targets.toml``; a module not listed there is an error.
2. The working tree (the files git tracks, plus untracked ones it does not ignore, with uncommitted edits) is copied
   into a temporary folder, and ``[tool.mutmut]`` is appended to the copy's ``pyproject.toml``: only that module is
   mutated, only its tests are run. mutmut writes its ``mutants/`` folder there; the folder is deleted at the end
   (``--keep`` leaves it), so the repository never holds ``mutants/`` or a mutmut config.
3. ``mutmut run --max-children N`` (2 by default: the habit runs on 2-core machines) under a wall-clock budget.
4. The counts come from ``mutmut results --all true``, each survivor's diff from ``mutmut show NAME``.

Survivors marked equivalent in ``scripts/mutation_equivalent.toml`` (the mutated code behaves the same; a one-line
reason each) leave the score's denominator. mutmut numbers mutants per function (``x_spend__mutmut_3``) and those
numbers shift when the function changes, so an entry is keyed by what does not: the module, the function (``spend``
or ``Class.method``) and the changed lines of the mutant's diff (``-`` and ``+`` lines, whitespace stripped). An
entry that matches no surviving mutant any more is reported as stale.

Score = (killed + timeout) / (total - equivalent): a timeout is a mutant the tests stopped (an endless loop), as
mutmut's own score counts it. "no tests" (a mutated function no selected test calls) and "suspicious" count against
the score and are listed with the survivors. Exit 0 when every module reaches ``--min`` (90 by default), 1 when one
does not, 2 when the run could not be made (usage, a missing target, mutmut failing).
"""

from __future__ import annotations

import argparse
import importlib.metadata
import importlib.util
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import tomllib
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
TARGETS = ROOT / "scripts" / "mutation_targets.toml"
EQUIVALENT = ROOT / "scripts" / "mutation_equivalent.toml"
MUTMUT_PIN = "3.8.1"  # keep in step with the mutation extra in pyproject.toml

# mutmut's own statuses (mutmut.stats.status_by_exit_code) grouped the way the report counts them
KILLED = {"killed", "caught by type check"}
TIMEOUT = {"timeout"}
SURVIVED = {"survived"}
NO_TESTS = {"no tests"}


class UsageError(Exception):
    """A mistake in the arguments or the targets/equivalents files: reported, exit 2."""


# ---------------------------------------------------------------------------------------------------------- targets


def module_path(name: str, root: Path = ROOT) -> str:
    """The repository-relative path of a module given as a path (``src/assay/metrics/budget.py``, relative to the
    current folder or the repository) or a dotted name (``assay.metrics.budget``)."""
    if name.endswith(".py") or "/" in name:
        candidate = Path(name)
        for base in (Path.cwd(), root):
            full = (base / candidate).resolve() if not candidate.is_absolute() else candidate.resolve()
            if full.is_file():
                try:
                    return full.relative_to(root).as_posix()
                except ValueError:
                    raise UsageError(f"{name} is outside the repository {root}") from None
        raise UsageError(f"{name}: no such module file")
    if not re.fullmatch(r"[A-Za-z_]\w*(\.[A-Za-z_]\w*)*", name):
        raise UsageError(f"{name}: neither a module path (src/assay/....py) nor a dotted module name (assay....)")
    parts = name.split(".")
    for candidate in (Path("src", *parts).with_suffix(".py"), Path("src", *parts, "__init__.py")):
        if (root / candidate).is_file():
            return candidate.as_posix()
    raise UsageError(f"{name}: no module src/{'/'.join(parts)}.py (nor a package with an __init__.py)")


def load_targets(path: Path = TARGETS, root: Path = ROOT) -> dict[str, list[str]]:
    """``[targets]``: module path -> its test files; every path must exist."""
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, tomllib.TOMLDecodeError) as error:
        raise UsageError(f"{path}: {error}") from None
    targets = data.get("targets")
    if not isinstance(targets, dict) or set(data) - {"targets"}:
        raise UsageError(f'{path}: expected one table [targets] of "module path" = ["test file", ...]')
    problems = []
    for module, tests in targets.items():
        if not (root / module).is_file() or not module.endswith(".py"):
            problems.append(f"{module}: no such module file")
        if not isinstance(tests, list) or not tests or not all(isinstance(t, str) for t in tests):
            problems.append(f"{module}: its tests must be a non-empty list of test file paths")
            continue
        problems += [f"{module}: no test file {t}" for t in tests if not (root / t.split("::")[0]).exists()]
    if problems:
        raise UsageError(f"{path}:\n  " + "\n  ".join(problems))
    return targets


@dataclass(frozen=True)
class Equivalent:
    module: str
    function: str
    diff: tuple[str, ...]
    reason: str


def load_equivalents(path: Path = EQUIVALENT, root: Path = ROOT) -> list[Equivalent]:
    """``[[equivalent]]`` entries: module, function, diff (the changed lines), reason."""
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, tomllib.TOMLDecodeError) as error:
        raise UsageError(f"{path}: {error}") from None
    if set(data) - {"equivalent"}:
        raise UsageError(f"{path}: only [[equivalent]] entries belong here, found {sorted(set(data) - {'equivalent'})}")
    entries, problems = [], []
    for number, entry in enumerate(data.get("equivalent", []), 1):
        where = f"entry {number}"
        if set(entry) != {"module", "function", "diff", "reason"}:
            problems.append(f"{where}: needs exactly module, function, diff, reason (has {sorted(entry)})")
            continue
        if not (root / entry["module"]).is_file():
            problems.append(f"{where}: no such module file {entry['module']}")
        diff = entry["diff"]
        if not isinstance(diff, list) or not diff or not all(isinstance(x, str) and x[:1] in "+-" for x in diff):
            problems.append(f"{where}: diff must list the mutant's changed lines, each starting with - or +")
            continue
        if not isinstance(entry["reason"], str) or not entry["reason"].strip() or "\n" in entry["reason"].strip():
            problems.append(f"{where}: reason must be one line")
            continue
        entries.append(Equivalent(entry["module"], entry["function"], normalized_diff(diff), entry["reason"].strip()))
    if problems:
        raise UsageError(f"{path}:\n  " + "\n  ".join(problems))
    return entries


def normalized_diff(lines: list[str]) -> tuple[str, ...]:
    """The changed lines of a diff as the equivalents file keys them: ``-`` or ``+`` then the stripped text."""
    return tuple(f"{line[0]} {line[1:].strip()}".rstrip() for line in lines)


def changed_lines(show_output: str) -> tuple[str, ...]:
    """The ``-``/``+`` lines of ``mutmut show``'s unified diff (not its ``---``/``+++`` headers), normalized."""
    return normalized_diff(
        [line for line in show_output.splitlines() if line[:1] in "+-" and not line.startswith(("---", "+++"))]
    )


def function_of(mutant: str) -> str:
    """``spend`` for ``assay.metrics.budget.x_spend__mutmut_3``; ``Class.method`` for ``...xǁClassǁmethod__mutmut_1``
    (the name the equivalents file uses)."""
    mangled = mutant.partition("__mutmut_")[0].rpartition(".")[2]
    if mangled.startswith("xǁ"):
        _, cls, method = mangled.split("ǁ")
        return f"{cls}.{method}"
    return mangled.removeprefix("x_")


# -------------------------------------------------------------------------------------------------------- one run


@dataclass
class Outcome:
    module: str
    tests: list[str]
    statuses: dict[str, str] = field(default_factory=dict)  # mutant name -> mutmut's status
    shows: dict[str, str] = field(default_factory=dict)  # survivor -> mutmut show output
    equivalent: dict[str, Equivalent] = field(default_factory=dict)  # survivor -> its entry
    stale: list[Equivalent] = field(default_factory=list)
    error: str = ""
    seconds: float = 0.0

    def count(self, statuses: set[str]) -> int:
        return sum(1 for name, status in self.statuses.items() if status in statuses and name not in self.equivalent)

    @property
    def total(self) -> int:
        return len(self.statuses)

    @property
    def score(self) -> float:
        counted = self.total - len(self.equivalent)
        return 100.0 if counted <= 0 else 100.0 * self.count(KILLED | TIMEOUT) / counted

    @property
    def survivors(self) -> list[str]:
        caught = KILLED | TIMEOUT
        return sorted((n for n, s in self.statuses.items() if s not in caught and n not in self.equivalent), key=_order)


def _order(mutant: str) -> tuple[str, int]:
    """Mutants by function, then by mutmut's number as a number (``_9`` before ``_10``)."""
    name, _, number = mutant.rpartition("__mutmut_")
    return name, int(number) if number.isdigit() else 0


def copy_tree(root: Path, into: Path) -> None:
    """The working tree as git sees it (tracked + untracked not ignored, edits included), symlinks kept."""
    listed = subprocess.run(
        ["git", "-C", str(root), "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
        capture_output=True,
        check=False,
    )
    if listed.returncode != 0:
        raise UsageError(f"git ls-files failed in {root}: {listed.stderr.decode(errors='replace').strip()}")
    for name in sorted(set(listed.stdout.decode().split("\0")) - {""}):
        source, target = root / name, into / name
        if not os.path.lexists(source):  # deleted in the working tree, not yet committed
            continue
        target.parent.mkdir(parents=True, exist_ok=True)
        if source.is_symlink():
            target.symlink_to(os.readlink(source))
        else:
            shutil.copy2(source, target)


def mutmut_config(copy: Path, module: str, tests: list[str]) -> str:
    """The ``[tool.mutmut]`` section for one module: mutate it alone, run its tests, copy what the tests read."""
    # mutmut copies src/ file by file and skips symlinked folders (src/assay/_prompts -> ../../prompts): copy those,
    # and every top-level entry the tests may read (datasets/, prompts/, README.md, ...), into mutants/ as well.
    also = sorted(p.relative_to(copy).as_posix() for p in (copy / "src").rglob("*") if p.is_symlink() and p.is_dir())
    also += sorted(p.name for p in copy.iterdir() if p.name not in {"src", "tests", "pyproject.toml", "mutants"})
    cli_args = ["--hypothesis-seed=0"] if importlib.util.find_spec("hypothesis") else []  # reproducible survivors
    lines = [
        "",
        "# written by scripts/mutation.sh for this run only",
        "[tool.mutmut]",
        'source_paths = ["src/"]',
        f"only_mutate = {toml_list([module])}",
        f"pytest_add_cli_args_test_selection = {toml_list(tests)}",
        f"pytest_add_cli_args = {toml_list(cli_args)}",
        f"also_copy = {toml_list(also)}",
        "use_git_change_detection = false",
        # each mutant's tests run in a process forked from one that imported and collected them but ran none, so a
        # module-level cache a test filled (assay.metrics.budget's prefix sums) cannot hide a mutant
        'process_isolation = "forkserver"',
        "",
    ]
    return "\n".join(lines)


def toml_list(items: list[str]) -> str:
    return "[" + ", ".join('"' + item.replace("\\", "\\\\").replace('"', '\\"') + '"' for item in items) + "]"


def mutmut(copy: Path, args: list[str], *, timeout: float | None, log: Path | None = None) -> tuple[int, str]:
    """Run mutmut in the copy (its own process group, killed whole on timeout); (exit code, output)."""
    command = [sys.executable, "-c", "import sys; from mutmut.__main__ import cli; sys.argv[0] = 'mutmut'; cli()"]
    env = dict(os.environ)
    # a test that starts `python -m assay` gets the copy's unmutated code, not whatever the venv has installed
    env["PYTHONPATH"] = str(copy / "src")
    env["PYTHONDONTWRITEBYTECODE"] = "1"
    env.pop("MUTANT_UNDER_TEST", None)
    with open(log or os.devnull, "w", encoding="utf-8") as sink:
        process = subprocess.Popen(
            command + args,
            cwd=copy,
            env=env,
            stdout=sink if log else subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            start_new_session=True,
        )
        try:
            stdout, _ = process.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            process.communicate()
            return -1, log.read_text(encoding="utf-8") if log else ""
    return process.returncode, log.read_text(encoding="utf-8") if log else stdout


RESULT_LINE = re.compile(r"^\s+(?P<name>\S+__mutmut_\d+): (?P<status>.+?)\s*$")


def run_module(
    module: str, tests: list[str], equivalents: list[Equivalent], *, jobs: int, budget: float, keep: bool, verbose: bool
) -> Outcome:
    outcome = Outcome(module, tests)
    started = time.monotonic()
    copy = Path(tempfile.mkdtemp(prefix="assay-mutation-"))
    try:
        copy_tree(ROOT, copy)
        pyproject = copy / "pyproject.toml"
        if "mutmut" in tomllib.loads(pyproject.read_text(encoding="utf-8")).get("tool", {}):
            raise UsageError(
                "pyproject.toml has a [tool.mutmut] section: remove it, scripts/mutation.sh writes one per run"
            )
        with pyproject.open("a", encoding="utf-8") as f:
            f.write(mutmut_config(copy, module, tests))
        log = copy / "mutmut-run.log"
        code, output = mutmut(copy, ["run", "--max-children", str(jobs)], timeout=budget * 60, log=log)
        if verbose:
            print(output)
        if code != 0:
            why = f"over its budget of {budget:g} minutes (--budget)" if code == -1 else f"mutmut run exited {code}"
            outcome.error = f"{why}; the end of its output:\n" + "\n".join(output.strip().splitlines()[-25:])
            return outcome
        code, output = mutmut(copy, ["results", "--all", "true"], timeout=300)
        if code != 0:
            outcome.error = f"mutmut results exited {code}:\n{output}"
            return outcome
        outcome.statuses = {m["name"]: m["status"] for m in map(RESULT_LINE.match, output.splitlines()) if m}
        if not outcome.statuses:
            outcome.error = f"mutmut made no mutant of {module} (mutmut 3 mutates code inside functions only)"
            return outcome
        mine = [e for e in equivalents if e.module == module]
        used: set[Equivalent] = set()
        for name in sorted(n for n, s in outcome.statuses.items() if s not in KILLED | TIMEOUT):
            code, shown = mutmut(copy, ["show", name], timeout=120)
            outcome.shows[name] = shown.strip() if code == 0 else f"# {name}: (mutmut show exited {code})\n{shown}"
            for entry in mine:
                if entry.function == function_of(name) and entry.diff == changed_lines(shown):
                    outcome.equivalent[name] = entry
                    used.add(entry)
        outcome.stale = [e for e in mine if e not in used]
        return outcome
    finally:
        outcome.seconds = time.monotonic() - started
        if keep:
            print(f"   kept {copy} (mutmut browse / show / apply work there)")
        else:
            shutil.rmtree(copy, ignore_errors=True)


# ----------------------------------------------------------------------------------------------------------- report


def stanza(module: str, mutant: str, shown: str) -> str:
    """The ``[[equivalent]]`` entry that would mark ``mutant`` equivalent (its reason still to write)."""
    return "\n".join(
        [
            "[[equivalent]]",
            f'module = "{module}"',
            f'function = "{function_of(mutant)}"',
            f"diff = {toml_list(list(changed_lines(shown)))}",
            'reason = "TODO: why no input tells it from the original"',
        ]
    )


def report(outcome: Outcome, minimum: float, stanzas: bool = False) -> bool:
    """Print one module's counts, score and survivors; whether it reaches the minimum."""
    print(f"== {outcome.module}  (tests: {' '.join(outcome.tests)})  {outcome.seconds:.0f}s")
    if outcome.error:
        print(f"   ERROR: {outcome.error}")
        return False
    other = outcome.total - len(outcome.equivalent) - outcome.count(KILLED | TIMEOUT | SURVIVED | NO_TESTS)
    print(
        f"   mutants {outcome.total}  killed {outcome.count(KILLED)}  survived {outcome.count(SURVIVED)}"
        f"  timeout {outcome.count(TIMEOUT)}  no tests {outcome.count(NO_TESTS)}  other {other}"
        f"  equivalent {len(outcome.equivalent)}"
    )
    ok = outcome.score >= minimum
    print(
        f"   score {outcome.score:.1f}% = (killed + timeout) / (mutants - equivalent)"
        f" = {outcome.count(KILLED | TIMEOUT)}/{outcome.total - len(outcome.equivalent)}"
        f"   {'ok' if ok else 'BELOW'} --min {minimum:g}"
    )
    for name, entry in sorted(outcome.equivalent.items()):
        print(f"   equivalent {name}: {entry.reason}")
    for entry in outcome.stale:
        print(
            f"   stale equivalent entry (matches no surviving mutant; remove or update it in {EQUIVALENT.name}):"
            f" {entry.function} {list(entry.diff)}"
        )
    for name in outcome.survivors:
        print(f"   -- {outcome.statuses[name]}: {name}")
        print("\n".join("      " + line for line in outcome.shows.get(name, "").splitlines()[1:]))
    if stanzas and outcome.survivors:
        print(f"   [[equivalent]] entries for these survivors, to paste into {EQUIVALENT.name} when one is equivalent:")
        for name in outcome.survivors:
            print("\n" + stanza(outcome.module, name, outcome.shows.get(name, "")))
    return ok


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="scripts/mutation.sh",
        description="Run mutmut 3 over each module against its own tests (scripts/mutation_targets.toml); print the "
        "counts, the score and the survivors' diffs; exit 1 when a module scores below --min.",
    )
    parser.add_argument("modules", nargs="*", metavar="MODULE", help="src/assay/....py or assay.... (dotted)")
    parser.add_argument("--min", type=float, default=90.0, help="lowest score accepted, in %% (default 90)")
    parser.add_argument("--jobs", type=int, default=2, help="mutmut --max-children (default 2)")
    parser.add_argument("--budget", type=float, default=30.0, help="wall-clock minutes per module (default 30)")
    parser.add_argument("--list", action="store_true", help="print the module -> tests mapping and stop (no mutmut)")
    parser.add_argument("--keep", action="store_true", help="keep each run's temporary copy (with its mutants/)")
    parser.add_argument("--verbose", action="store_true", help="print mutmut's own output")
    parser.add_argument(
        "--stanzas", action="store_true", help=f"print each survivor's [[equivalent]] entry for {EQUIVALENT.name}"
    )
    args = parser.parse_args(argv)
    if not 0 <= args.min <= 100:
        parser.error("--min is a percentage, 0 to 100")
    if args.jobs < 1:
        parser.error("--jobs must be 1 or more")
    if args.budget <= 0:
        parser.error("--budget must be positive (minutes)")
    if not args.modules and not args.list:
        parser.error("name at least one MODULE (or --list to see the targets)")
    try:
        targets = load_targets()
        equivalents = load_equivalents()
        modules = [module_path(m) for m in args.modules] if args.modules else sorted(targets)
        missing = [m for m in modules if m not in targets]
        if missing:
            raise UsageError(
                "\n".join(
                    f'{m} has no tests in {TARGETS.relative_to(ROOT)}: add a line "{m}" = ["tests/....py"] '
                    "under [targets] naming the test files that cover it"
                    for m in missing
                )
            )
        modules = list(dict.fromkeys(modules))
    except UsageError as error:
        print(f"scripts/mutation.sh: {error}", file=sys.stderr)
        return 2
    if args.list:
        for module in modules:
            print(f"{module} -> {' '.join(targets[module])}")
        return 0
    if importlib.util.find_spec("mutmut") is None:
        print(
            f"scripts/mutation.sh: mutmut is not installed: pip install -e '.[dev,mutation]' (mutmut=={MUTMUT_PIN})",
            file=sys.stderr,
        )
        return 2
    installed = importlib.metadata.version("mutmut")
    if installed != MUTMUT_PIN:
        print(
            f"scripts/mutation.sh: warning: mutmut {installed} is installed, this script is checked with {MUTMUT_PIN}"
        )
    results = []
    for module in modules:
        try:
            outcome = run_module(
                module,
                targets[module],
                equivalents,
                jobs=args.jobs,
                budget=args.budget,
                keep=args.keep,
                verbose=args.verbose,
            )
        except UsageError as error:
            print(f"scripts/mutation.sh: {error}", file=sys.stderr)
            return 2
        results.append((outcome, report(outcome, args.min, args.stanzas)))
        sys.stdout.flush()
    print("== summary")
    for outcome, ok in results:
        score = "error" if outcome.error else f"{outcome.score:5.1f}%"
        print(f"   {score:>7}  {'ok   ' if ok else 'BELOW'}  {outcome.module}")
    if any(outcome.error for outcome, _ in results):
        return 2
    return 0 if all(ok for _, ok in results) else 1


if __name__ == "__main__":
    sys.exit(main())
