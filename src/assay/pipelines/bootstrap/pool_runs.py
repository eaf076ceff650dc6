"""Pools from the user's own retrievers, as TREC pools are made: the top k of each run joins the pool of a question.

A corpus already indexed in Elasticsearch, OpenSearch, Vespa or a vector database need not be indexed twice: its
rankings are pooled beside assay's BM25 (or instead of it, with ``pool_k = 0``). Chunk ids must be assay's chunk
ids: give the corpus as the chunks the retriever indexed (a JSONL of pre-made chunks keeps their ids), or index
``chunks.jsonl`` of a first build. A run is one of:

- a file, ``NAME=PATH``: a TREC run or a JSONL run (``formats.runs``) over the build's question ids. Question ids
  exist only once questions are generated, so this takes two steps: ``assay build ... --stop-after questions``
  writes ``topics.tsv`` (``qid<TAB>question``) and ``chunks.jsonl``; the retriever answers the topics; the same
  ``assay build`` (same corpus, options and judge cache, so the same questions) with ``--pool-run NAME=RUN``.
- a command, ``NAME=cmd:TEMPLATE``, called once per question during the build (one step). The template is split
  like a shell command line (``shlex``; no shell runs it) and ``{query}``, ``{qid}`` and ``{k}`` are replaced in
  each argument by the question's text, id and the pool depth (a query with spaces stays one argument). The
  command prints ranked chunk ids on stdout, one per line, best first; a line's first whitespace-separated field
  is the id (``id score`` lines work), blank lines and lines starting with ``#`` are skipped, and only the first
  ``k`` are taken. It must exit 0 within the timeout; a failure, a timeout or a missing program stops the build
  with an error naming the run, the question and the end of stderr. Up to ``CONCURRENCY`` commands run at once
  (processes the event loop waits on: an interrupted build kills the ones running and waits for nothing).

Ids not in the corpus are skipped and counted (``pool_run_unknown_ids``); a run none of whose ids is in the corpus,
or a run file that names none of the questions, is an error (it was made over other chunks or other questions).
"""

from __future__ import annotations

import asyncio
import shlex
import subprocess
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from assay.errors import ConfigError, InputError
from assay.formats.runs import ranked_lists, read_any_run
from assay.types import Question

__all__ = ["CONCURRENCY", "PoolRun", "known_only", "parse_pool_run", "rank_questions"]

CONCURRENCY = 4
_STDERR_LINES = 5


@dataclass(frozen=True)
class PoolRun:
    """A named run to pool from: a run file (``path``) or a command template (``command``)."""

    name: str
    path: Path | None = None
    command: tuple[str, ...] = ()

    def describe(self) -> str:
        """``NAME=PATH`` or ``NAME=cmd:...``, as given."""
        return f"{self.name}=" + (str(self.path) if self.path is not None else "cmd:" + shlex.join(self.command))


def parse_pool_run(spec: str) -> PoolRun:
    """``NAME=PATH`` or ``NAME=cmd:TEMPLATE`` -> :class:`PoolRun` (ConfigError naming the fix when malformed)."""
    name, sep, value = spec.partition("=")
    name = name.strip()
    if not sep or not name or not value.strip():
        raise ConfigError(f"--pool-run {spec!r}: give NAME=RUN_FILE or NAME=cmd:COMMAND (e.g. es=runs/es.trec)")
    if value.startswith("cmd:"):
        try:
            argv = tuple(shlex.split(value[4:]))
        except ValueError as exc:
            raise ConfigError(f"--pool-run {name}: cannot split the command {value[4:]!r}: {exc}") from None
        if not argv:
            raise ConfigError(f"--pool-run {name}: the command is empty; e.g. {name}=cmd:my_search --query {{query}}")
        return PoolRun(name, command=argv)
    path = Path(value)
    if not path.is_file():
        raise ConfigError(f"--pool-run {name}: run file {path} not found (for a command write {name}=cmd:...)")
    return PoolRun(name, path=path)


async def rank_questions(run: PoolRun, questions: Sequence[Question], k: int, timeout: float) -> dict[str, list[str]]:
    """The top ``k`` chunk ids of ``run`` for each question (questions it does not rank are absent)."""
    if run.path is not None:
        ranked = ranked_lists(read_any_run(run.path))
        wanted = {q.id for q in questions}
        if questions and not wanted & set(ranked):
            example = next(iter(ranked), "none")
            raise InputError(
                f"--pool-run {run.name}: {run.path} ranks none of the {len(wanted)} questions (its first query id is "
                f"{example!r}, the questions' are like {questions[0].id!r}); make it over topics.tsv of "
                "`assay build ... --stop-after questions` with the same corpus, options and judge cache"
            )
        return {qid: ids[:k] for qid, ids in ranked.items() if qid in wanted}
    return await _ask_all(run, questions, k, timeout)


async def _ask_all(run: PoolRun, questions: Sequence[Question], k: int, timeout: float) -> dict[str, list[str]]:
    """``CONCURRENCY`` commands at once; after a failure no further question is started, and once the running ones
    end the failure of the first question (in the questions' order) is raised."""
    semaphore = asyncio.Semaphore(CONCURRENCY)
    failures: dict[int, Exception] = {}

    async def one(index: int, question: Question) -> list[str]:
        async with semaphore:
            if failures:
                return []
            try:
                return await _ask(run, question, k, timeout)
            except (ConfigError, InputError) as exc:
                failures[index] = exc
                return []

    ranked = await asyncio.gather(*(one(i, q) for i, q in enumerate(questions)))
    if failures:
        raise failures[min(failures)]
    return {q.id: ids for q, ids in zip(questions, ranked, strict=True)}


def _argv(run: PoolRun, question: Question, k: int) -> list[str]:
    values = {"{query}": question.text, "{qid}": question.id, "{k}": str(k)}
    return [_fill(arg, values) for arg in run.command]


def _fill(template: str, values: Mapping[str, str]) -> str:
    for key, value in values.items():
        template = template.replace(key, value)
    return template


async def _ask(run: PoolRun, question: Question, k: int, timeout: float) -> list[str]:
    """Run the command for one question and read its ranked ids (module docstring: the protocol); a command still
    running at the timeout, or when the build is interrupted, is killed."""
    argv = _argv(run, question, k)
    where = f"--pool-run {run.name}, question {question.id}"
    try:
        process = await asyncio.create_subprocess_exec(
            *argv, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE
        )
    except OSError as exc:
        raise ConfigError(f"{where}: cannot start {argv[0]!r}: {exc.strerror or exc}") from None
    try:
        async with asyncio.timeout(timeout):
            stdout, stderr = await process.communicate()
    except TimeoutError:
        raise InputError(f"{where}: {shlex.join(argv)} gave no answer within {timeout:g} s") from None
    finally:
        if process.returncode is None:
            process.kill()
            await process.wait()
    if process.returncode != 0:
        tail = " | ".join(stderr.decode(errors="replace").strip().splitlines()[-_STDERR_LINES:])
        raise InputError(f"{where}: {shlex.join(argv)} exited with status {process.returncode}: {tail or 'no stderr'}")
    return _ids(stdout.decode(errors="replace"), k)


def _ids(stdout: str, k: int) -> list[str]:
    """The first field of each non-blank, non-comment line, first occurrence only, at most ``k``."""
    out: dict[str, None] = {}
    for line in stdout.splitlines():
        fields = line.split()
        if fields and not fields[0].startswith("#"):
            out.setdefault(fields[0], None)
        if len(out) == k:
            break
    return list(out)


def known_only(
    run: PoolRun, rankings: Mapping[str, list[str]], chunks: Mapping[str, object]
) -> tuple[dict[str, list[str]], int]:
    """``rankings`` without ids that are not chunks of the corpus, and how many were dropped; InputError when a
    run names ids but none of them is a chunk of the corpus."""
    named = sum(len(ids) for ids in rankings.values())
    kept = {qid: [cid for cid in ids if cid in chunks] for qid, ids in rankings.items()}
    unknown = named - sum(len(ids) for ids in kept.values())
    if named and unknown == named:
        example = next(cid for ids in rankings.values() for cid in ids)
        raise InputError(
            f"--pool-run {run.describe()}: none of its {named} chunk ids is a chunk of this corpus (e.g. {example!r}); "
            "the retriever must return assay's chunk ids: index chunks.jsonl of the build, or give the corpus as the "
            "chunks you indexed (a JSONL of pre-made chunks keeps their ids)"
        )
    return kept, unknown
