"""What a build writes: its manifest (models, prompts, seeds, settings, counts and usage; with a panel, its judges
and rule under ``settings["panel"]``), the folder of a build stopped after its questions, and the check of the output
folder before any work."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from assay._version import __version__
from assay.corpus.ingest import IngestResult
from assay.errors import DatasetError
from assay.formats.atomic import atomic_dir
from assay.formats.golden import GoldenSet
from assay.formats.topics import write_topics
from assay.judge.panel import Grader, Panel, judges_of, merged_usage, primary_of
from assay.pipelines.bootstrap.bookkeeping import BuildRun
from assay.pipelines.bootstrap.conversations import CONVERSATION, REWRITE_CHECK
from assay.pipelines.bootstrap.sampling import parse_mix
from assay.pipelines.bootstrap.settings import BuildSettings
from assay.text import canonical_json, content_hash
from assay.types import Chunk, Document, Manifest, Question

__all__ = ["PROMPTS", "check_output", "corpus_hash", "manifest_of", "stopped", "write_stopped"]

# the prompts of a build; "relevance" stands for "relevance_listwise" when the build grades listwise
PROMPTS = ("question_generation", "question_critic", "relevance", "support")


def corpus_hash(documents: Sequence[Document], chunks_given: Sequence[Chunk] = ()) -> str:
    """blake2b over the sorted (document id, content hash) pairs, plus pre-made chunks' (id, text hash) pairs."""
    items = sorted([d.id, d.content_hash] for d in documents)
    items += sorted(["chunk:" + c.id, content_hash(c.text)] for c in chunks_given)
    return content_hash(canonical_json(items), 16)


def check_output(output: Path | None, overwrite: bool) -> None:
    if output is None:
        return
    target = Path(output)
    if target.exists() and not target.is_dir():
        raise DatasetError(f"{target} is a file, not a folder: give -o a folder path for the golden set")
    if not overwrite and target.exists() and any(target.iterdir()):
        raise DatasetError(
            f"{target} already exists and is not empty: choose another output folder or pass --overwrite"
        )


def stopped(manifest: Manifest, chunks: list[Chunk], questions: list[Question]) -> GoldenSet:
    """The build up to its questions (not a golden set: no qrels yet; the manifest says ``stopped_after``)."""
    manifest.counts["accepted"] = len(questions)
    manifest.stopped_after = "questions"  # type: ignore[attr-defined]  # an extra field (Manifest allows extras)
    return GoldenSet(manifest=manifest, documents=[], chunks=chunks, questions=questions, qrels=[], nuggets=[])


def write_stopped(stage: GoldenSet, output: Path, overwrite: bool) -> None:
    """``topics.tsv`` (``qid<TAB>question``, for the user's retrievers), ``questions.jsonl``, ``chunks.jsonl`` (the
    ids a run must use) and ``manifest.json``, written atomically."""
    try:
        with atomic_dir(output, overwrite=overwrite) as tmp:
            stage._write_parts(tmp, ("chunks", "questions"))
            write_topics(tmp / "topics.tsv", [(q.id, q.text) for q in stage.questions])
    except FileExistsError:
        raise DatasetError(
            f"{output} already exists and is not empty: choose another folder or pass --overwrite"
        ) from None


def manifest_of(
    grader: Grader, settings: BuildSettings, ingested: IngestResult, chunks: list[Chunk], run: BuildRun
) -> Manifest:
    judge = primary_of(grader)
    relevance = "relevance_listwise" if settings.listwise is not None else "relevance"
    used = [relevance if name == "relevance" else name for name in PROMPTS]
    if settings.conversations:
        used += [CONVERSATION, REWRITE_CHECK]
    if settings.tools:
        used.append("tool_calls")
    if run.counts.get("log_lines"):  # a build from the user's questions: no generation or critic, drafts instead
        used = [name for name in used if name not in ("question_generation", "question_critic")] + ["reference_draft"]
    prompts = {judge.prompt(name).ref: judge.prompt(name).content_hash for name in used}
    models = {role: judge.model for role in ("generator", "critic", "relevance", "support")}
    models["relevance"] = grader.model
    panel = {}
    if isinstance(grader, Panel):
        cost = {one.model: one.cost for one in grader.judges}
        panel = {"panel": {"judges": grader.models, "combine": grader.combine, "cost_usd": cost}}
    manifest = Manifest(
        assay_version=__version__,
        corpus_hash=corpus_hash(ingested.documents, ingested.chunks_given),
        models=models,
        prompts=prompts,
        seeds={"sampling": settings.seed, "listwise": settings.seed},
        settings={**settings.as_dict(), "mix": parse_mix(settings.mix), **panel},
        counts=dict(run.counts),
        usage=merged_usage(one.usage for one in judges_of(grader)),
    )
    manifest.warnings = list(run.warnings)  # type: ignore[attr-defined]  # an extra field (Manifest allows extras)
    manifest.sampling = run.sampling  # type: ignore[attr-defined]  # the plan and the drawn seed documents
    return manifest
