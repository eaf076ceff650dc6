"""The worked examples of /work/shared/seeds/, with the right values computed by hand (the seeds are sometimes wrong).

Seed 004 ("all metrics at a glance"): retrieved c1..c10, relevant c1:2 c3:1 c5:2 c8:1 (R = 4).
  AP = (1/1 + 2/3 + 3/5 + 4/8) / 4 = 2.76667 / 4 = 0.6917. The seed says 0.729: wrong.
  DCG@5 = 2/log2(2) + 1/log2(4) + 2/log2(6) = 2 + 0.5 + 0.77371 = 3.27371 (seed: 3.274, right).
  IDCG@5 over grades 2,2,1,1 = 2 + 2/log2(3) + 1/log2(4) + 1/log2(5) = 2 + 1.26186 + 0.5 + 0.43068 = 4.19254; the
  seed says 4.131, so its nDCG@5 of 0.793 is wrong: 3.27371 / 4.19254 = 0.7808. R-precision = P@4 = 2/4 = 0.5 (right).
  "Bad order" [c2, c4, c1, c3, c5]: trec_eval AP = (1/3 + 2/4 + 3/5) / 4 = 0.3583.
Seed 002: ranking D7 D1 D3 D5 D4 D2 D8 D6 D9 D10, grades D1:3 D2:2 D5:1 D9:3.
  Linear gain: DCG@10 = 3/log2(3) + 1/log2(5) + 2/log2(7) + 3/log2(10) = 3.9392; IDCG = 3 + 3/log2(3) + 2/2 +
  1/log2(5) = 6.3236; nDCG@10 = 0.6229 (the seed only gives the 2^g-1 form). Exponential gain: 8.0225 / 13.3466 =
  0.6011 (seed right). AP = (1/2 + 2/4 + 3/6 + 4/9) / 4 = 0.4861 (seed right). The seed's recall@3 = 0.50 is wrong:
  its top 3 is D7 D1 D3, which holds only D1 (D5 is 4th), so recall@3 = 1/4 = 0.25; recall@5 = 2/4 (right).
Seed 000: six relevant, two retrieved (grade 3 at rank 2, grade 1 at rank 4): DCG@5 = 3/log2(3) + 1/log2(5) = 2.3235
  (right), but the seed's IDCG 3.63 counts only the two retrieved documents; with the other four judged >= 1 the
  ideal top 5 holds five positive grades, so IDCG@5 >= 3 + 1/log2(3) + 1/2 + 1/log2(5) + 1/log2(6) = 4.949 and
  nDCG@5 <= 0.47.
"""

from __future__ import annotations

import math

import pytest

from assay.metrics import Run, evaluate

SEED004_QRELS = {"q": {"c1": 2, "c3": 1, "c5": 2, "c8": 1}}
SEED004_RUN = Run.from_ranked_lists({"q": [f"c{i}" for i in range(1, 11)]})


def test_seed_004_all_metrics() -> None:
    ev = evaluate(SEED004_QRELS, SEED004_RUN, ["map", "dcg@5", "ndcg@5", "rprec", "P@3", "recall@5", "mrr", "hit@3"])
    got = ev.means()
    assert got["map"] == pytest.approx(0.6917, abs=5e-5)
    assert got["dcg@5"] == pytest.approx(3.2737, abs=5e-5)
    assert got["ndcg@5"] == pytest.approx(0.7808, abs=5e-5)
    assert (got["rprec"], got["recall@5"], got["mrr"], got["hit@3"]) == (0.5, 0.75, 1.0, 1.0)
    assert got["P@3"] == pytest.approx(2 / 3, abs=1e-15)


def test_seed_004_bad_order_trec_ap() -> None:
    run = Run.from_ranked_lists({"q": ["c2", "c4", "c1", "c3", "c5"]})
    assert evaluate(SEED004_QRELS, run, ["map"]).mean("map") == pytest.approx(0.3583, abs=5e-5)


def test_seed_002_linear_and_exponential_ndcg_and_ap() -> None:
    qrels = {"q": {"D1": 3, "D2": 2, "D5": 1, "D9": 3}}
    run = Run.from_ranked_lists({"q": ["D7", "D1", "D3", "D5", "D4", "D2", "D8", "D6", "D9", "D10"]})
    got = evaluate(qrels, run, ["ndcg@10", "ndcg_exp@10", "map", "recall@3", "recall@5", "recall@10", "P@5"]).means()
    assert got["ndcg@10"] == pytest.approx(0.6229, abs=5e-5)
    assert got["ndcg_exp@10"] == pytest.approx(0.6011, abs=5e-5)
    assert got["map"] == pytest.approx(0.4861, abs=5e-5)
    assert (got["recall@3"], got["recall@5"], got["recall@10"], got["P@5"]) == (0.25, 0.5, 1.0, 0.4)


def test_seed_000_ideal_counts_unretrieved_relevant() -> None:
    qrels = {"q": {"sop": 3, "clause": 1, "r3": 1, "r4": 1, "r5": 1, "r6": 1}}
    run = Run.from_ranked_lists({"q": ["returns", "sop", "x", "clause", "y"]})
    got = evaluate(qrels, run, ["dcg@5", "ndcg@5"]).means()
    assert got["dcg@5"] == pytest.approx(2.3235, abs=5e-5)
    ideal = 3 + 1 / math.log2(3) + 1 / 2 + 1 / math.log2(5) + 1 / math.log2(6)  # 4.9485
    assert got["ndcg@5"] == pytest.approx((3 / math.log2(3) + 1 / math.log2(5)) / ideal, abs=1e-12)
    assert got["ndcg@5"] < 0.47
