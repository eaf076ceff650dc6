"""Judge-vs-human agreement and the PPI audit size in the evaluator's result, checked by hand and against references.

The golden set is the hand-built one of ``evaluate_fixture`` (judge labels: answer chunk 3, related chunk 1), with
a few extra judge labels; human labels are passed in as the audit store would give them. No model is called.
"""

from __future__ import annotations

import math
from pathlib import Path

import krippendorff
import numpy as np
import pytest
from evaluate_fixture import PRODUCTS, answer_id, care_id, good_lines, label, make_golden, qid, related_id, write_run

from assay import EvalSettings, evaluate
from assay.formats.golden import GoldenSet
from assay.metrics import agreement as ag
from assay.metrics.leniency import leniency
from assay.metrics.stats import norm_ppf
from assay.pipelines.evaluate.scoring.names import LLM_FAMILIES, family
from assay.pipelines.transfer import import_beir

FAST = EvalSettings(n_boot=200)
N = len(PRODUCTS)


def _golden(*extra: tuple[str, str, int | None]) -> GoldenSet:
    gold = make_golden()
    gold.add_labels([label(q, c, g) for q, c, g in extra])
    return gold


def _run(tmp_path: Path) -> Path:
    return write_run(tmp_path / "good.jsonl", good_lines(answers=False))


def test_agreement_hand_checked_on_a_tiny_case(tmp_path: Path) -> None:
    gold = _golden((qid(3), care_id(3), None))  # the judge left (q03, care) unscored
    human = {
        (qid(0), answer_id(0)): 3, (qid(1), answer_id(1)): 2, (qid(2), answer_id(2)): 3,   # judge 3, 3, 3
        (qid(0), related_id(0)): 1, (qid(1), related_id(1)): 0, (qid(2), related_id(2)): 1,  # judge 1, 1, 1
        (qid(3), care_id(3)): 2,  # judge unscored: counted, left out
        (qid(4), care_id(4)): 0,  # no judge label at all: not an agreement item
    }  # fmt: skip
    result, _ = evaluate(gold, [_run(tmp_path)], settings=FAST, human_labels=human)
    summary = result.agreement
    assert summary is not None and summary.n_items == 7
    block = summary.overall
    assert (block.n, block.n_unscored) == (6, 1)
    # judge [3,3,3,1,1,1], human [3,2,3,1,0,1]: p_o = 4/6. Marginals judge (0, 3/6, 0, 3/6), human (1, 2, 1, 2)/6:
    # p_e = 0.5 * 2/6 + 0.5 * 2/6 = 1/3, kappa = (2/3 - 1/3) / (1 - 1/3) = 1/2.
    assert block.percent_agreement is not None and block.percent_agreement.value == pytest.approx(2 / 3, abs=1e-6)
    assert block.cohen_kappa is not None and block.cohen_kappa.value == pytest.approx(0.5, abs=1e-6)
    # linear w = |i-j|/3: observed sum w O = 2 * 1/3; expected (sum_ij r_i c_j w_ij) / 6 = (3 * 6/3 + 3 * 8/3) / 6
    # = 7/3, so kappa = 1 - (2/3) / (7/3) = 5/7. Quadratic w = (i-j)^2/9: 2/9 against (3 * 10/9 + 3 * 18/9) / 6
    # = 14/9, so kappa = 1 - 1/7 = 6/7.
    assert block.weighted_kappa_linear is not None and block.weighted_kappa_linear.value == pytest.approx(5 / 7, 1e-5)
    assert block.weighted_kappa_quadratic is not None
    assert block.weighted_kappa_quadratic.value == pytest.approx(6 / 7, abs=1e-5)
    # leniency: differences 0, 1, 0, 0, 1, 0 -> 1/3 (the judge grades higher)
    assert block.leniency is not None and block.leniency.value == pytest.approx(1 / 3, abs=1e-6)
    expected_alpha = krippendorff.alpha(
        reliability_data=[[3, 3, 3, 1, 1, 1], [3, 2, 3, 1, 0, 1]], level_of_measurement="ordinal"
    )
    assert block.krippendorff_alpha is not None
    assert block.krippendorff_alpha.value == pytest.approx(expected_alpha, abs=1e-6)
    assert block.confusion_matrix == [[0, 0, 0, 0], [1, 2, 0, 0], [0, 0, 0, 0], [0, 0, 1, 2]]
    assert block.judge_histogram == [0, 3, 0, 3] and block.human_histogram == [1, 2, 2, 2]
    for stat in (block.cohen_kappa, block.leniency, block.percent_agreement):
        assert stat.low is not None and stat.high is not None and stat.low <= stat.value <= stat.high  # type: ignore[operator]


def _random_audit(rng: np.random.Generator) -> tuple[GoldenSet, dict[tuple[str, str], int]]:
    """Every question's three chunks graded by the judge at random, and a person's grade near it on most."""
    extra = [(qid(i), care_id(i), int(rng.integers(0, 4))) for i in range(N)]
    gold = _golden(*extra)
    judge = {(lab.query_id, lab.chunk_id): lab.grade for lab in gold.qrels}
    human = {}
    for pair, grade in sorted(judge.items()):
        if rng.random() < 0.8 and grade is not None:
            human[pair] = int(np.clip(grade + rng.choice([-1, 0, 0, 1]), 0, 3))
    return gold, human


def test_agreement_equals_metrics_agreement_on_the_same_pairs_overall_and_per_stratum(tmp_path: Path) -> None:
    gold, human = _random_audit(np.random.default_rng(5))
    judge = {(lab.query_id, lab.chunk_id): lab.grade for lab in gold.qrels}
    result, _ = evaluate(gold, [_run(tmp_path)], settings=FAST, human_labels=human)
    assert result.agreement is not None
    pairs = sorted(human)
    j = np.array([judge[p] for p in pairs], dtype=float)
    h = np.array([human[p] for p in pairs], dtype=float)
    overall = result.agreement.overall
    assert overall.n == len(pairs) and overall.cohen_kappa is not None
    assert overall.cohen_kappa.value == pytest.approx(ag.cohen_kappa(j, h), abs=1e-6)
    assert overall.weighted_kappa_quadratic.value == pytest.approx(ag.weighted_kappa(j, h), abs=1e-6)  # type: ignore[union-attr]
    assert overall.confusion_matrix == ag.confusion_matrix(j, h).tolist()
    types = {q.id: q.type for q in gold.questions}
    assert set(result.agreement.strata) == {"type", "difficulty"}
    for value, block in result.agreement.strata["type"].items():
        mask = np.array([types[p[0]] == value for p in pairs])
        assert block.n == int(mask.sum())
        assert block.cohen_kappa.value == pytest.approx(ag.cohen_kappa(j[mask], h[mask]), abs=1e-6)  # type: ignore[union-attr]
        assert block.leniency.value == pytest.approx(leniency(j[mask], h[mask]), abs=1e-6)  # type: ignore[union-attr]


def test_agreement_strata_are_the_per_query_strata(tmp_path: Path) -> None:
    # Edge cases where the two used to differ: a metadata key that shadows the type, and an empty field value.
    gold = make_golden()
    gold.questions[0].metadata.update({"type": "shadow", "team": ""})
    gold.questions[1].metadata["team"] = "billing"
    human = {(qid(0), answer_id(0)): 3, (qid(1), answer_id(1)): 2, (qid(2), answer_id(2)): 3}
    settings = EvalSettings(n_boot=200, strata=("team",))
    result, rows = evaluate(gold, [_run(tmp_path)], settings=settings, human_labels=human)
    assert result.agreement is not None
    per_query = {row.query_id: row.strata for row in rows}
    assert per_query[qid(0)] == {"type": gold.questions[0].type, "difficulty": per_query[qid(0)]["difficulty"]}
    assert per_query[qid(1)]["team"] == "billing"
    for field_name, blocks in result.agreement.strata.items():
        expected: dict[str, int] = {}
        for q, _ in human:
            value = per_query[q].get(field_name)
            if value is not None:
                expected[value] = expected.get(value, 0) + 1
        assert {value: block.n for value, block in blocks.items()} == expected, field_name


def test_agreement_between_annotators_and_nothing_audited(tmp_path: Path) -> None:
    gold = _golden()
    items = [(qid(i), answer_id(i)) for i in range(6)] + [(qid(i), related_id(i)) for i in range(6)]
    people = {"ann": [3, 3, 2, 3, 3, 3, 1, 0, 1, 1, 1, 2], "bob": [3, 2, 2, 3, 3, 3, 1, 1, 1, 0, 1, 2]}
    people["cy"] = [3, 3, 3, 3, 2, 3, 1, 0, 1, 1, 0, 2]
    annotations = {item: {who: grades[n] for who, grades in people.items()} for n, item in enumerate(items)}
    one = {item: int(np.median(list(g.values()))) for item, g in annotations.items()}  # three grades: the median
    result, _ = evaluate(gold, [_run(tmp_path)], settings=FAST, human_labels=one, annotations=annotations)
    humans = result.agreement.between_humans if result.agreement else None
    assert humans is not None and humans.annotators == ["ann", "bob", "cy"] and humans.n_items == 12
    expected = krippendorff.alpha(reliability_data=list(people.values()), level_of_measurement="ordinal")
    assert humans.krippendorff_alpha.value == pytest.approx(expected, abs=1e-6)
    fleiss = ag.fleiss_kappa(np.array(list(people.values()), dtype=float).T)
    assert humans.fleiss_kappa is not None and humans.fleiss_kappa.value == pytest.approx(fleiss, abs=1e-6)
    bare, _ = evaluate(gold, [_run(tmp_path)], settings=FAST)
    assert bare.agreement is None


def _ppi_half_width(n: int, sd_h: float, sd_j: float, rho: float, n_unl: int) -> float:
    """PPI++ half-width at the variance-minimizing lambda in [0, 1], written out from the paper's formulas."""
    lam = min(max(rho * sd_h / (sd_j * (1 + n / n_unl)), 0.0), 1.0) if sd_j > 0 else 0.0
    var = (sd_h**2 - 2 * lam * rho * sd_h * sd_j + lam**2 * sd_j**2) / n + lam**2 * sd_j**2 / n_unl
    return norm_ppf(0.975) * math.sqrt(var)


def test_audit_size_for_target_half_widths(tmp_path: Path) -> None:
    # judge grades: answer 3, related 1, and the next product's answer chunk 0 (the run's fourth chunk)
    gold = _golden(*((qid(i), answer_id((i + 1) % N), 0) for i in range(N)))
    human = {(qid(i), answer_id(i)): 2 if i == 1 else 3 for i in range(N)}
    human |= {(qid(i), related_id(i)): 1 if i % 2 == 0 else 0 for i in range(6)}
    human |= {(qid(i), answer_id(i + 1)): 2 if i == 0 else 0 for i in range(4)}
    result, _ = evaluate(gold, [_run(tmp_path)], settings=FAST, human_labels=human)
    five = next(c for c in result.corrected if c.metric == "pair_precision@5")
    assert (five.n_audited, five.n_unaudited) == (22, 26)  # 48 pairs in the top 5; the 12 care chunks unlabelled
    # relevance (grade >= 1) of the audited pairs: answers 12 x (1, 1); related (1,1) x 3 and (0,1) x 3;
    # cross (1, 0) x 1 and (0, 0) x 3
    y = np.array([1.0] * 12 + [1, 0] * 3 + [1, 0, 0, 0])
    yhat = np.array([1.0] * 12 + [1] * 6 + [0] * 4)
    sd_h, sd_j, rho = np.std(y, ddof=1), np.std(yhat, ddof=1), np.corrcoef(y, yhat)[0, 1]
    assert (five.sd_human, five.sd_judge, five.correlation) == pytest.approx((sd_h, sd_j, rho), abs=1e-6)
    # judge relevance of the 26 unaudited pairs: 12 care chunks (no label: 0), related of q06..q11 (1), next answers
    # of q04..q11 (0); judge only = (12 answers + 12 related) / 48. PPI++ written out from its formulas (ddof 1):
    rest = np.array([0.0] * 12 + [1.0] * 6 + [0.0] * 8)
    assert five.judge_only == pytest.approx(24 / 48, abs=1e-6)
    s, s_u = np.cov(y, yhat, ddof=1), np.var(rest, ddof=1)
    lam = min(max((s[0, 1] / 22) / (s[1, 1] / 22 + s_u / 26), 0.0), 1.0)
    estimate = np.mean(y - lam * yhat) + lam * np.mean(rest)
    half = norm_ppf(0.975) * math.sqrt((s[0, 0] - 2 * lam * s[0, 1] + lam**2 * s[1, 1]) / 22 + lam**2 * s_u / 26)
    assert (five.lambda_, five.estimate) == pytest.approx((lam, estimate), abs=1e-6)
    assert (five.low, five.high) == pytest.approx((estimate - half, estimate + half), abs=1e-6)
    assert [t.half_width for t in five.audit_targets] == [0.05, 0.025]
    for target in five.audit_targets:
        n = target.n_needed
        assert n is not None and target.n_more == max(0, n - 22)
        assert (
            _ppi_half_width(n, sd_h, sd_j, rho, 26) <= target.half_width < _ppi_half_width(n - 1, sd_h, sd_j, rho, 26)
        )
    assert five.audit_targets[1].n_needed > five.audit_targets[0].n_needed  # type: ignore[operator]


def test_audit_size_not_estimated_from_a_pilot_without_spread(tmp_path: Path) -> None:
    gold = _golden()
    human = {(qid(i), answer_id(i)): 3 for i in range(N)}  # every audited pair relevant: sd 0
    result, _ = evaluate(gold, [_run(tmp_path)], settings=FAST, human_labels=human)
    five = next(c for c in result.corrected if c.metric == "pair_precision@5")
    assert five.sd_human == 0.0
    assert all(t.n_needed is None and "all equal" in t.note for t in five.audit_targets)


def test_a_human_labelled_golden_set_evaluates_quietly_with_judged_at_k(tmp_path: Path) -> None:
    """Human qrels, no judge: no PPI note, no agreement, no correction; judged@k and where the labels came from."""
    gold = make_golden("human")
    result, _ = evaluate(gold, [_run(tmp_path)], settings=FAST)
    assert result.label_origin == "human" and result.label_sources == {"human": 2 * N}
    assert result.agreement is None and result.corrected == [] and result.warnings == []
    assert result.runs[0].judged_at_k["10"] == 0.5  # answer and related judged; care and the next answer not


def test_judge_labels_beside_human_ones_are_mixed_and_ppi_waits_for_an_audit(tmp_path: Path) -> None:
    gold = make_golden("human")
    gold.add_labels([label(qid(i), care_id(i), 2, "judge") for i in range(N)])
    result, _ = evaluate(gold, [_run(tmp_path)], settings=FAST)
    assert result.label_origin == "mixed" and result.label_sources == {"human": 2 * N, "judge": N}
    assert result.corrected == [] and not any("PPI" in w for w in result.warnings)  # one audit line says it
    assert make_golden("judge").label_origin() == "judge"


def test_an_imported_ir_collection_shows_no_metric_it_cannot_have(tmp_path: Path) -> None:
    """BEIR qrels: no nuggets, reference answers or run answers, so no always-unscored judged metric by default."""
    gold = import_beir(Path(__file__).parents[2] / "fixtures" / "transfer" / "beir", source="human").golden
    lines = [{"query_id": q.id, "retrieved": [c.id for c in gold.chunks]} for q in gold.questions]
    run = write_run(tmp_path / "run.jsonl", lines)
    result, _ = evaluate(gold, [run], settings=FAST)
    names = list(result.runs[0].metrics)
    assert "ndcg@10" in names and not [n for n in names if family(n) in LLM_FAMILIES]
    assert result.runs[0].strata == {}  # every imported query has type "unknown": one value, no table
    by_type, _ = evaluate(gold, [run], settings=EvalSettings(n_boot=200, strata=("type",)))
    assert list(by_type.runs[0].strata) == ["type"]  # asked for, so kept
    asked, _ = evaluate(gold, [run], settings=EvalSettings(n_boot=200, metrics=("coverage_recall@5",)))
    summary = asked.runs[0].metrics["coverage_recall@5"]  # named: computed, and unscored for a reason
    assert summary.n_scored == 0 and summary.unscored_reasons == {"no_nugget_support": len(gold.questions)}
