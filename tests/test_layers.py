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
