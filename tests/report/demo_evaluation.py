"""A real evaluation for the report tests: the bundled demo corpus built into a golden set with the offline judge,
then four runs evaluated by the evaluate pipeline, as ``assay demo`` does.

The runs are the demo's bm25, hybrid and weak, and ``halves``: bm25 with each retrieved chunk given as the text of
its two halves, so that it cuts its text differently from the others (the verdict leads with a budget measure and
says so).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from assay.cli.demo import demo_root
from assay.formats.golden import GoldenSet
from assay.judge import make_judge
from assay.pipelines.bootstrap import DEMO_SETTINGS, build_golden
from assay.pipelines.evaluate import EvalSettings, Evaluated, evaluate_detailed


def _halves(golden: GoldenSet, line: dict[str, Any]) -> dict[str, Any]:
    """A run line with each retrieved chunk replaced by its two halves, given by text."""
    chunks = {c.id: c.text for c in golden.chunks}
    retrieved = []
    for item in line["retrieved"]:
        text = chunks[item["id"] if isinstance(item, dict) else item]
        middle = len(text) // 2
        retrieved += [{"text": text[:middle]}, {"text": text[middle:]}]
    return {**line, "retrieved": retrieved}


def evaluate_demo(folder: Path, runs: tuple[str, ...] = ("bm25", "hybrid", "weak", "halves")) -> Evaluated:
    """Build the demo golden set into ``folder / "golden"`` and evaluate ``runs`` against it (offline judge)."""
    root = demo_root()
    golden_dir = folder / "golden"
    judge = make_judge("offline")
    golden = build_golden(root / "corpus", judge=judge, settings=DEMO_SETTINGS, output=golden_dir)
    specs: list[Any] = []
    for name in runs:
        source = root / "runs" / f"{'bm25' if name == 'halves' else name}.jsonl"
        if name == "halves":
            lines = [json.loads(text) for text in source.read_text(encoding="utf-8").splitlines() if text.strip()]
            specs.append((name, [_halves(golden, line) for line in lines if "query_id" in line]))
        else:
            specs.append((name, source))
    return evaluate_detailed(golden_dir, specs, judge=judge, settings=EvalSettings(n_boot=500))
