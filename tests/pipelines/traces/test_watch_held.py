"""``traces watch`` holds the spans of traces whose root span has not arrived, but not without bound: past the limit
the traces whose last span ended first are let go, counted and said; a trace kept completes when its root comes."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))
from watch_fixture import Q1, Q2, Q3, append, line, save_passages_golden, trace

from assay.formats.golden import GoldenSet
from assay.pipelines.traces import watch
from assay.pipelines.traces.watch import watch_once


@pytest.fixture
def golden(tmp_path: Path) -> GoldenSet:
    return GoldenSet.load(save_passages_golden(tmp_path / "golden"))


def test_held_spans_past_the_limit_let_the_oldest_traces_go(
    tmp_path: Path, golden: GoldenSet, monkeypatch: pytest.MonkeyPatch
) -> None:
    # three traces without their root span (the root is the first span of each), started 100 ms apart: 3 x 2 spans
    rootless = [trace(n, q)[1:] for n, q in ((1, Q1), (2, Q2), (3, Q3))]
    assert [len(spans) for spans in rootless] == [2, 2, 2]
    export = tmp_path / "export.jsonl"
    export.write_text(line(*rootless), encoding="utf-8")
    monkeypatch.setattr(watch, "HELD_KEPT", 3)
    first = watch_once(export, golden, tmp_path / "out")
    # 6 spans held, limit 3: trace 1 (ended first) goes, 4 left, still over; trace 2 goes, 2 left
    assert (first.abandoned, first.held_spans, first.traces) == (2, 2, 0)
    assert any("2 incomplete trace(s) abandoned" in note for note in first.notes)
    # trace 3's root arrives: it completes from the held spans; the abandoned traces' roots complete them alone
    append(export, line(*[trace(n, q)[:1] for n, q in ((1, Q1), (2, Q2), (3, Q3))]))
    second = watch_once(export, golden, tmp_path / "out")
    assert (second.abandoned, second.held_spans, second.traces) == (0, 0, 3)
    assert second.totals["abandoned"] == 2


def test_under_the_limit_nothing_is_let_go(tmp_path: Path, golden: GoldenSet) -> None:
    export = tmp_path / "export.jsonl"
    export.write_text(line(trace(1, Q1)[1:]), encoding="utf-8")
    done = watch_once(export, golden, tmp_path / "out")
    assert (done.abandoned, done.held_spans) == (0, 2)
    assert not any("abandoned" in note for note in done.notes)
