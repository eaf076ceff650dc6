"""Pairwise preferences: the Bradley-Terry fit against hand-computed cases and simulations with known truth, each
pair judged in both orders through the fake server (disagreeing orders tie, a position-biased judge ties
everything), the verdict's line following the intervals, --pairs baseline, the dry run, the refusals.

The fake judge reads the two <answer_a>/<answer_b> blocks. ``unbiased``: prefers the answer that holds "warranty"
(the good run's), tie when both or neither do. ``first``: always prefers answer A.
"""

from __future__ import annotations

import json
import math
import re
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from click.testing import CliRunner
from evaluate_fixture import good_lines, make_golden, qid, save_golden, weak_lines, write_run
from test_evaluate_judged import _schema, _user, http_judge, scripted

from assay.cli import main
from assay.errors import ConfigError
from assay.judge import make_judge
from assay.metrics.preferences import PRIOR, bradley_terry, preference_intervals
from assay.pipelines.evaluate import EvalSettings, estimate_evaluation, evaluate
from assay.report.verdict import build_verdict
from assay.results import EvalResult
from assay.testing import FakeOpenAIServer

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "report"))
from test_html import lazy_block

N = 8
BLOCK = re.compile(r"<answer_([ab])-\w+>\n(.*?)\n</answer_\1-\w+>", re.S)


def preferring(kind: str) -> Any:
    def respond(body: dict[str, Any]) -> str:
        if _schema(body) != "Preference":
            return scripted(body)
        blocks = dict(BLOCK.findall(_user(body)))
        if kind == "first":
            return json.dumps({"reason": "the first one", "preferred": "A"})
        a, b = ("warranty" in blocks["a"]), ("warranty" in blocks["b"])
        preferred = "tie" if a == b else "A" if a else "B"
        return json.dumps({"reason": f"warranty in A: {a}", "preferred": preferred})

    return respond


def _similar(n: int) -> list[dict[str, Any]]:
    """A third run whose answers say "warranty" like the good run's."""
    return [line | {"answer": line["answer"].replace("lasts", "runs for")} for line in good_lines(n)]


# -- the model ------------------------------------------------------------------------------------------------------


def test_two_systems_fit_the_closed_form_with_the_prior() -> None:
    # 7 wins to 3: the MLE with half a win added each way has log(pi_0 / pi_1) = log(7.5 / 3.5)
    strength = bradley_terry([0] * 10, [1] * 10, [1.0] * 7 + [0.0] * 3, 2)
    assert strength[0] - strength[1] == pytest.approx(math.log((7 + PRIOR) / (3 + PRIOR)), abs=1e-9)
    assert strength.sum() == pytest.approx(0.0, abs=1e-12)
    # ties count half a win each: 4 wins, 2 ties, 4 losses is an even match
    even = bradley_terry([0] * 10, [1] * 10, [1.0] * 4 + [0.5] * 2 + [0.0] * 4, 2)
    assert even[0] == pytest.approx(0.0, abs=1e-9)


def test_three_systems_satisfy_the_likelihood_equations() -> None:
    # At the MLE each system's expected wins equal its observed wins (prior included): checked by hand-built sums.
    first, second = [0, 0, 0, 1, 1, 2, 0, 1], [1, 2, 2, 2, 0, 0, 1, 2]
    score = [1.0, 1.0, 0.5, 1.0, 0.0, 1.0, 0.5, 0.0]
    theta = bradley_terry(first, second, score, 3)
    wins = np.full((3, 3), PRIOR) - np.eye(3) * PRIOR
    for i, j, s in zip(first, second, score, strict=True):
        wins[i, j] += s
        wins[j, i] += 1 - s
    n = wins + wins.T
    p = 1 / (1 + np.exp(-(theta[:, None] - theta[None, :])))
    np.fill_diagonal(p, 0.0)
    assert (n * p).sum(axis=1) == pytest.approx(wins.sum(axis=1), abs=1e-7)


def _simulate(rng: np.random.Generator, theta: np.ndarray, questions: int) -> tuple[list[int], ...]:
    first, second, score, clusters = [], [], [], []
    for q in range(questions):
        for a, b in ((0, 1), (0, 2), (1, 2)):
            p = 1 / (1 + np.exp(-(theta[a] - theta[b])))
            first.append(a)
            second.append(b)
            score.append(float(rng.random() < p))
            clusters.append(str(q))
    return first, second, score, clusters  # type: ignore[return-value]


def _ordered(fitted: Any) -> bool:
    """Whether the pairs' intervals order some pair, either way (a false order when the systems are equal)."""
    return any(fitted.prob_low[a, b] > 0.5 or fitted.prob_high[a, b] < 0.5 for a, b in ((0, 1), (0, 2), (1, 2)))


def test_a_known_order_is_recovered_and_equal_systems_are_not_ordered() -> None:
    """60/40 between neighbours, 100 questions: simulated power and the A/A false-order rate (known truth)."""
    rng = np.random.default_rng(7)
    step = math.log(0.6 / 0.4)
    found = wrong_aa = 0
    trials = 60
    for _ in range(trials):
        first, second, score, clusters = _simulate(rng, np.array([step, 0.0, -step]), 100)
        fitted = preference_intervals(first, second, score, clusters, 3, pair_confidence=1 - 0.05 / 3,
                                      n_resamples=400, seed=1)  # fmt: skip
        found += fitted.prob_low[0, 2] > 0.5 and fitted.prob_high[2, 0] < 0.5
        first, second, score, clusters = _simulate(rng, np.zeros(3), 100)
        fitted = preference_intervals(first, second, score, clusters, 3, pair_confidence=1 - 0.05 / 3,
                                      n_resamples=400, seed=1)  # fmt: skip
        wrong_aa += _ordered(fitted)
    assert found / trials >= 0.8  # the best above the worst
    assert wrong_aa / trials <= 0.10  # 5% nominal; 60 trials leave room for sampling error


# -- through the evaluation -----------------------------------------------------------------------------------------


def _evaluate(tmp_path: Path, kind: str, runs: list[tuple[str, list[dict[str, Any]]]], **extra: Any) -> EvalResult:
    settings = EvalSettings(n_boot=400, metrics=("ndcg@10",), pairwise="builtin", **extra)
    with FakeOpenAIServer(responder=preferring(kind)) as server:
        result, _ = evaluate(make_golden(n=N), runs, judge=http_judge(server, tmp_path / "cache"), settings=settings)
    return result


def test_an_unbiased_judge_is_consistent_and_the_better_run_wins(tmp_path: Path) -> None:
    result = _evaluate(tmp_path, "unbiased", [("good", good_lines(N)), ("weak", weak_lines(N))])
    found = result.preferences
    assert found is not None and found.criterion == "builtin"
    [pair] = found.pairs
    assert (pair.run_a, pair.run_b, pair.wins, pair.ties, pair.losses) == ("good", "weak", N, 0, 0)
    assert pair.consistency == 1.0 and pair.first_position == 0.5  # each order once A, once B
    assert pair.better == "good" and pair.low > 0.5
    assert [s.run for s in found.strengths] == ["good", "weak"]
    judgement = next(j for j in found.judgements if j.query_id == qid(0))
    assert [(o.shown_first, o.preferred, o.winner) for o in judgement.orders] == [("good", "A", "good"),
                                                                                 ("weak", "B", "good")]  # fmt: skip
    verdict = build_verdict(result)
    assert verdict.preference is not None and verdict.preference in verdict.lines
    assert any(c.startswith("pairwise (builtin) not validated: audit 10 items") for c in verdict.caveats)
    assert verdict.preference.startswith(f"Pairwise (builtin, both orders, over {N} questions): good preferred to weak")
    assert result.settings["pairwise"] == "builtin"


def test_a_judge_that_always_prefers_the_first_answer_ties_every_pair(tmp_path: Path) -> None:
    result = _evaluate(tmp_path, "first", [("good", good_lines(N)), ("weak", weak_lines(N))])
    assert result.preferences is not None
    [pair] = result.preferences.pairs
    assert (pair.wins, pair.ties, pair.losses) == (0, N, 0)
    assert pair.consistency == 0.0 and pair.first_position == 1.0
    assert pair.better is None and pair.low <= 0.5 <= pair.high
    assert "not told apart" in result.preferences.sentence


def test_pairs_baseline_compares_each_run_with_the_baseline_only(tmp_path: Path) -> None:
    runs = [("good", good_lines(N)), ("weak", weak_lines(N)), ("similar", _similar(N))]
    result = _evaluate(tmp_path, "unbiased", runs, pairs="baseline", baseline="weak")
    assert result.preferences is not None
    assert [(p.run_a, p.run_b) for p in result.preferences.pairs] == [("weak", "good"), ("weak", "similar")]
    everything = _evaluate(tmp_path, "unbiased", runs)
    assert everything.preferences is not None
    good_similar = next(p for p in everything.preferences.pairs if (p.run_a, p.run_b) == ("good", "similar"))
    assert (good_similar.ties, good_similar.better) == (N, None)  # both say warranty: ties


def test_a_missing_answer_loses_without_a_call_and_the_dry_run_counts_two_calls_per_pair(tmp_path: Path) -> None:
    lines = weak_lines(N)
    lines[0]["answer"] = ""
    runs = [("good", good_lines(N)), ("weak", lines)]
    settings = EvalSettings(n_boot=400, metrics=("ndcg@10",), pairwise="builtin")
    with FakeOpenAIServer(responder=preferring("unbiased")) as server:
        estimates = estimate_evaluation(make_golden(n=N), runs, http_judge(server, tmp_path / "c"), settings)
        assert server.requests == []
        result, _ = evaluate(make_golden(n=N), runs, judge=http_judge(server, tmp_path / "c"), settings=settings)
        asked = [b for b in server.requests if _schema(b) == "Preference"]
    assert estimates["pairwise"].calls == 2 * (N - 1) == len(asked)
    assert result.preferences is not None
    judgement = next(j for j in result.preferences.judgements if j.query_id == qid(0))
    assert (judgement.winner, judgement.orders) == ("good", [])


def test_pairwise_needs_a_model_judge_and_two_runs(tmp_path: Path) -> None:
    settings = EvalSettings(n_boot=400, metrics=("ndcg@10",), pairwise="builtin")
    with pytest.raises(ConfigError, match="--pairwise needs a model judge"):
        evaluate(make_golden(n=N), [("good", good_lines(N)), ("weak", weak_lines(N))],
                 judge=make_judge("offline", cache_dir=tmp_path / "c"), settings=settings)  # fmt: skip
    with FakeOpenAIServer(responder=preferring("unbiased")) as server, pytest.raises(ConfigError, match="two runs"):
        evaluate(make_golden(n=N), [("good", good_lines(N))], judge=http_judge(server, tmp_path / "c"),
                 settings=settings)  # fmt: skip


def test_the_cli_prints_the_pairwise_line_in_the_verdict(tmp_path: Path) -> None:
    golden = save_golden(tmp_path / "golden")
    good, weak = write_run(tmp_path / "good.jsonl", good_lines()), write_run(tmp_path / "weak.jsonl", weak_lines())
    with FakeOpenAIServer(responder=preferring("unbiased")) as server:
        args = (
            "eval",
            golden,
            good,
            weak,
            "--judge",
            "openai/judge-x",
            "--api-key",
            "k",
            "--api-base",
            server.url,
            "--cache-dir",
            tmp_path / "cache",
            "-m",
            "ndcg@10",
            "--pairwise",
            "builtin",
            "-o",
            tmp_path / "out",
        )
        result = CliRunner().invoke(main, [str(a) for a in args])
    assert result.exit_code == 0, result.output
    assert "Pairwise (builtin, both orders" in result.output and "good preferred to weak" in result.output
    saved = json.loads((tmp_path / "out" / "results.json").read_text())
    assert saved["preferences"]["pairs"][0]["better"] == "good"
    markdown = (tmp_path / "out" / "report.md").read_text()
    assert "## Pairwise preferences" in markdown
    assert "| good | weak | 12 | 0 | 0 | 0 |" in markdown and "| 100% | 50% | good preferred |" in markdown
    # The explorer holds both orders of each pair, with their reasons, beside each other.
    page = (tmp_path / "out" / "report.html").read_text()
    index = lazy_block(page, "data-explorer")
    first = lazy_block(page, "data-q0")
    assert index["questions"][0][0] == first["id"]
    [pair] = first["pw"]
    assert pair[:4] == ["good", "weak", "good", None]
    assert [order[:3] for order in pair[4]] == [["good", "A", "good"], ["weak", "B", "good"]]
    assert [order[3] for order in pair[4]] == ["warranty in A: True", "warranty in A: False"]
