"""``assay eval`` end to end: the report folder, --fail-under exit codes, NAME=PATH, --dry-run, PPI from the audit
store, the fake OpenAI server, and bad input."""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path
from typing import Any

import krippendorff
import pytest
from click.testing import CliRunner

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "pipelines" / "evaluate"))
from evaluate_fixture import PRODUCTS, answer_id, good_lines, qid, save_golden, weak_lines, write_run

from assay.audit.store import LabelStore
from assay.cli import main
from assay.cli.eval import parse_fail_under, parse_k, parse_runs
from assay.errors import ConfigError
from assay.formats.golden import GoldenSet
from assay.testing import FakeOpenAIServer
from assay.types import LabelEvent

N = len(PRODUCTS)


def run(*args: str | Path, verbose: bool = True) -> Any:
    """The command; ``assay eval`` with --verbose (every table: these tests read them), unless told otherwise."""
    extra = ["--verbose"] if verbose and args[:1] == ("eval",) else []
    return CliRunner().invoke(main, [str(a) for a in args] + extra)


@pytest.fixture
def setup(tmp_path: Path) -> dict[str, Path]:
    return {
        "golden": save_golden(tmp_path / "golden"),
        "good": write_run(tmp_path / "good.jsonl", good_lines()),
        "weak": write_run(tmp_path / "weak.jsonl", weak_lines()),
        "out": tmp_path / "report",
    }


def test_offline_eval_writes_the_report_and_prints_the_summary(setup: dict[str, Path]) -> None:
    s = setup
    args = ("eval", s["golden"], s["good"], s["weak"], "-o", s["out"], "--judge", "offline", "--n-boot", "200")
    result = run(*args, verbose=False)
    assert result.exit_code == 0, result.output
    files = {p.name for p in s["out"].iterdir()}
    assert files == {
        "report.html",
        "report.md",
        "results.json",
        "per_query.jsonl",
        "support_matrix.jsonl",
        "passages.jsonl",
    }
    results = json.loads((s["out"] / "results.json").read_text())
    assert [r["name"] for r in results["runs"]] == ["good", "weak"]
    assert results["judge"] == "offline"
    assert "The judge is the offline lexical baseline, not an LLM" in " ".join(result.output.split())
    verdicts = {c["metric"]: c["verdict"] for c in results["comparisons"]}
    assert verdicts["ndcg@10"].startswith("good beats weak on ndcg@10")
    # the summary leads with the verdict; --verbose adds the primary metric's family with the verdict sentences
    lines = result.output.splitlines()
    assert lines.index("Verdict") < 15 and lines[lines.index("Verdict") + 1].startswith("• good leads on ndcg@10")
    assert "the evidence supports the lead" in " ".join(result.output.split()) and len(lines) < 60
    verbose = run(*args)
    assert "ndcg@10 (primary metric): paired randomization test, Holm over 1 pair" in verbose.output
    assert "good beats weak on ndcg@10 by" in " ".join(verbose.output.split())
    assert f"report: {s['out'] / 'report.html'}" in result.output.replace("\n", "")
    per_query = (s["out"] / "per_query.jsonl").read_text().splitlines()
    assert len(per_query) == 1 + 2 * N


@pytest.mark.parametrize(
    ("gates", "code", "message"),
    [
        (["ndcg@10=0.2"], 0, None),
        # weak, per query: unjudged, unjudged, related (1), answer (3) except every third query; IDCG = 3 + 1/log2(3):
        # (8 * (1/2 + 3/log2(5)) / IDCG + 4 * (1/2) / IDCG) / 12 = 0.375
        (["ndcg@10=0.5"], 1, "weak: ndcg@10 = 0.375 < 0.5"),
        (["ndcg@10=0.2", "recall@5|g>=2=0.99"], 1, "weak: recall@5|g>=2"),
    ],
)
def test_fail_under_sets_the_exit_status(
    setup: dict[str, Path], gates: list[str], code: int, message: str | None
) -> None:
    s = setup
    args: list[str | Path] = [
        "eval",
        s["golden"],
        s["good"],
        s["weak"],
        "-o",
        s["out"],
        "--no-judge",
        "--n-boot",
        "200",
    ]
    args += ["-m", "ndcg@10", "-m", "recall@5|g>=2"]
    for gate in gates:
        args += ["--fail-under", gate]
    result = run(*args)
    assert result.exit_code == code, result.output
    if message:
        assert message in result.output
        assert "good:" not in result.output.split("fail-under:")[1]  # the good run passes every gate


@pytest.mark.parametrize(
    ("flags", "message"),
    [
        (["--fail-under", "ndgc@10=0.5"], "unknown metric 'ndgc@10'; close names: ndcg@10"),
        (["-m", "ndcg@10", "-m", "P@x"], "metric 'P@x'"),
        (["--fail-under", "nugget_recall=0.5"], "--fail-under nugget_recall: give one metric, not a family"),
        (["--fail-under", "faithfulness=0.5"], "an LLM-judged metric needs --judge MODEL"),
    ],
)
def test_a_bad_metric_name_stops_before_any_work(setup: dict[str, Path], flags: list[str], message: str) -> None:
    s = setup
    result = run("eval", s["golden"], s["good"], "-o", s["out"], "--no-judge", *flags)
    assert result.exit_code == 1 and message in result.output
    assert not s["out"].exists()


def test_metrics_of_m_and_fail_under_are_computed_whatever_k_says(setup: dict[str, Path]) -> None:
    s = setup
    flags = ["-k", "10", "-m", "P@5", "-m", "ndcg@10", "--fail-under", "recall@3=0.1", "--n-boot", "200"]
    result = run("eval", s["golden"], s["good"], s["weak"], "-o", s["out"], "--no-judge", *flags)
    assert result.exit_code == 0, result.output
    results = json.loads((s["out"] / "results.json").read_text())
    assert results["k_values"] == [3, 5, 10]
    assert [list(r["metrics"]) for r in results["runs"]] == [["P@5", "ndcg@10", "recall@3"]] * 2
    assert "P@5" in result.output and "recall@3" in result.output  # named, so shown
    # good run per query: answer (3), care (unjudged), related (1), then the next answer: P@5 = 2/5
    assert results["runs"][0]["metrics"]["P@5"]["mean"] == pytest.approx(2 / 5)
    gated = run("eval", s["golden"], s["good"], "-o", s["out"], "--no-judge", "-k", "10", "--fail-under", "P@5=0.9")
    assert gated.exit_code == 1 and "good: P@5 = 0.400 < 0.9" in gated.output
    assert {c["metric"] for c in results["comparisons"]} == {"P@5", "ndcg@10", "recall@3"}  # named, so compared


def test_a_gate_on_a_metric_nothing_can_give_fails_and_says_why(tmp_path: Path, setup: dict[str, Path]) -> None:
    s = setup
    silent = write_run(tmp_path / "silent.jsonl", good_lines(answers=False))
    flags = ["--judge", "offline", "--cache-dir", tmp_path / "cache", "--n-boot", "200"]
    result = run("eval", s["golden"], silent, "-o", s["out"], *flags, "--fail-under", "faithfulness=0.1")
    assert result.exit_code == 1
    assert f"silent: faithfulness has no scored query (no answers in this run {N}; gate 0.1)" in result.output
    results = json.loads((s["out"] / "results.json").read_text())  # the report is written first
    assert results["runs"][0]["metrics"]["faithfulness"]["unscored_reasons"] == {"no answers in this run": N}


def test_a_gate_outside_the_default_set_is_computed_beside_it(setup: dict[str, Path]) -> None:
    s = setup
    flags = ["--no-judge", "--n-boot", "200", "--fail-under", "ndcg_exp@7=0.01"]
    result = run("eval", s["golden"], s["good"], "-o", s["out"], *flags)
    assert result.exit_code == 0, result.output
    metrics = json.loads((s["out"] / "results.json").read_text())["runs"][0]["metrics"]
    assert {"ndcg@10", "map", "ndcg_exp@7", "ndcg@7"} <= set(metrics)  # defaults at k = 1, 3, 5, 7, 10, plus the gate


def test_named_runs_and_parsers(tmp_path: Path, setup: dict[str, Path]) -> None:
    s = setup
    result = run("eval", s["golden"], f"new={s['good']}", f"old={s['weak']}", "-o", s["out"], "--no-judge")
    assert result.exit_code == 0, result.output
    assert [r["name"] for r in json.loads((s["out"] / "results.json").read_text())["runs"]] == ["new", "old"]
    assert parse_k("10,1,5,5") == (1, 5, 10)
    assert parse_runs(["a=x.jsonl", "y.jsonl"]) == [("a", Path("x.jsonl")), ("y", Path("y.jsonl"))]
    assert parse_fail_under(["recall@5|g>=2=0.5"]) == [("recall@5|g>=2", 0.5)]
    for bad in (lambda: parse_k("1,x"), lambda: parse_k("0"), lambda: parse_fail_under(["ndcg@10"])):
        with pytest.raises(ConfigError):
            bad()


def test_bad_input_gives_one_clear_line(setup: dict[str, Path], tmp_path: Path) -> None:
    s = setup
    broken = write_run(tmp_path / "broken.jsonl", [good_lines()[0], '{"query_id": "q01", "retrieved": 5}'])
    result = run("eval", s["golden"], broken, "-o", s["out"], "--no-judge")
    assert result.exit_code == 1 and f"Error: {broken}:3: field 'retrieved'" in result.output
    assert not s["out"].exists()  # nothing half-written
    both = run("eval", s["golden"], s["good"], "-o", s["out"], "--no-judge", "--judge", "offline")
    assert both.exit_code == 1 and "not both" in both.output
    assert run("eval", s["golden"], s["good"]).exit_code == 1  # no -o


def test_dry_run_counts_calls_and_calls_nothing(setup: dict[str, Path]) -> None:
    s = setup
    result = run("eval", s["golden"], s["good"], "--judge", "offline", "--dry-run")
    assert result.exit_code == 0, result.output
    rows = {line.split()[1]: line.split()[3] for line in result.output.splitlines() if line.startswith("│")}
    assert rows["relevance"] == str(N) and rows["answer"] == str(N)  # one listwise call and one answer per query
    assert len(GoldenSet.load(s["golden"]).qrels) == 2 * N  # nothing judged


def test_audited_labels_in_the_golden_folder_give_ppi(setup: dict[str, Path]) -> None:
    s = setup
    store = LabelStore.in_folder(s["golden"])
    store.import_judge_labels(GoldenSet.load(s["golden"]).qrels)
    store.record_many(
        LabelEvent(query_id=qid(i), chunk_id=answer_id(i), grade=3, source="human", annotator="ann") for i in range(N)
    )
    result = run("eval", s["golden"], s["good"], "-o", s["out"], "--no-judge", "--n-boot", "200")
    assert result.exit_code == 0, result.output
    corrected = json.loads((s["out"] / "results.json").read_text())["corrected"]
    assert {c["metric"] for c in corrected} == {"pair_precision@5", "pair_precision@10"}
    assert all(c["n_audited"] == N for c in corrected)


def test_agreement_of_several_annotators_from_the_audit_store(setup: dict[str, Path]) -> None:
    s = setup
    store = LabelStore.in_folder(s["golden"])
    store.import_judge_labels(GoldenSet.load(s["golden"]).qrels)  # judge: answer chunks 3
    grades = {"ann": [3, 3, 2, 3, 3, 1], "bob": [3, 2, 2, 3, 3, 2], "cy": [3, 3, 3, 3, 2, 1]}
    store.record_many(
        LabelEvent(query_id=qid(i), chunk_id=answer_id(i), grade=g, source="human", annotator=who)
        for who, values in grades.items()
        for i, g in enumerate(values)
    )
    result = run("eval", s["golden"], s["good"], "-o", s["out"], "--no-judge", "--n-boot", "200")
    assert result.exit_code == 0, result.output
    agreement = json.loads((s["out"] / "results.json").read_text())["agreement"]
    # one grade per item, the lower median of three: [3, 3, 2, 3, 3, 1] against the judge's 3s
    assert agreement["overall"]["confusion_matrix"][3] == [0, 1, 1, 4]
    assert agreement["overall"]["leniency"]["value"] == pytest.approx((0 + 0 + 1 + 0 + 0 + 2) / 6, abs=1e-6)
    humans = agreement["between_humans"]
    assert humans["annotators"] == ["ann", "bob", "cy"] and humans["n_items"] == 6
    expected = krippendorff.alpha(reliability_data=list(grades.values()), level_of_measurement="ordinal")
    assert humans["krippendorff_alpha"]["value"] == pytest.approx(expected, abs=1e-6)
    assert humans["fleiss_kappa"]["n"] == 6
    text = " ".join(result.output.split())
    assert "Judge vs human on 6 audited items (ann, bob, cy)" in text and "between annotators: Fleiss' kappa" in text


def test_without_an_audit_store_the_summary_says_how_to_audit(setup: dict[str, Path]) -> None:
    s = setup
    result = run("eval", s["golden"], s["good"], "-o", s["out"], "--no-judge", "--n-boot", "200")
    assert result.exit_code == 0, result.output
    assert f"assay audit {s['golden']}" in " ".join(result.output.split())
    assert json.loads((s["out"] / "results.json").read_text())["agreement"] is None


def relevant_or_invalid(body: dict[str, Any]) -> str:
    """A scripted server answer: every passage of a listwise relevance call graded 1, anything else not JSON (so
    its metrics are unscored, never 0)."""
    schema = body["response_format"]["json_schema"]["name"]
    if schema == "ListwiseRelevance":
        text = body["messages"][-1]["content"]
        ids = re.findall(r'<passage-\w+ id="([^"]+)"', text)
        return json.dumps({"judgements": [{"id": i, "reason": "r", "grade": 1} for i in ids]})
    return "not JSON"


def test_through_the_fake_openai_server(setup: dict[str, Path], tmp_path: Path) -> None:
    s = setup

    with FakeOpenAIServer(relevant_or_invalid) as server:
        result = run(
            "eval", s["golden"], s["good"], "-o", s["out"], "--judge", "openai/judge-x", "--api-base", server.url,
            "--api-key", "sk-test", "--cache-dir", tmp_path / "cache", "--n-boot", "200",
        )  # fmt: skip
    assert result.exit_code == 0, result.output
    metrics = json.loads((s["out"] / "results.json").read_text())["runs"][0]["metrics"]
    assert metrics["faithfulness"]["mean"] is None
    assert metrics["faithfulness"]["unscored_reasons"] == {"invalid_output": N}
    assert metrics["P@3"]["mean"] == pytest.approx(1.0)  # the judged care chunk is grade 1 now
    saved = GoldenSet.load(s["golden"])
    assert sum(q.provenance.model == "openai/judge-x" for q in saved.qrels) == 2 * N


def test_max_cost_stops_cleanly_without_a_report(setup: dict[str, Path], tmp_path: Path) -> None:
    s = setup
    with FakeOpenAIServer() as server:  # default answers are not valid for these prompts: cost is what matters
        result = run(
            "eval", s["golden"], s["good"], "-o", s["out"], "--judge", "openai/judge-x", "--api-base", server.url,
            "--api-key", "sk-test", "--cache-dir", tmp_path / "cache", "--price", "1000/1000", "--max-cost", "0.001",
            "--concurrency", "1",
        )  # fmt: skip
        calls = server.calls
    assert result.exit_code == 1
    assert "budget of $0.001 is spent" in result.output and "--max-cost" in result.output
    assert not s["out"].exists()
    assert calls <= 2  # one call spends the budget (plus its repair attempt); nothing after


def test_comparison_flags_baseline_correction_and_primary(setup: dict[str, Path]) -> None:
    s = setup
    mixed = write_run(s["out"].parent / "mixed.jsonl", [*good_lines()[: N // 2], *weak_lines()[N // 2 :]])
    args = ["eval", s["golden"], s["good"], s["weak"], mixed, "-o", s["out"], "--no-judge", "--n-boot", "200"]
    result = run(*args, "--baseline", "weak", "--correction", "tukey", "--fail-under", "mrr=0")
    assert result.exit_code == 0, result.output
    results = json.loads((s["out"] / "results.json").read_text())
    assert results["primary_metric"] == "mrr"  # the first --fail-under metric leads when --primary is not given
    comps = results["comparisons"]
    assert {(c["a"], c["b"]) for c in comps} == {("weak", "good"), ("weak", "mixed")}
    assert all(c["correction"] == "tukey" and c["family_size"] == 2 for c in comps)
    assert [c["metric"] for c in comps if c["primary"]] == ["mrr", "mrr"]
    assert "Tukey HSD over 2 pairs" in result.output
    bad = run(*args, "--correction", "bonferroni")
    assert bad.exit_code == 2 and "bonferroni" in bad.output
    missing = run(*args, "--baseline", "nope")
    assert missing.exit_code == 1 and "--baseline nope: no run of that name" in missing.output


@pytest.mark.parametrize(("mode", "pairs"), [("approx", 0), ("answers", 4 * N), ("exact", 8 * N)])
def test_diagnosis_mode_flag_sets_the_per_pair_checks(setup: dict[str, Path], tmp_path: Path, mode: str,
                                                      pairs: int) -> None:  # fmt: skip
    # 4 retrieved chunks with text per query, one answer sentence and one reference claim: one call per chunk and side
    s = setup
    flags = ["--judge", "offline", "--cache-dir", tmp_path / "cache", "--n-boot", "200", "--diagnosis", mode]
    dry = run("eval", s["golden"], s["good"], "--dry-run", *flags)  # calls and cached (repeats within the run)
    rows = {c[1]: int(c[3]) + int(c[5]) for c in map(str.split, dry.output.splitlines()) if c and c[0] == "│"}
    assert rows.get("diagnosis_pairs", 0) == pairs
    result = run("eval", s["golden"], s["good"], "-o", s["out"], *flags)
    assert result.exit_code == 0, result.output
    usage = json.loads((s["out"] / "results.json").read_text())["usage"]
    checks = usage.get("diagnosis_pairs", {"calls": 0, "cached": 0})
    assert checks["calls"] + checks["cached"] == pairs


def test_an_unknown_diagnosis_mode_is_refused(setup: dict[str, Path]) -> None:
    s = setup
    result = run("eval", s["golden"], s["good"], "-o", s["out"], "--judge", "offline", "--diagnosis", "pairs")
    assert result.exit_code == 2 and "approx" in result.output and not s["out"].exists()
