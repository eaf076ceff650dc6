"""Judges against human labels: grade histograms, binary kappa, leniency, a BM25 baseline, and system orderings.

For each collection (CISI from ``../shared/data/cisi`` or ``--cisi``, and every BEIR or TREC folder given) the
pool is the BM25 top 20 (:class:`assay.corpus.pooling.Bm25Index`, over title + body) of each query the humans
judged. Each judge named grades every pooled pair through assay's own :class:`~assay.judge.client.Judge` and
:func:`~assay.judge.relevance.grade_pairs` (with the on-disk cache), as ``assay grade`` does. Printed per judge:

- the grade histogram 0/1/2/3 (and unscored), the share graded >= 1 and >= 2, beside the humans' relevant rate;
- binary Cohen's kappa (:func:`assay.metrics.agreement.cohen_kappa`) of judge >= 1 and of judge >= 2 against
  human relevance (unscored pairs left out);
- leniency: the judge's rate >= 1 minus the human rate, in points;
- on a graded collection (Cranfield; a BEIR/TREC folder with grades 2+) also the humans' rate of grade >= 2 and
  the kappa of judge >= 2 against human >= 2 (``h>=2`` and ``k2:2``), the judge's grade-2 cut against theirs;
- as baselines, BM25 scores cut at the human rate: **global** (the top ``round(rate * pairs)`` pairs of the whole
  pool by BM25 score) and **per query** (the top ``round(rate * pool size)`` pairs of each query's pool).

Panels (``--panel RULE``, repeatable): the judges named by ``--judge`` as one :class:`assay.Panel` combined by
RULE (majority, mean or min), graded through the same :func:`~assay.judge.relevance.grade_pairs` (every vote is a
cache hit of the judges' own rows): a row like any judge's, and below the table the agreement between the judges
(Krippendorff's alpha, Cohen's kappa per pair of judges), which needs no human label.

Systems (``--systems``, on by default): five simple retrievers over the same collection, each ranking 10 documents
per judged query: ``bm25`` (title + body), ``bm25-title`` (titles only), ``bm25-q1`` (the query's first sentence
only), ``coord`` (number of distinct query terms a document shares, ties by BM25) and ``bm25-tail`` (BM25 ranks
11-20). Each is scored by P@10 with the human labels and with each judge's labels (a document graded >= 1 is
relevant; the judge also grades the systems' documents outside the pool; unscored counts as not relevant).
Kendall's tau-b between the two orderings of the systems says whether the judge ranks systems as people do.

    python bench/agreement.py                                   # CISI, offline judge
    python bench/agreement.py --cisi /path/to/cisi --judge offline \\
        --judge hosted_vllm/smollm2 --api-base http://127.0.0.1:8080/v1 --limit-queries 10
    python bench/agreement.py --judge offline --judge hosted_vllm/smollm2 --api-base http://127.0.0.1:8080/v1 \\
        --panel majority --panel min --limit-queries 10
    python bench/agreement.py --no-cisi path/to/beir-folder --json out.json
    python bench/agreement.py path/to/cranfield                 # cran.all.1400, cran.qry, cranqrel
"""

from __future__ import annotations

import argparse
import asyncio
import json
import math
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path

import numpy as np

from agreement_data import Collection, load_folder, read_cisi
from assay.corpus.pooling import Bm25Index
from assay.judge.client import Judge
from assay.judge.factory import make_judge
from assay.judge.panel import Panel
from assay.judge.relevance import Pair, grade_pairs
from assay.metrics.agreement import cohen_kappa
from assay.pipelines.agreement import panel_agreement
from assay.report.panel import panel_lines
from assay.text import sentences, terms
from assay.types import Chunk, RelevanceLabel

POOL_DEPTH, SYSTEM_DEPTH = 20, 10
SYSTEMS = ("bm25", "bm25-title", "bm25-q1", "coord", "bm25-tail")


@dataclass
class Row:
    """One line of the table: a judge (or a BM25 baseline) on one collection."""

    collection: str
    judge: str
    pairs: int
    human_rate: float
    histogram: list[int]
    unscored: int
    rate1: float
    rate2: float
    kappa1: float
    kappa2: float
    leniency: float
    human_rate2: float = float("nan")  # graded collections only: the humans' share of grade >= 2
    kappa_strict: float = float("nan")  # and the kappa of judge >= 2 against human >= 2
    seconds: float = 0.0
    tau: float | None = None
    system_p10: dict[str, float] = field(default_factory=dict)
    unscored_causes: dict[str, int] = field(default_factory=dict)  # Unscored.kind -> pooled pairs
    panel: list[str] = field(default_factory=list)  # a panel's row: the agreement between its judges, in words


@dataclass
class Pool:
    """The pooled pairs of a collection, with BM25 scores and human labels, and the systems' rankings."""

    collection: Collection
    query_ids: list[str]
    pairs: list[tuple[str, str, float]]  # (query_id, doc_id, bm25 score), per query best first
    runs: dict[str, dict[str, list[str]]]  # system -> query_id -> top SYSTEM_DEPTH doc ids

    def human(self) -> np.ndarray:
        return np.array([float(self.collection.relevant(q, d)) for q, d, _ in self.pairs])

    def human_strict(self) -> np.ndarray | None:
        """Human grade >= 2 per pair, or None when the collection is binary."""
        if not self.collection.graded:
            return None
        return np.array([float(self.collection.strict(q, d)) for q, d, _ in self.pairs])


def build_pool(collection: Collection, limit_queries: int | None = None, systems: bool = True) -> Pool:
    """BM25 top-20 pools of the judged queries (the first ``limit_queries`` of them), and the systems' runs."""
    query_ids = collection.judged_queries()[:limit_queries]
    index = Bm25Index.build(collection.chunks)
    pairs: list[tuple[str, str, float]] = []
    bm25_lists: dict[str, list[str]] = {}
    for qid in query_ids:
        hits = index.search(collection.queries[qid], POOL_DEPTH * 2)
        bm25_lists[qid] = [doc for doc, _ in hits]
        pairs.extend((qid, doc, score) for doc, score in hits[:POOL_DEPTH])
    runs = _system_runs(collection, query_ids, index, bm25_lists) if systems else {}
    return Pool(collection, query_ids, pairs, runs)


def _system_runs(
    collection: Collection, query_ids: list[str], index: Bm25Index, bm25: dict[str, list[str]]
) -> dict[str, dict[str, list[str]]]:
    titled = [
        Chunk(id=c.id, doc_id=c.doc_id, ordinal=0, text=collection.titles.get(c.id) or "") for c in collection.chunks
    ]
    titled = [c for c in titled if terms(c.text)]
    title_index = Bm25Index.build(titled) if titled else None
    runs: dict[str, dict[str, list[str]]] = {name: {} for name in SYSTEMS}
    for qid in query_ids:
        text = collection.queries[qid]
        runs["bm25"][qid] = bm25[qid][:SYSTEM_DEPTH]
        hits = title_index.search(text, SYSTEM_DEPTH) if title_index is not None else []
        runs["bm25-title"][qid] = [doc for doc, _ in hits]
        first = (sentences(text) or [text])[0]
        runs["bm25-q1"][qid] = [doc for doc, _ in index.search(first, SYSTEM_DEPTH)] if terms(first) else []
        runs["coord"][qid] = _coordination(index, text, bm25[qid])
        runs["bm25-tail"][qid] = bm25[qid][SYSTEM_DEPTH : 2 * SYSTEM_DEPTH]
    return runs


def _coordination(index: Bm25Index, query: str, candidates: list[str]) -> list[str]:
    """The BM25 top-40 re-ranked by the number of distinct query terms each document holds (ties keep BM25 order)."""
    wanted = set(terms(query))
    shared = {doc: len(wanted & set(terms(index.chunk(doc).text))) for doc in candidates}
    return sorted(candidates, key=lambda doc: -shared[doc])[:SYSTEM_DEPTH]


def binary_kappa(judge: np.ndarray, human: np.ndarray) -> float:
    """Cohen's kappa of two 0/1 arrays (NaN in ``judge`` left out)."""
    return cohen_kappa(judge, human, categories=[0.0, 1.0])


def bm25_rows(pool: Pool) -> list[Row]:
    """The BM25 score cut at the human rate, globally and per query, as rows of the table."""
    human = pool.human()
    rate = float(human.mean())
    scores = np.array([s for _, _, s in pool.pairs])
    top = np.zeros(len(scores))
    top[np.argsort(-scores, kind="stable")[: round(rate * len(scores))]] = 1.0
    per_query = np.zeros(len(scores))
    start = 0
    for qid in pool.query_ids:
        size = sum(1 for q, _, _ in pool.pairs if q == qid)
        per_query[start : start + round(rate * size)] = 1.0  # pairs are in BM25 order within a query
        start += size
    rows = [_row(pool, name, cut, 0.0) for name, cut in (("bm25 cut, global", top), ("bm25 cut, per query", per_query))]
    for row in rows:  # a yes/no cut has no grade 2
        row.rate2 = row.kappa2 = row.kappa_strict = float("nan")
    return rows


def _row(pool: Pool, name: str, grades: np.ndarray, seconds: float) -> Row:
    human = pool.human()
    scored = ~np.isnan(grades)
    hist = [int(np.sum(grades[scored] == g)) for g in range(4)]
    n = max(int(scored.sum()), 1)
    rate1 = float(np.sum(grades[scored] >= 1)) / n
    rate2 = float(np.sum(grades[scored] >= 2)) / n
    at1 = np.where(scored, (grades >= 1).astype(float), np.nan)
    at2 = np.where(scored, (grades >= 2).astype(float), np.nan)
    human_rate = float(human.mean())
    strict = pool.human_strict()
    return Row(
        collection=pool.collection.name,
        judge=name,
        pairs=len(pool.pairs),
        human_rate=human_rate,
        histogram=hist,
        unscored=int((~scored).sum()),
        rate1=rate1,
        rate2=rate2,
        kappa1=binary_kappa(at1, human),
        kappa2=binary_kappa(at2, human),
        leniency=rate1 - human_rate,
        human_rate2=float("nan") if strict is None else float(strict.mean()),
        kappa_strict=float("nan") if strict is None else binary_kappa(at2, strict),
        seconds=seconds,
    )


async def judge_pairs(
    spec: str,
    pairs: Sequence[tuple[str, str]],
    collection: Collection,
    *,
    api_base: str | None,
    cache_dir: Path,
    concurrency: int,
    listwise: int | None,
) -> dict[tuple[str, str], RelevanceLabel]:
    """Labels of (query_id, doc_id) pairs by judge ``spec`` through grade_pairs (``grade`` None where unscored);
    ``panel:RULE:A,B,...`` is a panel of the judges A, B, ... combined by RULE."""
    judge: Judge | Panel
    if spec.startswith("panel:"):
        _, rule, names = spec.split(":", 2)
        judges = [_judge(name, api_base, cache_dir, concurrency) for name in names.split(",")]
        judge = Panel(tuple(judges), combine=rule)  # type: ignore[arg-type]
    else:
        judge = _judge(spec, api_base, cache_dir, concurrency)
    texts = {c.id: c.text for c in collection.chunks}
    todo = [Pair(q, collection.queries[q], d, texts[d]) for q, d in pairs]
    try:
        labels = await grade_pairs(judge, todo, listwise=listwise)
    finally:
        await judge.aclose()
    return {(lab.query_id, lab.chunk_id): lab for lab in labels}


def _judge(spec: str, api_base: str | None, cache_dir: Path, concurrency: int) -> Judge:
    base = None if spec == "offline" else api_base
    return make_judge(spec, api_base=base, cache_dir=cache_dir, concurrency=concurrency)


def evaluate_judge(
    pool: Pool, spec: str, *, api_base: str | None, cache_dir: Path, concurrency: int = 4, listwise: int | None = None
) -> Row:
    """The table row of judge ``spec`` on ``pool`` (with Kendall's tau when the pool has systems' runs)."""
    wanted = list(
        dict.fromkeys(
            [(q, d) for q, d, _ in pool.pairs]
            + [(q, d) for run in pool.runs.values() for q, docs in run.items() for d in docs]
        )
    )
    started = time.perf_counter()
    labels = asyncio.run(
        judge_pairs(
            spec,
            wanted,
            pool.collection,
            api_base=api_base,
            cache_dir=cache_dir,
            concurrency=concurrency,
            listwise=listwise,
        )
    )
    seconds = time.perf_counter() - started
    grades = {key: float("nan") if lab.grade is None else float(lab.grade) for key, lab in labels.items()}
    name = spec if not spec.startswith("panel:") else next(iter(labels.values())).provenance.model or spec
    row = _row(pool, name, np.array([grades[(q, d)] for q, d, _ in pool.pairs]), seconds)
    pooled = [labels[(q, d)].unscored for q, d, _ in pool.pairs]
    if spec.startswith("panel:"):
        agreement = panel_agreement([labels[(q, d)] for q, d, _ in pool.pairs], n_resamples=1000)
        row.panel = panel_lines(agreement) if agreement is not None else []
    row.unscored_causes = dict(Counter(u.kind for u in pooled if u is not None))
    if pool.runs:  # unscored (NaN) is not >= 1: it counts as not relevant
        row.system_p10 = system_scores(pool, lambda q, d: grades[(q, d)] >= 1)
        human = system_scores(pool, pool.collection.relevant)
        row.tau = kendall_tau([human[s] for s in SYSTEMS], [row.system_p10[s] for s in SYSTEMS])
    return row


def system_scores(pool: Pool, relevant: Callable[[str, str], bool]) -> dict[str, float]:
    """Mean P@10 of each system over the pool's queries; ``relevant(query_id, doc_id)`` says what counts."""
    return {
        name: float(np.mean([sum(relevant(q, d) for d in run[q]) / SYSTEM_DEPTH for q in pool.query_ids]))
        for name, run in pool.runs.items()
    }


def kendall_tau(a: Sequence[float], b: Sequence[float]) -> float:
    """Kendall's tau-b: (concordant - discordant) / sqrt((n0 - ties_a) (n0 - ties_b)), n0 = n (n - 1) / 2 pairs."""
    concordant = discordant = ties_a = ties_b = 0
    for i in range(len(a)):
        for j in range(i + 1, len(a)):
            da, db = np.sign(a[i] - a[j]), np.sign(b[i] - b[j])
            ties_a += int(da == 0)
            ties_b += int(db == 0)
            concordant += int(da * db > 0)
            discordant += int(da * db < 0)
    n0 = len(a) * (len(a) - 1) // 2
    denominator = math.sqrt((n0 - ties_a) * (n0 - ties_b))
    return (concordant - discordant) / denominator if denominator else float("nan")


@dataclass
class Result:
    """The rows of one collection (BM25 baselines first, then the judges) and the systems' P@10 by human labels."""

    collection: str
    queries: int
    rows: list[Row]
    human_p10: dict[str, float]


def run_collection(
    collection: Collection,
    judges: Sequence[str],
    *,
    api_base: str | None,
    cache_dir: Path,
    limit_queries: int | None = None,
    concurrency: int = 4,
    listwise: int | None = None,
    systems: bool = True,
    panels: Sequence[str] = (),
) -> Result:
    """Every row of the table for one collection: the BM25 baselines, then one per judge, then one per panel rule
    (the judges together)."""
    pool = build_pool(collection, limit_queries, systems)
    rows = bm25_rows(pool)
    specs = [*judges, *(f"panel:{rule}:{','.join(judges)}" for rule in panels)]
    for spec in specs:
        rows.append(evaluate_judge(pool, spec, api_base=api_base, cache_dir=cache_dir, concurrency=concurrency,
                                   listwise=listwise))  # fmt: skip
    human = system_scores(pool, collection.relevant) if systems else {}
    return Result(collection.name, len(pool.query_ids), rows, human)


def format_table(results: Sequence[Result]) -> str:
    """All rows as one plain-text table."""
    head = (
        f"{'collection':<12} {'judge':<24} {'pairs':>5} {'human':>6} {'0/1/2/3 (unscored)':<24} "
        f"{'>=1':>6} {'>=2':>6} {'k>=1':>6} {'k>=2':>6} {'lenient':>8} {'h>=2':>6} {'k2:2':>6} {'tau':>5} {'sec':>6}"
    )
    lines = [head, "-" * len(head)]
    for r in (row for result in results for row in result.rows):
        hist = "/".join(str(h) for h in r.histogram) + (f" ({r.unscored})" if r.unscored else "")
        tau = "" if r.tau is None else f"{r.tau:+.2f}"
        lines.append(
            f"{r.collection:<12} {r.judge[:24]:<24} {r.pairs:>5} {r.human_rate:>6.1%} {hist:<24} {r.rate1:>6.1%} "
            f"{_pct(r.rate2):>6} {r.kappa1:>6.3f} {_num(r.kappa2):>6} {100 * r.leniency:>+7.1f}p "
            f"{_pct(r.human_rate2):>6} {_num(r.kappa_strict):>6} {tau:>5} {r.seconds:>6.1f}"
        )
    for r in (row for result in results for row in result.rows if row.unscored_causes):
        causes = ", ".join(f"{kind} {n}" for kind, n in sorted(r.unscored_causes.items()))
        lines.append(f"unscored by {r.judge} on {r.collection}: {causes}")
    return "\n".join(lines)


def _pct(value: float) -> str:
    return "-" if math.isnan(value) else f"{value:.1%}"


def _num(value: float) -> str:
    return "-" if math.isnan(value) else f"{value:.3f}"


def format_systems(results: Sequence[Result]) -> str:
    """Mean P@10 of each system by human labels and by each judge's labels (the orderings tau compares)."""
    lines = []
    for result in results:
        judged = [r for r in result.rows if r.tau is not None]
        if not result.human_p10:
            continue
        lines.append(f"P@10 on {result.collection} ({result.queries} queries)")
        lines.append(f"  {'system':<11} {'human':>7} " + " ".join(f"{r.judge[:14]:>14}" for r in judged))
        for name in SYSTEMS:
            by_judge = " ".join(f"{r.system_p10[name]:>14.3f}" for r in judged)
            lines.append(f"  {name:<11} {result.human_p10[name]:>7.3f} {by_judge}")
    return "\n".join(lines)


def _finite(value: object) -> object:
    """``value`` with NaN floats as None (JSON has no NaN)."""
    if isinstance(value, float) and math.isnan(value):
        return None
    if isinstance(value, dict):
        return {k: _finite(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_finite(v) for v in value]
    return value


def find_cisi(start: Path) -> Path | None:
    """``shared/data/cisi`` beside the repository (or beside one of its parents: a worktree sits deeper)."""
    for parent in [start, *start.parents]:
        candidate = parent.parent / "shared" / "data" / "cisi"
        if (candidate / "CISI.ALL").is_file():
            return candidate
    return None


def _panels(rules: Sequence[str], judges: Sequence[str]) -> list[str]:
    if rules and len(set(judges)) < 2:
        raise SystemExit("--panel needs two different --judge models or more")
    return list(rules)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("folders", nargs="*", type=Path, help="BEIR, TREC or Cranfield folders with human qrels")
    parser.add_argument("--cisi", type=Path, help="the CISI folder (default: ../shared/data/cisi from the repo)")
    parser.add_argument("--no-cisi", action="store_true", help="leave CISI out")
    parser.add_argument("--judge", action="append", help="judge model string (repeatable; default: offline)")
    parser.add_argument("--api-base", help="OpenAI-compatible endpoint for the model judges")
    parser.add_argument("--cache-dir", type=Path, help="judge cache (default: a temporary directory)")
    parser.add_argument("--limit-queries", type=int, help="only the first N judged queries of each collection")
    parser.add_argument("--concurrency", type=int, default=4)
    parser.add_argument("--listwise", type=int, help="grade N passages per call (default: pointwise)")
    parser.add_argument("--no-systems", action="store_true", help="skip the system orderings (fewer pairs to judge)")
    parser.add_argument(
        "--panel", action="append", choices=["majority", "mean", "min"], help="the judges as one panel too (repeatable)"
    )
    parser.add_argument("--json", type=Path, help="also write the rows as JSON here")
    args = parser.parse_args(argv)
    collections: list[Collection] = []
    if not args.no_cisi:
        cisi = args.cisi or find_cisi(Path(__file__).resolve().parent.parent)
        if cisi is None or not (cisi / "CISI.ALL").is_file():
            print(f"CISI skipped: not found at {cisi or '../shared/data/cisi'} (give --cisi PATH)", file=sys.stderr)
        else:
            collections.append(read_cisi(cisi))
    collections.extend(load_folder(folder) for folder in args.folders)
    if not collections:
        print("nothing to measure: no CISI and no folder given", file=sys.stderr)
        return 1
    with tempfile.TemporaryDirectory() as tmp:
        results = [
            run_collection(
                c,
                args.judge or ["offline"],
                api_base=args.api_base,
                cache_dir=args.cache_dir or Path(tmp),
                limit_queries=args.limit_queries,
                concurrency=args.concurrency,
                listwise=args.listwise,
                systems=not args.no_systems,
                panels=_panels(args.panel or [], args.judge or ["offline"]),
            )
            for c in collections
        ]
    print(format_table(results))
    for result in results:
        for row in result.rows:
            if row.panel:
                print(f"\n{result.collection}, {row.judge}: agreement between the judges")
                print("\n".join(f"  {line}" for line in row.panel))
    if not args.no_systems:
        print()
        print(format_systems(results))
    if args.json:
        args.json.write_text(json.dumps(_finite([asdict(r) for r in results]), indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
