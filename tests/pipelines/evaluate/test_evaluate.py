"""The evaluator without a judge: trec_eval-exact ranking metrics, run counts, malformed runs, curves, strata."""

from __future__ import annotations

import random
import re
from pathlib import Path

import pytest
import pytrec_eval
from evaluate_fixture import (
    PRODUCTS,
    answer_id,
    care_id,
    good_lines,
    label,
    make_golden,
    qid,
    related_id,
    save_golden,
    weak_lines,
    write_run,
)

from assay import EvalSettings, evaluate
from assay.errors import ConfigError, FormatError, InputError
from assay.pipelines.evaluate import evaluate_detailed

N = len(PRODUCTS)
# assay name -> trec_eval name, for every measure both have
TREC_NAMES = {
    **{f"ndcg@{k}": f"ndcg_cut_{k}" for k in (1, 3, 5, 10)},
    **{f"P@{k}": f"P_{k}" for k in (1, 3, 5, 10)},
    **{f"recall@{k}": f"recall_{k}" for k in (1, 3, 5, 10)},
    **{f"map@{k}": f"map_cut_{k}" for k in (1, 3, 5, 10)},
    **{f"hit@{k}": f"success_{k}" for k in (1, 5, 10)},
    "map": "map",
    "mrr": "recip_rank",
    "ndcg": "ndcg",
    "rprec": "Rprec",
    "bpref": "bpref",
}
FAST = EvalSettings(n_boot=200)


def _random_human_golden(folder: Path, rng: random.Random) -> dict[str, dict[str, int]]:
    """The fixture golden set with random graded human qrels (at least one relevant chunk per question)."""
    golden = make_golden()
    chunk_ids = [c.id for c in golden.chunks]
    qrels: dict[str, dict[str, int]] = {}
    for i in range(N):
        picked = rng.sample(chunk_ids, 8)
        grades = [rng.choice([0, 0, 1, 2, 3]) for _ in picked]
        grades[0] = rng.choice([1, 2, 3])
        qrels[qid(i)] = dict(zip(picked, grades, strict=True))
    golden.qrels = [label(q, c, g, "human") for q, chunks in qrels.items() for c, g in chunks.items()]
    golden.save(folder)
    return qrels


def _random_run(path: Path, rng: random.Random, chunk_ids: list[str]) -> dict[str, dict[str, float]]:
    """A scored run with ties (scores on a coarse grid), so trec_eval's tie-breaking matters."""
    run: dict[str, dict[str, float]] = {}
    lines = []
    for i in range(N):
        picked = rng.sample(chunk_ids, rng.randint(3, 15))
        scores = [float(rng.randint(1, 6)) / 2 for _ in picked]
        run[qid(i)] = dict(zip(picked, scores, strict=True))
        lines.append(
            {"query_id": qid(i), "retrieved": [{"id": c, "score": s} for c, s in zip(picked, scores, strict=True)]}
        )
    write_run(path, lines)
    return run


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_ranking_metrics_equal_pytrec_eval_on_human_qrels(tmp_path: Path, seed: int) -> None:
    rng = random.Random(seed)
    qrels = _random_human_golden(tmp_path / "golden", rng)
    chunk_ids = [c.id for c in make_golden().chunks]
    run = _random_run(tmp_path / "run.jsonl", rng, chunk_ids)
    _, rows = evaluate(tmp_path / "golden", [tmp_path / "run.jsonl"], judge=None, settings=FAST)
    expected = pytrec_eval.RelevanceEvaluator(qrels, set(TREC_NAMES.values())).evaluate(run)
    assert {row.query_id for row in rows} == set(expected)
    for row in rows:
        for ours, theirs in TREC_NAMES.items():
            assert row.metrics[ours] == pytest.approx(expected[row.query_id][theirs], abs=1e-12), (ours, row.query_id)


def test_trec_run_gives_the_same_values_as_the_jsonl_run(tmp_path: Path) -> None:
    rng = random.Random(7)
    _random_human_golden(tmp_path / "golden", rng)
    run = _random_run(tmp_path / "run.jsonl", rng, [c.id for c in make_golden().chunks])
    trec = [f"{q} Q0 {c} 0 {s} sys" for q, docs in run.items() for c, s in docs.items()]
    (tmp_path / "run.txt").write_text("\n".join(trec) + "\n")
    _, from_jsonl = evaluate(tmp_path / "golden", [tmp_path / "run.jsonl"], settings=FAST)
    _, from_trec = evaluate(tmp_path / "golden", [("trec", tmp_path / "run.txt")], settings=FAST)
    assert [r.metrics for r in from_jsonl] == [r.metrics for r in from_trec]


def test_counts_of_what_the_run_gets_wrong(tmp_path: Path) -> None:
    golden = save_golden(tmp_path / "golden")
    lines = [
        {"query_id": qid(0), "retrieved": [answer_id(0), "nowhere#1", answer_id(0), related_id(0)]},  # unknown + dup
        {"query_id": qid(1), "retrieved": []},  # empty
        {"query_id": "q-unknown", "retrieved": [answer_id(1)]},
        {"query_id": qid(2), "retrieved": [answer_id(2)], "answer": "The answer."},
        {"query_id": qid(2), "retrieved": [care_id(2)]},  # the same query again: the first line stands
    ]
    result, rows = evaluate(golden, [write_run(tmp_path / "run.jsonl", lines)], settings=FAST)
    counts = result.runs[0].counts
    assert counts.lines == 5
    assert counts.unknown_query_ids == 1
    assert counts.unknown_chunk_ids == 1
    assert counts.duplicate_ids == 2
    assert counts.empty_retrieved == 1
    assert counts.missing_queries == N - 3
    assert counts.queries_evaluated == 3
    assert counts.with_answer == 1
    by_query = {row.query_id: row for row in rows}
    assert set(by_query) == {qid(0), qid(1), qid(2)}
    assert by_query[qid(1)].metrics["ndcg@10"] == 0.0  # an empty list scores 0, it is not left out
    assert by_query[qid(2)].metrics["P@1"] == 1.0  # the first line of q02, not the second
    # q00: answer (3), unknown (not relevant), related (1): DCG = 3 + 1/log2(4) = 3.5, IDCG = 3 + 1/log2(3)
    assert by_query[qid(0)].metrics["ndcg@3"] == pytest.approx(3.5 / (3 + 1 / 1.5849625007211563))
    assert any("not chunks of the golden set" in w for w in result.warnings)


@pytest.mark.parametrize(
    ("line", "problem"),
    [
        ('{"query_id": "q00", "retrieved": "d00#0-ans"}', "retrieved"),
        ('{"query_id": "q00", "retrieved": [{"id": "a", "score": 1}, {"id": "b"}]}', "1 of 2 items have a score"),
        ('{"query_id": "q00", "retrieved": [', "invalid JSON"),
        ('{"retrieved": []}', "query_id"),
    ],
)
def test_a_malformed_line_names_file_and_line(tmp_path: Path, line: str, problem: str) -> None:
    golden = save_golden(tmp_path / "golden")
    path = write_run(tmp_path / "run.jsonl", [good_lines()[0], line])
    with pytest.raises(FormatError) as caught:
        evaluate(golden, [path], settings=FAST)
    assert f"{path}:3" in str(caught.value) and problem in str(caught.value)


def test_a_malformed_trec_line_names_file_and_line(tmp_path: Path) -> None:
    golden = save_golden(tmp_path / "golden")
    path = tmp_path / "run.txt"
    path.write_text(f"q00 Q0 {answer_id(0)} 1 2.5 sys\nq00 Q0 {care_id(0)} 2 high sys\n")
    with pytest.raises(FormatError, match=r"run\.txt:2: score 'high' is not a number"):
        evaluate(golden, [path], settings=FAST)


def test_two_runs_with_one_name_and_a_missing_run_are_input_errors(tmp_path: Path) -> None:
    golden = save_golden(tmp_path / "golden")
    (tmp_path / "a").mkdir()
    one = write_run(tmp_path / "run.jsonl", good_lines())
    two = write_run(tmp_path / "a" / "run.jsonl", weak_lines())
    with pytest.raises(InputError, match="NAME=PATH"):
        evaluate(golden, [one, two], settings=FAST)
    with pytest.raises(InputError, match="does not exist"):
        evaluate(golden, [tmp_path / "nope.jsonl"], settings=FAST)


def test_no_judge_keeps_trec_eval_convention_and_reports_judged_at_k(tmp_path: Path) -> None:
    golden = save_golden(tmp_path / "golden")
    before = (golden / "qrels.jsonl").read_text()
    result, rows = evaluate(golden, [write_run(tmp_path / "good.jsonl", good_lines())], settings=FAST)
    run = result.runs[0]
    assert result.judge is None
    # good run per query: answer (3), care (unjudged), related (1), next answer (unjudged for this question)
    assert run.judged_at_k == {"1": 1.0, "3": pytest.approx(2 / 3), "5": 0.5, "10": 0.5}
    assert run.grade_histogram == {"0": 0, "1": N, "2": 0, "3": N, "unscored": 0, "unjudged": 2 * N}
    assert not any(name.startswith(("faithfulness", "context_recall", "ragas")) for name in run.metrics)
    assert run.metrics["P@3"].mean == pytest.approx(2 / 3)  # the unjudged care chunk counts as not relevant
    assert (golden / "qrels.jsonl").read_text() == before  # nothing judged, nothing written
    assert all(row.metrics["coverage_recall@1"] == 1.0 for row in rows)  # label-based, no call


def test_curves_match_the_metrics_at_each_k(tmp_path: Path) -> None:
    rng = random.Random(11)
    _random_human_golden(tmp_path / "golden", rng)
    _random_run(tmp_path / "run.jsonl", rng, [c.id for c in make_golden().chunks])
    result, _ = evaluate(tmp_path / "golden", [tmp_path / "run.jsonl"], settings=FAST)
    run = result.runs[0]
    assert sorted(run.curves["ndcg"], key=int) == [str(k) for k in range(1, 11)]
    for family in ("ndcg", "P", "recall", "hit", "map", "err"):
        for k in (1, 3, 5, 10):
            assert run.curves[family][str(k)] == pytest.approx(run.metrics[f"{family}@{k}"].mean, abs=1e-6)
    assert len(run.pr_curve) == 11 and run.pr_curve == sorted(run.pr_curve, reverse=True)


def test_unanswerable_questions_are_unscored_not_zero(tmp_path: Path) -> None:
    golden = make_golden()
    golden.qrels = [q for q in golden.qrels if q.query_id != qid(0)]
    golden.save(tmp_path / "golden")
    result, rows = evaluate(tmp_path / "golden", [write_run(tmp_path / "good.jsonl", good_lines())], settings=FAST)
    row = next(r for r in rows if r.query_id == qid(0))
    assert row.metrics["ndcg@10"] is None and row.unscored["ndcg@10"] == "no_relevant_chunks"
    summary = result.runs[0].metrics["ndcg@10"]
    assert summary.n_scored == N - 1 and summary.n_unscored == 1
    assert summary.unscored_reasons == {"no_relevant_chunks": 1}


def test_strata_by_type_difficulty_and_metadata(tmp_path: Path) -> None:
    golden = save_golden(tmp_path / "golden")
    settings = EvalSettings(n_boot=200, strata=("product",))
    result, rows = evaluate(golden, [write_run(tmp_path / "weak.jsonl", weak_lines())], settings=settings)
    strata = result.runs[0].strata
    assert set(strata) == {"type", "difficulty", "product"}
    assert set(strata["type"]) == {"factoid", "numeric", "procedural"}
    numeric = [r.metrics["ndcg@10"] for r in rows if r.strata["type"] == "numeric"]
    assert strata["type"]["numeric"]["ndcg@10"].mean == pytest.approx(sum(numeric) / len(numeric), abs=1e-6)  # type: ignore[arg-type]
    assert strata["type"]["numeric"]["ndcg@10"].n_scored == len(numeric)


def test_chosen_metrics_only(tmp_path: Path) -> None:
    golden = save_golden(tmp_path / "golden")
    settings = EvalSettings(n_boot=200, metrics=("ndcg@10", "recall@5|g>=2"))
    done = evaluate_detailed(golden, [write_run(tmp_path / "good.jsonl", good_lines())], settings=settings)
    assert list(done.result.runs[0].metrics) == ["ndcg@10", "recall@5|g>=2"]
    assert done.result.runs[0].metrics["recall@5|g>=2"].mean == 1.0  # only the answer chunk has grade >= 2


def test_a_named_metric_is_computed_whatever_k_says(tmp_path: Path) -> None:
    rng = random.Random(5)
    qrels = _random_human_golden(tmp_path / "golden", rng)
    run = _random_run(tmp_path / "run.jsonl", rng, [c.id for c in make_golden().chunks])
    settings = EvalSettings(n_boot=200, k_values=(10,), metrics=("P@5", "ndcg@7", "ndcg@10"))
    assert settings.checked().k_values == (5, 7, 10)  # the named cut-offs join k
    result, rows = evaluate(tmp_path / "golden", [tmp_path / "run.jsonl"], settings=settings)
    assert list(result.runs[0].metrics) == ["P@5", "ndcg@7", "ndcg@10"] and result.k_values == [5, 7, 10]
    expected = pytrec_eval.RelevanceEvaluator(qrels, {"P_5", "ndcg_cut_7", "ndcg_cut_10"}).evaluate(run)
    for row in rows:
        assert row.metrics["P@5"] == pytest.approx(expected[row.query_id]["P_5"], abs=1e-12)
        assert row.metrics["ndcg@7"] == pytest.approx(expected[row.query_id]["ndcg_cut_7"], abs=1e-12)


@pytest.mark.parametrize(
    ("name", "message"),
    [
        ("ndgc@10", "unknown metric 'ndgc@10'; close names: ndcg@10"),
        ("faithfulnes", "close names: faithfulness"),
        ("P", "'P': measure 'P' needs a cutoff, e.g. P@5"),
        ("ragas_context_precision@x", "write ragas_context_precision@K with K a whole number >= 1"),
    ],
)
def test_an_unknown_metric_is_refused_before_any_work(tmp_path: Path, name: str, message: str) -> None:
    with pytest.raises(ConfigError, match=re.escape(message)):
        EvalSettings(metrics=("ndcg@10", name)).checked()
    golden = save_golden(tmp_path / "golden")
    before = (golden / "qrels.jsonl").read_text()
    with pytest.raises(ConfigError, match=re.escape(message)):  # checked before the runs are even read
        evaluate(golden, [tmp_path / "missing.jsonl"], settings=EvalSettings(metrics=(name,)))
    assert (golden / "qrels.jsonl").read_text() == before


def test_a_judged_metric_named_without_a_judge_is_an_error_not_a_silent_gap(tmp_path: Path) -> None:
    golden = save_golden(tmp_path / "golden")
    run = write_run(tmp_path / "good.jsonl", good_lines())
    with pytest.raises(ConfigError, match="faithfulness: LLM-judged, needs a judge"):
        evaluate(golden, [run], settings=EvalSettings(n_boot=200, metrics=("ndcg@10", "faithfulness")))
    result, _ = evaluate(golden, [run], settings=EvalSettings(n_boot=200, metrics=("coverage_recall@2",)))
    assert list(result.runs[0].metrics) == ["coverage_recall@1", "coverage_recall@2", "coverage_recall@3",
                                            "coverage_recall@5", "coverage_recall@10"]  # fmt: skip


def _sign_flip_p(diffs: list[float]) -> float:
    """Exact two-sided sign-flip p-value, by enumerating every sign vector (independent of assay.metrics.stats)."""
    n = len(diffs)
    observed = abs(sum(diffs)) / n
    hits = 0
    for code in range(2**n):
        total = sum(d if (code >> i) & 1 else -d for i, d in enumerate(diffs))
        hits += abs(total) / n >= observed - 1e-12
    return hits / 2**n


def _mixed_lines() -> list[dict[str, object]]:
    """The good run on even queries, the weak one on odd queries."""
    return [g if i % 2 == 0 else w for i, (g, w) in enumerate(zip(good_lines(), weak_lines(), strict=True))]


def test_comparisons_one_holm_family_per_metric_over_the_pairs(tmp_path: Path) -> None:
    golden = save_golden(tmp_path / "golden")
    runs = [write_run(tmp_path / "good.jsonl", good_lines()), write_run(tmp_path / "weak.jsonl", weak_lines()),
            write_run(tmp_path / "mixed.jsonl", _mixed_lines())]  # fmt: skip
    settings = EvalSettings(n_boot=200, metrics=("ndcg@10", "mrr", "hit@10"))
    result, rows = evaluate(golden, runs, settings=settings)
    by = {(r.run, r.query_id): r.metrics for r in rows}
    pairs = [("good", "weak"), ("good", "mixed"), ("weak", "mixed")]
    assert result.primary_metric == "ndcg@10"
    assert [(c.metric, c.a, c.b) for c in result.comparisons][:3] == [("ndcg@10", a, b) for a, b in pairs]
    for name in ("ndcg@10", "mrr", "hit@10"):
        comps = {(c.a, c.b): c for c in result.comparisons if c.metric == name}
        raw = {}
        for (a, b), comp in comps.items():
            diffs = [by[(b, qid(i))][name] - by[(a, qid(i))][name] for i in range(N)]  # type: ignore[operator]
            assert comp.n == N and comp.family_size == 3 and comp.correction == "holm" and comp.exact
            assert comp.delta == pytest.approx(sum(diffs) / N, abs=1e-6)
            assert (comp.wins, comp.ties, comp.losses) == (
                sum(d > 0 for d in diffs), sum(d == 0 for d in diffs), sum(d < 0 for d in diffs))  # fmt: skip
            raw[(a, b)] = _sign_flip_p(diffs)
            assert comp.p_value == pytest.approx(raw[(a, b)], abs=1e-6)
            assert comp.primary == (name == "ndcg@10")
        # Holm by hand over the 3 pairs of this one metric: sorted p ascending, times 3, 2, 1, running max, cap 1
        running = 0.0
        for i, pair in enumerate(sorted(raw, key=raw.__getitem__)):
            running = max(running, min(1.0, (3 - i) * raw[pair]))
            assert comps[pair].p_adjusted == pytest.approx(running, abs=1e-6)
            assert comps[pair].significant == (running <= 0.05) == (comps[pair].low > 0 or comps[pair].high < 0)
    ndcg = next(c for c in result.comparisons if c.metric == "ndcg@10" and c.b == "weak")
    assert ndcg.significant and ndcg.verdict.startswith("good beats weak on ndcg@10 by ")
    assert ndcg.verdict.endswith("adjusted, Holm over 3 pairs.")
    hit = next(c for c in result.comparisons if c.metric == "hit@10" and c.b == "weak")
    assert not hit.significant  # both runs find a relevant chunk in every top 10
    assert hit.verdict.startswith("no significant difference between weak and good on hit@10")


def test_comparisons_against_a_baseline_and_a_chosen_primary(tmp_path: Path) -> None:
    golden = save_golden(tmp_path / "golden")
    runs = [write_run(tmp_path / "good.jsonl", good_lines()), write_run(tmp_path / "weak.jsonl", weak_lines()),
            write_run(tmp_path / "mixed.jsonl", _mixed_lines())]  # fmt: skip
    settings = EvalSettings(n_boot=200, metrics=("ndcg@10", "mrr"), baseline="weak", primary="mrr")
    result, _ = evaluate(golden, runs, settings=settings)
    assert [(c.metric, c.a, c.b, c.family_size) for c in result.comparisons] == [
        ("mrr", "weak", "good", 2), ("mrr", "weak", "mixed", 2),
        ("ndcg@10", "weak", "good", 2), ("ndcg@10", "weak", "mixed", 2),
    ]  # fmt: skip
    assert result.primary_metric == "mrr"
    with pytest.raises(ConfigError, match="--baseline nope: no run"):
        evaluate(golden, runs, settings=EvalSettings(n_boot=200, metrics=("mrr",), baseline="nope"))
    chosen, _ = evaluate(golden, runs, settings=EvalSettings(n_boot=200, metrics=("mrr",), primary="P@3"))
    assert chosen.primary_metric == "P@3" and 3 in chosen.k_values  # a named primary is computed, as -m's are
    with pytest.raises(ConfigError, match="unknown metric 'P@3x'"):
        EvalSettings(primary="P@3x").checked()
    with pytest.raises(ConfigError, match="--correction bonferroni"):
        EvalSettings(correction="bonferroni").checked()


def test_tukey_family_matches_its_definition(tmp_path: Path) -> None:
    golden = save_golden(tmp_path / "golden")
    runs = [write_run(tmp_path / "good.jsonl", good_lines()), write_run(tmp_path / "weak.jsonl", weak_lines()),
            write_run(tmp_path / "mixed.jsonl", _mixed_lines())]  # fmt: skip
    result, rows = evaluate(golden, runs, settings=EvalSettings(n_boot=200, metrics=("mrr",), correction="tukey"))
    by = {(r.run, r.query_id): r.metrics["mrr"] for r in rows}
    names = ["good", "weak", "mixed"]
    scores = [[by[(run, qid(i))] for run in names] for i in range(N)]
    rng = random.Random(3)
    draws = []
    for _ in range(4000):  # rows permuted across the runs; the largest pairwise gap of the means
        shuffled = [rng.sample(row, 3) for row in scores]
        means = [sum(row[j] for row in shuffled) / N for j in range(3)]  # type: ignore[misc]
        draws.append(max(abs(means[i] - means[j]) for i in range(3) for j in range(i + 1, 3)))
    for comp in result.comparisons:
        assert comp.correction == "tukey" and comp.resamples >= 10_000 and not comp.exact
        want = sum(d >= abs(comp.delta) - 1e-12 for d in draws) / len(draws)
        assert comp.p_adjusted == pytest.approx(want, abs=4 * max(comp.p_mc_error or 0, 0.008))
        assert comp.significant == (comp.p_adjusted <= 0.05) == (comp.low > 0 or comp.high < 0)


def test_a_run_compared_with_itself_differs_in_nothing(tmp_path: Path) -> None:
    golden = save_golden(tmp_path / "golden")
    path = write_run(tmp_path / "weak.jsonl", weak_lines())
    result, _ = evaluate(golden, [("a", path), ("b", path)], settings=FAST)
    assert result.comparisons and all(not c.significant and c.delta == 0.0 for c in result.comparisons)
    assert all(c.p_value == 1.0 for c in result.comparisons)


def test_a_primary_metric_outside_the_headline_leads_the_comparisons(tmp_path: Path) -> None:
    golden = save_golden(tmp_path / "golden")
    runs = [write_run(tmp_path / "good.jsonl", good_lines()), write_run(tmp_path / "weak.jsonl", weak_lines())]
    result, _ = evaluate(golden, runs, settings=EvalSettings(n_boot=200, primary="ndcg@5"))
    assert result.primary_metric == "ndcg@5"
    assert result.comparisons[0].metric == "ndcg@5" and result.comparisons[0].primary
    assert [c.metric for c in result.comparisons if c.primary] == ["ndcg@5"]
    assert "ndcg@10" in {c.metric for c in result.comparisons}  # the headline metrics stay, as secondary
