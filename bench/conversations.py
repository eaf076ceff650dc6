"""Benchmark of conversations (issue 31): what a retriever loses to coreference, and what conversations cost to build.

Corpora: the bundled demo (``datasets/demo/corpus``) and a sample of CISI's documents (``../shared/data/cisi``, read
in place; ``--cisi-docs`` of them, seeded), each built with the offline judge (no key, no network) into a
conversational golden set (``--conversations`` conversations of 2-4 turns, questions 0; a chunk opens at most one)
and, for the cost comparison, a plain golden set of questions on the same corpus.

One system, BM25 top 10 (bm25s) over the golden chunks, is asked through :func:`assay.targets.run_target` twice:
with the raw turns (the utterance as typed; the function names no ``messages``, so it sees no history) and with the
golden rewrites (``--conversation-mode rewrites``). :func:`assay.pipelines.evaluate.evaluate` pairs the two runs
(history gain: turns minus rewrites on the primary metric, clustered paired randomization test, Holm) over the
turns that depend on the history and the standalone ones.

It prints, per corpus, the conversations kept, their judged turns (dependent ones) and context turns, then:
(a) the history gain per stratum (dependent, standalone, all): delta, interval, adjusted p; target: the raw-turn
    system called worse on the dependent turns (adjusted p < 0.05) and not on the standalone ones;
(b) build cost per accepted (judged) turn against per accepted question of a plain build (judge calls and prompt +
    completion tokens from the manifests' usage; context turns, kept unjudged, are not counted); target: within 1.5x;
(c) on the demo, the time of the offline build with ``assay demo``'s conversation settings
    (``DEMO_CONVERSATIONS``); target: under 30 s.

Figures are printed, not asserted.

    python bench/conversations.py                    # demo and CISI, 100 conversations asked (about 6 s on 2 cores)
    python bench/conversations.py --no-cisi          # demo only
    python bench/conversations.py --cisi-docs 500 --conversations 200
    python bench/conversations.py --seeds 8          # the target counted over 8 seeded builds per corpus
"""

from __future__ import annotations

import argparse
import random
import sys
import tempfile
import time
from dataclasses import replace
from pathlib import Path
from typing import Any

import bm25s

from assay.formats.golden import GoldenSet
from assay.judge import make_judge
from assay.pipelines.bootstrap import DEMO_CONVERSATIONS, BuildSettings, build_golden
from assay.pipelines.evaluate import evaluate
from assay.results import Comparison
from assay.targets import Conversing, run_target

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from agreement_data import read_cisi  # noqa: E402

DEMO = HERE.parent / "datasets" / "demo" / "corpus"
CISI = HERE.parent.parent / "shared" / "data" / "cisi"
K = 10
ALPHA = 0.05


def build(corpus: Path, settings: BuildSettings, out: Path) -> tuple[GoldenSet, float]:
    """The golden set built from ``corpus`` with the offline judge, and the wall time of the build."""
    start = time.perf_counter()
    golden = build_golden(corpus, judge=make_judge("offline"), settings=settings, output=out)
    return golden, time.perf_counter() - start


def bm25_system(golden: GoldenSet) -> Any:
    """A Python target: BM25 top K over the golden chunks, queried with the text it is given (no history)."""
    ids = [c.id for c in golden.chunks]
    retriever = bm25s.BM25()
    retriever.index(bm25s.tokenize([c.text for c in golden.chunks], stopwords="en", show_progress=False),
                    show_progress=False)  # fmt: skip

    def retrieve(question: str) -> dict[str, Any]:
        tokens = bm25s.tokenize([question], stopwords="en", show_progress=False)
        if not tokens.vocab:  # a query of stopwords only
            return {"retrieved": []}
        found, scores = retriever.retrieve(tokens, k=min(K, len(ids)), show_progress=False)
        hits = zip(found[0].tolist(), scores[0].tolist(), strict=True)
        return {"retrieved": [{"id": ids[i], "score": float(s)} for i, s in hits if s > 0]}

    return retrieve


def cost(golden: GoldenSet, units: int) -> tuple[float, float]:
    """Judge calls and prompt + completion tokens per accepted unit (question or turn), from the manifest."""
    usage = golden.manifest.usage.values()
    calls = sum(u.calls for u in usage)
    tokens = sum(u.prompt_tokens + u.completion_tokens for u in usage)
    return calls / max(units, 1), tokens / max(units, 1)


def _line(name: str, c: Comparison | None) -> str:
    if c is None:
        return f"    {name:<11} fewer than two scored turns"
    return (f"    {name:<11} n {c.n:>4}  delta {c.delta:+.3f} [{c.low:+.3f}, {c.high:+.3f}]  "
            f"p_adj {c.p_adjusted:.4f}  clusters {c.clusters or c.n:>3}  "
            f"{'worse' if c.significant and c.delta < 0 else 'not worse'}")  # fmt: skip


def history_gain(golden: GoldenSet, work: Path) -> bool:
    """(a): the BM25 system asked the raw turns and the rewrites, evaluated together."""
    system = bm25_system(golden)
    paths = []
    for mode in ("rewrites", "turns"):
        path = work / f"{mode}.jsonl"
        run_target(golden, system, path, label="bm25", conversing=Conversing(mode=mode)).check()
        paths.append(path)
    result, _ = evaluate(golden, paths)
    turns = [t for c in golden.conversations for t in c.turns if t.judged]
    dependent = sum(t.depends_on_history for t in turns)
    context = sum(not t.judged for c in golden.conversations for t in c.turns)
    print(f"  (a) history gain, turns minus rewrites: {len(golden.conversations)} conversations, {len(turns)} judged "
          f"turns ({dependent} dependent), {context} context turns (unjudged)")  # fmt: skip
    if not result.history_gain:
        print("    no history gain computed (no primary metric?)")
        return False
    gain = result.history_gain[0]
    print(f"    metric {gain.metric}")
    for name in ("dependent", "standalone", "all"):
        print(_line(name, getattr(gain, name)))
    dep, alone = gain.dependent, gain.standalone
    worse_dep = dep is not None and dep.significant and dep.delta < 0 and dep.p_adjusted < ALPHA
    worse_alone = alone is not None and alone.significant and alone.delta < 0
    met = worse_dep and not worse_alone
    print(f"    target (raw turns worse on dependent turns at p_adj < {ALPHA}, not on standalone): "
          f"{'met' if met else 'NOT met'}")  # fmt: skip
    return met


def build_cost(corpus: Path, talks: GoldenSet, questions: int, work: Path) -> None:
    """(b): cost per accepted turn against per accepted question of a plain build of ``questions``."""
    plain, _ = build(corpus, BuildSettings(questions=questions, seed=0), work / "plain")
    turns = len(talks.questions)  # judged turns: the test items (context turns cost nothing after generation)
    t_calls, t_tokens = cost(talks, turns)
    q_calls, q_tokens = cost(plain, len(plain.questions))
    print(f"  (b) build cost: {turns} accepted (judged) turns, {len(plain.questions)} accepted questions (plain "
          "build)")  # fmt: skip
    print(f"    per turn     {t_calls:6.2f} calls  {t_tokens:8.0f} tokens")
    print(f"    per question {q_calls:6.2f} calls  {q_tokens:8.0f} tokens")
    r_calls, r_tokens = t_calls / max(q_calls, 1e-9), t_tokens / max(q_tokens, 1e-9)
    met = max(r_calls, r_tokens) <= 1.5
    print(f"    ratio turn/question: calls {r_calls:.2f}x, tokens {r_tokens:.2f}x; target <= 1.5x: "
          f"{'met' if met else 'NOT met'}")  # fmt: skip


def corpus_bench(label: str, corpus: Path, conversations: int, work: Path, seeds: int) -> None:
    met = []
    for seed in range(seeds):
        settings = replace(DEMO_CONVERSATIONS, conversations=conversations, seed=seed)
        talks, seconds = build(corpus, settings, work / f"talks-{seed}")
        print(f"{label}, seed {seed}: {len(talks.documents)} documents, {len(talks.chunks)} chunks; conversational "
              f"build {seconds:.1f} s")  # fmt: skip
        met.append(history_gain(talks, work))
        if seed == 0:
            build_cost(corpus, talks, max(len(talks.questions), 1), work)
    if seeds > 1:
        print(f"{label}: history-gain target met on {sum(met)} of {seeds} seeds")


def demo_time(work: Path) -> None:
    """(c): the offline demo build with ``assay demo``'s conversation settings."""
    golden, seconds = build(DEMO, DEMO_CONVERSATIONS, work / "demo-timed")
    turns = len(golden.questions)
    print(f"  (c) offline demo build, DEMO_CONVERSATIONS ({len(golden.conversations)} conversations, {turns} judged "
          f"turns): {seconds:.2f} s; target < 30 s: {'met' if seconds < 30 else 'NOT met'}")  # fmt: skip


def cisi_corpus(folder: Path, docs: int) -> Path:
    """A seeded sample of ``docs`` CISI documents as text files (the collection itself is read in place)."""
    chunks = read_cisi(CISI).chunks
    for chunk in random.Random(0).sample(chunks, min(docs, len(chunks))):
        (folder / f"{chunk.doc_id}.txt").write_text(chunk.text, encoding="utf-8")
    return folder


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--no-cisi", action="store_true", help="the demo only")
    parser.add_argument("--cisi-docs", type=int, default=300, help="CISI documents sampled (default 300)")
    parser.add_argument("--conversations", type=int, default=100, help="conversations asked per corpus (default 100; "
                        "the demo's 61 chunks open 61)")  # fmt: skip
    parser.add_argument("--seeds", type=int, default=1, help="builds per corpus, seeds 0..N-1 (default 1); the "
                        "history-gain target is counted over them")  # fmt: skip
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        (root / "demo").mkdir()
        corpus_bench("demo", DEMO, args.conversations, root / "demo", args.seeds)
        demo_time(root / "demo")
        if args.no_cisi:
            return
        if not (CISI / "CISI.ALL").is_file():
            print(f"CISI skipped: not found at {CISI}", file=sys.stderr)
            return
        for sub in ("cisi", "cisi-corpus"):
            (root / sub).mkdir()
        corpus_bench("cisi", cisi_corpus(root / "cisi-corpus", args.cisi_docs), args.conversations, root / "cisi",
                     args.seeds)  # fmt: skip


if __name__ == "__main__":
    main()
