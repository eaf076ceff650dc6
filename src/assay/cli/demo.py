"""``assay demo``: build a golden set from the bundled corpus with the offline judge, evaluate the example runs, and
point at the report. No key, no network."""

from __future__ import annotations

import time
from importlib.resources import files
from pathlib import Path

import click
from rich.console import Console

from assay.audit.access import open_store
from assay.audit.exchange import ImportResult, import_csv
from assay.cli._app import main
from assay.cli.eval import audit_labels
from assay.errors import ConfigError, DatasetError
from assay.judge import make_judge
from assay.pipelines.bootstrap import DEMO_CONVERSATIONS, DEMO_SETTINGS, build_golden
from assay.pipelines.evaluate import EvalSettings, Evaluated, evaluate_detailed
from assay.report import render_terminal, write_report

__all__ = ["demo", "demo_root"]

OFFLINE_NOTE = (
    "offline judge: a lexical baseline, not an LLM. Its labels and scores show how assay works, not how good these "
    "runs are; use --judge MODEL with assay build / assay eval for real judgements."
)


def demo_root() -> Path:
    """The packaged ``datasets/demo`` folder (corpus, example runs, hand-labelled sample)."""
    root = files("assay") / "_datasets" / "demo"
    if not isinstance(root, Path) or not (root / "corpus").is_dir():
        raise DatasetError(f"the demo dataset is missing from this installation ({root}); reinstall assay")
    return root


def _check_target(out: Path, overwrite: bool) -> None:
    if out.exists() and not out.is_dir():
        raise ConfigError(f"{out} is a file: choose another folder with -o")
    if out.is_dir() and any(out.iterdir()) and not overwrite:
        raise ConfigError(f"{out} already exists and is not empty: pass --overwrite, or choose another folder with -o")


def _import_humans(golden_dir: Path, csv: Path) -> ImportResult:
    """Import the hand-labelled sample into the golden set's audit store (a rerun adds nothing new)."""
    store, golden = open_store(golden_dir)
    return import_csv(store, csv, golden)


@main.command()
@click.option(
    "-o", "--output", type=click.Path(file_okay=False, path_type=Path), default=Path("assay-demo"), show_default=True
)
@click.option("--overwrite", is_flag=True, help="Replace the golden set and report of an earlier demo in that folder.")
@click.option("--verbose", is_flag=True, help="Print every table here (default: the verdict and a one-screen summary).")
def demo(output: Path, overwrite: bool, verbose: bool) -> None:
    """Run assay end to end on the bundled demo corpus (a fictional outdoor retailer's knowledge base): build a
    golden set with the offline judge into DIR/golden, import the hand-labelled sample into its audit store, evaluate
    the example runs (bm25, hybrid, weak) into DIR/report with the criteria of its criteria/ folder (deterministic
    checks: criterion:cites_passage, criterion:concise), and print the verdict and a summary (--verbose: every
    table). It also builds a few multi-turn conversations (utterance, standalone rewrite, graded chunks per turn)
    into DIR/conversations. No key, no network.

    \b
    Examples:
      assay demo
      assay demo -o /tmp/demo --overwrite
      assay audit assay-demo/golden          then review the judge's labels by hand
      assay audit assay-demo/conversations   a turn with its history; correct its rewrite
    """
    console = Console()
    _check_target(output, overwrite)
    root = demo_root()
    started = time.perf_counter()
    console.print(f"[bold]assay demo[/]: building a golden set from {root / 'corpus'} ...")
    console.print(f"[yellow]{OFFLINE_NOTE}[/]")
    golden_dir = output / "golden"
    golden = build_golden(root / "corpus", judge=make_judge("offline"), settings=DEMO_SETTINGS, output=golden_dir,
                          overwrite=overwrite)  # fmt: skip
    console.print(f"golden set: {len(golden.questions)} questions, {len(golden.qrels)} labels -> {golden_dir}")
    talks_dir = output / "conversations"
    talks = build_golden(root / "corpus", judge=make_judge("offline"), settings=DEMO_CONVERSATIONS, output=talks_dir,
                         overwrite=overwrite)  # fmt: skip
    context = talks.manifest.counts.get("context_turns", 0)
    console.print(f"conversations: {len(talks.conversations)} of {len(talks.questions)} judged turns and {context} "
                  f"context turns, {len(talks.qrels)} labels -> {talks_dir}")  # fmt: skip
    csv = root / "human_labels.csv"
    if csv.is_file():
        imported = _import_humans(golden_dir, csv)
        held = imported.added + imported.unchanged
        console.print(f"audit store: {held} hand labels from {csv.name} ({imported.added} new)")
    done = _evaluate(root, golden_dir)
    paths = write_report(done.result, output / "report", done.per_query, done.questions)
    done.write_support_matrix(output / "report" / "support_matrix.jsonl")
    render_terminal(done.result, console, verbose=verbose, report=paths["report.html"])
    console.print()
    console.print(f"[yellow]{OFFLINE_NOTE}[/]")
    console.print(f"done in {time.perf_counter() - started:.1f} s. Open the report: {paths['report.html']}")


def _evaluate(root: Path, golden_dir: Path) -> Evaluated:
    runs = sorted((root / "runs").glob("*.jsonl"))
    if not runs:
        raise DatasetError(f"no example runs in {root / 'runs'}; reinstall assay")
    settings = EvalSettings(n_boot=1000, criteria=(root / "criteria",))  # deterministic checks of the answers
    humans, everyone = audit_labels(golden_dir)
    return evaluate_detailed(
        golden_dir, runs, judge=make_judge("offline"), settings=settings, human_labels=humans, annotations=everyone
    )
