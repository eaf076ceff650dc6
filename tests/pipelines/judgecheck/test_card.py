"""The judge card's figures on small arrays whose values are worked out by hand in each test."""

from __future__ import annotations

import math

import pytest

from assay.pipelines.judgecheck.card import agreement, change_figures, consistency_figure, position_figures, rise_figure

NAN = float("nan")


def test_rise_counts_only_pairs_graded_both_times() -> None:
    figure = rise_figure("k", "x", [0, 1, NAN, 2], [1, 1, 3, 2])
    # pairs (0, 1), (1, 1), (2, 2): one rose of three; the unscored before-grade leaves one pair out
    assert figure.value == pytest.approx(1 / 3) and figure.n == 3 and figure.unscored == 1


def test_change_figures_give_the_mean_change_and_the_shares() -> None:
    change, rise, fall = change_figures("p", "x", [0, 2, 3, 1], [2, 2, 1, 1])
    assert change.value == pytest.approx((2 + 0 - 2 + 0) / 4)
    assert rise.value == pytest.approx(1 / 4) and fall.value == pytest.approx(1 / 4)


def test_consistency_is_the_share_of_items_changed_in_any_repeat() -> None:
    figure = consistency_figure([0, 1, 2, 3], [[0, 1, 3, NAN], [0, 2, 2, 3]])
    # item 4 is unscored once and left out; of items 1-3, items 2 (1 -> 2) and 3 (2 -> 3) changed
    assert figure.value == pytest.approx(2 / 3) and figure.n == 3 and figure.unscored == 1


def test_position_figures_from_a_grid_of_passages_by_position() -> None:
    figures = {f.key: f for f in position_figures([[3, 2, 1], [1, 1, 1], [2, 2, 0]])}
    assert figures["position.at1"].value == pytest.approx(2.0)  # (3 + 1 + 2) / 3
    assert figures["position.at3"].value == pytest.approx(2 / 3)  # (1 + 1 + 0) / 3
    assert figures["position.first_minus_last"].value == pytest.approx((2 + 0 + 2) / 3)
    assert figures["position.changed"].value == pytest.approx(2 / 3)


def test_agreement_kappa_leniency_confusion_and_cut() -> None:
    result = agreement([0, 1, 2, 3, 0], [0, 1, 1, 0, 0], human_graded=False)
    figures = {f.key: f for f in result.figures}
    # judge >= 1: [0,1,1,1,0] vs people [0,1,1,0,0]: p_o = 4/5, p_e = 3/5*2/5 + 2/5*3/5 = 12/25
    assert figures["agreement.kappa_at1"].value == pytest.approx((0.8 - 0.48) / (1 - 0.48))
    # judge >= 2: [0,0,1,1,0]: p_o = 3/5, p_e = 2/5*2/5 + 3/5*3/5 = 13/25
    assert figures["agreement.kappa_at2"].value == pytest.approx((0.6 - 0.52) / (1 - 0.52))
    assert figures["agreement.leniency"].value == pytest.approx(3 / 5 - 2 / 5)
    assert result.best_cut == 1
    assert result.confusion[2] == [0, 1, 0, 0] and result.confusion[3] == [1, 0, 0, 0]
    assert "agreement.kappa_strict" not in figures


def test_no_item_gives_no_value_never_zero() -> None:
    figure = rise_figure("k", "x", [NAN], [1])
    assert figure.value is None and figure.n == 0 and not math.isnan(figure.unscored)


def test_an_unscored_grade_at_a_position_is_counted_not_averaged() -> None:
    figures = {f.key: f for f in position_figures([[3, NAN], [1, 1]])}
    assert figures["position.at2"].value == 1.0 and figures["position.at2"].unscored == 1
    # only the passage graded at every position counts for the order effects
    assert figures["position.changed"].n == 1 and figures["position.changed"].unscored == 1
