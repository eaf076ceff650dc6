"""A judged criterion against people (assay.pipelines.evaluate.statistics.criteria), hand-computed: the quadratic
weighted kappa of an ordered scale, Cohen's kappa of pass/fail, the confusion matrix, the audited items the judge
left unscored, the validated threshold, and PPI++ with unaudited verdicts."""

from __future__ import annotations

from pathlib import Path

import pytest

from assay.judge.criteria import Criterion, parse_criterion
from assay.metrics import agreement, ppi
from assay.pipelines.evaluate.statistics.criteria import criteria_agreement, criterion_agreement, label_agreement
from assay.results import AgreementStat, CriterionVerdictRecord

SCALE = """+++
name = "depth"
version = "1"
inputs = ["answer"]
[[scale]]
label = "deep"
description = "explains why"
score = 2.0
[[scale]]
label = "none"
description = "says nothing"
score = 0.0
[[scale]]
label = "some"
description = "states it"
score = 1.0
+++
How deep is the answer?
"""
PASS_FAIL = """+++
name = "ok"
version = "1"
inputs = ["answer"]
scale = "pass_fail"
+++
Is it fine?
"""


B = {"confidence": 0.95, "n_resamples": 500, "seed": 0}


def _criterion(text: str, tmp_path: Path) -> Criterion:
    return parse_criterion(text.encode(), tmp_path / "c.md")


def _verdict(item: str, label: str | None, run: str = "r", ref: str = "ok@1") -> CriterionVerdictRecord:
    scores = {"pass": 1.0, "fail": 0.0, "deep": 2.0, "some": 1.0, "none": 0.0}
    return CriterionVerdictRecord(run=run, query_id=item, criterion=ref.partition("@")[0], ref=ref, item=item,
                                  label=label, score=scores.get(label or ""),
                                  unscored=None if label else "invalid_output")  # fmt: skip


def test_an_ordered_scale_gets_the_quadratic_weighted_kappa(tmp_path: Path) -> None:
    """Positions none 0, some 1, deep 2 (by score, not file order). (judge, people): (0,0) (1,1) (2,2) (2,1) (0,1)
    (1,1). Weights ((i-j)/2)^2; observed weighted disagreement 0.25 + 0.25 = 0.5; judge rows 2/2/2, people columns
    1/4/1, expected sum_ij w_ij r_i c_j / 6 = 1.5; kappa = 1 - 0.5 / 1.5 = 2/3; exact agreement 4/6."""
    criterion = _criterion(SCALE, tmp_path)
    pairs = [("none", "none"), ("some", "some"), ("deep", "deep"), ("deep", "some"), ("none", "some"),
             ("some", "some")]  # fmt: skip
    verdicts = [_verdict(f"i{n}", judge, ref="depth@1") for n, (judge, _) in enumerate(pairs)]
    people = {f"i{n}": human for n, (_, human) in enumerate(pairs)}
    found = criterion_agreement(criterion, verdicts, people, min_audited=6, **B)
    assert found.labels == ["none", "some", "deep"] and found.statistic == "weighted_kappa"
    assert found.kappa.value == pytest.approx(2 / 3, abs=1e-6)
    assert found.percent.value == pytest.approx(4 / 6, abs=1e-6)
    assert found.confusion == [[1, 1, 0], [0, 2, 0], [0, 1, 1]]
    assert found.n == 6 and found.validated is True
    assert criterion_agreement(criterion, verdicts, people, min_audited=7, **B).validated is False


def test_pass_fail_gets_cohens_kappa_and_unscored_items_are_counted_apart() -> None:
    # judge pass pass fail fail, people pass fail fail fail: p_o 3/4; marginals judge 1/2 pass, people 1/4 pass;
    # p_e = 1/2 x 1/4 + 1/2 x 3/4 = 1/2; kappa = (3/4 - 1/2) / (1/2) = 1/2
    found = label_agreement(["fail", "pass"], [("pass", "pass"), ("pass", "fail"), ("fail", "fail"),
                                               ("fail", "fail"), (None, "pass")], **B)  # fmt: skip
    assert found.statistic == "kappa" and found.kappa.mean == pytest.approx(0.5)
    assert (found.n, found.judge_unscored) == (4, 1)
    assert found.confusion == [[2, 0], [1, 1]]
    nothing = label_agreement(["fail", "pass"], [(None, "pass")], **B)
    assert nothing.n == 0 and nothing.confusion == [[0, 0], [0, 0]] and nothing.kappa is None


def test_ppi_corrects_a_run_with_unaudited_verdicts(tmp_path: Path) -> None:
    """Audited (judge = people): pass fail pass fail, mean 0.5, sample variance 1/3; unaudited judge verdicts pass
    pass pass fail, mean 0.75, variance 1/4. lambda = (1/3 / 4) / (1/3 / 4 + 1/4 / 4) = 4/7; estimate = lambda x 0.75
    + (1 - lambda) x 0.5 = 0.5 + 0.25 x 4/7."""
    criterion = _criterion(PASS_FAIL, tmp_path)
    audited = ["pass", "fail", "pass", "fail"]
    verdicts = [_verdict(f"a{n}", label) for n, label in enumerate(audited)]
    verdicts += [_verdict(f"u{n}", label) for n, label in enumerate(["pass", "pass", "pass", "fail"])]
    verdicts += [_verdict("x", None)]  # unscored by the judge: in neither part
    verdicts += [_verdict(f"b{n}", "pass", run="small") for n in range(3)]  # 3 audited < 4: no PPI
    people = {f"a{n}": label for n, label in enumerate(audited)} | {f"b{n}": "pass" for n in range(3)}
    found = criterion_agreement(criterion, verdicts, people, min_audited=4, **B)
    [ppi] = found.ppi
    assert ppi.run == "r" and (ppi.n_audited, ppi.n_unaudited) == (4, 4)
    assert ppi.estimate == round(0.5 + 0.25 * 4 / 7, 6)  # results keep 6 decimals
    assert ppi.judge_only == pytest.approx(5 / 8)
    assert 0.0 <= ppi.low < ppi.estimate < ppi.high <= 1.0


def test_only_criteria_people_labelled_are_reported(tmp_path: Path) -> None:
    ok = _criterion(PASS_FAIL, tmp_path)
    depth = _criterion(SCALE, tmp_path)
    verdicts = [_verdict("i1", "pass"), _verdict("i2", "deep", ref="depth@1")]
    found = criteria_agreement([ok, depth], verdicts, {"i1": "fail"}, min_audited=10, **B)
    assert [one.criterion for one in found] == ["ok"]
    assert found[0].n == 1 and found[0].validated is False and found[0].needed == 10


def test_the_level_resamples_and_seed_reach_every_interval(tmp_path: Path) -> None:
    """The intervals are the metrics' own (assay.metrics.agreement, assay.metrics.ppi) at the level, resamples and
    seed asked; the audited items the judge left unscored are counted beside them."""
    criterion = _criterion(PASS_FAIL, tmp_path)
    judge = ["pass", "pass", "fail", "fail", "pass", "fail", "pass", "pass"]
    people = ["pass", "fail", "fail", "fail", "pass", "pass", "pass", "fail"]
    verdicts = [_verdict(f"i{n}", label) for n, label in enumerate(judge)] + [_verdict("u", None)]
    labels = {f"i{n}": label for n, label in enumerate(people)} | {"u": "pass"}
    asked = {"confidence": 0.8, "n_resamples": 300, "seed": 7}
    found = criterion_agreement(criterion, verdicts, labels, min_audited=2, **asked)
    pairs = sorted((float(j == "pass"), float(h == "pass")) for j, h in zip(judge, people, strict=True))
    j, h = [x for x, _ in pairs], [y for _, y in pairs]
    reference = agreement.cohen_kappa_ci(j, h, [0, 1], **asked)
    assert (found.kappa.value, found.kappa.low, found.kappa.high) == (
        round(reference.mean, 6), round(reference.low, 6), round(reference.high, 6))  # fmt: skip
    assert (found.kappa.n, found.kappa.n_unscored, found.kappa.confidence) == (8, 1, 0.8)
    assert (found.percent.n_unscored, found.percent.confidence, found.judge_unscored) == (1, 0.8, 1)
    shares = agreement.percent_agreement_ci(j, h, [0, 1], **asked)
    assert (found.percent.low, found.percent.high) == (round(shares.low, 6), round(shares.high, 6))
    [corrected] = found.ppi  # two audited items are enough when min_audited says so
    wanted = ppi.ppi_mean([float(x == "pass") for x in people], [float(x == "pass") for x in judge], [],
                          confidence=0.8)  # fmt: skip
    assert (corrected.low, corrected.high) == (round(max(wanted.low, 0.0), 6), round(min(wanted.high, 1.0), 6))
    two = [_verdict("p0", "pass"), _verdict("p1", "fail")]
    assert len(criterion_agreement(criterion, two, {"p0": "pass", "p1": "fail"}, min_audited=2, **B).ppi) == 1


FIVE = (
    """+++
name = "stars"
version = "1"
inputs = ["answer"]
"""
    + "".join(f'[[scale]]\nlabel = "s{n}"\ndescription = "{n} stars"\nscore = {n}.0\n' for n in range(1, 6))
    + """+++
Stars.
"""
)


def test_a_five_label_scale_and_a_criterion_the_judge_never_scored(tmp_path: Path) -> None:
    """Five labels (positions 0-4): judge s1 s5 s3, people s1 s4 s3: exact agreement 2/3; quadratic weights
    ((i-j)/4)^2; observed (4,3): 1/16; rows s1 s3 s5 one each, columns s1 s3 s4 one each: expected
    sum_ij w_ij / 3 over i in (0, 2, 4), j in (0, 2, 3) = (0 + 4 + 9 + 4 + 0 + 1 + 16 + 4 + 1) / 16 / 3 = 39/48;
    kappa = 1 - (1/16) / (39/48) = 1 - 3/39 = 12/13."""
    stars = _criterion(FIVE, tmp_path)
    judge, people = ["s1", "s5", "s3"], ["s1", "s4", "s3"]
    verdicts = [_verdict(f"i{n}", label, ref="stars@1") for n, label in enumerate(judge)]
    verdicts = [v.model_copy(update={"score": float(v.label[1:])}) for v in verdicts]  # type: ignore[index]
    found = criterion_agreement(stars, verdicts, {f"i{n}": x for n, x in enumerate(people)}, min_audited=3, **B)
    assert found.statistic == "weighted_kappa" and found.kappa.value == pytest.approx(12 / 13, abs=1e-6)
    assert found.percent.value == pytest.approx(2 / 3, abs=1e-6)
    ok = _criterion(PASS_FAIL, tmp_path)
    never = criterion_agreement(ok, [_verdict("u1", None), _verdict("u2", None)], {"u1": "pass", "u2": "fail"},
                                min_audited=2, confidence=0.8, n_resamples=300, seed=1)  # fmt: skip
    assert (never.n, never.judge_unscored, never.validated, never.ppi) == (0, 2, False, [])
    assert never.kappa == never.percent == AgreementStat(value=None, n_unscored=2, confidence=0.8)
