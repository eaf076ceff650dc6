"""``assay metrics QRELS RUN``: classic ranking metrics, trec_eval-exact, no LLM."""

from __future__ import annotations

import json
import math

import click
from rich.console import Console
from rich.table import Table

from assay.cli._app import main
from assay.formats.runs import read_any_run
from assay.formats.trec import read_qrels
from assay.metrics import DEFAULT_MEASURES, Evaluation, evaluate
from assay.metrics.registry import measure_names


def _fmt(value: float) -> str:
    return "-" if math.isnan(value) else f"{value:.4f}"


def _summary(ev: Evaluation) -> str:
    missing = f"{ev.n_missing} in the qrels without a run entry"
    missing += " (counted as 0: --complete)" if ev.complete else " (left out; --complete counts them as 0)"
    return f"{len(ev.query_ids)} queries evaluated; {missing}"


def _trec_lines(ev: Evaluation, per_query: bool) -> list[str]:
    lines = []
    for name, values in ev.per_query.items():
        if per_query:
            lines += [f"{name}\t{q}\t{v:.4f}" for q, v in zip(ev.query_ids, values.tolist(), strict=True)]
        lines.append(f"{name}\tall\t{_fmt(ev.mean(name))}")
    lines.append(f"num_q\tall\t{len(ev.query_ids)}")
    return lines


def _or_none(value: float) -> float | None:
    """NaN as JSON null."""
    return None if math.isnan(value) else value


def _json(ev: Evaluation, per_query: bool) -> str:
    doc: dict[str, object] = {
        "queries": len(ev.query_ids),
        "missing_from_run": ev.n_missing,
        "complete": ev.complete,
        "means": {n: _or_none(v) for n, v in ev.means().items()},
        "stderr": {n: _or_none(ev.stderr(n)) for n in ev.per_query},
    }
    if per_query:
        doc["per_query"] = {q: {n: float(ev.per_query[n][i]) for n in ev.per_query} for i, q in enumerate(ev.query_ids)}
    return json.dumps(doc, indent=2)


def _table(ev: Evaluation, per_query: bool) -> Table:
    table = Table(title="assay metrics")
    table.add_column("measure")
    table.add_column("mean", justify="right")
    table.add_column("stderr", justify="right")
    table.add_column("queries", justify="right")
    for name in ev.per_query:
        table.add_row(name, _fmt(ev.mean(name)), _fmt(ev.stderr(name)), str(len(ev.query_ids)))
    if per_query:
        for i, q in enumerate(ev.query_ids):
            cells = "  ".join(f"{n}={ev.per_query[n][i]:.4f}" for n in ev.per_query)
            table.add_row(f"  {q}", cells, "", "")
    return table


@main.command("metrics")
@click.argument("qrels", type=click.Path(exists=True, dir_okay=False))
@click.argument("run", type=click.Path(exists=True, dir_okay=False))
@click.option("-m", "--measure", "measures", multiple=True, help="Measure name; repeat for more. Default: a set of 11.")
@click.option("--per-query", is_flag=True, help="Also print every query's value.")
@click.option("--complete", is_flag=True, help="Count qrels queries missing from the run as 0 (trec_eval -c).")
@click.option("--format", "fmt", type=click.Choice(["table", "json", "trec"]), default="table", show_default=True)
def metrics(qrels: str, run: str, measures: tuple[str, ...], per_query: bool, complete: bool, fmt: str) -> None:  # noqa: PLR0917
    """Ranking metrics of RUN (TREC or JSONL) against QRELS (TREC), exact to trec_eval.

    \b
    Examples:
      assay metrics datasets/example/qrels.txt datasets/example/run.txt
      assay metrics qrels.txt run.jsonl -m ndcg@10 -m "recall@5|g>=2" -m err@20 --format trec
      assay metrics qrels.txt run.txt -m P_5 -m map_cut_10 --complete --per-query --format json

    \b
    Names: P@k recall@k f1@k hit@k mrr rr@k map map@k rprec bpref ndcg ndcg@k ndcg_exp@k dcg@k err@k
    iprec@0.5 auc_pr; threshold suffix |g>=2; trec_eval names (P_5, ndcg_cut_10, recip_rank, ...) work too.
    Defaults: map mrr ndcg@10 P@5 P@10 recall@10 recall@100 err@10 hit@10 rprec bpref.
    """
    names = measure_names(list(measures) or list(DEFAULT_MEASURES))  # a bad name fails before large files are read
    ev = evaluate(read_qrels(qrels), read_any_run(run), names, complete=complete)
    if fmt == "trec":
        click.echo("\n".join(_trec_lines(ev, per_query)))
        click.echo(f"# {_summary(ev)}", err=True)
    elif fmt == "json":
        click.echo(_json(ev, per_query))
    else:
        Console().print(_table(ev, per_query))
        click.echo(_summary(ev))


__all__ = ["metrics"]
