"""Randomized differential tests: assay's ranking measures against pytrec_eval (trec_eval's reference binding).

Seeded random graded qrels (grades -1..3), scores drawn from few levels so ties are common (trec_eval breaks them by
docid descending), runs shorter than the cutoffs, judged queries with no relevant document, and queries missing on
either side. pytrec_eval crashes (segfault) on qrels holding two distinct negative grades, so only -1 is used here;
other negative grades are covered by hand in test_ranking.py.
"""

from __future__ import annotations

import math
import random
from pathlib import Path

import numpy as np
import pytest
import pytrec_eval

from assay.errors import FormatError
from assay.formats.trec import read_qrels, read_run, write_qrels, write_run
from assay.metrics import Qrels, Run, evaluate
from assay.metrics import _lookup as lookup_module
from assay.metrics import _ranks as ranks_module
from assay.metrics import judged as judged_module

# assay name -> pytrec_eval measure key (as it appears in the result) and the measure to request
PAIRS = {
    "map": ("map", "map"),
    "map@5": ("map_cut_5", "map_cut.5"),
    "ndcg": ("ndcg", "ndcg"),
    "ndcg@5": ("ndcg_cut_5", "ndcg_cut.5"),
    "ndcg_cut_20": ("ndcg_cut_20", "ndcg_cut.20"),
    "P@5": ("P_5", "P.5"),
    "P_30": ("P_30", "P.30"),
    "recall@10": ("recall_10", "recall.10"),
    "mrr": ("recip_rank", "recip_rank"),
    "Rprec": ("Rprec", "Rprec"),
    "bpref": ("bpref", "bpref"),
    "hit@1": ("success_1", "success.1"),
    "success_5": ("success_5", "success.5"),
    "iprec@0.3": ("iprec_at_recall_0.30", "iprec_at_recall"),
    "iprec_at_recall_1.00": ("iprec_at_recall_1.00", "iprec_at_recall"),
    "num_rel": ("num_rel", "num_rel"),
    "num_ret": ("num_ret", "num_ret"),
}


def make_case(seed: int, n_queries: int = 120) -> tuple[dict[str, dict[str, int]], dict[str, dict[str, float]]]:
    rng = random.Random(seed)
    qrels: dict[str, dict[str, int]] = {}
    run: dict[str, dict[str, float]] = {}
    for i in range(n_queries):
        q = f"q{i}"
        pool = [f"d{rng.randint(0, 80)}" for _ in range(50)]
        if rng.random() < 0.9:
            grades = [-1, 0, 0, 1, 1, 2, 3] if rng.random() < 0.85 else [0, -1]  # some queries: nothing relevant
            qrels[q] = {d: rng.choice(grades) for d in rng.sample(pool, rng.randint(1, 20))}
        if rng.random() < 0.9:
            depth = rng.randint(0, 45)  # often shorter than the cutoffs
            run[q] = {d: rng.randint(0, 6) / 3 for d in pool[:depth]}
    run["only_in_run"] = {"x": 1.0}
    return qrels, run


def reference(qrels: dict[str, dict[str, int]], run: dict[str, dict[str, float]], level: int = 1) -> dict:
    wanted = {pair[1] for pair in PAIRS.values()}
    return pytrec_eval.RelevanceEvaluator(qrels, wanted, relevance_level=level).evaluate(run)


def check(ev, ref, names) -> None:
    assert ev.query_ids == sorted(ref)
    for name in names:
        expected = np.array([ref[q][PAIRS[name.split("|")[0]][0]] for q in ev.query_ids])
        if name.startswith("iprec"):
            # pytrec_eval gives NaN (0/0) for iprec of an empty ranking of a query with no relevant document;
            # assay gives 0, like every other measure of such a query.
            expected = np.nan_to_num(expected)
        np.testing.assert_allclose(ev.per_query[name], expected, rtol=0, atol=1e-12, err_msg=name)


@pytest.mark.parametrize("seed", [1, 2, 3, 4])
def test_dict_input_matches_pytrec_eval(seed: int) -> None:
    qrels, run = make_case(seed)
    check(evaluate(qrels, run, list(PAIRS)), reference(qrels, run), list(PAIRS))


@pytest.mark.parametrize("seed", [5, 6])
def test_array_input_matches_pytrec_eval(seed: int) -> None:
    qrels, run = make_case(seed)
    run = {q: d for q, d in run.items() if d}  # an empty ranking cannot be written as arrays
    rows = [(q, d, s) for q, docs in run.items() for d, s in docs.items()]
    rng = random.Random(seed)
    rng.shuffle(rows)  # arrays may come in any order
    qids, docids, scores = zip(*rows, strict=True)
    ev = evaluate(Qrels.from_dict(qrels), Run.from_arrays(qids, docids, scores), list(PAIRS))
    check(ev, reference(qrels, run), list(PAIRS))


def test_files_match_pytrec_eval(tmp_path: Path) -> None:
    qrels, run = make_case(7)
    run = {q: d for q, d in run.items() if d}
    write_qrels(tmp_path / "qrels.txt", qrels)
    write_run(tmp_path / "run.txt", run)
    for block in (512, 700, 1 << 24):  # blocks split the files mid-way and at many places
        qr, rn = (
            read_qrels(tmp_path / "qrels.txt", block_bytes=block),
            read_run(tmp_path / "run.txt", block_bytes=block),
        )
        check(evaluate(qr, rn, list(PAIRS)), reference(qrels, run), list(PAIRS))


@pytest.mark.parametrize("level", [2, 3])
def test_threshold_matches_relevance_level(level: int) -> None:
    qrels, run = make_case(8)
    binary = ["map", "P@5", "recall@10", "mrr", "Rprec", "bpref", "hit@1", "iprec@0.3", "num_rel"]
    names = [f"{n}|g>={level}" for n in binary] + ["ndcg@5"]  # ndcg keeps raw grades whatever the threshold
    ev = evaluate(qrels, run, names)
    check(ev, reference(qrels, run, level), names)


def test_complete_counts_missing_queries_as_zero() -> None:
    qrels, run = make_case(9)
    present = evaluate(qrels, run, ["map", "ndcg@5"])
    complete = evaluate(qrels, run, ["map", "ndcg@5"], complete=True)
    missing = set(qrels) - set(run)
    assert missing and present.n_missing == len(missing) == complete.n_missing
    assert complete.query_ids == sorted(qrels)
    for name in ("map", "ndcg@5"):
        values = dict(zip(complete.query_ids, complete.per_query[name], strict=True))
        assert all(values[q] == 0 for q in missing)
        total = sum(present.per_query[name])
        assert complete.mean(name) == pytest.approx(total / len(qrels), abs=1e-12)


def test_auc_pr_is_trec_evals_11pt_avg() -> None:
    qrels, run = make_case(10)
    ref = pytrec_eval.RelevanceEvaluator(qrels, {"11pt_avg"}).evaluate(run)
    ev = evaluate(qrels, run, ["auc_pr", "11pt_avg"])
    expected = np.nan_to_num([ref[q]["11pt_avg"] for q in ev.query_ids])  # NaN: empty ranking, nothing relevant
    np.testing.assert_allclose(ev.per_query["auc_pr"], expected, rtol=0, atol=1e-12)
    np.testing.assert_array_equal(ev.per_query["auc_pr"], ev.per_query["11pt_avg"])


def err_loop(grades: list[int], k: int, gmax: int = 3) -> float:
    """ERR@k straight from Chapelle et al. (2009): sum_r (1/r) R_r prod_{i<r} (1 - R_i), R = (2^g - 1) / 2^gmax."""
    total, keep_going = 0.0, 1.0
    for r, grade in enumerate(grades[:k], start=1):
        g = min(max(grade, 0), gmax)
        stop = (2**g - 1) / 2**gmax
        total += keep_going * stop / r
        keep_going *= 1 - stop
    return total


@pytest.mark.parametrize(("k", "gmax"), [(5, 3), (20, 3), (10, 4)])
def test_err_matches_a_direct_loop(k: int, gmax: int) -> None:
    qrels, run = make_case(11)
    ev = evaluate(qrels, run, [f"err@{k}|gmax={gmax}"])
    for q, value in zip(ev.query_ids, ev.per_query[f"err@{k}|gmax={gmax}"], strict=True):
        ranked = sorted(run[q].items(), key=lambda it: (np.float32(it[1]), it[0]), reverse=True)
        grades = [qrels[q].get(d, 0) for d, _ in ranked]
        assert value == pytest.approx(err_loop(grades, k, gmax), abs=1e-12), q


def test_f_beta_from_precision_and_recall() -> None:
    qrels, run = make_case(12)
    ev = evaluate(qrels, run, ["P@10", "recall@10", "f1@10", "f2@10", "fbeta@10|beta=0.5"])
    p, r = ev.per_query["P@10"], ev.per_query["recall@10"]
    for name, beta in (("f1@10", 1.0), ("f2@10", 2.0), ("fbeta@10|beta=0.5", 0.5)):
        expected = [(1 + beta**2) * a * b / (beta**2 * a + b) if a + b else 0.0 for a, b in zip(p, r, strict=True)]
        np.testing.assert_allclose(ev.per_query[name], expected, rtol=0, atol=1e-12)


WITHOUT_BPREF = [name for name in PAIRS if name != "bpref"]


@pytest.mark.parametrize("seed", [13, 14])
def test_measures_without_bpref_skip_nonpositive_grades_and_still_match(seed: int) -> None:
    # With no bpref the join keeps only positively graded documents; the values must not move.
    qrels, run = make_case(seed)
    check(evaluate(qrels, run, WITHOUT_BPREF), reference(qrels, run), WITHOUT_BPREF)
    rows = [(q, d, s) for q, docs in run.items() for d, s in docs.items()]
    qids, docids, scores = zip(*rows, strict=True)
    ev = evaluate(Qrels.from_dict(qrels), Run.from_arrays(qids, docids, scores), WITHOUT_BPREF)
    check(ev, reference(qrels, {q: d for q, d in run.items() if d}), WITHOUT_BPREF)


def test_small_chunks_and_mixed_lengths_match(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    # Rankings are sorted in chunks of power-of-two widths; tiny chunks put every query in a chunk boundary case.
    monkeypatch.setattr(ranks_module, "CHUNK_ENTRIES", 64)
    qrels, run = make_case(15)
    rng = random.Random(15)
    for q in list(run)[::3]:  # some long rankings with many ties, beside short ones
        run[q].update({f"x{i}": rng.randint(0, 3) / 2 for i in range(rng.randint(50, 300))})
    check(evaluate(qrels, run, list(PAIRS)), reference(qrels, run), list(PAIRS))
    run = {q: d for q, d in run.items() if d}
    write_qrels(tmp_path / "qrels.txt", qrels)
    write_run(tmp_path / "run.txt", run)
    ev = evaluate(read_qrels(tmp_path / "qrels.txt"), read_run(tmp_path / "run.txt"), list(PAIRS))
    check(ev, reference(qrels, run), list(PAIRS))


def test_run_file_with_queries_interleaved(tmp_path: Path) -> None:
    qrels, run = make_case(16)
    run = {q: d for q, d in run.items() if d}
    lines = [f"{q} Q0 {d} 0 {s!r} t\n" for q, docs in run.items() for d, s in docs.items()]
    random.Random(16).shuffle(lines)
    (tmp_path / "run.txt").write_text("".join(lines))
    write_qrels(tmp_path / "qrels.txt", qrels)
    ev = evaluate(read_qrels(tmp_path / "qrels.txt"), read_run(tmp_path / "run.txt"), list(PAIRS))
    check(ev, reference(qrels, run), list(PAIRS))


def test_hash_collisions_cost_time_not_answers(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    # Every docid hashing alike: lookups and the duplicate check must fall back to comparing the docids.
    def few_hashes(docids: np.ndarray) -> np.ndarray:
        return (np.char.str_len(docids.astype(np.str_)) % 2).astype(np.uint32)

    monkeypatch.setattr(lookup_module, "hash31", few_hashes)
    monkeypatch.setattr(judged_module, "hash31", few_hashes)
    qrels, run = make_case(17)
    run = {q: d for q, d in run.items() if d}
    write_qrels(tmp_path / "qrels.txt", qrels)
    write_run(tmp_path / "run.txt", run)
    ev = evaluate(read_qrels(tmp_path / "qrels.txt"), read_run(tmp_path / "run.txt"), list(PAIRS))
    check(ev, reference(qrels, run), list(PAIRS))
    (tmp_path / "dup.txt").write_text("q1 Q0 a 1 1 t\nq1 Q0 bb 2 1 t\nq1 Q0 c 3 1 t\nq1 Q0 a 4 1 t\n")
    with pytest.raises(FormatError, match="document 'a' appears again") as info:
        read_run(tmp_path / "dup.txt")
    assert info.value.line == 4


def test_negative_scores_and_signed_zeros_match_pytrec_eval() -> None:
    # Scores from -2 to 2 (make_case's 0..2 shifted), some zeros written -0.0: negative floats order by magnitude
    # reversed, and -0.0 ties with 0.0 (then docid descending decides).
    qrels, run = make_case(18)
    rng = random.Random(18)
    shifted = {q: {d: (s - 1.0) * 2 for d, s in docs.items()} for q, docs in run.items()}
    signed = {
        q: {d: (-0.0 if s == 0 and rng.random() < 0.5 else s) for d, s in docs.items()} for q, docs in shifted.items()
    }
    assert any(math.copysign(1.0, s) < 0 and s == 0 for docs in signed.values() for s in docs.values())
    check(evaluate(qrels, signed, list(PAIRS)), reference(qrels, signed), list(PAIRS))
    rows = [(q, d, s) for q, docs in signed.items() for d, s in docs.items()]
    qids, docids, scores = zip(*rows, strict=True)
    ev = evaluate(Qrels.from_dict(qrels), Run.from_arrays(qids, docids, scores), list(PAIRS))
    check(ev, reference(qrels, {q: d for q, d in signed.items() if d}), list(PAIRS))


@pytest.mark.parametrize(
    ("run", "relevant", "rr"),
    [
        ({"a": 0.0, "b": -0.0}, "a", 1 / 2),  # a tie: b > a goes first
        ({"b": 0.0, "a": -0.0}, "a", 1 / 2),
        ({"a": -1.0, "b": -2.0}, "a", 1.0),  # -1 ranks above -2
        ({"a": -2.0, "b": -1.0}, "a", 1 / 2),
        ({"a": 2e-8, "b": 1e-8}, "b", 1 / 2),  # distinct in float32 however small: a first, though b > a
    ],
)
def test_signs_and_tiny_scores_by_hand(run: dict[str, float], relevant: str, rr: float) -> None:
    qrels = {"q": {relevant: 1}}
    assert evaluate(qrels, {"q": run}, ["mrr"]).per_query["mrr"][0] == rr
    assert pytrec_eval.RelevanceEvaluator(qrels, {"recip_rank"}).evaluate({"q": run})["q"]["recip_rank"] == rr
    arrays = Run.from_arrays(["q"] * len(run), list(run), list(run.values()))
    assert evaluate(qrels, arrays, ["mrr"]).per_query["mrr"][0] == rr


def test_chunks_bound_their_cells_and_leave_out_rows_without_targets(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(ranks_module, "CHUNK_ENTRIES", 64)
    lengths = np.array([3, 0, 4, 100, 100, 1, 20], dtype=np.int64)
    groups = [(width, rows.tolist()) for width, rows in ranks_module.chunks(lengths)]
    # widths: the length rounded up to a power of two (1, 4, 4, 128, 128, 32); 64 // 4 = 16 rows of width 4 fit in a
    # chunk, a row of width 128 is a chunk of its own (over the bound alone), two of width 32 would fit
    assert groups == [(1, [5]), (4, [0, 2]), (32, [6]), (128, [3]), (128, [4])]
    with_targets = [(w, r.tolist(), t.tolist()) for w, r, t in ranks_module.chunks_with(lengths, np.array([6, 2, 2]))]
    assert with_targets == [(4, [2], [1, 2]), (32, [6], [0])]


def test_targets_read_their_own_docids_without_an_index() -> None:
    targets = ranks_module.Targets(np.array([0, 0, 1]), np.array([1.0, 2.0, 3.0]), ["x", "y", "z"], None)
    assert targets.docids_of(np.array([2, 0])) == ["z", "x"]
    assert targets.take(np.array([2, 1])).docids_of(np.array([1])) == ["y"]
