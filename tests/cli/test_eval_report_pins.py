"""What ``assay eval`` does once the evaluation is done, pinned function by function (:mod:`assay.cli._eval_report`):
the ``--fail-under`` gates (a bare threshold on the primary, a lower-is-better measure gated from above, a measure
not computed named first) and the judge card it looks for (the one given for the first judge, the kept one for a
panel's other judges, checked against the relevance prompts in use) and the files written with the line naming them."""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

import pytest
from rich.console import Console

from assay.cli import _eval_report
from assay.cli._eval_report import check_fail_under, judge_card, write_outputs
from assay.cli._judge_options import JudgeOptions
from assay.judge.prompts import load_prompt
from assay.pipelines.evaluate import Evaluated
from assay.pipelines.judgecheck.card import JudgeCard
from assay.report import bundle, terminal
from assay.results import EvalResult, MetricSummary, QuestionView, RunResult

FIXTURE = Path(__file__).resolve().parents[1] / "fixtures" / "report" / "eval_result.json"


def _result(primary: str | None = "map") -> EvalResult:
    """Two runs: a (map 0.7, hallucination 0.2) and b (map 0.5, hallucination 0.6); no chunk lengths, so no gate is
    refused by the half-a-unit rule."""
    base = EvalResult.model_validate_json(FIXTURE.read_text("utf-8"))
    runs = [
        RunResult(name=name, path=f"{name}.jsonl", metrics={
            "map": MetricSummary(mean=m, n_scored=4), "hallucination": MetricSummary(mean=h, n_scored=4),
        })
        for name, m, h in (("a", 0.7, 0.2), ("b", 0.5, 0.6))
    ]  # fmt: skip
    return base.model_copy(update={"runs": runs, "primary_metric": primary, "chunk_lengths": {}})


def test_a_gate_without_a_metric_is_on_the_primary() -> None:
    assert check_fail_under(_result(), [("", 0.6)]) == ["b: map = 0.500 < 0.6"]
    assert check_fail_under(_result(), [("", 0.5)]) == []  # 0.5 reaches 0.5


def test_a_lower_is_better_measure_fails_the_runs_above_the_bar() -> None:
    assert check_fail_under(_result(), [("hallucination", 0.5)]) == ["b: hallucination = 0.600 > 0.5"]
    assert check_fail_under(_result(), [("hallucination", 0.6)]) == []  # at the bar passes


def test_a_measure_not_computed_fails_first_with_the_reason_and_the_other_gates_still_count() -> None:
    failures = check_fail_under(_result(), [("map", 0.6), ("faithfulness", 0.5)])
    assert failures == [
        "faithfulness was not computed: nothing in the golden set or the runs to compute it from",
        "b: map = 0.500 < 0.6",
    ]


def _card(folder: Path, model: str, prompts: dict[str, str]) -> Path:
    card = JudgeCard(
        assay_version="test", model=model, prompts=prompts, source={}, settings={}, agreement=None, sections=[],
        costs=[],
    )  # fmt: skip
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "card.json").write_text(card.model_dump_json(), "utf-8")
    return folder


def _prompts(prompt_dir: Path | None = None) -> dict[str, str]:
    """The relevance prompts in use (pointwise and listwise), name@version -> content hash."""
    loaded = [load_prompt(name, prompt_dir) for name in ("relevance", "relevance_listwise")]
    return {p.ref: p.content_hash for p in loaded}


def test_the_first_judge_reads_the_card_given_else_the_one_kept_beside_the_cache(tmp_path: Path) -> None:
    judging = JudgeOptions(specs=("offline", "openai/other"), cache_dir=tmp_path / "cache")
    kept = tmp_path / "cache" / "cards" / "offline" / "card.json"
    none = judge_card(judging, None)
    assert (none.found, none.where) == (False, str(kept))
    assert none.note is not None and none.note.startswith(f"no judge card for offline (looked in {kept})")
    given = _card(tmp_path / "given", "offline", _prompts())
    shown = judge_card(judging, given)
    assert (shown.found, shown.where, shown.model, shown.note) == (True, str(given / "card.json"), "offline", None)


def test_a_panels_other_judge_reads_its_own_kept_card_never_the_one_given(tmp_path: Path) -> None:
    judging = JudgeOptions(specs=("offline", "openai/other"), cache_dir=tmp_path / "cache")
    given = _card(tmp_path / "given", "offline", _prompts())
    other = judge_card(judging, given, "openai/other")
    kept = tmp_path / "cache" / "cards" / "openai_other" / "card.json"
    assert (other.found, other.where) == (False, str(kept))
    assert other.note is not None and "no judge card for openai/other" in other.note
    _card(kept.parent, "openai/other", _prompts())
    assert judge_card(judging, given, "openai/other").model == "openai/other"


def test_a_card_made_with_other_relevance_prompts_says_which(tmp_path: Path) -> None:
    judging = JudgeOptions(specs=("offline",), cache_dir=tmp_path / "cache")
    stale = {ref: "0" * 16 for ref in _prompts()}  # both prompts as named, other contents
    shown = judge_card(judging, _card(tmp_path / "stale", "offline", stale))
    refs = ", ".join(sorted(stale))
    assert shown.note == f"the card was made with other prompts than {refs}: run assay judge-check again"


def test_the_prompts_checked_are_those_of_the_prompt_folder_in_use(tmp_path: Path) -> None:
    """A card made with the packaged prompts is stale for a judge whose --prompt-dir changes the pointwise one."""
    packaged = _prompts()
    card = _card(tmp_path / "card", "offline", packaged)
    mine = tmp_path / "prompts"
    mine.mkdir()
    (mine / "relevance.md").write_text(load_prompt("relevance").path.read_text("utf-8") + "\nBe careful.\n", "utf-8")
    changed = _prompts(mine)
    assert changed != packaged
    judging = JudgeOptions(specs=("offline",), cache_dir=tmp_path / "cache", prompt_dir=mine)
    shown = judge_card(judging, card)
    assert shown.note is not None and "the card was made with other prompts than relevance@" in shown.note
    assert json.loads((card / "card.json").read_text("utf-8"))["prompts"] == packaged  # the card is only read


def test_write_outputs_gives_the_explorer_its_questions_and_names_every_file_written(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The report gets the evaluation's questions (its per-question explorer), the terminal summary gets the
    report.html written (named where the caveats left out are), and the last line names every file written."""
    seen: dict[str, Any] = {}

    def write_report(result: EvalResult, out: Path, per_query: Any, questions: Any = ()) -> dict[str, Path]:
        seen["questions"] = questions
        return bundle.write_report(result, out, per_query, questions)

    def render_terminal(result: EvalResult, console: Console, **kwargs: Any) -> None:
        seen["terminal"] = kwargs
        terminal.render_terminal(result, console, **kwargs)

    monkeypatch.setattr(_eval_report, "write_report", write_report)
    monkeypatch.setattr(_eval_report, "render_terminal", render_terminal)
    questions = [QuestionView(query_id="q1", text="How long do refunds take?")]
    done = Evaluated(result=_result(), per_query=[], questions=questions)
    console = Console(file=io.StringIO(), width=400)
    write_outputs(done, tmp_path, console, verbose=True)
    assert seen == {"questions": questions, "terminal": {"verbose": True, "report": tmp_path / "report.html"}}
    names = ("report.md", "results.json", "per_query.jsonl", "support_matrix.jsonl", "passages.jsonl")
    assert {p.name for p in tmp_path.iterdir()} == {"report.html", *names}
    *summary, gap, last = console.file.getvalue().rstrip("\n").splitlines()  # type: ignore[attr-defined]
    assert summary[-1] != "" and gap == ""  # one blank line between the summary and the files
    assert last == f"report: {tmp_path / 'report.html'}  (also {', '.join(names)})"
