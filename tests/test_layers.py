"""Rules of the layout that import-linter cannot see: imports under ``TYPE_CHECKING`` and attribute access."""

from __future__ import annotations

import ast
from pathlib import Path

import assay

SRC = Path(assay.__file__).parent


def _modules(*parts: str) -> list[Path]:
    return sorted(SRC.joinpath(*parts).rglob("*.py"))


def test_no_module_imports_the_package_root_even_for_type_checking() -> None:
    importers = []
    for path in _modules():
        if path == SRC / "__init__.py":
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            names = [a.name for a in node.names] if isinstance(node, ast.Import) else []
            if (isinstance(node, ast.ImportFrom) and node.module == "assay" and node.level == 0) or "assay" in names:
                importers.append(f"{path.relative_to(SRC)}:{node.lineno}")
    assert importers == []


def test_the_version_comes_from_the_ground_floor() -> None:
    from assay._version import __version__

    assert assay.__version__ == __version__


def test_the_batch_paths_call_the_judge_by_public_names_only() -> None:
    """``assay.judge.workers`` and the provider batches reach the judge through ``BatchJudge``: no ``judge._name``."""
    private = []
    for path in [SRC / "judge" / "workers.py", *_modules("judge", "batches")]:
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if (
                isinstance(node, ast.Attribute)
                and node.attr.startswith("_")
                and not node.attr.startswith("__")
                and isinstance(node.value, ast.Name)
                and node.value.id not in ("self", "cls")
            ):
                private.append(f"{path.relative_to(SRC)}:{node.lineno} {node.value.id}.{node.attr}")
    assert private == []


# ---------------------------------------------------------------- no import cycle, TYPE_CHECKING ones included
#
# import-linter skips ``if TYPE_CHECKING:`` imports (pyproject.toml says why), so a cycle that only type checking
# closes would pass it; this graph has every import: top level, TYPE_CHECKING and function-local alike.

BENCH = Path(__file__).resolve().parents[1] / "bench"


def _module_files() -> dict[str, Path]:
    """Every module by its import name: ``assay.x.y`` under src, the script's bare name under bench/ (the scripts put
    their folder on sys.path and import each other by name)."""
    found: dict[str, Path] = {}
    for root, prefix in ((SRC, ("assay",)), (BENCH, ())):
        for path in sorted(root.rglob("*.py")):
            parts = path.relative_to(root).with_suffix("").parts
            parts = parts[:-1] if parts[-1] == "__init__" else parts
            found[".".join((*prefix, *parts))] = path
    return found


def _known(name: str, modules: dict[str, Path]) -> str | None:
    """``name`` or its nearest parent that is one of ``modules`` (an imported function names its module)."""
    while name and name not in modules:
        name = name.rpartition(".")[0]
    return name or None


def _imported(name: str, path: Path, modules: dict[str, Path]) -> set[str]:
    """The modules ``name`` imports. ``from package import x`` is an import of ``package.x`` when that is a module,
    else of the package; importing ``a.b.c`` does not count as importing ``a`` or ``a.b`` (a package's ``__init__``
    is part of a cycle only through what it imports itself)."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    out: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            out.update(filter(None, (_known(alias.name, modules) for alias in node.names)))
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parts = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([*parts, *([node.module] if node.module else [])])
            for alias in node.names:
                target = f"{base}.{alias.name}" if f"{base}.{alias.name}" in modules else _known(base, modules)
                if target:
                    out.add(target)
    out.discard(name)
    return out


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan's algorithm, visited in sorted order)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        for nxt in sorted(graph[node]):
            if nxt not in index:
                visit(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            component = stack[stack.index(node) :]
            del stack[stack.index(node) :]
            if len(component) > 1:
                found.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return found


def test_no_import_cycle_in_src_or_bench_type_checking_and_local_imports_included() -> None:
    modules = _module_files()
    graph = {name: _imported(name, path, modules) for name, path in modules.items()}
    assert _cycles(graph) == []


def test_the_cycle_check_sees_type_checking_local_and_relative_imports(tmp_path: Path) -> None:
    modules = {name: tmp_path / f"{name}.py" for name in ("pkg", "pkg.a", "pkg.b", "pkg.c", "pkg.d")}
    modules["pkg"] = tmp_path / "__init__.py"
    sources = {
        "pkg.a": "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from pkg.b import B\n",
        "pkg.b": "def f():\n    from . import a\n",
        "pkg.c": "import pkg.d\n",
        "pkg.d": "x = 1\n",
        "pkg": "",
    }
    for name, text in sources.items():
        modules[name].write_text(text, encoding="utf-8")
    graph = {name: _imported(name, path, modules) for name, path in modules.items()}
    assert graph == {"pkg": set(), "pkg.a": {"pkg.b"}, "pkg.b": {"pkg.a"}, "pkg.c": {"pkg.d"}, "pkg.d": set()}
    assert _cycles(graph) == [["pkg.a", "pkg.b"]]
