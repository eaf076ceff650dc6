"""One unit of account (issue 28), end to end: the same text cut differently scores the same on every measure
comparable across chunkings (hypothesis picks the cuts), budget measures against character sets computed here,
trec_eval parity for runs of golden chunk ids, and the verdict for runs that cut their text differently."""

from __future__ import annotations

import itertools
import math
from dataclasses import replace
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from passages_fixture import DOCS, GRADES, make_passages_golden, paragraphs, save_passages_golden

from assay.corpus.align import Span
from assay.errors import ConfigError
from assay.pipelines.evaluate import EvalSettings, evaluate
from assay.pipelines.evaluate.runs.loaded import LoadedRun, RunLine
from assay.pipelines.evaluate.runs.locate import Located, Resolver
from assay.pipelines.evaluate.runs.units import Units, project_run
from assay.pipelines.evaluate.scoring.names import counts_passages, parse_budget, parse_budget_name
from assay.results import RunCounts
from assay.types import Chunk, RunError

SETTINGS = EvalSettings(k_values=(1, 3), n_boot=200, add_labels=False, budgets=("40c", "30t"))
RANKED = {  # each question's chunks in rank order: the text every variant below retrieves
    "q1": ["returns#1", "returns#2", "shipping#1", "returns#4"],
    "q2": ["tent#2", "tent#1", "tent#3"],
    "q3": ["shipping#1", "returns#4", "shipping#2"],
}


@pytest.fixture(scope="module")
def golden(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return save_passages_golden(tmp_path_factory.mktemp("units") / "golden")


def span(cid: str) -> tuple[str, int, int]:
    doc, ordinal = cid.split("#")
    start, end = paragraphs(doc)[int(ordinal)]
    return doc, start, end


def cut_run(cuts: list[float]) -> list[dict]:
    """The ranked chunks given by offsets, each cut at the fractions ``cuts`` (pieces in document order)."""
    rows = []
    for qid, ranked in RANKED.items():
        items = []
        for cid in ranked:
            doc, s, e = span(cid)
            points = sorted({s + int((e - s) * c) for c in cuts} | {s, e})
            items += [{"doc_id": doc, "start": a, "end": b} for a, b in itertools.pairwise(points) if b > a]
        rows.append({"query_id": qid, "retrieved": items})
    return rows


def by_id() -> list[dict]:
    return [{"query_id": qid, "retrieved": ranked} for qid, ranked in RANKED.items()]


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(st.floats(0.05, 0.95), min_size=1, max_size=3))
def test_the_same_text_cut_differently_scores_the_same(golden: Path, cuts: list[float]) -> None:
    _result, rows = evaluate(golden, {"ids": by_id(), "cut": cut_run(cuts)}, settings=SETTINGS)
    per = {(r.run, r.query_id): r.metrics for r in rows}
    names = [m for m in per[("ids", "q1")] if not counts_passages(m)]
    assert any(m.endswith("t") for m in names) and "ndcg@3" in names
    for qid in RANKED:
        for name in names:
            a, b = per[("ids", qid)][name], per[("cut", qid)][name]
            assert (a is None and b is None) or a == pytest.approx(b, abs=1e-12), (qid, name, a, b)


def counted(doc: str, start: int, end: int) -> list[tuple[str, int]]:
    """The characters a budget counts: letters and digits (whitespace, punctuation and markup are not counted)."""
    return [(doc, i) for i in range(start, end) if DOCS[doc][i].isalnum()]


def relevant_chars(qid: str, threshold: int = 1) -> set[tuple[str, int]]:
    return {c for cid, g in GRADES[qid].items() if g >= threshold for c in counted(*span(cid))}


def test_budget_measures_against_character_sets(golden: Path) -> None:
    """q2: a passage of the tent's flysheet paragraph (graded 0) then half of the weight paragraph (graded 3); the
    budget counts 80 letters and digits."""
    flysheet, weight = span("tent#2"), span("tent#1")
    half = (weight[1], weight[1] + (weight[2] - weight[1]) // 2)
    run = [{"query_id": "q2", "retrieved": [
        {"doc_id": "tent", "start": flysheet[1], "end": flysheet[2]},
        {"doc_id": "tent", "start": half[0], "end": half[1]},
    ]}]  # fmt: skip
    budget = 80
    stream = (counted(*flysheet) + counted("tent", *half))[:budget]
    relevant = relevant_chars("q2")
    found = [c in relevant for c in stream]
    hits, ap = 0, 0.0
    for position, hit in enumerate(found, start=1):
        if hit:
            hits += 1
            ap += hits / position
    grade = {c: g for cid, g in GRADES["q2"].items() for c in counted(*span(cid))}
    dcg = sum(grade.get(c, 0) / math.log2(i + 1) for i, c in enumerate(stream, start=1))
    ideal = sorted(grade.values(), reverse=True)[:budget]
    idcg = sum(g / math.log2(i + 1) for i, g in enumerate(ideal, start=1))
    names = ("recall@80c", "P@80c", "map@80c", "ndcg@80c")
    _, rows = evaluate(golden, {"r": run}, settings=EvalSettings(k_values=(1,), n_boot=200, metrics=names))
    got = rows[0].metrics
    assert got["recall@80c"] == pytest.approx(sum(found) / len(relevant))
    assert got["P@80c"] == pytest.approx(sum(found) / budget)
    assert got["map@80c"] == pytest.approx(ap / len(relevant))
    assert got["ndcg@80c"] == pytest.approx(dcg / idcg)


def test_runs_of_golden_chunk_ids_keep_trec_eval_parity(golden: Path) -> None:
    pytrec_eval = pytest.importorskip("pytrec_eval")
    names = ("ndcg@3", "P@3", "recall@3", "map")
    _, rows = evaluate(golden, {"ids": by_id()}, settings=EvalSettings(k_values=(3,), n_boot=200, metrics=names))
    qrels = {q: dict(g) for q, g in GRADES.items()}
    run = {qid: {cid: float(len(r) - i) for i, cid in enumerate(r)} for qid, r in RANKED.items()}
    ref = pytrec_eval.RelevanceEvaluator(qrels, {"ndcg_cut_3", "P_3", "recall_3", "map"}).evaluate(run)
    for row in rows:
        want = ref[row.query_id]
        assert row.metrics["ndcg@3"] == pytest.approx(want["ndcg_cut_3"])
        assert row.metrics["P@3"] == pytest.approx(want["P_3"])
        assert row.metrics["recall@3"] == pytest.approx(want["recall_3"])
        assert row.metrics["map"] == pytest.approx(want["map"])


def test_runs_cut_differently_lead_with_a_budget_measure_and_no_verdict_on_passage_counts(golden: Path) -> None:
    result, _ = evaluate(golden, {"ids": by_id(), "halves": cut_run([0.5])}, settings=SETTINGS)
    assert result.primary_metric == "ndcg@40c"
    compared = {c.metric for c in result.comparisons}
    assert compared and not any(counts_passages(m) for m in compared)
    notes = " ".join(result.warnings)
    assert "The runs cut their text differently" in notes and "No verdict on span_recall@3" in notes
    assert all(w.rstrip().endswith(".") for w in result.warnings if "cut their text" in w or "No verdict" in w)
    alike, _ = evaluate(golden, {"a": by_id(), "b": by_id()}, settings=SETTINGS)
    assert alike.primary_metric != "ndcg@40c" and not any("cut their text" in w for w in alike.warnings)


def test_runs_cut_differently_keep_the_primary_the_user_named(golden: Path) -> None:
    """--primary ndcg@3 (a ranking measure, comparable across cuts): it leads, not the budget nDCG, and no note
    claims otherwise."""
    named = EvalSettings(k_values=(1, 3), n_boot=200, add_labels=False, budgets=("40c", "30t"), primary="ndcg@3")
    result, _ = evaluate(golden, {"ids": by_id(), "halves": cut_run([0.5])}, settings=named)
    assert result.primary_metric == "ndcg@3"
    assert [c.metric for c in result.comparisons if c.primary] == ["ndcg@3"]
    assert any("cut their text differently" in w for w in result.warnings)
    assert not any("The primary metric is" in w for w in result.warnings)


def test_projection_keeps_each_lines_own_fields_and_items_found_nowhere_in_place() -> None:
    """project_run on hand-made lines: a chunk given by id stands for itself and a later passage showing it adds
    nothing; an unknown id and a text found nowhere keep their places under their own ids; a passage covering a
    chunk reaches it; a golden chunk of no known document is never reached. The answer, citations and error are
    the line's own, the scores follow the projected order."""
    base = make_passages_golden()
    gone = Chunk(id="gone#0", doc_id="gone", ordinal=0, text="a chunk of a document not in the set")
    golden = replace(base, chunks=[*base.chunks, gone])
    units = Units(golden, Resolver(golden))
    assert units.ranges[-1] == ("", 0, 0)
    doc, start, end = span("returns#2")
    _, start1, end1 = span("returns#1")
    located = {
        "text-x": Located("text-x", "none", None, "found nowhere"),
        "p1": Located("p1", "offsets", Span(doc, start, end, "offsets", 1.0), None),
        "p2": Located("p2", "offsets", Span(doc, start1, end1, "offsets", 1.0), None),
    }
    line = RunLine("q1", ["returns#1", "mystery", "text-x", "p1", "p2"], {}, answer="30 days", citations=["p1"],
                   located=located)  # fmt: skip
    failed = RunLine("q2", [], {}, error=RunError(kind="timeout", message="slow"))
    run = LoadedRun("r", Path("r.jsonl"), "jsonl", {"q1": line, "q2": failed}, RunCounts(lines=2))
    projected = project_run(run, units)
    got = projected.lines["q1"]
    assert got.ranked == ["returns#1", "mystery", "text-x", "returns#2"]
    assert got.scores == {"returns#1": 4.0, "mystery": 3.0, "text-x": 2.0, "returns#2": 1.0}
    assert (got.query_id, got.answer, got.citations, got.error) == ("q1", "30 days", ["p1"], None)
    other = projected.lines["q2"]
    assert (other.query_id, other.ranked, other.error) == ("q2", [], RunError(kind="timeout", message="slow"))
    assert projected.counts is run.counts and projected.name == "r"


@pytest.mark.parametrize("bad", ["0t", "1000", "10x", "t"])
def test_a_budget_of_zero_or_without_a_unit_is_refused(bad: str) -> None:
    with pytest.raises(ConfigError, match="budget"):
        parse_budget(bad)
    with pytest.raises(ConfigError, match="budget"):
        EvalSettings(budgets=(bad,)).checked()


def test_budget_names() -> None:
    assert parse_budget_name("recall@1000t").chars == 4000
    assert parse_budget_name("P@400c|g>=2").threshold == 2
    with pytest.raises(ConfigError, match="budget measure"):
        parse_budget_name("err@1000t")
    with pytest.raises(ConfigError, match="budget"):
        EvalSettings(metrics=("ndcg@0t",)).checked()
