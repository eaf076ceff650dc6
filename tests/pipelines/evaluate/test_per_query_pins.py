"""Step 3 of an evaluation (per_query.py), where its branches are easy to lose: a failed question's values and reasons,
what is measured only when asked (coverage recall, RAGAS context precision), the passages read only to the deepest k,
the budget fill of a run with no passages, and the strata of a question outside the golden set's conversations.

evaluate_fixture's first four questions (q00..q03): each has an answer chunk (graded 3) whose one vital nugget it
supports, a related chunk (graded 1) and an unlabelled care chunk; good_lines retrieve the answer chunk first, then
the care, the related and the next question's answer chunk; weak_lines retrieve another product's related and care
chunks, the question's own related chunk, then its answer chunk except on q00 and q03 (every third question). The
expected values below are read off those lists.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from evaluate_fixture import answer_id, answer_text, good_lines, make_golden, qid, weak_lines
from passages_fixture import save_passages_golden

from assay.judge import make_judge
from assay.pipelines.evaluate import EvalSettings, evaluate
from assay.pipelines.evaluate.pipeline import evaluate_detailed
from assay.results import BudgetFill, QueryResult
from assay.types import Conversation, Turn

N = 4
WARRANTY = '+++\nname = "warranty"\nversion = "1"\n[check]\nkind = "contains"\ntext = "warranty"\n+++\n'
CITES = '+++\nname = "cites"\nversion = "1"\n[check]\nkind = "cites"\n+++\n'


def _criterion(folder: Path, text: str) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "criterion.md").write_text(text, encoding="utf-8")
    return folder


def _rows(rows: list[QueryResult], run: str) -> dict[str, QueryResult]:
    return {row.query_id: row for row in rows if row.run == run}


# -- a failed question ---------------------------------------------------------------------------------------------


def test_a_failed_line_scores_0_on_recall_and_retrieval_even_with_an_answer_and_is_unscored_elsewhere(
    tmp_path: Path,
) -> None:
    """q00 failed (a timeout) although its line carries the full answer and the answer chunk: the failure comes
    first. Its recall-type answer measures and the measures of what it retrieved are 0, with no reason; every other
    metric, the team's criterion included (the answer holds "warranty"), is unscored as the system's failure."""
    lines: list[dict[str, Any]] = good_lines(N)
    lines[0] = {"query_id": qid(0), "retrieved": [answer_id(0)], "answer": answer_text(0),
                "error": {"kind": "timeout", "message": "no answer in 30 s"}}  # fmt: skip
    folder = _criterion(tmp_path / "criteria", WARRANTY)
    _, rows = evaluate(make_golden(n=N), [("flaky", lines)], judge=make_judge("offline"),
                       settings=EvalSettings(n_boot=200, criteria=(folder,)))  # fmt: skip
    row = _rows(rows, "flaky")[qid(0)]
    zero = ("ndcg@10", "P@1", "mrr", "ragas_context_precision@1", "coverage_recall@1", "context_recall",
            "nugget_recall_all_strict", "nugget_recall_vital_lenient", "claim_recall", "claim_f1")  # fmt: skip
    for name in zero:
        assert row.metrics[name] == 0.0 and name not in row.unscored, name
    for name in ("faithfulness", "answer_relevance", "claim_precision", "hallucination", "criterion:warranty"):
        assert row.metrics[name] is None and row.unscored[name] == "system_failed", name
    # a reason for every unscored value and for nothing else
    assert set(row.unscored) == {name for name, value in row.metrics.items() if value is None}
    # the same answer on a line that did not fail is scored as it reads: the full answer holds the vital nugget
    assert _rows(rows, "flaky")[qid(1)].metrics["nugget_recall_vital_strict"] == 1.0


# -- measured only when asked ----------------------------------------------------------------------------------------


def test_coverage_recall_is_measured_when_named_and_context_precision_only_when_asked() -> None:
    """Named, coverage recall at 1 and 4: good has each question's answer chunk first (1.0 at both); weak has it
    fourth except on q00 and q03 (0.0 at 1; 0, 1, 1, 0 at 4). With a judge but only ranking and coverage asked, no
    RAGAS context precision is computed; with only ranking asked, no coverage recall."""
    runs = [("good", good_lines(N)), ("weak", weak_lines(N))]
    settings = EvalSettings(n_boot=200, k_values=(1, 4), metrics=("ndcg@4", "coverage_recall@1", "coverage_recall@4"))
    _, rows = evaluate(make_golden(n=N), runs, judge=make_judge("offline"), settings=settings)
    good, weak = _rows(rows, "good"), _rows(rows, "weak")
    q = [qid(i) for i in range(N)]
    assert [good[i].metrics["coverage_recall@1"] for i in q] == [1.0] * N
    assert [good[i].metrics["coverage_recall@4"] for i in q] == [1.0] * N
    assert [weak[i].metrics["coverage_recall@1"] for i in q] == [0.0] * N
    assert [weak[i].metrics["coverage_recall@4"] for i in q] == [0.0, 1.0, 1.0, 0.0]
    assert not any(name.startswith("ragas_context_precision") for row in rows for name in row.metrics)
    # with only a ranking measure asked, no coverage recall either
    only = EvalSettings(n_boot=200, k_values=(1, 4), metrics=("ndcg@4",))
    _, ranked = evaluate(make_golden(n=N), runs, judge=make_judge("offline"), settings=only)
    assert {name for row in ranked for name in row.metrics} == {"ndcg@4"}


# -- the passages read ------------------------------------------------------------------------------------------------


def test_passages_are_read_to_the_deepest_k_only(tmp_path: Path) -> None:
    """k = 2: each line's first two passages are read. The passage rows list ranks 1 and 2 only, and an answer
    citing "[3]" cites no passage read (the third of four retrieved), so the cites criterion is 0."""
    lines = [line | {"answer": f"{line['answer']} [3]"} for line in good_lines(N)]
    folder = _criterion(tmp_path / "criteria", CITES)
    done = evaluate_detailed(make_golden(n=N), [("r", lines)],
                             settings=EvalSettings(n_boot=200, k_values=(2,), criteria=(folder,)))  # fmt: skip
    assert sorted((row.query_id, row.rank) for row in done.passage_rows) == [
        (qid(i), rank) for i in range(N) for rank in (1, 2)
    ]
    assert [row.metrics["criterion:cites"] for row in done.per_query] == [0.0] * N


# -- a run with no passages --------------------------------------------------------------------------------------------


def test_a_run_with_no_passages_has_no_budget_fill_beside_a_run_that_has(tmp_path: Path) -> None:
    """Beside a run that retrieves, an answer-only run shows no text within the budget: it has no fill at all (not
    an empty budget), per question and as a run."""
    golden = save_passages_golden(tmp_path / "golden")
    full = [{"query_id": "q1", "retrieved": ["returns#1", "returns#2", "returns#4"]},  # 67 + 61: 100 shown
            {"query_id": "q2", "retrieved": ["tent#1", "tent#2"]}]  # 47 + 41 = 88  # fmt: skip
    talk = [{"query_id": q, "answer": "It says so in the policy."} for q in ("q1", "q2")]
    settings = EvalSettings(k_values=(1, 3), n_boot=200, add_labels=False, budgets=("25t",))
    result, rows = evaluate(golden, {"full": full, "talk": talk}, settings=settings)
    assert [row.budget for row in rows if row.run == "talk"] == [{}, {}]
    assert result.runs[1].budget == {}
    assert _rows(rows, "full")["q2"].budget == {"25t": BudgetFill(chars=100, filled=0.88, judged=1.0, k=3)}


# -- strata -----------------------------------------------------------------------------------------------------------


def test_a_question_outside_the_conversations_keeps_its_own_strata_only() -> None:
    """One conversation of q00 and q01 (q01 leans on q00); q02 and q03 are standalone questions of the same set."""
    gold = make_golden(n=N)
    gold.conversations = [Conversation(id="c0", turns=[
        Turn(question_id=qid(t), utterance=f"turn {t}", depends_on_history=t > 0, dependency="pronoun" if t else "none")
        for t in range(2)
    ])]  # fmt: skip
    _, rows = evaluate(gold, [("plain", good_lines(N))], settings=EvalSettings(n_boot=200))
    assert [row.strata for row in rows] == [
        {"type": "factoid", "difficulty": "easy", "depends_on_history": "no", "dependency": "none"},
        {"type": "numeric", "difficulty": "hard", "depends_on_history": "yes", "dependency": "pronoun"},
        {"type": "procedural", "difficulty": "easy"},
        {"type": "factoid", "difficulty": "hard"},
    ]
