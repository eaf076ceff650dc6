"""`assay audit` (the local review page), `assay agreement` (judge versus people), `assay labels export|import`."""

from __future__ import annotations

import getpass
import json
import os
import socket
import webbrowser
from pathlib import Path
from typing import Any

import click
from rich.console import Console

from assay.audit.access import open_store
from assay.audit.agreement import agreement_report
from assay.audit.exchange import export_csv, export_jsonl, import_csv
from assay.audit.queues import QUEUES
from assay.audit.records import check_annotator
from assay.cli._app import main
from assay.errors import AssayError, AuditError

LOOPBACK = ("127.0.0.1", "localhost", "::1")
GOLDEN = click.argument("golden", type=click.Path(file_okay=False, path_type=Path))


def _default_annotator() -> str:
    """ASSAY_ANNOTATOR, else the login name when it is a valid annotator name, else ``annotator``."""
    for name in (os.environ.get("ASSAY_ANNOTATOR"), _login()):
        if name:
            try:
                return check_annotator(name)
            except AuditError:
                continue
    return "annotator"


def _login() -> str | None:
    try:
        return getpass.getuser()
    except (OSError, KeyError):
        return None


def _annotator(name: str | None) -> str:
    return check_annotator(name) if name else _default_annotator()


@main.command()
@GOLDEN
@click.option("--port", type=click.IntRange(0, 65535), default=8765, show_default=True, help="0 picks a free port.")
@click.option("--host", default="127.0.0.1", show_default=True, help="Interface to bind; others than loopback warn.")
@click.option("--annotator", help="Your name on the labels [default: $ASSAY_ANNOTATOR or your login name].")
@click.option("--blind", is_flag=True, help="Hide the judge's grade and reason until you have graded the item.")
@click.option(
    "--queue",
    type=click.Choice(list(QUEUES)),
    default=None,
    help="Order of the items [default: disagreement when judges disagree on some item (a panel of judges), else "
    "stratified].",
)
@click.option("--seed", type=int, default=0, show_default=True, help="Seed of the queue order (recorded).")
@click.option(
    "--criteria",
    "criteria",
    is_flag=True,
    help="Label the judged criteria's verdicts that assay eval queued, instead of relevance grades.",
)
@click.option("--criterion", help="With --criteria: only this criterion's verdicts (its name).")
@click.option("--no-browser", is_flag=True, help="Only print the URL; do not open a browser.")
def audit(  # noqa: PLR0917 (click passes options positionally by name)
    golden: Path,
    port: int,
    host: str,
    annotator: str | None,
    blind: bool,
    queue: str | None,
    seed: int,
    criteria: bool,
    criterion: str | None,
    no_browser: bool,
) -> None:
    """Review judge labels by hand on a local web page, with the keyboard.

    Keys on the page: 0-3 grade, Enter accepts the judge's grade, arrows move, r adds a reason, q quotes the
    selected words (the sentences that bear on the question; the judge's are marked), u undoes, a shows where
    annotators differ, ? lists the keys. Labels go to GOLDEN/audit.sqlite as they are made.

    With --criteria the page shows the judged criteria's verdicts (what the judge saw, the criterion, the judge's
    steps, reasons and label): 1-9 gives the label with that number (lowest score first), Enter accepts the judge's,
    r adds a reason, u undoes. The next assay eval reports each criterion's agreement with people and its
    PPI-corrected means; assay agreement GOLDEN --criteria shows the agreement now.

    \b
    Examples:
      assay audit golden/                               open the page on http://127.0.0.1:8765
      assay audit golden/ --annotator alice --blind     grade without seeing the judge first
      assay audit golden/ --queue uncertainty --port 0  where judge labels disagree first, any free port
      assay audit golden/ --criteria --criterion cites_policy   label one criterion's verdicts
    """
    from assay.audit.app import create_app

    if criterion is not None and not criteria:
        raise click.UsageError("--criterion picks one criterion of --criteria; add --criteria")
    name = _annotator(annotator)
    if host not in LOOPBACK:
        click.secho(
            f"Warning: serving on {host}, not only this machine: anyone who can reach it can read the golden set "
            "(writes still need the page's token).",
            fg="yellow",
            err=True,
        )
    app = create_app(golden, annotator=name, blind=blind, queue=queue, seed=seed, hosts=[host], criterion=criterion)
    if criteria:
        _check_queued(golden, app.state.criteria.order(), criterion)
    sock = _bind(host, port)
    shown = f"[{host}]" if ":" in host else host
    url = f"http://{shown}:{sock.getsockname()[1]}/{'criteria' if criteria else ''}"
    queue = app.state.audit.queue
    what = f"criteria ({len(app.state.criteria.order())} verdicts)" if criteria else f"{queue} queue"
    click.echo(f"Auditing {golden} as {name} ({what}, seed {seed}{', blind' if blind else ''}): {url}")
    click.echo("Press Ctrl-C to stop; every label is saved as it is made.")
    if not no_browser:
        webbrowser.open(url)
    _serve(app, sock)


def _check_queued(golden: Path, order: list[str], criterion: str | None) -> None:
    """Refuse a criteria audit with nothing to label, saying how to queue some."""
    if order:
        return
    which = f"criterion {criterion}'s verdict" if criterion else "judged criterion's verdict"
    raise AuditError(
        f"no {which} is queued in {golden}: run `assay eval {golden} RUN --judge MODEL -c criteria/NAME.md` with a "
        "judged criterion (a scale or a decision tree) first"
    )


def _bind(host: str, port: int) -> socket.socket:
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((host, port))
    except OSError as exc:
        sock.close()
        hint = "pick another with --port N, or --port 0 for any free port"
        raise AssayError(f"cannot listen on {host}:{port} ({exc.strerror}); {hint}") from exc
    return sock


def _serve(app: Any, sock: socket.socket) -> None:
    import uvicorn

    server = uvicorn.Server(uvicorn.Config(app, log_level="warning", lifespan="off"))
    try:
        server.run(sockets=[sock])
    finally:
        sock.close()


@main.command()
@GOLDEN
@click.option("--annotator", help="Compare the judge with this person only [default: everyone, median per item].")
@click.option("--by", "by", help="Also per stratum: type, difficulty, judge_grade or a question metadata field.")
@click.option("--format", "fmt", type=click.Choice(["table", "json"]), default="table", show_default=True)
@click.option("--judge-prompt", help="Compare this judge prompt's labels (name@version) [default: the qrels' own].")
@click.option("--resamples", type=click.IntRange(100), default=2000, show_default=True, help="Bootstrap resamples.")
@click.option("--seed", type=int, default=0, show_default=True, help="Bootstrap seed.")
@click.option("--criteria", "criteria", is_flag=True, help="The judged criteria's verdicts against people instead.")
@click.option("--criterion", help="With --criteria: only this criterion (its name).")
def agreement(  # noqa: PLR0917 (click passes options positionally by name)
    golden: Path,
    annotator: str | None,
    by: str | None,
    fmt: str,
    judge_prompt: str | None,
    resamples: int,
    seed: int,
    criteria: bool,
    criterion: str | None,
) -> None:
    """How far the judge agrees with the people who audited its labels, with 95% bootstrap intervals.

    With --criteria: per judged criterion, its verdicts against people's labels (assay audit GOLDEN --criteria):
    Cohen's kappa for pass/fail, the quadratic weighted kappa over an ordered scale, exact agreement and the
    confusion matrix.

    \b
    Examples:
      assay agreement golden/                         kappas, alpha, confusion matrix, leniency
      assay agreement golden/ --by type               the same per question type
      assay agreement golden/ --annotator alice --format json
      assay agreement golden/ --criteria              each judged criterion against people
    """
    name = check_annotator(annotator) if annotator else None
    if criterion is not None and not criteria:
        raise click.UsageError("--criterion picks one criterion of --criteria; add --criteria")
    if criteria:
        if by is not None or judge_prompt is not None:
            raise click.UsageError("--by and --judge-prompt are for relevance labels, not --criteria")
        _criteria_agreement(golden, name, criterion, fmt, resamples, seed)
        return
    store, golden_view = open_store(golden)
    options: dict[str, Any] = {"annotator": name, "judge_prompt": judge_prompt}
    pairs = store.audited_pairs(golden_view.questions, one_per_item=True, **options)
    if not pairs and not golden_view.qrels:
        raise AuditError(
            f"{golden} has no judge label, so there is nothing to compare with people; "
            f"judge a run's unjudged chunks with `assay eval {golden} RUN --judge MODEL`, then audit them"
        )
    if not pairs:
        who = f" by {name}" if name else ""
        raise AuditError(f"nothing audited{who} in {golden} yet; audit some labels first with: assay audit {golden}")
    everyone = store.audited_pairs(golden_view.questions, **options)
    report = agreement_report(pairs, human_pairs=everyone, by=by, n_resamples=resamples, seed=seed)
    if fmt == "json":
        click.echo(json.dumps(report, indent=2))
    else:
        from assay.audit.tables import print_report

        print_report(Console(), report)


def _criteria_agreement(  # noqa: PLR0917 (the options of assay agreement --criteria, passed on)
    golden: Path, name: str | None, criterion: str | None, fmt: str, resamples: int, seed: int
) -> None:
    from assay.audit.criteria import agreement_report as criteria_report

    store, _ = open_store(golden)
    rows = criteria_report(store, annotator=name, criterion=criterion, n_resamples=resamples, seed=seed)
    if not rows:
        who = f" by {name}" if name else ""
        raise AuditError(f"no judged criterion's verdict is audited{who} in {golden} yet; label some first with: "
                         f"assay audit {golden} --criteria")  # fmt: skip
    if fmt == "json":
        click.echo(json.dumps(rows, indent=2))
    else:
        from assay.audit.tables import print_criteria

        print_criteria(Console(), rows)


@main.group()
def labels() -> None:
    """Export labels to CSV or JSONL, and import a CSV edited in a spreadsheet.

    \b
    Examples:
      assay labels export golden/ -o labels.csv                       current human labels
      assay labels export golden/ -o sheet.csv --annotator bob --blank  a sheet to fill in, one row per item
      assay labels export golden/ -o events.jsonl                     the whole event log
      assay labels import golden/ labels.csv                          all rows or none; bad rows are named
    """


@labels.command("export")
@GOLDEN
@click.option("-o", "--output", type=click.Path(dir_okay=False, path_type=Path), required=True)
@click.option("--format", "fmt", type=click.Choice(["csv", "jsonl"]), help="[default: from the file name]")
@click.option("--annotator", help="Only this person's labels (CSV).")
@click.option("--blank", is_flag=True, help="CSV: a row for every judged item, empty grade where unlabelled.")
def export_labels(golden: Path, output: Path, fmt: str | None, annotator: str | None, blank: bool) -> None:
    """Write current human labels as CSV, or every label event as JSONL.

    \b
    Examples:
      assay labels export golden/ -o labels.csv
      assay labels export golden/ -o events.jsonl
    """
    store, golden_view = open_store(golden)
    kind = fmt or ("jsonl" if output.suffix.lower() in (".jsonl", ".json") else "csv")
    if kind == "jsonl":
        count = export_jsonl(store, output)
        click.echo(f"Wrote {count} label events to {output}")
        return
    name = check_annotator(annotator) if annotator else None
    count = export_csv(store, output, golden_view, annotator=name, include_unlabelled=blank)
    click.echo(f"Wrote {count} rows to {output}")


@labels.command("import")
@GOLDEN
@click.argument("csv_file", type=click.Path(dir_okay=False, path_type=Path))
@click.option("--annotator", help="Name for rows whose annotator cell is empty.")
def import_labels(golden: Path, csv_file: Path, annotator: str | None) -> None:
    """Import a CSV of human labels (columns query_id, chunk_id, grade, reason, annotator, quotes).

    Every row is checked first; one bad row and nothing is imported, with each bad row named as FILE:ROW. The
    quotes cell holds one quote per line, words as they stand in the chunk's text (none on a grade 0). Empty
    grades are skipped, and rows equal to the current label add nothing, so importing twice is harmless.

    \b
    Examples:
      assay labels import golden/ labels.csv
      assay labels import golden/ sheet.csv --annotator bob
    """
    store, golden_view = open_store(golden)
    name = check_annotator(annotator) if annotator else None
    result = import_csv(store, csv_file, golden_view, annotator=name)
    click.echo(
        f"Imported {result.added} labels from {csv_file} "
        f"({result.unchanged} unchanged, {result.blank} rows with an empty grade skipped)"
    )
