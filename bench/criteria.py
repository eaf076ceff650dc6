"""Benchmark of the team's own criteria and of pairwise preferences: figures, printed (no timed assertion).

Four parts:

1. **Scripted judges through the fake server** (:class:`assay.testing.FakeOpenAIServer`) on the bundled demo (the
   golden set built offline as ``assay demo`` builds it, its bm25 and hybrid runs, whose answers differ): an
   unbiased judge (prefers the answer whose words overlap the reference answer more, token F1, a tie within 0.05)
   and a position-biased one (always answer A). ``assay eval --pairwise builtin`` through the real code path: per
   judge the wins, ties, losses, the consistency across orders and the first-position rate.
2. **Bradley-Terry by simulation with known truth** (:mod:`assay.metrics.preferences`): three systems, a 60/40
   preference between neighbours (log-odds log 1.5 per step), 100 questions each judged for the three pairs; the
   share of simulations whose pair intervals (Bonferroni over 3 pairs) put the best above the worst (power) and give
   the full order; then A/A (three equal systems): the share that orders some pair (false order).
3. **Deterministic checks** (:mod:`assay.judge.checks`) on a table of hand-decided cases: how many come out exactly.
5. **A judged criterion audited by people, by simulation with known truth**
   (:mod:`assay.pipelines.evaluate.statistics.criteria`): 300 answers, 60% truly pass, a lenient judge (passes 90%
   of the passing answers and 30% of the failing ones: its mean is 0.06 too high); people label a random sample of
   ``--audited`` of them. Over ``--trials`` simulations: the judge-only mean's bias, the PPI-corrected mean's bias and
   its interval's coverage of the true mean (95% asked) and width beside the classical people-only interval, and
   the measured kappa against its true value.
4. **People's preferences** (``--ragchecker FILE``: RAGChecker's meta-evaluation, ``human_labeled_data.json``, 280
   pairs of answers with two annotators' preferences per criterion): per judge (``--judge``, repeatable; the
   offline judge has no reading of a preference and is reported unscored) the pairwise prompt in both orders on
   the first ``--limit`` pairs, against the annotators' mean ``overall`` preference (sign; 0 a tie): agreement on
   the pairs people found decisive, Cohen's kappa over (first better, tie, second better), the judge's consistency
   across orders, and the share unscored.

Run::

    python bench/criteria.py                   # parts 1, 2, 3 and 5
    python bench/criteria.py --ragchecker path/to/human_labeled_data.json --judge offline \\
        --judge hosted_vllm/smollm2-135m --api-base http://127.0.0.1:PORT/v1 --limit 40
"""

from __future__ import annotations

import argparse
import html
import json
import math
import re
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np

from assay.formats.answer_judgements import read_answer_judgements
from assay.judge import make_judge
from assay.judge.checks import parse_check
from assay.judge.criteria import parse_criterion
from assay.metrics.agreement import cohen_kappa
from assay.metrics.preferences import preference_intervals
from assay.pipelines.bootstrap import DEMO_SETTINGS, build_golden
from assay.pipelines.evaluate import EvalSettings, evaluate
from assay.pipelines.evaluate.judging.pairwise import criterion_of, order_variables, pair_outcome, read_order
from assay.pipelines.evaluate.scoring.conversations import token_f1
from assay.pipelines.evaluate.statistics.criteria import criterion_agreement
from assay.results import CriterionVerdictRecord
from assay.testing import FakeOpenAIServer

HERE = Path(__file__).resolve().parent
DEMO = HERE.parent / "datasets" / "demo"
_BLOCK = re.compile(r"<(answer_a|answer_b|reference)-\w+>\n(.*?)\n</\1-\w+>", re.S)


# -- 1. scripted judges --------------------------------------------------------------------------------------------


def _scripted(kind: str) -> Any:
    def respond(body: dict[str, Any]) -> str:
        name = body["response_format"]["json_schema"]["name"]
        if name == "ListwiseRelevance":  # the judge also grades unlabelled chunks: every one 0, the same for all
            ids = re.findall(r'<passage-\w+ id="([^"]+)">', body["messages"][-1]["content"])
            return json.dumps({"judgements": [{"id": i, "reason": "scripted", "grade": 0} for i in ids]})
        blocks = {tag: html.unescape(text) for tag, text in _BLOCK.findall(body["messages"][-1]["content"])}
        if kind == "position-biased":
            return json.dumps({"reason": "the first answer", "preferred": "A"})
        reference = blocks.get("reference", "")
        a, b = token_f1(blocks["answer_a"], reference), token_f1(blocks["answer_b"], reference)
        preferred = "tie" if abs(a - b) <= 0.05 else "A" if a > b else "B"
        return json.dumps({"reason": f"overlap with the reference {a:.2f} against {b:.2f}", "preferred": preferred})

    return respond


def scripted_part(work: Path) -> None:
    print("1. Scripted judges, the demo's bm25 and hybrid answers, --pairwise builtin")
    gold = build_golden(DEMO / "corpus", judge=make_judge("offline"), settings=DEMO_SETTINGS, output=work / "golden")
    runs = [DEMO / "runs" / "bm25.jsonl", DEMO / "runs" / "hybrid.jsonl"]
    print(f"   {len(gold.questions)} questions")
    print("   judge            | wins | ties | losses | unscored | same in both orders | first position | verdict")
    for kind in ("unbiased", "position-biased"):
        with FakeOpenAIServer(responder=_scripted(kind)) as server:
            judge = make_judge("openai/scripted", api_base=server.url, api_key="k", cache_dir=work / f"cache-{kind}")
            settings = EvalSettings(n_boot=1000, metrics=("ndcg@10",), pairwise="builtin", add_labels=False)
            result, _ = evaluate(work / "golden", runs, judge=judge, settings=settings)
        assert result.preferences is not None
        [pair] = result.preferences.pairs
        verdict = f"{pair.better} preferred" if pair.better else "not told apart"
        print(f"   {kind:16} | {pair.wins:4} | {pair.ties:4} | {pair.losses:6} | {pair.unscored:8} | "
              f"{_pct(pair.consistency):>19} | {_pct(pair.first_position):>14} | {verdict} "
              f"(P = {pair.prob:.2f} [{pair.low:.2f}, {pair.high:.2f}])")  # fmt: skip


def _pct(value: float | None) -> str:
    return "-" if value is None else f"{value:.0%}"


# -- 2. Bradley-Terry ----------------------------------------------------------------------------------------------


Simulated = tuple[list[int], list[int], list[float], list[str]]


def _simulate(rng: np.random.Generator, theta: np.ndarray, questions: int) -> Simulated:
    first: list[int] = []
    second: list[int] = []
    score: list[float] = []
    clusters: list[str] = []
    for q in range(questions):
        for a, b in ((0, 1), (0, 2), (1, 2)):
            p = 1.0 / (1.0 + math.exp(-(theta[a] - theta[b])))
            first.append(a)
            second.append(b)
            score.append(float(rng.random() < p))
            clusters.append(f"q{q}")
    return first, second, score, clusters


def bradley_terry_part(trials: int, resamples: int) -> None:
    print(f"\n2. Bradley-Terry, 3 systems, 60/40 between neighbours, 100 questions, {trials} simulations, "
          f"{resamples} cluster resamples each, pair intervals at 1 - 0.05/3")  # fmt: skip
    rng = np.random.default_rng(2026)
    step = math.log(0.6 / 0.4)
    pairs = ((0, 1), (0, 2), (1, 2))
    best_worst = full = wrong = aa_wrong = 0
    started = time.perf_counter()
    for t in range(trials):
        fitted = preference_intervals(*_simulate(rng, np.array([step, 0.0, -step]), 100), 3,
                                      pair_confidence=1 - 0.05 / 3, n_resamples=resamples, seed=t)  # fmt: skip
        best_worst += bool(fitted.prob_low[0, 2] > 0.5)
        full += all(fitted.prob_low[a, b] > 0.5 for a, b in pairs)
        wrong += any(fitted.prob_high[a, b] < 0.5 for a, b in pairs)
        fitted = preference_intervals(*_simulate(rng, np.zeros(3), 100), 3, pair_confidence=1 - 0.05 / 3,
                                      n_resamples=resamples, seed=t)  # fmt: skip
        aa_wrong += any(fitted.prob_low[a, b] > 0.5 or fitted.prob_high[a, b] < 0.5 for a, b in pairs)
    print(f"   best above worst (power): {best_worst / trials:.1%}; full order: {full / trials:.1%}; some pair "
          f"reversed: {wrong / trials:.1%}")  # fmt: skip
    print(f"   A/A, some pair ordered (false order): {aa_wrong / trials:.1%}")
    print(f"   {time.perf_counter() - started:.1f} s for {2 * trials} fits with intervals")


# -- 3. deterministic checks ---------------------------------------------------------------------------------------

PASSAGES = ["Refunds are paid within 14 days of the return.", "The kettle has a two-year warranty."]
CASES: list[tuple[dict[str, Any], str, float]] = [
    ({"kind": "contains", "text": "14 days"}, "Refunds take 14 days.", 1.0),
    ({"kind": "contains", "text": ["14", "refund"], "ignore_case": True}, "Refunds take 14 days.", 1.0),
    ({"kind": "contains", "text": ["14", "refund"]}, "Refunds take 14 days.", 0.0),
    ({"kind": "not_contains", "text": "guarantee"}, "We guarantee it by Friday.", 0.0),
    ({"kind": "not_contains", "text": "guarantee"}, "It usually takes a week.", 1.0),
    ({"kind": "regex", "pattern": r"\b\d+ days\b"}, "within 14 days", 1.0),
    ({"kind": "regex", "pattern": r"^Yes"}, "No, sorry.", 0.0),
    ({"kind": "json_schema", "schema": {"type": "object", "required": ["days"],
                                        "properties": {"days": {"type": "integer"}}}}, '{"days": 14}', 1.0),
    ({"kind": "json_schema", "schema": {"type": "object", "required": ["days"]}}, '{"weeks": 2}', 0.0),
    ({"kind": "json_schema", "schema": {"type": "object"}}, "```json\n{\"a\": 1}\n```", 1.0),
    ({"kind": "length", "max_words": 5}, "one two three four five", 1.0),
    ({"kind": "length", "max_words": 5}, "one two three four five six", 0.0),
    ({"kind": "length", "min_chars": 10, "max_chars": 20}, "short", 0.0),
    ({"kind": "cites"}, "Refunds take 14 days [1].", 1.0),
    ({"kind": "cites"}, "Refunds take 14 days [3].", 0.0),
    ({"kind": "cites"}, 'As the policy says, "paid within 14 days of the return".', 1.0),
    ({"kind": "cites"}, 'They say "paid within 30 days of the return".', 0.0),
    ({"kind": "cites", "min_quote_words": 2}, "It has “a two-year warranty”.", 1.0),
]  # fmt: skip


def checks_part() -> None:
    right = 0
    wrong = []
    for spec, answer, expected in CASES:
        got = parse_check(spec, HERE).score("How long do refunds take?", answer, PASSAGES)
        if got == expected:
            right += 1
        else:
            wrong.append((spec["kind"], answer, expected, got))
    print(f"\n3. Deterministic checks: {right} of {len(CASES)} hand-decided cases exact")
    for kind, answer, expected, got in wrong:
        print(f"   wrong: {kind} on {answer!r}: expected {expected}, got {got}")


# -- 4. people's preferences ---------------------------------------------------------------------------------------


def people_part(path: Path, specs: list[str], api_base: str | None, limit: int, work: Path) -> None:
    pairs = read_answer_judgements(path).pairs[:limit]
    print(f"\n4. People's preferences: {path.name}, first {len(pairs)} pairs, 'overall' (annotators' mean, sign)")
    people = [float(np.sign(np.mean(p.preferences["overall"]))) for p in pairs]
    print(f"   people: second better {people.count(1.0)}, tie {people.count(0.0)}, first better {people.count(-1.0)}")
    spec = criterion_of(None)
    for model in specs:
        judge = make_judge(model, api_base=api_base if model != "offline" else None, api_key="k",
                           cache_dir=work / "cache-people")  # fmt: skip
        variables = []
        for p in pairs:
            variables.append(order_variables(spec, p.question, p.reference, p.first[1], p.second[1]))
            variables.append(order_variables(spec, p.question, p.reference, p.second[1], p.first[1]))
        started = time.perf_counter()
        if model == "offline":  # no reading of a preference: every order unscored, as assay eval refuses it
            print("   offline: unscored on every pair (the offline judge has no reading of a preference)")
            continue
        found = judge.judge_many("pairwise", variables, stage="pairwise")
        outcomes, consistent, called = [], 0, 0
        for i, _ in enumerate(pairs):
            one = read_order("first", "second", found[2 * i])
            two = read_order("second", "first", found[2 * i + 1])
            winner, _ = pair_outcome([one, two])
            outcomes.append(None if winner is None else {"first": -1.0, "second": 1.0, "tie": 0.0}[winner])
            if one.winner is not None and two.winner is not None:
                called += 1
                consistent += one.winner == two.winner
        scored = [(h, j) for h, j in zip(people, outcomes, strict=True) if j is not None]
        decisive = [(h, j) for h, j in scored if h != 0]
        agree = sum(h == j for h, j in decisive) / len(decisive) if decisive else math.nan
        kappa = cohen_kappa([h for h, _ in scored], [j for _, j in scored], categories=(-1.0, 0.0, 1.0)) if (
            len(scored) > 1) else math.nan  # fmt: skip
        print(f"   {model}: agreement on decisive pairs {agree:.1%} ({len(decisive)} pairs), kappa {kappa:.3f}, "
              f"same in both orders {consistent / called if called else math.nan:.1%}, unscored "
              f"{1 - len(scored) / len(pairs):.1%}, {time.perf_counter() - started:.0f} s")  # fmt: skip


# -- 5. a judged criterion audited by people -------------------------------------------------------------------------

_PASS_FAIL = '+++\nname = "ok"\nversion = "1"\ninputs = ["answer"]\nscale = "pass_fail"\n+++\nIs it right?\n'


def audit_part(trials: int, audited: int, work: Path, answers: int = 300) -> None:
    """Part 5 (module doc)."""
    criterion = parse_criterion(_PASS_FAIL.encode(), work / "ok.md")
    rng = np.random.default_rng(5)
    judge_bias, ppi_bias, covered, widths, classical, kappas = [], [], 0, [], [], []
    # the true kappa of this judge: P(agree) and chance agreement from its rates
    p_true, sens, fpr = 0.6, 0.9, 0.3
    p_judge = p_true * sens + (1 - p_true) * fpr
    p_o = p_true * sens + (1 - p_true) * (1 - fpr)
    p_e = p_judge * p_true + (1 - p_judge) * (1 - p_true)
    true_kappa = (p_o - p_e) / (1 - p_e)
    started = time.perf_counter()
    for _ in range(trials):
        truth = rng.random(answers) < p_true
        judged = np.where(truth, rng.random(answers) < sens, rng.random(answers) < fpr)
        sample = set(rng.choice(answers, size=audited, replace=False).tolist())
        verdicts = [CriterionVerdictRecord(run="r", query_id=f"q{i}", criterion="ok", ref="ok@1", item=f"i{i}",
                                           label="pass" if judged[i] else "fail", score=float(judged[i]))
                    for i in range(answers)]  # fmt: skip
        people = {f"i{i}": "pass" if truth[i] else "fail" for i in sample}
        found = criterion_agreement(criterion, verdicts, people, min_audited=audited, confidence=0.95,
                                    n_resamples=200, seed=0)  # fmt: skip
        [corrected] = found.ppi
        mean = float(truth.mean())
        judge_bias.append(float(judged.mean()) - mean)
        ppi_bias.append(corrected.estimate - mean)
        covered += corrected.low <= mean <= corrected.high
        widths.append(corrected.high - corrected.low)
        y = np.array([truth[i] for i in sorted(sample)], dtype=float)
        classical.append(2 * 1.959964 * float(y.std(ddof=1)) / math.sqrt(audited))
        kappas.append(found.kappa.value or 0.0)
    print(f"\n5. a judged criterion audited by people ({trials} simulations, {answers} answers, {audited} audited; "
          f"{time.perf_counter() - started:.1f} s)")  # fmt: skip
    print(f"   judge-only mean bias {np.mean(judge_bias):+.3f}; PPI-corrected mean bias {np.mean(ppi_bias):+.3f}")
    print(f"   PPI interval covers the true mean in {covered / trials:.1%} (95% asked); mean width "
          f"{np.mean(widths):.3f}, people-only interval {np.mean(classical):.3f}")  # fmt: skip
    print(f"   kappa measured {np.mean(kappas):.3f} on average (true {true_kappa:.3f}), "
          f"sd {np.std(kappas):.3f}")  # fmt: skip


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--trials", type=int, default=500, help="Bradley-Terry simulations (default 500)")
    parser.add_argument("--resamples", type=int, default=500, help="cluster resamples per simulation (default 500)")
    parser.add_argument("--ragchecker", type=Path, help="RAGChecker's human_labeled_data.json")
    parser.add_argument("--judge", action="append", default=[], help="judge for part 4 (repeatable)")
    parser.add_argument("--api-base", default=None)
    parser.add_argument("--limit", type=int, default=40, help="pairs of part 4 (default 40)")
    parser.add_argument("--audited", type=int, default=40, help="answers people label in part 5 (default 40)")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        scripted_part(work)
        bradley_terry_part(args.trials, args.resamples)
        checks_part()
        audit_part(args.trials, args.audited, work)
        if args.ragchecker:
            people_part(args.ragchecker, args.judge or ["offline"], args.api_base, args.limit, work)
    return 0


if __name__ == "__main__":
    sys.exit(main())
