"""``assay grade``: relevance labels (0-3) for (question, chunk) pairs with an LLM judge or the offline judge."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import click
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from assay.aio import run_sync
from assay.cli._app import main
from assay.cli._judge_options import api_key_for as _api_key
from assay.cli._judge_options import parse_price as _parse_price
from assay.cli.cache import CACHE_DIR, resolve_cache_dir
from assay.errors import FormatError, InputError
from assay.formats.atomic import atomic_write
from assay.judge import Graded, Judge, Pair, estimate_pairs, grade_pairs_detailed, make_judge
from assay.judge.factory import make_dry_run_judge

__all__ = ["grade", "read_pairs"]

_FIELDS = ("query_id", "question", "chunk_id", "text")


def _pair(record: Any, path: Path, line: int) -> Pair:
    if not isinstance(record, dict):
        raise FormatError(path, line, "not a JSON object", "an object with query_id, question, chunk_id, text")
    missing = [f for f in _FIELDS if f not in record]
    if missing:
        raise FormatError(path, line, f"missing {', '.join(missing)}", "query_id, question, chunk_id and text")
    values = {f: record[f] for f in _FIELDS}
    bad = [f for f, v in values.items() if not isinstance(v, str | int) or isinstance(v, bool) or v == ""]
    if bad:
        raise FormatError(path, line, f"{', '.join(bad)} must be a non-empty string", "text values")
    return Pair(*(str(values[f]) for f in _FIELDS))


def read_pairs(path: Path) -> list[Pair]:
    """Read a pairs JSONL file; a bad or duplicate line is a FormatError naming file:line."""
    pairs: list[Pair] = []
    seen: dict[tuple[str, str], int] = {}
    with path.open(encoding="utf-8") as handle:
        for number, text in enumerate(handle, 1):
            if not text.strip():
                continue
            try:
                record = json.loads(text)
            except json.JSONDecodeError as exc:
                raise FormatError(path, number, f"invalid JSON ({exc.msg})", "one JSON object per line") from exc
            if number == 1 and isinstance(record, dict) and "assay" in record and "query_id" not in record:
                continue  # a versioned header line
            pair = _pair(record, path, number)
            key = (pair.query_id, pair.chunk_id)
            if key in seen:
                raise FormatError(path, number, f"pair {key} already given on line {seen[key]}", "each pair once")
            seen[key] = number
            pairs.append(pair)
    if not pairs:
        raise InputError(f"{path}: no pairs; each line needs query_id, question, chunk_id and text")
    return pairs


def _record(graded: Graded) -> dict[str, Any]:
    label = graded.label
    record: dict[str, Any] = {
        "query_id": label.query_id,
        "chunk_id": label.chunk_id,
        "grade": label.grade,
        "reason": label.provenance.rationale,
        "model": label.provenance.model,
        "prompt": label.provenance.prompt,
        "prompt_hash": label.provenance.prompt_hash,
        "cached": graded.cached,
    }
    if label.unscored is not None:
        record["unscored"] = label.unscored.model_dump(mode="json")
    return record


def _tokens_and_cost(judge: Judge) -> tuple[int, int, str]:
    """Prompt and completion tokens of the relevance stage so far, and the cost spent ("unknown" without a price)."""
    usage = judge.usage.get("relevance")
    tokens = (usage.prompt_tokens, usage.completion_tokens) if usage else (0, 0)
    return *tokens, "unknown" if judge.price is None else f"${judge.spent:.4f}"


def _summary(judge: Judge, n: int) -> str:
    prompt_tokens, completion_tokens, cost = _tokens_and_cost(judge)
    stats = judge.stats
    return (
        f"graded {n} pairs: {stats.calls} calls, {stats.cache_hits + stats.deduped} cached, {stats.retries} retries, "
        f"{stats.unscored} unscored; tokens {prompt_tokens} in / {completion_tokens} out; cost {cost}"
    )


def _progress_text(judge: Judge) -> str:
    prompt_tokens, completion_tokens, cost = _tokens_and_cost(judge)
    s = judge.stats
    tokens = prompt_tokens + completion_tokens
    return f"cached {s.cache_hits + s.deduped}  retries {s.retries}  unscored {s.unscored}  tokens {tokens}  {cost}"


async def _run(judge: Judge, pairs: list[Pair], listwise: int | None, seed: int) -> list[Graded]:
    console = Console(stderr=True)
    columns = (TextColumn("grading"), BarColumn(), MofNCompleteColumn(), TextColumn("{task.description}"))
    with Progress(*columns, TimeElapsedColumn(), console=console, disable=not console.is_terminal) as progress:
        task = progress.add_task(_progress_text(judge), total=len(pairs))

        def advance(_: Graded) -> None:
            progress.update(task, advance=1, description=_progress_text(judge))

        try:
            return await grade_pairs_detailed(judge, pairs, listwise=listwise, seed=seed, on_label=advance)
        finally:
            await judge.aclose()


@main.command()
@click.argument("pairs_file", metavar="PAIRS.jsonl", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.option("-o", "--output", required=True, type=click.Path(dir_okay=False, path_type=Path), help="Labels JSONL.")
@click.option(
    "--judge", "judge_spec", required=True, help="offline, openai/MODEL, anthropic/MODEL, hosted_vllm/MODEL..."
)
@click.option("--api-base", default=None, help="Base URL of an OpenAI-compatible server (vLLM, Ollama /v1, proxy).")
@click.option("--api-key", default=None, help="API key (default: $OPENAI_API_KEY for openai/ and --api-base).")
@click.option("--concurrency", default=8, show_default=True, type=click.IntRange(1, 1024), help="Calls at once.")
@CACHE_DIR
@click.option("--no-cache", is_flag=True, help="Neither read nor write the judge cache.")
@click.option("--listwise", type=click.IntRange(1, 50), default=None, help="Grade N chunks of a question per call.")
@click.option("--seed", default=0, show_default=True, help="Seed of the listwise shuffle.")
@click.option("--dry-run", is_flag=True, help="Count calls, cached pairs, tokens and cost; call nothing.")
@click.option("--max-cost", type=float, default=None, help="Stop cleanly once this many USD are spent.")
@click.option("--price", default=None, help="USD per million tokens IN/OUT for a model without a known price.")
@click.option("--no-structured", is_flag=True, help="For servers without response_format json_schema support.")
@click.option("--rpm", type=click.IntRange(1), default=None, help="At most this many requests per minute.")
@click.option("--tpm", type=click.IntRange(1), default=None, help="At most this many tokens per minute (estimated).")
@click.option("--timeout", default=120.0, show_default=True, help="Seconds per model call.")
@click.option("--prompt-dir", type=click.Path(file_okay=False, path_type=Path), default=None, help="Prompt overrides.")
def grade(
    *,
    pairs_file: Path,
    output: Path,
    judge_spec: str,
    api_base: str | None,
    api_key: str | None,
    concurrency: int,
    cache_dir: Path | None,
    no_cache: bool,
    listwise: int | None,
    seed: int,
    dry_run: bool,
    max_cost: float | None,
    price: str | None,
    no_structured: bool,
    rpm: int | None,
    tpm: int | None,
    timeout: float,
    prompt_dir: Path | None,
) -> None:
    """Grade (question, chunk) pairs for relevance on the 0-3 TREC DL / UMBRELA scale.

    Each input line has query_id, question, chunk_id and text. Each output line has query_id, chunk_id, grade
    (0-3, or null when the judge could not score it: see "unscored"), reason, model, prompt and cached. Answers
    are cached, so a rerun (or an interrupted run) pays only for pairs never judged before.

    \b
    Examples:
      assay grade pairs.jsonl -o labels.jsonl --judge offline
      assay grade pairs.jsonl -o labels.jsonl --judge openai/gpt-4o-mini --dry-run
      assay grade pairs.jsonl -o labels.jsonl --judge hosted_vllm/Qwen2.5-7B --api-base http://gpu:8000/v1 \\
          --concurrency 64 --listwise 5
    """
    pairs = read_pairs(pairs_file)
    given_price = _parse_price(price)
    use_cache = not no_cache and judge_spec != "offline"
    directory = resolve_cache_dir(cache_dir) if use_cache else None
    if dry_run:
        dry = make_dry_run_judge(
            judge_spec, cache_dir=directory, prompt_dir=prompt_dir, structured=not no_structured, price=given_price
        )
        _dry_run(dry, pairs, listwise, seed)
        return
    judge = make_judge(
        judge_spec,
        api_base=api_base,
        api_key=_api_key(judge_spec, api_key, api_base),
        cache_dir=directory,
        concurrency=concurrency,
        rpm=rpm,
        tpm=tpm,
        max_cost=max_cost,
        structured=not no_structured,
        timeout=timeout,
        prompt_dir=prompt_dir,
        price=given_price,
    )
    graded = run_sync(lambda: _run(judge, pairs, listwise, seed))
    with atomic_write(output) as handle:
        for item in graded:
            handle.write(json.dumps(_record(item), ensure_ascii=False) + "\n")
    click.echo(_summary(judge, len(graded)))
    click.echo(f"wrote {output}")


def _dry_run(judge: Judge, pairs: list[Pair], listwise: int | None, seed: int) -> None:
    estimate = estimate_pairs(judge, pairs, listwise=listwise, seed=seed)
    cost = (
        "unknown (no price for this model; give --price)"
        if estimate.cost_usd is None
        else f"<= ${estimate.cost_usd:.4f}"
    )
    click.echo(
        f"dry run: {len(pairs)} pairs, {estimate.cached} cached, {estimate.calls} calls to make, "
        f"~{estimate.prompt_tokens} prompt tokens, cost {cost}"
    )
