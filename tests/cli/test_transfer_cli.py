"""`assay export` and `assay import beir|trec|ragas`: output, counts, warnings, file:line errors, no half output."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from assay.cli import main
from assay.formats.golden import GoldenSet

TESTS = Path(__file__).resolve().parents[1]
V1 = TESTS / "fixtures" / "formats" / "v1" / "golden"
TRANSFER = TESTS / "fixtures" / "transfer"


def run(*args: str | Path) -> tuple[int, str, str]:
    result = CliRunner().invoke(main, [str(a) for a in args])
    return result.exit_code, result.stdout, result.stderr


@pytest.mark.parametrize(
    ("fmt", "files"),
    [
        ("beir", "corpus.jsonl (3), queries.jsonl (2), qrels/test.tsv (3)"),
        ("trec", "qrels.txt (3), topics.tsv (2)"),
        ("ragas", "ragas.jsonl (2), ragas.csv (2)"),
        ("csv", "labels.csv (4), questions.csv (2)"),
    ],
)
def test_export_each_format_reports_files_and_unscored(tmp_path: Path, fmt: str, files: str) -> None:
    code, out, err = run("export", V1, "--to", fmt, "-o", tmp_path / "out")
    assert code == 0, err
    assert f"Wrote {fmt} to {tmp_path / 'out'}: {files}" in out
    assert "1 unscored pair(s) not exported as grades" in out


def test_export_min_grade_and_existing_folder(tmp_path: Path) -> None:
    code, out, _ = run("export", V1, "--to", "trec", "-o", tmp_path / "t", "--min-grade", "1")
    assert code == 0
    assert "2 graded labels exported" in out and "1 graded label(s) below grade 1 left out" in out
    assert (tmp_path / "t" / "qrels.txt").read_text().splitlines() == [
        "q1 0 policies/refunds.md#1-5e6f7a8b 3",
        "q2 0 faq.html#0-9c0d1e2f 3",
    ]
    code, _, err = run("export", V1, "--to", "beir", "-o", tmp_path / "t")
    assert code == 1 and "exists and is not empty" in err and "--overwrite" in err
    assert sorted(p.name for p in (tmp_path / "t").iterdir()) == ["qrels.txt", "topics.tsv"]
    code, _, _ = run("export", V1, "--to", "beir", "-o", tmp_path / "t", "--overwrite")
    assert code == 0 and (tmp_path / "t" / "qrels" / "test.tsv").is_file()


def test_export_of_a_missing_golden_set(tmp_path: Path) -> None:
    (tmp_path / "empty").mkdir()
    code, _, err = run("export", tmp_path / "empty", "--to", "csv", "-o", tmp_path / "o")
    assert code == 1 and "is incomplete" in err
    assert not (tmp_path / "o").exists()


def test_cli_beir_round_trip(tmp_path: Path) -> None:
    assert run("export", V1, "--to", "beir", "-o", tmp_path / "beir")[0] == 0
    code, out, err = run("import", "beir", tmp_path / "beir", "-o", tmp_path / "golden", "--source", "human")
    assert code == 0, err
    assert "2 questions, 3 passages (2 documents), 3 labels (source human)" in out
    original, back = GoldenSet.load(V1), GoldenSet.load(tmp_path / "golden")
    assert back.qrels_map() == original.qrels_map()
    assert [q.model_dump() for q in back.questions] == [q.model_dump() for q in original.questions]
    assert [c.model_dump() for c in back.chunks] == [c.model_dump() for c in original.chunks]


def test_import_beir_warns_about_unknown_ids_on_stderr(tmp_path: Path) -> None:
    code, out, err = run("import", "beir", TRANSFER / "beir", "-o", tmp_path / "g")
    assert code == 0
    assert "3 questions, 4 passages (4 documents), 5 labels (source imported)" in out
    assert "skipped: passages_empty 1, qrels_unknown_passage 2, qrels_unknown_query 1, queries_without_qrels 1" in out
    assert "warning: 1 qrels line(s) name a query that is not in the files" in err
    assert "warning: 2 qrels line(s) name a passage" in err
    assert GoldenSet.load(tmp_path / "g").manifest.settings["source_format"] == "beir"


def test_import_errors_name_file_and_line_and_write_nothing(tmp_path: Path) -> None:
    code, _, err = run("import", "beir", TRANSFER / "beir", "--split", "dev", "-o", tmp_path / "g")
    assert code == 1
    assert f"{TRANSFER / 'beir' / 'qrels' / 'dev.tsv'}:2: grade 4 is outside assay's scale" in err
    assert not (tmp_path / "g").exists()
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"user_input": "fine"}\n{"user_input": "x", "reference_contexts": "[1, 2"}\n{oops\n')
    code, _, err = run("import", "ragas", bad, "-o", tmp_path / "g")
    assert code == 1 and f"{bad}:3: invalid JSON" in err
    assert not (tmp_path / "g").exists()


def test_import_trec_and_ragas(tmp_path: Path) -> None:
    trec = TRANSFER / "trec"
    args = ("import", "trec", trec / "qrels.txt", trec / "topics.txt", trec / "corpus.jsonl")
    code, out, err = run(*args, "-o", tmp_path / "t", "--source", "human")
    assert code == 0, err
    assert "2 questions, 3 passages (3 documents), 4 labels (source human)" in out
    assert "warning: 1 qrels line(s) name a query" in err and "'303'" in err
    code, out, err = run("import", "ragas", TRANSFER / "ragas" / "testset.csv", "-o", tmp_path / "r", "--grade", "3")
    assert code == 0, err
    golden = GoldenSet.load(tmp_path / "r")
    assert {g for d in golden.qrels_map().values() for g in d.values()} == {3}
    assert golden.manifest.settings["import"]["schema"] == "ragas 0.3 SingleTurnSample"


@pytest.mark.parametrize(
    "command", [["export"], ["import"], ["import", "beir"], ["import", "trec"], ["import", "ragas"]]
)
def test_every_command_help_shows_an_example(command: list[str]) -> None:
    code, out, _ = run(*command, "--help")
    assert code == 0 and "Examples:" in out and "assay " in out
