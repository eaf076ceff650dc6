"""Pins of the judge card's record and figures: the keys and labels a reader sees, the interval each figure carries
(wired to the card's seed and its 2,000 resamples), agreement on hand-worked grades, and the record's lookups."""

from __future__ import annotations

import math

import numpy as np
import pytest
from card_fixture import small_card
from pydantic import ValidationError

from assay.metrics.agreement import cohen_kappa_ci, weighted_kappa_ci
from assay.metrics.leniency import leniency_ci
from assay.metrics.stats import Interval, bootstrap_ci
from assay.pipelines.judgecheck.card import (
    CARD_FORMAT_VERSION,
    Agreement,
    Figure,
    JudgeCard,
    KindCost,
    Section,
    agreement,
    change_figures,
    consistency_figure,
    figure,
    position_figures,
    rise_figure,
    share_figure,
)

NAN = float("nan")


def _none(value: float) -> float | None:
    return None if math.isnan(value) else value


def _same_interval(f: Figure, expected: Interval, unscored: int) -> None:
    assert f.value == pytest.approx(expected.mean)
    assert (f.low, f.high) == (_none(expected.low), _none(expected.high))  # exactly: same inputs, same seed
    assert f.n == expected.n and f.unscored == unscored


def test_a_figure_turns_nan_into_none_and_keeps_its_counts() -> None:
    f = figure("k.x", "what it says", Interval(0.5, NAN, NAN, 1, 3))
    assert (f.key, f.label, f.value, f.low, f.high, f.n, f.unscored) == ("k.x", "what it says", 0.5, None, None, 1, 3)
    g = figure("k.y", "none", Interval(NAN, NAN, NAN, 0, 2))
    assert g.value is None and g.n == 0 and g.unscored == 2
    h = figure("k.z", "all", Interval(1.0, 0.25, 1.5, 4))
    assert (h.value, h.low, h.high, h.unscored) == (1.0, 0.25, 1.5, 0)
    assert all(type(v) is float for v in (h.value, h.low, h.high))


def test_rise_and_share_carry_the_bootstrap_interval_of_the_seed_they_are_given() -> None:
    before, after = [0, 1, 2, 0, 1, 3, NAN, 2], [1, 1, 3, 0, 2, 3, 1, 1]
    rises = [1.0, 0.0, 1.0, 0.0, 1.0, 0.0, 0.0]  # the pairs both graded, in order
    for seed in (0, 5):
        f = rise_figure("r", "rose", before, after, seed=seed)
        _same_interval(f, bootstrap_ci(rises, seed=seed, n_resamples=2000), unscored=1)
        assert (f.key, f.label) == ("r", "rose")
    assert rise_figure("r", "x", before, after).low == rise_figure("r", "x", before, after, seed=0).low
    hits = [1, 0, NAN, 1, 1, 0, NAN, 1, 0, 1]
    s = share_figure("s", "share", hits, seed=3)
    _same_interval(s, bootstrap_ci([1, 0, 1, 1, 0, 1, 0, 1], seed=3, n_resamples=2000), unscored=2)
    assert s.value == pytest.approx(5 / 8) and (s.key, s.label) == ("s", "share")
    assert share_figure("s", "share", hits).low == share_figure("s", "share", hits, seed=0).low


def test_change_figures_name_each_figure_and_count_pairs_left_out() -> None:
    before, after = [0, 2, 3, 1, NAN, 2], [2, 2, 1, 1, 3, NAN]
    change, rise, fall = change_figures("length.relevant", "padded relevant", before, after, seed=4)
    assert (change.key, change.label) == ("length.relevant.change", "padded relevant: mean grade change")
    assert (rise.key, rise.label) == ("length.relevant.rise", "padded relevant: share whose grade rose")
    assert (fall.key, fall.label) == ("length.relevant.fall", "padded relevant: share whose grade fell")
    _same_interval(change, bootstrap_ci([2, 0, -2, 0], seed=4, n_resamples=2000), unscored=2)
    _same_interval(rise, bootstrap_ci([1, 0, 0, 0], seed=4, n_resamples=2000), unscored=2)
    _same_interval(fall, bootstrap_ci([0, 0, 1, 0], seed=4, n_resamples=2000), unscored=2)
    default = change_figures("p", "x", before, after)
    assert [f.low for f in default] == [f.low for f in change_figures("p", "x", before, after, seed=0)]


def test_consistency_names_its_repeats_and_carries_its_interval() -> None:
    f = consistency_figure([0, 1, 2, 3, 1], [[0, 1, 3, NAN, 1], [0, 2, 2, 3, 1], [0, 1, 2, 3, 1]], seed=2)
    assert f.key == "consistency.changed"
    assert f.label == "share of items whose grade changed over 3 repeat(s)"
    # item 4 is unscored in repeat 1; of the other four, items 2 (1 -> 2) and 3 (2 -> 3) changed
    _same_interval(f, bootstrap_ci([0, 1, 1, 0], seed=2, n_resamples=2000), unscored=1)
    one = consistency_figure([1, 2], [[1, 3]])
    assert one.label == "share of items whose grade changed over 1 repeat(s)" and one.value == 0.5
    assert consistency_figure([1, 2], [[1, 3]]).low == consistency_figure([1, 2], [[1, 3]], seed=0).low


def test_position_figures_label_each_position_and_use_only_whole_rows_for_the_order() -> None:
    table = [[3, 2, 1], [1, 1, 1], [2, NAN, 0], [0, 1, 2]]
    figures = position_figures(table, seed=6)
    assert [f.key for f in figures] == [
        "position.at1",
        "position.at2",
        "position.at3",
        "position.first_minus_last",
        "position.changed",
    ]
    labels = {f.key: f.label for f in figures}
    assert labels["position.at2"] == "mean grade at position 2"
    assert labels["position.first_minus_last"] == "grade first in the list minus last"
    assert labels["position.changed"] == "share of passages whose grade depends on the order"
    by = {f.key: f for f in figures}
    _same_interval(by["position.at1"], bootstrap_ci([3, 1, 2, 0], seed=6, n_resamples=2000), unscored=0)
    _same_interval(by["position.at2"], bootstrap_ci([2, 1, NAN, 1], seed=6, n_resamples=2000), unscored=1)
    # whole rows: 1, 2 and 4; first minus last 2, 0, -2; order matters in rows 1 and 4
    _same_interval(by["position.first_minus_last"], bootstrap_ci([2, 0, -2], seed=6, n_resamples=2000), unscored=1)
    _same_interval(by["position.changed"], bootstrap_ci([1, 0, 1], seed=6, n_resamples=2000), unscored=1)
    assert position_figures([]) == []
    assert [f.low for f in position_figures(table)] == [f.low for f in position_figures(table, seed=0)]


def test_every_figure_follows_its_seed_on_data_where_seeds_tell_apart() -> None:
    rng = np.random.default_rng(17)  # data on which every figure's bounds move from seed 0 to 1 and 7 to 8
    before = rng.integers(0, 4, 301).astype(float)
    after = rng.integers(0, 4, 301).astype(float)
    hits = (rng.random(301) < 0.3).astype(float)
    table = rng.integers(0, 4, (301, 3)).astype(float)

    def bounds(*seed: int) -> list[tuple[float | None, float | None]]:
        kw = {"seed": seed[0]} if seed else {}  # no seed: each function's default
        figures = [
            rise_figure("r", "x", before, after, **kw),
            share_figure("s", "x", hits, **kw),
            *change_figures("c", "x", before, after, **kw),
            consistency_figure(before, [after], **kw),
            *position_figures(table, **kw),
        ]
        return [(f.low, f.high) for f in figures]

    seven = bounds(7)
    # with 301 items even the shares' bounds fall between two bootstrap values, so every figure shows its seed
    assert [i for i, (a, b) in enumerate(zip(seven, bounds(8), strict=True)) if a == b] == []
    assert [i for i, (a, b) in enumerate(zip(bounds(0), bounds(1), strict=True)) if a == b] == []
    rises = (after > before).astype(float)
    assert seven[0] == astuple(bootstrap_ci(rises, seed=7, n_resamples=2000))
    assert seven[1] == astuple(bootstrap_ci(hits, seed=7, n_resamples=2000))
    assert seven[2] == astuple(bootstrap_ci(after - before, seed=7, n_resamples=2000))
    assert seven[3] == seven[0]
    assert seven[5] == astuple(bootstrap_ci((after != before).astype(float), seed=7, n_resamples=2000))
    assert seven[6] == astuple(bootstrap_ci(table[:, 0], seed=7, n_resamples=2000))
    assert bounds() == bounds(0)


def astuple(interval: Interval) -> tuple[float, float]:
    return (interval.low, interval.high)


def test_a_single_position_has_no_order_effect() -> None:
    by = {f.key: f for f in position_figures([[2], [1]])}
    assert by["position.first_minus_last"].value == 0.0 and by["position.changed"].value == 0.0


def test_agreement_with_graded_people_adds_the_strict_kappa_and_the_weighted_kappa() -> None:
    judge, people = [0, 1, 2, 3, 0], [0, 2, 1, 3, 0]
    result = agreement(judge, people, human_graded=True)
    figures = {f.key: f for f in result.figures}
    assert list(figures) == [
        "agreement.kappa_at1",
        "agreement.kappa_at2",
        "agreement.kappa_strict",
        "agreement.weighted_kappa",
        "agreement.leniency",
    ]
    # judge >= 2: [0,0,1,1,0], people >= 2: [0,1,0,1,0]: p_o = 3/5, p_e = (3/5)^2 + (2/5)^2 = 13/25
    assert figures["agreement.kappa_strict"].value == pytest.approx((0.6 - 0.52) / (1 - 0.52))
    assert figures["agreement.kappa_strict"].label == "kappa, judge >= 2 against people's >= 2"
    assert result.human_graded is True
    # confusion: rows judge 0-3, columns people 0-3
    assert result.confusion == [[2, 0, 0, 0], [0, 0, 1, 0], [0, 1, 0, 0], [0, 0, 0, 1]]


def test_the_weighted_kappa_is_linear_on_hand_worked_grades() -> None:
    # observed |i - j| mean over pairs (0,0) (1,1) (2,1) (3,0) (0,0) = 4/5; expected under independent marginals
    # (judge 0:2/5 1:1/5 2:1/5 3:1/5, people 0:3/5 1:2/5) = 0.16 + 0.12 + 0.32 + 0.52 = 1.12: 1 - 0.8/1.12 = 2/7
    result = agreement([0, 1, 2, 3, 0], [0, 1, 1, 0, 0], human_graded=False)
    weighted = next(f for f in result.figures if f.key == "agreement.weighted_kappa")
    assert weighted.value == pytest.approx(2 / 7)
    assert weighted.label == "weighted kappa (linear), grades 0-3"
    labels = {f.key: f.label for f in result.figures}
    assert labels["agreement.kappa_at1"] == "kappa, judge >= 1 against people's relevant"
    assert labels["agreement.kappa_at2"] == "kappa, judge >= 2 against people's relevant"
    assert labels["agreement.leniency"] == "leniency: judge's share >= 1 minus people's"
    assert result.human_graded is False


def test_agreement_intervals_are_wired_to_the_seed_and_2000_resamples() -> None:
    rng = np.random.default_rng(11)
    judge = rng.integers(0, 4, 40).astype(float)
    people = np.where(rng.random(40) < 0.7, judge, rng.integers(0, 4, 40)).astype(float)
    judge[3] = NAN
    result = agreement(judge, people, human_graded=True, seed=9)
    figures = {f.key: f for f in result.figures}
    relevant = np.where(np.isnan(people), np.nan, (people >= 1).astype(float))
    for cut in (1, 2):
        binary = np.where(np.isnan(judge), np.nan, (judge >= cut).astype(float))
        expected = cohen_kappa_ci(binary, relevant, (0, 1), seed=9, n_resamples=2000)
        _same_interval(figures[f"agreement.kappa_at{cut}"], expected, unscored=1)
    strict_j = np.where(np.isnan(judge), np.nan, (judge >= 2).astype(float))
    strict_h = (people >= 2).astype(float)
    _same_interval(
        figures["agreement.kappa_strict"], cohen_kappa_ci(strict_j, strict_h, (0, 1), seed=9, n_resamples=2000), 1
    )
    _same_interval(
        figures["agreement.weighted_kappa"],
        weighted_kappa_ci(judge, people, weights="linear", seed=9, n_resamples=2000),
        1,
    )
    lenient = np.where(np.isnan(judge), np.nan, (judge >= 1).astype(float))
    _same_interval(
        figures["agreement.leniency"], leniency_ci(lenient, relevant, (0, 1), seed=9, n_resamples=2000), unscored=1
    )
    default = agreement(judge, people, human_graded=True)
    assert default.figures == agreement(judge, people, human_graded=True, seed=0).figures


def test_the_best_cut_is_the_cut_with_the_highest_kappa_and_none_without_any() -> None:
    # judge >= 1 [0,1,1,1,0] vs people [0,1,1,0,0]: kappa 0.615; judge >= 2 [0,1,1,0,0]: kappa 1; >= 3: no 1s
    assert agreement([0, 2, 2, 1, 0], [0, 1, 1, 0, 0], human_graded=False).best_cut == 2
    # judge >= 3 agrees perfectly; >= 1 and >= 2 call two irrelevant passages relevant
    assert agreement([0, 3, 2, 3, 1], [0, 1, 0, 1, 0], human_graded=False).best_cut == 3
    nothing = agreement([NAN, NAN], [1, 0], human_graded=False)
    assert nothing.best_cut is None
    assert all(f.value is None and f.n == 0 and f.unscored == 2 for f in nothing.figures)


def test_an_unscored_people_grade_stays_unscored_in_every_binary_figure() -> None:
    result = agreement([1, 1, 0, 0], [1, NAN, 0, 1], human_graded=True)
    figures = {f.key: f for f in result.figures}
    assert all(f.n == 3 and f.unscored == 1 for f in figures.values())
    # judge >= 1 [1,0,0] vs people relevant [1,0,1]: p_o 2/3, p_e 1/3*2/3 + 2/3*1/3 = 4/9 -> kappa 0.4
    assert figures["agreement.kappa_at1"].value == pytest.approx((2 / 3 - 4 / 9) / (1 - 4 / 9))
    assert figures["agreement.leniency"].value == pytest.approx(1 / 3 - 2 / 3)


def test_the_card_finds_a_figure_in_any_section_or_in_the_agreement() -> None:
    card = small_card()
    stuffing = card.figure("stuffing.change")
    assert stuffing is not None and stuffing.value == 1.5
    consistency = card.figure("consistency.changed")
    assert consistency is not None and consistency.value == 0.25
    kappa = card.figure("agreement.kappa_at1")
    assert kappa is not None and kappa.value == 0.5
    assert card.figure("nowhere") is None
    bare = small_card(agreement=None)
    assert bare.figure("agreement.kappa_at1") is None
    found = bare.figure("stuffing.rise")
    assert found is not None and found.unscored == 3


def test_the_first_of_two_figures_with_one_key_is_found() -> None:
    card = small_card(
        sections=[
            Section(name="a", note="", figures=[Figure(key="k", label="first", value=1.0, n=1)]),
            Section(name="b", note="", figures=[Figure(key="k", label="second", value=2.0, n=1)]),
        ]
    )
    found = card.figure("k")
    assert found is not None and found.label == "first"


def test_the_record_refuses_unknown_fields_and_fills_its_defaults() -> None:
    with pytest.raises(ValidationError):
        Figure(key="k", label="l", value=1.0, n=1, extra=2)  # type: ignore[call-arg]
    with pytest.raises(ValidationError):
        Section(name="s", note="n", figures=[], colour="red")  # type: ignore[call-arg]
    with pytest.raises(ValidationError):
        Agreement(figures=[], confusion=[], best_cut=None, human_graded=False, other=1)  # type: ignore[call-arg]
    bare = Figure(key="k", label="l", value=None, n=0)
    assert (bare.low, bare.high, bare.unscored) == (None, None, 0)
    cost = KindCost(
        kind="baseline", items=1, calls=1, cached=0, unscored=0, prompt_tokens=2, completion_tokens=3, cost_usd=None
    )
    assert cost.rejected == 0
    card = JudgeCard(
        assay_version="1.0",
        model="m",
        prompts={},
        source={},
        settings={},
        agreement=None,
        sections=[],
        costs=[],
    )
    assert card.format_version == CARD_FORMAT_VERSION == 1
    assert card.agreement_note is None and card.missing == []
    assert card.created.tzinfo is not None  # stamped in UTC by default
    with pytest.raises(ValidationError):
        JudgeCard.model_validate({**card.model_dump(), "surprise": 1})


def test_the_leniency_interval_follows_the_seed_and_2000_resamples() -> None:
    rng = np.random.default_rng(11)
    judge, people = rng.integers(0, 2, 301).astype(float), rng.integers(0, 2, 301).astype(float)
    lenient = next(
        f for f in agreement(judge, people, human_graded=False, seed=9).figures if f.key.endswith("leniency")
    )
    expected = leniency_ci(judge, people, (0, 1), seed=9, n_resamples=2000)
    assert (lenient.low, lenient.high) == (expected.low, expected.high)
    # the data tell another seed, one more resample and the library's default count apart
    others = [
        leniency_ci(judge, people, (0, 1), seed=0, n_resamples=2000),
        leniency_ci(judge, people, (0, 1), seed=9, n_resamples=2001),
        leniency_ci(judge, people, (0, 1), seed=9),
    ]
    assert all((o.low, o.high) != (expected.low, expected.high) for o in others)
