"""Every benchmark script loads: its imports still name modules that exist (a renamed package broke bench/batch.py
once, with nothing to notice it). Loading runs the module's top level only, not its ``main``."""

from __future__ import annotations

import runpy
from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parents[1] / "bench"


@pytest.mark.parametrize("script", sorted(path.name for path in BENCH.glob("*.py")))
def test_the_benchmark_script_loads(script: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.syspath_prepend(str(BENCH))  # the scripts import their sibling helpers
    namespace = runpy.run_path(str(BENCH / script), run_name="bench_load_check")
    assert namespace["__doc__"], f"bench/{script} says what it measures in its docstring"
