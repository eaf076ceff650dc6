"""Benchmark of ``assay build`` at corpus scale: time and peak memory per stage, and how they grow with the corpus.

A synthetic knowledge base is generated for each size (never stored in the repository): JSONL files in 8 folders,
documents of about 1.4 KB (a title, 2-4 sections of 1-3 paragraphs), words drawn from a Zipf-Mandelbrot law
(p(r) ~ 1 / (r + 10)^1.05) over a 60,000-word invented vocabulary, with English stop words mixed in and a number
now and then, so BM25, chunking and the offline judge see realistic term statistics. Each size runs in a fresh
subprocess, so peak memory (``ru_maxrss``, the resident peak so far, read after each stage) is the size's own. Stages:

- ingest, chunk, index (BM25 over the chunks), sample (``--questions`` seeds drawn from the documents): timed alone;
- a whole build with the offline judge, ``--questions`` questions: its stages timed by the progress callback
  (generation, filters and critic, pool = the BM25 pooling before the first relevance label, judge = relevance
  grading and support, write = the atomic folder write); the peak is the process's, so it includes the stages above;
- a dry run (``estimate_build`` with a judge that calls nothing: ingest to the cost table), after the build.

Wall and CPU seconds are both printed: on a shared machine the wall time is the CPU time plus the wait for a core.
Growth exponent (of the CPU time where measured, else the wall time) between two sizes ``n1 < n2``: ``log(t2 / t1) /
log(n2 / n1)`` (1 = linear). The memory of indexing 1M chunks is extrapolated linearly from the resident memory that
ingest, chunking and indexing added at the largest size, per chunk (the index and the chunk records are linear in
the chunks). Targets (issue 16), on 2 cores: ingest + chunk + index of 50k documents < 60 s; a 200-question build
over 50k documents < 120 s and < 2 GB; a dry run < 30 s; 1M chunks indexed within 24 GB.

    python bench/scale.py                       # 2,000 and 10,000 documents
    python bench/scale.py --sizes 10000,50000   # the 50k targets (about 3 minutes on 2 shared cores)
    python bench/scale.py --sizes 50000,200000 --corpus-only   # ingest, chunk and index only (memory at scale)
"""

from __future__ import annotations

import argparse
import json
import math
import random
import resource
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

FOLDERS = 8
_PER_DOC = 600  # Zipf draws per document (at most 3 + 4 * (2 + 3 * 45) = 551 are used)
VOCABULARY = 60_000
STOP = "the of and to in a is that for it as with on be by this are or at from".split()
_SYLLABLES = [c + v for c in "bcdfghjklmnprstvwz" for v in ("a", "e", "i", "o", "u", "ai", "ou", "ea")]


def vocabulary(rng: np.random.Generator) -> list[str]:
    """``VOCABULARY`` distinct invented words of 2-4 syllables."""
    words: dict[str, None] = {}
    while len(words) < VOCABULARY:
        sizes = rng.integers(2, 5, size=VOCABULARY)
        picks = rng.integers(0, len(_SYLLABLES), size=(VOCABULARY, 4))
        for size, row in zip(sizes, picks, strict=True):
            words.setdefault("".join(_SYLLABLES[i] for i in row[:size]), None)
    return list(words)[:VOCABULARY]


def _paragraph(vocab: list[str], ranks: np.ndarray, rng: random.Random) -> str:
    """One paragraph: sentences of 8-18 words, a stop word every third word, a number now and then."""
    out, at = [], 0
    while at < len(ranks):
        size = rng.randint(8, 18)
        words = [vocab[r] if i % 3 else rng.choice(STOP) for i, r in enumerate(ranks[at : at + size])]
        if rng.random() < 0.2:
            words.append(str(rng.randint(2, 5000)))
        out.append(" ".join(words).capitalize() + ".")
        at += size
    return " ".join(out)


def document(i: int, vocab: list[str], zipf: np.ndarray, rng: random.Random) -> dict[str, Any]:
    """A document of about 1.4 KB: a title and 2-4 sections of 1-3 paragraphs of Zipf-drawn words."""
    title = " ".join(vocab[r] for r in zipf[:3]).title()
    parts, at = [f"# {title} {i}"], 3
    for _ in range(rng.randint(2, 4)):
        parts.append(f"## {vocab[zipf[at]].title()} {vocab[zipf[at + 1]]}")
        at += 2
        for _ in range(rng.randint(1, 3)):
            size = rng.randint(20, 45)
            parts.append(_paragraph(vocab, zipf[at : at + size], rng))
            at += size
    return {"id": f"doc-{i}", "title": f"{title} {i}", "text": "\n\n".join(parts)}


def write_corpus(folder: Path, n: int, seed: int = 0) -> int:
    """``n`` documents as JSONL files in ``FOLDERS`` folders (up to 5,000 per file); returns the bytes of text."""
    np_rng, rng = np.random.default_rng(seed), random.Random(seed)
    vocab = vocabulary(np_rng)
    weights = 1.0 / (np.arange(1, VOCABULARY + 1) + 10.0) ** 1.05  # Zipf-Mandelbrot: a flatter head
    weights /= weights.sum()
    total, files = 0, {}
    for i in range(n):
        if i % 1000 == 0:
            draws = np_rng.choice(VOCABULARY, size=(1000, _PER_DOC), p=weights)
        doc = document(i, vocab, draws[i % 1000], rng)
        total += len(doc["text"].encode())
        key = (i % FOLDERS, i // (FOLDERS * 5000))
        if key not in files:
            (folder / f"kb{key[0]}").mkdir(parents=True, exist_ok=True)
            files[key] = (folder / f"kb{key[0]}" / f"part{key[1]}.jsonl").open("w")
        files[key].write(json.dumps(doc) + "\n")
    for handle in files.values():
        handle.close()
    return total


def peak_mb() -> float:
    """The process's resident peak so far, in MiB (Linux reports ru_maxrss in KiB)."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def timed(figures: dict[str, dict[str, float]], stage: str, work: Callable[[], Any]) -> Any:
    start, cpu = time.perf_counter(), time.process_time()
    out = work()
    figures[stage] = {"seconds": time.perf_counter() - start, "cpu": time.process_time() - cpu, "peak_mb": peak_mb()}
    return out


def measure(n: int, questions: int, workdir: Path, corpus_only: bool = False) -> dict[str, Any]:
    """Every stage over ``n`` generated documents (run in a fresh process by :func:`main`); with ``corpus_only``
    ingest, chunk, index and sample only."""
    from assay.judge import make_judge
    from assay.judge.factory import make_dry_run_judge
    from assay.pipelines.bootstrap import BuildSettings, build_golden, estimate_build

    corpus = workdir / "corpus"
    size = write_corpus(corpus, n)
    settings = BuildSettings(questions=questions)
    figures: dict[str, dict[str, float]] = {}
    out = {"documents": n, "megabytes": size / 1e6, **_corpus_stages(corpus, settings, figures)}
    if corpus_only:
        return {**out, "stages": figures}
    marks: dict[str, list[float]] = {}

    def progress(stage: str, done: int, total: int) -> None:
        marks.setdefault(stage, []).append(time.perf_counter())

    start, cpu = time.perf_counter(), time.process_time()
    golden = build_golden(
        corpus, judge=make_judge("offline"), settings=settings, progress=progress, output=workdir / "golden"
    )
    figures.update(_build_stages(marks, start, time.perf_counter()))
    figures["build: total"]["cpu"] = time.process_time() - cpu
    out["accepted"] = len(golden.questions)
    del golden
    timed(figures, "dry run", lambda: estimate_build(corpus, judge=make_dry_run_judge("offline"), settings=settings))
    return {**out, "stages": figures}


def _corpus_stages(corpus: Path, settings: Any, figures: dict[str, dict[str, float]]) -> dict[str, float]:
    """Ingest, chunk, index and sample, each timed; the chunk count and the resident memory they added."""
    from assay.corpus.chunking import chunk_corpus
    from assay.corpus.ingest import ingest
    from assay.corpus.pooling import Bm25Index
    from assay.pipelines.bootstrap.sampling import plan_seeds

    base = peak_mb()
    ingested = timed(figures, "ingest", lambda: ingest(corpus, root=corpus))
    chunks = timed(figures, "chunk", lambda: chunk_corpus(ingested.documents, max_tokens=512, overlap=64))
    index = timed(figures, "index", lambda: Bm25Index.build(chunks))
    timed(figures, "sample", lambda: plan_seeds(chunks, index, settings, ingested.documents))
    return {"chunks": len(chunks), "index_added_mb": figures["index"]["peak_mb"] - base}


def _build_stages(marks: dict[str, list[float]], start: float, end: float) -> dict[str, dict[str, float]]:
    """Durations of the build's parts from the progress marks (first and last call of each stage)."""
    first = {s: times[0] for s, times in marks.items()}
    last = {s: times[-1] for s, times in marks.items()}
    bounds = {
        "build: corpus + sample": (start, last["sampling"]),
        "build: generate + filter": (last["sampling"], last["difficulty"]),
        "build: pool": (last["difficulty"], first["relevance"]),
        "build: judge": (first["relevance"], last["support"]),
        "build: write": (last["support"], end),
        "build: total": (start, end),
    }
    peak = peak_mb()
    return {name: {"seconds": b - a, "peak_mb": peak} for name, (a, b) in bounds.items()}


def exponent(n1: int, t1: float, n2: int, t2: float) -> float:
    """Growth exponent ``log(t2 / t1) / log(n2 / n1)``."""
    return math.log(max(t2, 1e-9) / max(t1, 1e-9)) / math.log(n2 / n1)


def report(results: list[dict[str, Any]]) -> None:
    sizes = [r["documents"] for r in results]
    head = f"{'stage':26}" + "".join(f"{n:>10,} docs: wall   cpu   MiB" for n in sizes) + "   exponent"
    print(head)
    for stage in results[0]["stages"]:
        figures = [r["stages"][stage] for r in results]
        cpu = [f"{f['cpu']:.2f}" if "cpu" in f else "" for f in figures]
        cells = "".join(f"{f['seconds']:>22.2f} {c:>5} {f['peak_mb']:>5.0f}" for f, c in zip(figures, cpu, strict=True))
        growth = ""
        if len(results) > 1:
            n1, n2 = results[-2]["documents"], results[-1]["documents"]
            key = "cpu" if "cpu" in figures[-1] else "seconds"  # CPU where measured: wall time waits on other work
            growth = f"{exponent(n1, figures[-2][key], n2, figures[-1][key]):>10.2f}"
        print(f"{stage:26}{cells}{growth}")
    for r in results:
        s = r["stages"]
        line = (
            f"{r['documents']:,} documents ({r['megabytes']:.0f} MB, {r['chunks']:,} chunks): ingest+chunk+index "
            f"{sum(s[k]['seconds'] for k in ('ingest', 'chunk', 'index')):.1f} s "
            f"({sum(s[k]['cpu'] for k in ('ingest', 'chunk', 'index')):.1f} s CPU, "
            f"peak {s['index']['peak_mb']:.0f} MiB)"
        )
        if "dry run" in s:
            line += (
                f"; build {s['build: total']['seconds']:.1f} s ({s['build: total']['cpu']:.1f} s CPU, "
                f"{r['accepted']} accepted), peak {s['build: total']['peak_mb']:.0f} MiB; "
                f"dry run {s['dry run']['seconds']:.1f} s ({s['dry run']['cpu']:.1f} s CPU)"
            )
        print(line)
    big = results[-1]
    per_chunk = big["index_added_mb"] / big["chunks"]
    print(
        f"1M chunks indexed: about {per_chunk * 1e6 / 1024:.1f} GiB resident (linear from {big['chunks']:,} chunks: "
        f"{big['index_added_mb']:.0f} MiB added by ingest, chunking and indexing, {per_chunk * 1024:.1f} KiB/chunk)"
    )


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", default="2000,10000", help="comma-separated corpus sizes in documents")
    parser.add_argument("--questions", type=int, default=200, help="questions per build (default 200)")
    parser.add_argument("--corpus-only", action="store_true", help="ingest, chunk, index and sample only")
    parser.add_argument("--one", type=int, help=argparse.SUPPRESS)  # measure one size (the subprocess)
    args = parser.parse_args(argv)
    if args.one is not None:
        with tempfile.TemporaryDirectory() as tmp:
            print(json.dumps(measure(args.one, args.questions, Path(tmp), args.corpus_only)))
        return
    results = []
    for n in sorted(int(s) for s in args.sizes.split(",")):
        cmd = [sys.executable, __file__, "--one", str(n), "--questions", str(args.questions)]
        cmd += ["--corpus-only"] if args.corpus_only else []
        done = subprocess.run(cmd, check=True, capture_output=True, text=True)
        results.append(json.loads(done.stdout.strip().splitlines()[-1]))
        print(f"measured {n:,} documents", file=sys.stderr)
    report(results)


if __name__ == "__main__":
    main()
