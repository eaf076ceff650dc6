"""What ``assay eval`` shows and writes once the evaluation is done: the judge's card beside the metrics
(:func:`judge_card`), the report folder and the terminal summary (:func:`write_outputs`), and the ``--fail-under``
gates (:func:`check_fail_under`).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from rich.console import Console

from assay.cli._judge_options import JudgeOptions
from assay.cli.cache import resolve_cache_dir
from assay.judge.prompts import load_prompt
from assay.judge.relevance import LISTWISE_PROMPT, POINTWISE_PROMPT
from assay.metric_names import lower_is_better
from assay.pipelines.evaluate import Evaluated
from assay.pipelines.evaluate.statistics.gates import Gate, check_gates, default_metric
from assay.pipelines.judgecheck.lookup import card_home, summarize_card
from assay.report import TABLE_FILES, render_terminal, write_report
from assay.results import EvalResult, JudgeCardSummary

__all__ = ["check_fail_under", "judge_card", "write_outputs"]


def check_fail_under(result: EvalResult, gates: Sequence[tuple[str, float]]) -> list[str]:
    """One message per run and gate whose mean is worse than the threshold (below it; above it for a measure where
    less is better, :func:`assay.metric_names.lower_is_better`), has no scored query or is refused (a measure
    counted in golden chunks for a run whose passages are under half a chunk): the rule of
    :func:`assay.pipelines.evaluate.statistics.gates.check_gates`, shared with the pytest plugin. A gate without a
    metric (``--fail-under 0.6``) is on the evaluation's own primary (``default_metric``). A gated metric that was
    not computed (names are checked before the work, so: nothing to compute it from, such as faithfulness when no
    run has an answer) fails with that reason."""
    named = [(metric or default_metric(result), threshold) for metric, threshold in gates]
    known = {name for run in result.runs for name in run.metrics}
    missing = [f"{m} was not computed: nothing in the golden set or the runs to compute it from" for m, _ in named
               if m not in known]  # fmt: skip
    present = [Gate(m, threshold, at_most=lower_is_better(m)) for m, threshold in named if m in known]
    return missing + check_gates(result, present, origin="--fail-under")


def judge_card(judging: JudgeOptions, given: Path | None, spec: str | None = None) -> JudgeCardSummary:
    """The card of the first judge (or of the panel's judge ``spec``): ``given`` (``--judge-card``) for the first
    judge, else the one ``assay judge-check`` kept beside the cache."""
    first = spec is None
    spec = spec or judging.specs[0]
    home = card_home(resolve_cache_dir(judging.cache_dir), spec)
    where = (given if first else None) or home
    prompts = [load_prompt(name, judging.prompt_dir) for name in (POINTWISE_PROMPT, LISTWISE_PROMPT)]
    return summarize_card(Path(where), spec, {p.ref: p.content_hash for p in prompts})


def write_outputs(done: Evaluated, output: Path, console: Console, *, verbose: bool) -> None:
    paths = write_report(done.result, output, done.per_query, done.questions)
    done.write_support_matrix(output / "support_matrix.jsonl")
    done.write_passages(output / "passages.jsonl")
    render_terminal(done.result, console, verbose=verbose, report=paths["report.html"])
    console.print()
    tables = "".join(f", {name}" for name in TABLE_FILES if name in paths)
    console.print(
        f"report: {paths['report.html']}  (also report.md, results.json, per_query.jsonl, support_matrix.jsonl, "
        f"passages.jsonl{tables})"
    )
