"""``assay traces watch``: follow a growing OTLP export and keep a rolling evaluation of a sample of its traces."""

from __future__ import annotations

import time
from pathlib import Path

import click

from assay.cli._app import main
from assay.cli._trace_options import max_line_option
from assay.formats.golden import GoldenSet
from assay.pipelines.evaluate import EvalSettings, evaluate_detailed
from assay.pipelines.traces.watch import CURSOR_NAME, RUN_NAME, WatchPass, watch_once
from assay.report import write_report

__all__ = ["traces_group"]


@main.group("traces")
def traces_group() -> None:
    """Production traces, as they land (see also: assay import traces)."""


@traces_group.command("watch")
@click.argument("path", type=click.Path(exists=True))
@click.option("--golden", required=True, type=click.Path(exists=True, file_okay=False), help="Golden set folder.")
@click.option("-o", "--out", required=True, type=click.Path(file_okay=False), help="Report folder (cursor, run).")
@click.option(
    "--every", type=click.FloatRange(min=0.1), default=60.0, show_default=True, help="Seconds between passes."
)
@click.option("--sample", type=click.FloatRange(min=0, max=1, min_open=True), default=1.0, show_default=True,
              help="Share of traces evaluated: those whose trace id's CRC-32 is below RATE of its range.")  # fmt: skip
@click.option("--once", is_flag=True, help="One pass over what is there, then exit.")
@max_line_option
def watch_command(  # noqa: PLR0917
    path: str, golden: str, out: str, every: float, sample: float, once: bool, max_line: int
) -> None:
    """Follow PATH (an OTLP JSON lines export being appended to, or a folder of *.json / *.jsonl ones), import the
    new traces, and keep a rolling evaluation of a deterministic sample against the golden set (no judge).

    The cursor (OUT/watch-cursor.json: per file its inode, size, byte offset and fingerprints of its first bytes
    and of those before the offset; the run's lines) makes it resumable: stopped, even killed, and started again,
    it reads nothing twice and skips nothing; a partial last line waits for the next pass; a file rotated,
    truncated or replaced (even under the same inode) is read from the start, and said so. Spans delivered twice
    count once. In a folder, a file that cannot be read is skipped and named, and the others read. The run is
    OUT/watch-run.jsonl (one line per golden question, its latest sampled trace), the report OUT/report.html.

    \b
    Examples:
      assay traces watch /var/log/otel/traces.jsonl --golden golden/ -o report/ --sample 0.1
      assay traces watch exports/ --golden golden/ -o report/ --once
    """
    loaded = GoldenSet.load(golden)
    folder = Path(out)

    def evaluate(run: Path) -> None:
        done = evaluate_detailed(loaded, [("traces", run)], judge=None, settings=EvalSettings())
        write_report(done.result, folder, done.per_query, done.questions)

    while True:
        _say(watch_once(path, loaded, folder, sample, evaluate, max_line=max_line), folder)
        if once:
            return
        time.sleep(every)


def _say(done: WatchPass, folder: Path) -> None:
    totals = done.totals
    click.echo(f"{done.lines} new line(s) in {done.files} file(s): {done.traces} trace(s), {done.sampled} sampled, "
               f"{done.matched} matched to the golden set; {done.held_spans} span(s) of unfinished traces held. "
               f"So far: {totals.get('traces', 0)} trace(s), {totals.get('sampled', 0)} sampled; the run has "
               f"{done.run_lines} line(s) ({folder / RUN_NAME}, cursor {folder / CURSOR_NAME})")  # fmt: skip
    if done.evaluated:
        click.echo(f"report: {folder / 'report.html'}")
    for note in done.notes:
        click.echo(f"note: {note}")
