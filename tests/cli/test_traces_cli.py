"""``assay import traces``: what it says, the run it writes (evaluated by ``assay eval --no-judge``), and bad input:
each an error naming the file and line, exit 1, and no run file written."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "formats"))
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "pipelines" / "evaluate"))
from otlp_fixture import documents, rag_trace, span, write_lines
from passages_fixture import QUESTIONS, chunk_text, save_passages_golden

from assay.cli import main


def run(*args: str | Path) -> tuple[int, str, str]:
    result = CliRunner().invoke(main, [str(a) for a in args])
    return result.exit_code, result.stdout, result.stderr


def traffic(tmp_path: Path) -> Path:
    return write_lines(
        tmp_path / "traces.jsonl",
        rag_trace(1, QUESTIONS["q1"][0], [chunk_text("returns#1"), chunk_text("returns#2")], "Within 30 days."),
        rag_trace(2, QUESTIONS["q2"][0], [chunk_text("tent#2"), chunk_text("tent#1")], "3.2 kg.", start_ms=50),
        rag_trace(3, "Do you ship to Mars?", [chunk_text("shipping#1")], "No.", start_ms=90),
    )


def test_import_traces_then_eval(tmp_path: Path) -> None:
    golden = save_passages_golden(tmp_path / "golden")
    out = tmp_path / "prod.jsonl"
    code, stdout, stderr = run("import", "traces", traffic(tmp_path), "-o", out, "--golden", golden)
    assert code == 0, stderr
    assert f"Read 3 trace(s) (9 spans) from {tmp_path / 'traces.jsonl'}; wrote 2 run line(s) to {out}" in stdout
    assert f"matched to {golden}: 2 by question" in stdout
    assert "note: 1 trace(s) match no golden question" in stdout and "'Do you ship to Mars?'" in stdout
    code, stdout, stderr = run("eval", golden, out, "-o", tmp_path / "report", "--no-judge", "-k", "1,2",
                               "--n-boot", "200", "--verbose")  # fmt: skip
    assert code == 0, stderr
    result = json.loads((tmp_path / "report" / "results.json").read_text(encoding="utf-8"))["runs"][0]
    assert result["name"] == "prod" and result["counts"]["matched_by"] == {"exact": 4}  # every text located
    # q1 ranks its answer first, q2 ranks a grade-0 paragraph above its answer: P@1 = (1 + 0) / 2
    assert result["metrics"]["P@1"]["mean"] == 0.5 and result["metrics"]["recall@2"]["mean"] == 1.0
    system = result["system"]
    assert system["target"] == "traces traces.jsonl" and system["latency_ms"]["p50"] == 120.0
    assert (system["prompt_tokens"], system["completion_tokens"], system["cost_usd"]) == (100, 20, None)


def test_without_golden_the_run_keeps_the_questions(tmp_path: Path) -> None:
    out = tmp_path / "run.jsonl"
    code, stdout, _ = run("import", "traces", traffic(tmp_path), "-o", out)
    assert code == 0 and "query ids: 3 by trace id" in stdout
    lines = [json.loads(raw) for raw in out.read_text(encoding="utf-8").splitlines()[1:]]
    assert [line["question"] for line in lines] == [QUESTIONS["q1"][0], QUESTIONS["q2"][0], "Do you ship to Mars?"]


def test_an_existing_run_file_needs_overwrite(tmp_path: Path) -> None:
    out = tmp_path / "run.jsonl"
    out.write_text("keep me\n", encoding="utf-8")
    code, _, stderr = run("import", "traces", traffic(tmp_path), "-o", out)
    assert code == 1 and "exists: choose another file or pass --overwrite" in stderr
    assert out.read_text(encoding="utf-8") == "keep me\n"
    assert run("import", "traces", traffic(tmp_path), "-o", out, "--overwrite")[0] == 0
    assert out.read_text(encoding="utf-8").startswith('{"assay": "runs"')


@pytest.mark.parametrize(
    ("content", "where", "says"),
    [
        ("", "bad.jsonl:1", "empty file"),
        ("question,answer\nq,a\n", "bad.jsonl:1", "not JSON"),
        ('{"question": "q"}\n', "bad.jsonl:1", "a JSON object of another shape"),
    ],
)
def test_files_that_are_not_traces_stop_with_nothing_written(
    tmp_path: Path, content: str, where: str, says: str
) -> None:
    bad = tmp_path / "bad.jsonl"
    bad.write_text(content, encoding="utf-8")
    out = tmp_path / "run.jsonl"
    code, _, stderr = run("import", "traces", bad, "-o", out)
    assert code == 1 and f"{where}: {says}" in stderr and "expected OTLP JSON" in stderr
    assert not out.exists() and list(tmp_path.iterdir()) == [bad]


def test_a_bad_span_stops_with_its_line_and_nothing_written(tmp_path: Path) -> None:
    """The second trace (line 2) has a span with documents and no kind; the first trace was fine."""
    bad = [span(9, 1, kind="CHAIN", attrs={"input.value": "q?"}), span(9, 2, 1, name="search", attrs=documents(["A"]))]
    path = write_lines(tmp_path / "traces.jsonl", rag_trace(1, "q?", ["A"], "a"), bad)
    out = tmp_path / "run.jsonl"
    code, _, stderr = run("import", "traces", path, "-o", out)
    assert code == 1 and "traces.jsonl:2: span 'search'" in stderr and "openinference.span.kind" in stderr
    assert not out.exists()


def test_no_matching_trace_is_an_error_with_the_fix(tmp_path: Path) -> None:
    golden = save_passages_golden(tmp_path / "golden")
    path = write_lines(tmp_path / "t.jsonl", rag_trace(1, "Do you ship to Mars?", ["x"], "No."))
    code, _, stderr = run("import", "traces", path, "-o", tmp_path / "run.jsonl", "--golden", golden)
    assert code == 1 and "matches a golden question" in stderr and "assay.query_id" in stderr
    assert not (tmp_path / "run.jsonl").exists()


def test_help_shows_the_command(tmp_path: Path) -> None:
    code, stdout, _ = run("import", "--help")
    assert code == 0 and "traces" in stdout and "assay import traces traces.jsonl -o run.jsonl" in stdout
    code, stdout, _ = run("import", "traces", "--help")
    assert code == 0 and "OpenInference" in stdout and "--golden" in stdout


def test_traces_without_a_golden_set_build_one_then_evaluate_against_it(tmp_path: Path) -> None:
    """The loop of issue 32: traces -> a run keeping their questions -> a golden set from those questions
    (``build --queries``) over the same documents -> the traces matched to it and evaluated."""
    from passages_fixture import make_passages_golden

    corpus = tmp_path / "corpus"
    corpus.mkdir()
    for document in make_passages_golden().documents:
        (corpus / f"{document.id.replace('/', '_')}.txt").write_text(document.text, encoding="utf-8")
    first = tmp_path / "questions.jsonl"
    assert run("import", "traces", traffic(tmp_path), "-o", first)[0] == 0
    golden = tmp_path / "golden"
    code, _, stderr = run("build", corpus, "-o", golden, "--judge", "offline", "--queries", first, "--questions", 3)
    assert code == 0, stderr
    prod = tmp_path / "prod.jsonl"
    code, stdout, stderr = run("import", "traces", tmp_path / "traces.jsonl", "-o", prod, "--golden", golden)
    assert code == 0, stderr
    assert "wrote 3 run line(s)" in stdout  # every trace's question is one of the golden set's
    code, stdout, stderr = run("eval", golden, prod, "-o", tmp_path / "report", "--no-judge")
    assert code == 0, stderr
    result = json.loads((tmp_path / "report" / "results.json").read_text())
    assert result["runs"][0]["counts"]["queries_evaluated"] == 3
