"""``assay build --pool-run``: pools from the user's own retrievers (run files after --stop-after; commands)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

from click.testing import CliRunner

from assay.cli import main

DEMO = Path(__file__).resolve().parents[2] / "datasets" / "demo" / "corpus"
BASE = ("--judge", "offline", "--questions", "6", "--seed", "2")


def run(*args: str | Path) -> tuple[int, str]:
    result = CliRunner().invoke(main, [str(a) for a in args])
    return result.exit_code, result.output


def records(path: Path) -> list[dict[str, object]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()[1:]]  # after the header line


def retriever(tmp_path: Path, body: str) -> str:
    """A command template running a small Python retriever (``{query}``, ``{qid}`` and ``{k}`` in its argv)."""
    script = tmp_path / "search.py"
    script.write_text("import sys\nquery, qid, k = sys.argv[1], sys.argv[2], int(sys.argv[3])\n" + body)
    return f"cmd:{sys.executable} {script} {{query}} {{qid}} {{k}}"


def test_two_steps_questions_then_a_trec_run_pooled_instead_of_bm25(tmp_path: Path) -> None:
    code, out = run("build", DEMO, "-o", tmp_path / "stage", *BASE, "--stop-after", "questions")
    assert code == 0, out
    assert "stopped after questions" in out and not (tmp_path / "stage" / "qrels.jsonl").exists()
    topics = [line.split("\t") for line in (tmp_path / "stage" / "topics.tsv").read_text().splitlines()]
    chunk_ids = [str(c["id"]) for c in records(tmp_path / "stage" / "chunks.jsonl")]
    far = chunk_ids[-3:]  # the retriever's answer: the same three chunks for every question
    lines = [f"{qid} Q0 {cid} {rank} {10 - rank} es" for qid, _ in topics for rank, cid in enumerate(far, 1)]
    (tmp_path / "es.trec").write_text("\n".join(lines) + "\n")
    code, out = run("build", DEMO, "-o", tmp_path / "g", *BASE, "--pool-run", f"es={tmp_path / 'es.trec'}",
                    "--no-pool-bm25", "--pool-k", "2")  # fmt: skip
    assert code == 0, out
    questions = records(tmp_path / "g" / "questions.jsonl")
    assert sorted(str(q["id"]) for q in questions) == sorted(qid for qid, _ in topics)
    pairs = {(str(q["query_id"]), str(q["chunk_id"])) for q in records(tmp_path / "g" / "qrels.jsonl")}
    for question in questions:
        assert {(str(question["id"]), cid) for cid in far[:2]} <= pairs  # the top 2 of the run are judged
        pool = question["metadata"]["pool"]  # type: ignore[index]
        assert pool["run_es"] == 2 and "bm25" not in pool
    manifest = json.loads((tmp_path / "g" / "manifest.json").read_text())
    assert manifest["settings"]["pool_runs"] == [f"es={tmp_path / 'es.trec'}"] and manifest["counts"]["pool_bm25"] == 0


def test_a_command_is_asked_per_question_during_the_build(tmp_path: Path) -> None:
    code, out = run("build", DEMO, "-o", tmp_path / "stage", *BASE, "--stop-after", "questions")
    chunk_ids = [str(c["id"]) for c in records(tmp_path / "stage" / "chunks.jsonl")]
    body = f"ids = {chunk_ids[:5]!r}\nprint('# ranked for', qid)\nfor cid in ids[:k]:\n    print(cid, 1.0)\n"
    log = tmp_path / "asked.txt"
    body += f"open({str(log)!r}, 'a').write(qid + '\\t' + query + '\\n')\n"
    code, out = run("build", DEMO, "-o", tmp_path / "g", *BASE, "--pool-run", "mine=" + retriever(tmp_path, body),
                    "--pool-k", "3")  # fmt: skip
    assert code == 0, out
    questions = {str(q["id"]): str(q["text"]) for q in records(tmp_path / "g" / "questions.jsonl")}
    asked = dict(line.split("\t") for line in log.read_text().splitlines())
    assert asked.keys() >= questions.keys() and all(asked[q] == t for q, t in questions.items())
    pairs = {(str(q["query_id"]), str(q["chunk_id"])) for q in records(tmp_path / "g" / "qrels.jsonl")}
    assert all((qid, cid) in pairs for qid in questions for cid in chunk_ids[:3])


def test_a_failing_command_stops_the_build_with_its_stderr(tmp_path: Path) -> None:
    template = retriever(tmp_path, "sys.stderr.write('index es-prod not found\\n')\nsys.exit(3)\n")
    code, out = run("build", DEMO, "-o", tmp_path / "g", *BASE, "--pool-run", "es=" + template)
    assert code == 1 and "exited with status 3: index es-prod not found" in out and "--pool-run es" in out
    assert not (tmp_path / "g").exists()


def test_a_slow_command_times_out(tmp_path: Path) -> None:
    template = retriever(tmp_path, "import time\ntime.sleep(30)\n")
    code, out = run("build", DEMO, "-o", tmp_path / "g", *BASE, "--pool-run", "es=" + template,
                    "--pool-run-timeout", "0.5")  # fmt: skip
    assert code == 1 and "gave no answer within 0.5 s" in out


def test_runs_over_other_chunks_or_other_questions_are_refused(tmp_path: Path) -> None:
    code, out = run("build", DEMO, "-o", tmp_path / "g", *BASE, "--pool-run", "es=" + retriever(tmp_path,
                    "print('doc-17_passage-3')\n"))  # fmt: skip
    assert code == 1 and "none of its" in out and "is a chunk of this corpus (e.g. 'doc-17_passage-3')" in out
    (tmp_path / "other.trec").write_text("q-elsewhere Q0 c1 1 1.0 x\n")
    code, out = run("build", DEMO, "-o", tmp_path / "g", *BASE, "--pool-run", f"es={tmp_path / 'other.trec'}")
    assert code == 1 and "ranks none of the" in out and "--stop-after questions" in out
    code, out = run("build", DEMO, "-o", tmp_path / "g", *BASE, "--pool-run", "es")
    assert code == 1 and "give NAME=RUN_FILE or NAME=cmd:COMMAND" in out
    code, out = run("build", DEMO, "-o", tmp_path / "g", *BASE, "--pool-run", "es=missing.trec")
    assert code == 1 and "run file missing.trec not found" in out
