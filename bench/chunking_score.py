"""Section (l) of bench/chunking.py: a score that belongs to the run (issue 43).

A documentation folder (the Markdown pages of an open-source library when this machine has them: undici's docs,
shipped with npm; else the bundled demo corpus) is built into a golden set with the offline judge. Seven systems
retrieve over it, BM25 top 10 (bm25s) over each one's own passages:

* ``golden``: the golden chunks, by id; ``golden_halves``: the same ranking, every chunk cut at the space nearest
  its middle and given by text (the very same text); ``shuffled``: ``golden`` with its top 10 reversed (truly worse);
* ``md``: Markdown sections (split at headings, as a Markdown header splitter does); ``w1000``, ``w600``, ``w300``:
  recursive character windows of that many characters (paragraphs, then lines, then words, as a recursive
  character splitter does, no overlap).

Each run is evaluated alone and all seven together, each time on a fresh copy of the golden set, with the offline
judge. The same on a **near-copy corpus**: every page also kept as an older version (a sentence in five reworded),
sorted before the current one, so most passages' text stands word for word in two places.

It prints, per corpus: (1) the largest |alone - together| over every ranking and budget measure of each run, raw and
after the report's own account of it (``pool_shifts``: labels other runs brought; target 0.000); (2) the largest
|golden - golden_halves| over the budget measures (target 0.000); (3) the ranking with its letters; (4) how much of
the budget each run's top 10 fills; (5) the pytest gate of each system against the golden chunks, on the eval's
primary and on ndcg@10 (refused for a run of passages under half the median chunk).

    python bench/chunking_score.py            # about 2 minutes on 2 cores
    python bench/chunking_score.py --demo     # the bundled demo corpus even where the library docs exist
"""

from __future__ import annotations

import argparse
import re
import shutil
import statistics
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import bm25s

from assay.formats.golden import GoldenSet
from assay.judge import make_judge
from assay.pipelines.bootstrap import BuildSettings, build_golden
from assay.pipelines.evaluate import EvalSettings, Evaluated, evaluate_detailed
from assay.report.verdict import build_verdict
from assay.results import EvalResult
from assay.testing.evaluation import Evaluation
from assay.text import sentences

HERE = Path(__file__).resolve().parent
DEMO = HERE.parent / "datasets" / "demo" / "corpus"
LIBRARY_DOCS = Path("/usr/lib/node_modules/npm/node_modules/undici/docs")
K = 10
BUDGET = "1000t"
QUESTIONS = 40
Run = list[dict[str, object]]
_HEADING = re.compile(r"^#{1,6} ", re.MULTILINE)


def markdown_sections(text: str) -> list[str]:
    """Sections from each heading to the next (the text before the first heading is a section too)."""
    cuts = [m.start() for m in _HEADING.finditer(text)]
    parts = [text[a:b].strip() for a, b in zip([0, *cuts], [*cuts, len(text)], strict=True)]
    return [p for p in parts if p]


def recursive_windows(size: int) -> Callable[[str], list[str]]:
    """Pieces of at most ``size`` characters: split at blank lines, then lines, then spaces, merging neighbours while
    they fit (the shape of a recursive character splitter, no overlap)."""

    def split(text: str, separators: tuple[str, ...]) -> list[str]:
        if len(text) <= size:
            return [text] if text.strip() else []
        if not separators:
            return [text[i : i + size] for i in range(0, len(text), size)]
        sep, rest = separators[0], separators[1:]
        pieces: list[str] = []
        current = ""
        for part in text.split(sep):
            joined = f"{current}{sep}{part}" if current else part
            if len(joined) <= size:
                current = joined
                continue
            if current.strip():
                pieces.append(current)
            if len(part) > size:
                pieces += split(part, rest)
                current = ""
            else:
                current = part
        if current.strip():
            pieces.append(current)
        return pieces

    return lambda text: split(text, ("\n\n", "\n", " "))


def bm25_top(golden: GoldenSet, passages: list[str]) -> list[list[int]]:
    """The indexes of each golden question's top ``K`` passages by BM25."""
    retriever = bm25s.BM25()
    retriever.index(bm25s.tokenize(passages, stopwords="en", show_progress=False), show_progress=False)
    tokens = bm25s.tokenize([q.text for q in golden.questions], stopwords="en", show_progress=False)
    found, _ = retriever.retrieve(tokens, k=min(K, len(passages)), show_progress=False)
    return [hits.tolist() for hits in found]


def _halves(text: str) -> list[str]:
    spaces = [i for i, ch in enumerate(text) if ch == " "]
    if len(text.split()) < 6:
        return [text]
    cut = min(spaces, key=lambda i: abs(i - len(text) // 2))
    return [text[:cut], text[cut:]]


def systems(golden: GoldenSet) -> dict[str, Run]:
    """The seven runs of the module docstring."""
    chunks = golden.chunks
    top = bm25_top(golden, [c.text for c in chunks])
    qids = [q.id for q in golden.questions]
    lines = list(zip(qids, top, strict=True))
    runs: dict[str, Run] = {
        "golden": [{"query_id": q, "retrieved": [{"id": chunks[i].id} for i in hits]} for q, hits in lines],
        "golden_halves": [
            {"query_id": q, "retrieved": [{"text": part} for i in hits for part in _halves(chunks[i].text)]}
            for q, hits in lines
        ],
        "shuffled": [{"query_id": q, "retrieved": [{"id": chunks[i].id} for i in reversed(hits)]} for q, hits in lines],
    }
    cutters = {"md": markdown_sections, "w1000": recursive_windows(1000), "w600": recursive_windows(600),
               "w300": recursive_windows(300)}  # fmt: skip
    for name, cut in cutters.items():
        passages = [p for doc in golden.documents for p in cut(doc.text)]
        hits_all = bm25_top(golden, passages)
        runs[name] = [{"query_id": q, "retrieved": [{"text": passages[i]} for i in hits]}
                      for q, hits in zip(qids, hits_all, strict=True)]  # fmt: skip
    return runs


def near_copies(corpus: Path, out: Path) -> Path:
    """The corpus with every page also kept as an older version, ``_archive/v1-NAME`` (sorted first), one sentence in
    five reworded (a word inserted)."""
    shutil.copytree(corpus, out / "current")
    for page in sorted(corpus.rglob("*.md")):
        said = sentences(page.read_text(encoding="utf-8"))
        older = [f"Previously, {s}" if i % 5 == 4 else s for i, s in enumerate(said)]
        target = out / "current" / "_archive" / f"v1-{page.name}"
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text("\n\n".join(older), encoding="utf-8")
    return out / "current"


def _evaluate(source: Path, work: Path, runs: dict[str, Run]) -> Evaluated:
    folder = work / f"eval-{len(list(work.iterdir()))}"
    shutil.copytree(source, folder)  # a fresh copy of the golden set: no label from another evaluation
    settings = EvalSettings(k_values=(1, 5, K), n_boot=200, add_labels=True, budgets=(BUDGET,))
    judge = make_judge("offline", cache_dir=work / "judge-cache")
    return evaluate_detailed(folder, runs, judge=judge, settings=settings)


def _measures(result: EvalResult) -> list[str]:
    names = {name for run in result.runs for name in run.metrics}
    return sorted(n for n in names if n.endswith(f"@{BUDGET}") or re.fullmatch(r"(ndcg|P|recall|map)@\d+|map", n))


def alone_vs_together(source: Path, work: Path, runs: dict[str, Run]) -> Evaluated:
    """(1): every run alone and all together."""
    evaluated = _evaluate(source, work, runs)
    together = evaluated.result
    shifts = {s.run: s for s in together.pool_shifts}
    measures = _measures(together)
    print(f"  {'run':14s} {'alone ' + 'ndcg@' + BUDGET:>18s} {'together':>9s} {'max |raw|':>10s} "
          f"{'max |accounted|':>16s} {'questions moved':>16s}")  # fmt: skip
    worst = 0.0
    alones = {}
    for name, run in runs.items():
        alone = alones[name] = _evaluate(source, work, {name: run}).result.runs[0].metrics
        mine = next(r for r in together.runs if r.name == name).metrics
        shift = shifts.get(name)
        accounted = {m: (shift.alone_means.get(m) if shift else mine[m].mean) for m in measures if m in mine}
        raw = [abs((alone[m].mean or 0) - (mine[m].mean or 0)) for m in measures if m in mine and m in alone]
        left = [abs((alone[m].mean or 0) - (accounted[m] or 0)) for m in accounted if m in alone]
        worst = max(worst, *left)
        primary = f"ndcg@{BUDGET}"
        print(f"  {name:14s} {alone[primary].mean:18.3f} {mine[primary].mean:9.3f} {max(raw):10.3f} "
              f"{max(left):16.3f} {len(shift.questions) if shift else 0:16d}")  # fmt: skip
    print(f"  largest difference alone vs together once the report's account is applied: {worst:.3f} (exactly "
          f"{worst:.1e}; target 0.000)")  # fmt: skip
    pair = _evaluate(source, work, {k: runs[k] for k in ("golden", "golden_halves")}).result
    beside = next(r for r in pair.runs if r.name == "golden").metrics
    raw = max(abs((alones["golden"][m].mean or 0) - (beside[m].mean or 0)) for m in measures if m in beside)
    print(f"  golden alone vs beside its halves (their fragments judged as passages), raw: {raw:.3f} (exactly "
          f"{raw:.1e}; target 0.000)")  # fmt: skip
    return evaluated


def halves_vs_whole(result: EvalResult) -> None:
    """(2)."""
    whole = next(r for r in result.runs if r.name == "golden").metrics
    halves = next(r for r in result.runs if r.name == "golden_halves").metrics
    budget = [m for m in whole if m.endswith(f"@{BUDGET}") and m in halves]
    diffs = {m: abs((whole[m].mean or 0) - (halves[m].mean or 0)) for m in budget}
    top = max(diffs, key=lambda m: diffs[m])
    print(f"  largest |golden - golden_halves| over {len(diffs)} budget measures: {diffs[top]:.3f} (exactly "
          f"{diffs[top]:.1e}, {top}; target 0.000)")  # fmt: skip


def gates(evaluated: Evaluated, golden: GoldenSet, runs: dict[str, Run]) -> None:
    """(5): the pytest gate of each system against the golden chunks, on the eval's primary and on ndcg@10."""
    check = Evaluation(evaluated, golden, list(runs.items()))  # type: ignore[arg-type]
    result = evaluated.result
    relevant = result.chunk_lengths.get("median", 0.0)
    print(f"  (median relevant golden chunk {relevant:.0f} characters: ndcg@10 is refused for a run whose median "
          f"passage is under {relevant / 2:.0f})")  # fmt: skip
    for name in runs:
        if name == "golden":
            continue
        said = []
        for metric in (None, "ndcg@10"):
            try:
                check.assert_not_worse(name, baseline="golden", metric=metric)
                said.append("passes")
            except AssertionError as failed:
                text = " ".join(str(failed).split())
                said.append(f"refused ({text.split(' so ')[0].split('median passage is ')[-1]})" if " refused: " in
                            text else "fails: " + text.split(":")[1].split(",")[0].strip())  # fmt: skip
        median = next(r for r in result.runs if r.name == name).passage_lengths.get("median", 0.0)
        print(f"  {name:14s} (median passage {median:5.0f})  primary: {said[0]:8s}  ndcg@10: {said[1]}")


def grouping(result: EvalResult) -> None:
    """(3) and (4)."""
    verdict = build_verdict(result)
    print(f"  {verdict.headline}")
    print(f"  {verdict.ranking}")
    for place in verdict.places:
        print(f"    {place.run:14s} place {place.place}  letters {place.groups}")
    print(f"(4) the budget ({BUDGET}) filled by each run's top {K} (median over questions)")
    for run in result.runs:
        fill = run.budget.get(BUDGET) if run.budget else None
        if fill is not None:
            judged = "-" if fill.judged is None else f"{fill.judged:.0%}"
            print(
                f"  {run.name:14s} filled {fill.filled:.0%}, under 80% on {fill.under or 0:.0%} of questions, "
                f"judged {judged}, k to fill {fill.k}"
            )


def corpus_case(label: str, corpus: Path, work: Path) -> None:
    start = time.perf_counter()
    folder = work / f"golden-{label}"
    golden = build_golden(corpus, judge=make_judge("offline"), settings=BuildSettings(questions=QUESTIONS, seed=0),
                          output=folder)  # fmt: skip
    runs = systems(golden)
    lengths = {
        n: statistics.median(len(str(i.get("text", ""))) for line in r for i in line["retrieved"])  # type: ignore[union-attr]
        for n, r in runs.items()
        if "text" in r[0]["retrieved"][0]
    }  # type: ignore[index,operator]
    print(f"\n== {label}: {len(golden.documents)} pages, {len(golden.chunks)} chunks, {len(golden.questions)} "
          f"questions; median passage characters {', '.join(f'{n} {v:.0f}' for n, v in lengths.items())}")  # fmt: skip
    print("(1) alone vs together (fresh copies of the golden set, offline judge)")
    together = alone_vs_together(folder, work / f"evals-{label}", runs)
    print("(2) the same text cut in halves")
    halves_vs_whole(together.result)
    print("(3) the ranking, all seven together")
    grouping(together.result)
    print("(5) the pytest gate against the golden chunks (assert_not_worse)")
    gates(together, golden, runs)
    print(f"  ({time.perf_counter() - start:.0f} s)")


def score_cases(demo: bool = False) -> None:
    """(l) on the library's docs (or the demo corpus) and on their near-copy corpus."""
    corpus = DEMO if demo or not LIBRARY_DOCS.is_dir() else LIBRARY_DOCS
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        for label in ("docs", "near-copies"):
            (work / f"evals-{label}").mkdir()
        corpus_case("docs", corpus, work)
        corpus_case("near-copies", near_copies(corpus, work / "copies"), work)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--demo", action="store_true", help="the bundled demo corpus, not the library's docs")
    score_cases(parser.parse_args().demo)


if __name__ == "__main__":
    main()
