"""How full each budget is and how much of its text is judged (scoring/fill.py), end to end on the passages fixture,
and what the verdict does with it: the caveat of a run under the budget with the k that fills it, and no verdict
without a judge when a run's text is judged below 80%.

The character counts below are worked out by hand from the fixture's text (letters and digits only), and checked
against the text once by :func:`counted` so a slip in the arithmetic shows as itself.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from passages_fixture import chunk_text, save_passages_golden

from assay.pipelines.evaluate import EvalSettings, evaluate
from assay.report.verdict import build_verdict
from assay.results import BudgetFill, Comparison, EvalResult, MetricSummary, RunResult

UNMATCHED = "Nothing in this passage comes from the golden documents at all."
LETTERS = {  # letters and digits, counted by hand
    "tent#2": 41,  # Its 3, flysheet 8, is 2, rated 5, to 2, 3000 4, mm 2, of 2, water 5, pressure 8 (graded 0)
    "tent#3": 34,  # Pitch 5, the 3, inner 5, tent 4, first 5, in 2, dry 3, weather 7 (no label for q2)
    "returns#1": 67,  # Customers 9 ... refund 6 (graded 3 for q1)
    "shipping#1": 37,  # Standard 8, shipping 8, takes 5, 3 1, to 2, 5 1, business 8, days 4 (graded 1 for q3)
    "returns#0": 7,  # "# Returns": headings have no label
    "tent#0": 14,
    "shipping#0": 8,
}


def counted(text: str) -> int:
    return sum(ch.isalnum() for ch in text)


def test_the_hand_counts_match_the_text() -> None:
    assert {cid: counted(chunk_text(cid)) for cid in LETTERS} == LETTERS
    assert counted(UNMATCHED) == 52


@pytest.fixture(scope="module")
def golden(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return save_passages_golden(tmp_path_factory.mktemp("fill") / "golden")


def settings(*budgets: str) -> EvalSettings:
    return EvalSettings(k_values=(1, 3), n_boot=200, add_labels=False, budgets=budgets)


def test_fill_and_judged_share_per_question(golden: Path) -> None:
    """q2: tent#2 (41, graded 0: judged), tent#3 (34, unlabelled), then 52 characters found in no document."""
    run = [{"query_id": "q2", "retrieved": ["tent#2", "tent#3", {"text": UNMATCHED}]}]
    _, rows = evaluate(golden, {"r": run}, settings=settings("25t", "200c"))
    got = rows[0].budget
    # 25t = 100 characters: 41 + 34 + 25 of the unmatched text; the third passage fills it; 41 of 100 judged
    assert got["25t"] == BudgetFill(chars=100, filled=1.0, judged=0.41, k=3)
    # 200 characters: 127 shown; 41 judged; 3 passages gave 127, so ceil(3 * 200 / 127) = 5 would fill it
    assert got["200c"] == BudgetFill(chars=200, filled=127 / 200, judged=41 / 127, k=5)


def test_run_summary_is_the_median_over_questions_and_a_failed_question_is_left_out(golden: Path) -> None:
    run = [
        {"query_id": "q1", "retrieved": ["returns#1"]},  # 67 of 100, all judged; k = ceil(100 / 67) = 2
        {"query_id": "q2", "retrieved": ["tent#2", "tent#3", {"text": UNMATCHED}]},  # 100 of 100, 41% judged; k = 3
        {"query_id": "q3", "retrieved": ["shipping#1"]},  # 37 of 100, all judged; k = ceil(100 / 37) = 3
    ]
    result, rows = evaluate(golden, {"r": run}, settings=settings("25t"))
    assert [row.budget["25t"].filled for row in sorted(rows, key=lambda r: r.query_id)] == [0.67, 1.0, 0.37]
    assert result.runs[0].budget == {
        "25t": BudgetFill(chars=100, filled=0.67, judged=1.0, k=3, under=2 / 3, questions=3)
    }
    failed = [*run[:2], {"query_id": "q3", "error": {"kind": "timeout", "message": "no answer in 30 s"}}]
    result, rows = evaluate(golden, {"r": failed}, settings=settings("25t"))
    assert next(row for row in rows if row.query_id == "q3").budget == {}
    assert result.runs[0].budget["25t"] == BudgetFill(chars=100, filled=(0.67 + 1.0) / 2, judged=(1.0 + 0.41) / 2,
                                                      k=3, under=0.5, questions=2)  # fmt: skip


HEADINGS = [{"query_id": q, "retrieved": [f"{doc}#0"]} for q, doc in (("q1", "returns"), ("q2", "tent"),
                                                                       ("q3", "shipping"))]  # fmt: skip
FULL = [  # every question's text fills 100 characters to 80% or more, all of it labelled
    {"query_id": "q1", "retrieved": ["returns#1", "returns#2", "returns#4"]},  # 67 + 61 (graded 1): filled
    {"query_id": "q2", "retrieved": ["tent#1", "tent#2"]},  # 47 + 41 = 88
    {"query_id": "q3", "retrieved": ["shipping#2", "shipping#1"]},  # 42 + 37 = 79: under 80% on this one only
]


def test_a_run_of_short_passages_gets_the_caveat_with_the_k_that_fills_it(golden: Path) -> None:
    """The headings hold 7, 14 and 8 characters of 100: k = 15, 8 and 13 per question, median 13; median fill 8%."""
    result, _ = evaluate(golden, {"full": FULL, "short": HEADINGS}, settings=settings("25t"))
    full, short = (run.budget["25t"] for run in result.runs)
    assert (short.filled, short.k, short.under) == (0.08, 13, 1.0)
    assert (full.under, full.judged) == (pytest.approx(1 / 3), 1.0)  # under on one question of three: no caveat
    caveat = next(c for c in build_verdict(result).caveats if c.startswith("Budget 25t not filled"))
    assert "short a median 8% (under 80% on 100% of questions; `assay run --top-k 13` fills it)" in caveat
    assert "full" not in caveat
    alone, _ = evaluate(golden, {"full": FULL}, settings=settings("25t"))
    assert not any("not filled" in c for c in build_verdict(alone).caveats)


def test_no_verdict_without_a_judge_when_a_run_shows_mostly_unlabelled_text(golden: Path) -> None:
    """The headings have no label: the short run's budget text is judged 0%; FULL's 100%. The runs cut alike, so
    the primary is ndcg@3; the judged share is read at the first budget."""
    result, _ = evaluate(golden, {"full": FULL, "short": HEADINGS}, settings=settings("25t"))
    assert result.judge is None and result.runs[1].budget["25t"].judged == 0.0
    verdict = build_verdict(result)
    assert verdict.lead is not None and not verdict.lead.supported
    assert verdict.metric == "ndcg@3" and verdict.headline.startswith("full has the highest ndcg@3")
    assert "but no verdict" in verdict.headline and "the text short showed within the 25t budget" in verdict.headline
    assert verdict.ranking is not None and verdict.ranking.startswith("Means on ndcg@3 (no verdict): full")
    assert ">" not in verdict.ranking and "≈" not in verdict.ranking
    assert (
        verdict.caveats[0].startswith("Judged share of the text within the 25t budget")
        and "short 0%" in (verdict.caveats[0])
    )
    assert "--judge MODEL" in verdict.caveats[0] and "full" not in verdict.caveats[0].split(":")[1]


def _result(judged: float, judge: str | None) -> EvalResult:
    """Two runs, b significantly ahead of a on ndcg@1000t; a's budget text judged ``judged``, b's fully."""

    def run(name: str, mean: float, share: float) -> RunResult:
        fill = BudgetFill(chars=4000, filled=1.0, judged=share, k=10, under=0.0, questions=30)
        return RunResult(name=name, path=f"{name}.jsonl", metrics={"ndcg@1000t": MetricSummary(mean=mean, n_scored=30)},
                         budget={"1000t": fill})  # fmt: skip

    comparison = Comparison(a="a", b="b", metric="ndcg@1000t", n=30, delta=0.3, low=0.2, high=0.4, p_value=0.001,
                            p_adjusted=0.001, significant=True, verdict="b beats a", primary=True)  # fmt: skip
    return EvalResult(assay_version="t", golden="golden/", judge=judge, k_values=[10],
                      runs=[run("a", 0.3, judged), run("b", 0.6, 1.0)], comparisons=[comparison],
                      primary_metric="ndcg@1000t")  # fmt: skip


@pytest.mark.parametrize(
    ("judged", "judge", "withheld"),
    [(0.79, None, True), (0.8, None, False), (1.0, None, False), (0.1, "gpt-4o-mini", False), (0.1, "offline", False)],
)
def test_the_verdict_is_withheld_below_80_percent_judged_and_only_without_a_judge(
    judged: float, judge: str | None, withheld: bool
) -> None:
    verdict = build_verdict(_result(judged, judge))
    assert verdict.lead is not None and verdict.lead.supported is not withheld
    assert ("no verdict" in verdict.headline) is withheld
    # significant: b above a by the letters, unless withheld (no place is earned by a test then)
    assert (verdict.places[1].place == 2) is not withheld
    assert verdict.ranking is not None and ("runs that share no letter are" in verdict.ranking) is not withheld
    assert any(c.startswith("Judged share") and "a 79%" in c for c in verdict.caveats) is withheld


# letters and digits of the three documents, by paragraph: returns 7 + 67 + 61 + 10 + 47 = 192, tent 14 + 47 + 41 + 34
# = 136, shipping 8 + 37 + 42 = 87 (checked against the text below)
CORPUS = 415


def test_a_budget_above_the_corpus_is_measured_at_the_corpus_and_said(golden: Path) -> None:
    from passages_fixture import DOCS

    assert sum(counted(text) for text in DOCS.values()) == CORPUS
    run = [{"query_id": "q2", "retrieved": ["tent#2", "tent#3", {"text": UNMATCHED}]}]
    result, rows = evaluate(golden, {"r": run}, settings=settings("100000000000t", "25t"))
    # 127 characters shown (41 + 34 + 52) of a budget of 415; 41 judged; ceil(3 * 415 / 127) = 10 passages fill it
    assert rows[0].budget["100000000000t"] == BudgetFill(chars=CORPUS, filled=127 / CORPUS, judged=41 / 127, k=10)
    assert rows[0].budget["25t"].chars == 100  # a budget under the corpus is untouched
    # the tent's weight paragraph (graded 3, 47 characters) alone: P = 47 relevant characters / a budget of 415
    _, rows = evaluate(golden, {"r": [{"query_id": "q2", "retrieved": ["tent#1"]}]}, settings=settings("100000000000t"))
    assert rows[0].metrics["P@100000000000t"] == pytest.approx(47 / CORPUS)
    (note,) = [w for w in result.warnings if "100000000000t" in w]
    assert note == (
        "Budget 100000000000t (400,000,000,000 characters) is more text than the golden documents hold (415 "
        "characters of letters and digits): measured at 415 characters."
    )
