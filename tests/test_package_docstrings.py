"""Every package's docstring names each of its modules and subpackages (issue 41: a reader opening a package learns
from its ``__init__`` which module does which job; a module added without a line there fails here)."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

import assay

SRC = Path(assay.__file__).parent
PACKAGES = sorted(init.parent for init in SRC.rglob("__init__.py"))


def _members(package: Path) -> list[str]:
    """The modules (``*.py`` but ``__init__``) and subpackages (folders with an ``__init__.py``) of ``package``."""
    modules = [path.stem for path in package.glob("*.py") if path.name != "__init__.py"]
    subpackages = [path.name for path in package.iterdir() if (path / "__init__.py").is_file()]
    return sorted(modules + subpackages)


def _unnamed(docstring: str, members: list[str]) -> list[str]:
    """The members the docstring does not name as a whole word (``spans`` is named by ``:mod:`.spans``` or
    ````spans````, not by ``span_labels``)."""
    return [name for name in members if not re.search(rf"(?<!\w){re.escape(name)}(?!\w)", docstring)]


@pytest.mark.parametrize("package", PACKAGES, ids=lambda path: str(path.relative_to(SRC)) or "assay")
def test_the_package_docstring_names_every_module(package: Path) -> None:
    docstring = ast.get_docstring(ast.parse((package / "__init__.py").read_text(encoding="utf-8"))) or ""
    unnamed = _unnamed(docstring, _members(package))
    assert unnamed == [], f"{package.relative_to(SRC.parent)}/__init__.py: add one line for each of {unnamed}"


def test_a_name_counts_only_as_a_whole_word() -> None:
    docstring = "- ``span_labels``: labels.\n- :mod:`.carry`: the rule; see assay.runs.read for reading."
    assert _unnamed(docstring, ["carry", "read", "spans", "labels_x"]) == ["spans", "labels_x"]
