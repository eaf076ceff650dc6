"""``assay run``: ask the system under test every golden question and write the run."""

from __future__ import annotations

from pathlib import Path

import click
from rich.console import Console

from assay.audit.access import write_pending_rewrites
from assay.cli._app import interrupted, main
from assay.cli._target_options import RunBar, TargetOptions, summary_line, target_options
from assay.formats.golden import GoldenSet

__all__ = ["run_command"]


@main.command("run")
@click.argument("golden", type=click.Path(exists=True, file_okay=False, path_type=Path))
@click.option("--target", "target_text", required=True, metavar="SPEC",
              help="python:pkg.mod:function, http(s)://URL or cmd:PROGRAM ARGS.")  # fmt: skip
@click.option("-o", "--output", required=True, type=click.Path(dir_okay=False, path_type=Path), help="Run file.")
@target_options()
def run_command(golden: Path, target_text: str, output: Path, asking: TargetOptions) -> None:
    """Ask the system under test every question of GOLDEN and write a run for `assay eval`: what it retrieved (ids,
    texts or offsets), its answer and citations, the latency of each call, tokens and cost when it reports them, and
    each failure with its kind (timeout, http_status, connection, invalid_output, exception, exit_status).

    \b
    A target (SPEC) is one of:
      python:pkg.mod:function   called as function(question, query_id=..., metadata=..., top_k=...) if it takes
                                them; sync or async; returns a dict (or an object) with contexts (texts) or
                                retrieved (ids or objects), answer, citations, usage {prompt_tokens,
                                completion_tokens, cost_usd}
      http(s)://HOST/PATH       POSTs --body (default {"question", "query_id", "metadata"}, and "top_k" with
                                --top-k); reads the same fields from the JSON reply, or where --map
                                FIELD=/json/pointer says
      cmd:PROGRAM ARGS          one process per question: a JSON object in on stdin (with "top_k" when given), one
                                out on stdout, exit 0

    --top-k N asks the system for N passages a question (a python function's top_k or k parameter; a function with
    neither is refused before anything is asked); `assay eval` says when a run's passages fill less than 80% of the
    budget and the N that would fill it.

    Transient failures (429 with Retry-After, 408, 5xx, connection resets, timeouts, malformed JSON) are tried
    again up to --attempts times with exponential backoff; others are recorded at once. A failed question is kept
    in the run as failed (unscored by `assay eval`, never scored 0). Every answer is cached as it arrives, by
    target, --label (default: the git commit of the working directory) and question: an interrupted run, rerun,
    asks only the rest, and a finished one pays nothing (--refresh asks again). Secrets: write ${ENV_VAR} in the
    URL, a --header, the --body or a command argument; the value is read from the environment and written
    nowhere. Exit 1 when the system answered no question.

    Conversations (a golden set with conversations.jsonl): each turn is asked as the user typed it with the history
    as OpenAI-format messages (a python function that names `messages` gets them, an http --body gets {messages},
    a command gets "messages" in its JSON); --history reference (default) gives every system the golden answers as
    the earlier turns, --history own its own answers (turns in order; a failed turn ends its conversation; the
    context turns, unjudged, are asked too, for the history, and never scored).
    --conversation-mode rewrites asks each turn's standalone rewrite alone: evaluate the two runs together to see
    the history gain. A line per turn carries conversation_id, turn and the system's rewrite when it returns one.

    \b
    Examples:
      assay run golden/ --target python:examples.rag_app:answer -o runs/app.jsonl
      assay run golden/ --target http://127.0.0.1:8000/answer -o runs/http.jsonl --concurrency 32
      assay run golden/ --target https://rag.example.com/v1/ask --header 'Authorization: Bearer ${RAG_TOKEN}' \\
          --body '{"q": "{question}"}' --map contexts=/data/passages --map answer=/data/text -o runs/prod.jsonl
      assay run golden/ --target 'cmd:python examples/rag_app.py --stdin' -o runs/cmd.jsonl --label v2
      assay run golden/ --target python:examples.rag_app:answer --history own -o runs/own.jsonl
      assay run golden/ --target python:examples.rag_app:answer --top-k 20 -o runs/app20.jsonl
    """
    spec = asking.spec(target_text)
    write_pending_rewrites(golden)  # the system is asked the rewrites people corrected
    gold = GoldenSet.load(golden)
    bar = RunBar(spec.display(), Console(stderr=True))
    try:
        with bar.bar:
            done = asking.run(gold, spec, output, bar)
    except KeyboardInterrupt:
        interrupted(f"no run written; every finished answer is kept in {asking.cache_dir}: rerun the same command to "
                    "ask only the rest.")  # fmt: skip
    click.echo(summary_line(done, gold), err=True)
    done.check()
