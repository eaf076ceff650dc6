"""Agreement between the judges of a panel, from the votes the labels keep: hand-worked kappas and counts."""

from __future__ import annotations

import math

import pytest

from assay.metrics.agreement import krippendorff_alpha
from assay.pipelines.agreement import panel_agreement
from assay.types import Provenance, RelevanceLabel, Unscored, Vote


def _label(qid: str, grades: dict[str, int | None], combined: int | None, rule: str = "majority") -> RelevanceLabel:
    votes = [
        Vote(model=m, grade=g, unscored=None if g is not None else Unscored(reason="cut", kind="truncated"))
        for m, g in grades.items()
    ]
    model = f"{rule}({', '.join(grades)})"
    return RelevanceLabel(
        query_id=qid, chunk_id="c", grade=combined, provenance=Provenance(source="judge", model=model), votes=votes
    )


def test_two_judges_by_hand() -> None:
    # a = 0 0 1 1, b = 0 1 1 1: p_o = 3/4; marginals a (1/2, 1/2), b (1/4, 3/4); p_e = 1/8 + 3/8 = 1/2; kappa 1/2
    a, b = [0, 0, 1, 1], [0, 1, 1, 1]
    labels = [_label(f"q{i}", {"m/a": x, "m/b": y}, min(x, y)) for i, (x, y) in enumerate(zip(a, b, strict=True))]
    labels.append(RelevanceLabel(query_id="q9", chunk_id="c", grade=2, provenance=Provenance(source="judge")))
    found = panel_agreement(labels, n_resamples=200)
    assert found is not None
    assert found.judges == ["m/a", "m/b"] and found.combine == ["majority"]
    assert (found.n_pairs, found.n_disagree, found.n_unanimous, found.n_no_quorum) == (4, 1, 3, 0)
    (pair,) = found.pairs
    assert pair.judges == ["m/a", "m/b"] and pair.n == 4
    assert pair.percent_agreement is not None and pair.percent_agreement.value == pytest.approx(0.75)
    assert pair.cohen_kappa is not None and pair.cohen_kappa.value == pytest.approx(0.5)
    assert pair.kappa_relevant_1 is not None and pair.kappa_relevant_1.value == pytest.approx(0.5)
    # at >= 2 nobody is relevant: both raters always in one category, the documented degenerate case (1.0)
    assert pair.kappa_relevant_2 is not None and pair.kappa_relevant_2.value == pytest.approx(1.0)
    assert pair.leniency is not None and pair.leniency.value == pytest.approx(-0.25)  # mean(a - b)
    # linear weights on positions 0..3: w = |i - j| / 3; the one disagreement (0 vs 1) weighs 1/3.
    # observed: 1/4 * 1/3 = 1/12; expected: sum p_a(i) p_b(j) w_ij = 1/2*3/4*1/3 + 1/2*1/4*1/3 = 1/6; 1 - (1/12)/(1/6)
    assert pair.weighted_kappa_linear is not None and pair.weighted_kappa_linear.value == pytest.approx(0.5)
    assert [j.histogram for j in found.per_judge] == [[2, 2, 0, 0], [1, 3, 0, 0]]
    alpha = krippendorff_alpha([a, b], "ordinal", (0, 1, 2, 3))
    assert found.krippendorff_alpha is not None and found.krippendorff_alpha.value == pytest.approx(alpha, abs=1e-3)
    assert found.fleiss_kappa is None  # two judges


def test_three_judges_with_missing_votes() -> None:
    labels = [
        _label("q1", {"a": 3, "b": 3, "c": 3}, 3),
        _label("q2", {"a": 0, "b": None, "c": 2}, None),  # 2 of 3 scored would be a quorum; say the rule left it
        _label("q3", {"a": None, "b": None, "c": 1}, None),
        _label("q4", {"a": 1, "b": 2, "c": 2}, 2),
    ]
    found = panel_agreement(labels, n_resamples=200)
    assert found is not None
    assert found.n_pairs == 4 and found.n_unanimous == 1 and found.n_disagree == 2 and found.n_no_quorum == 2
    by = {j.model: j for j in found.per_judge}
    assert (by["b"].n_scored, by["b"].n_unscored, by["b"].unscored_kinds) == (2, 2, {"truncated": 2})
    assert [p.judges for p in found.pairs] == [["a", "b"], ["a", "c"], ["b", "c"]]
    assert [p.n for p in found.pairs] == [2, 3, 2]  # pairs both judges scored
    data = [[3, 0, math.nan, 1], [3, math.nan, math.nan, 2], [3, 2, 1, 2]]
    expected = krippendorff_alpha(data, "ordinal", (0, 1, 2, 3))
    assert found.krippendorff_alpha is not None and found.krippendorff_alpha.value == pytest.approx(expected, abs=1e-3)
    assert found.fleiss_kappa is not None and found.fleiss_kappa.n == 2  # q1 and q4: every judge scored


def test_no_votes_no_section() -> None:
    plain = RelevanceLabel(query_id="q", chunk_id="c", grade=1, provenance=Provenance(source="judge"))
    assert panel_agreement([plain]) is None
    assert panel_agreement([]) is None


def test_each_judge_against_people_on_the_audited_pairs() -> None:
    a, b = [0, 0, 1, 1], [0, 1, 1, 1]
    labels = [_label(f"q{i}", {"m/a": x, "m/b": y}, min(x, y)) for i, (x, y) in enumerate(zip(a, b, strict=True))]
    people = {("q0", "c"): 0, ("q1", "c"): 1, ("q2", "c"): 1, ("q9", "c"): 3}  # q9: no panel label, left out
    found = panel_agreement(labels, human=people, n_resamples=200)
    assert found is not None and set(found.with_people) == {"m/a", "m/b"}
    # a = 0 0 1 against people 0 1 1: p_o 2/3, p_e = 2/3 * 1/3 + 1/3 * 2/3 = 4/9, kappa (2/9) / (5/9) = 0.4
    block = found.with_people["m/a"]
    assert block.n == 3 and block.cohen_kappa is not None and block.cohen_kappa.value == pytest.approx(0.4)
    assert found.with_people["m/b"].cohen_kappa is not None
    assert found.with_people["m/b"].cohen_kappa.value == pytest.approx(1.0)
    assert panel_agreement(labels, human={}, n_resamples=200).with_people == {}  # type: ignore[union-attr]
