"""Figures of the house: how big its functions and modules are, and how much test there is per line of source.

    python scripts/house.py [ROOT]

Prints, for src/assay: the number of functions and modules, function lengths (median, p90, max, in lines from the
`def` to the last line of the body), module lengths (median, max, how many over 400 lines) and the ratio of test
lines (tests/) to source lines. Lines are physical lines, blank and comment lines included, as `wc -l` counts them.
"""

from __future__ import annotations

import ast
import statistics
import sys
from pathlib import Path


def _lines(path: Path) -> int:
    return len(path.read_text(encoding="utf-8").splitlines())


def _functions(path: Path) -> list[int]:
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    return [
        node.end_lineno - node.lineno + 1
        for node in ast.walk(tree)
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and node.end_lineno is not None
    ]


def _p90(values: list[int]) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(0.9 * len(ordered)))]


def main(root: Path) -> None:
    modules = sorted((root / "src" / "assay").rglob("*.py"))
    sizes = [_lines(m) for m in modules]
    functions = [length for m in modules for length in _functions(m)]
    tests = sum(_lines(t) for t in (root / "tests").rglob("*.py"))
    source = sum(sizes)
    print(f"modules: {len(modules)}, lines {source}")
    over = sum(size > 400 for size in sizes)
    print(f"  module lines: median {statistics.median(sizes):g}, max {max(sizes)}, over 400: {over}")
    print(f"functions: {len(functions)}")
    print(f"  function lines: median {statistics.median(functions):g}, p90 {_p90(functions):g}, max {max(functions)}")
    print(f"tests: {tests} lines, tests:source {tests / source:.2f}")
    for size, module in sorted(zip(sizes, modules, strict=True), reverse=True):
        if size > 400:
            print(f"  {size:5d}  {module.relative_to(root)}")


if __name__ == "__main__":
    main(Path(sys.argv[1]) if len(sys.argv) > 1 else Path(__file__).resolve().parent.parent)
