"""``assay build --queries`` writes no personal data from any field: each kind is planted in the question text, the
id, an extra column or a metadata object, and a trace's query id (a run written by ``assay import traces``); the
build runs offline into a temporary folder with a judge cache of its own, and every written file is searched for
every planted value. A line that is nothing but personal data is dropped, counted and named in a warning."""

from __future__ import annotations

import csv
import json
import re
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "formats"))
from otlp_fixture import rag_trace, write_lines

from assay.cli import main
from assay.formats.golden import GoldenSet

ROOT = Path(__file__).resolve().parents[3]
DEMO = ROOT / "datasets" / "demo" / "corpus"
PLANTED = {
    "email": "alice@example.com",
    "phone": "+44 20 7946 0958",
    "phone9": "612 345 678",  # a 9-digit national number (Spain, Portugal, Poland write them so)
    "card": "4111 1111 1111 1111",
    "amex": "378282246310005",  # 15 digits, Luhn-valid
    "card13": "4222222222222",  # a 13-digit Visa
    "iban": "GB82 WEST 1234 5698 7654 32",
    "token": "sk-abcdefghijklmnop1234",
    "secret32": "q7Xw2Lp9Rt4Kz8Nm3Bv6Hc1Jd5Fg0Ysa",  # a generic secret of 32 letters and digits
    "secret39": "Zr3Kp8Qw1Lm6Nx4Tv9Bc2Hd7Fj0Gs5Yu8Ei3Ao7",  # and of 39
}
SENTENCES = ("please call me back on {x} about the refund", "why does my order for {x} not ship",
             "is the warranty still valid for {x} after two years")  # fmt: skip


def _forms(value: str) -> set[str]:
    """The planted value and its digits alone (a writer that dropped the spaces would still leak it)."""
    digits = re.sub(r"\D", "", value)
    return {value, *([digits] if len(digits) >= 9 and not value.startswith("sk-") else [])}


def _written(*folders: Path) -> dict[Path, str]:
    files = [path for folder in folders for path in folder.rglob("*") if path.is_file()]
    assert files
    return {path: path.read_bytes().decode("utf-8", errors="replace") for path in files}


def _leaks(*folders: Path) -> list[tuple[str, str]]:
    return [(kind, str(path)) for path, text in _written(*folders).items() for kind, value in PLANTED.items()
            for form in _forms(value) if form in text]  # fmt: skip


def _build(log: Path, out: Path, cache: Path) -> Result:
    args = ["build", str(DEMO), "-o", str(out), "--judge", "offline", "--queries", str(log), "--cache-dir", str(cache)]
    return CliRunner().invoke(main, args)


def _csv_log(path: Path) -> Path:
    with path.open("w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle)
        writer.writerow(["id", "question", "user", "count"])
        for n, (kind, value) in enumerate(PLANTED.items()):
            writer.writerow([value, SENTENCES[n % 3].format(x=value), value, 1])  # the id column holds it too
            writer.writerow([f"only-{kind}", value, "", 1])  # a line that is nothing but personal data
        writer.writerow(["ok-1", "How long do refunds take?", "", 2])
    return path


def _jsonl_log(path: Path) -> Path:
    lines = [{"query_id": value, "question": SENTENCES[n % 3].format(x=value), "metadata": {"user": value},
              "timestamp": "2026-01-01T00:00:00Z"} for n, value in enumerate(PLANTED.values())]  # fmt: skip
    lines.append({"id": "ok-1", "question": "How long do refunds take?"})
    path.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    return path


def _traces_log(tmp: Path) -> Path:
    """A run written by ``assay import traces`` from traces whose query id (LangChain metadata) is personal data."""
    traces = [
        rag_trace(n + 1, SENTENCES[n % 3].format(x=value), ["Refunds take 5 days."], "Five days.", start_ms=100 * n,
                  metadata={"query_id": value})
        for n, value in enumerate(PLANTED.values())
    ]  # fmt: skip
    source = write_lines(tmp / "traces.jsonl", *traces)
    run = tmp / "questions.jsonl"
    result = CliRunner().invoke(main, ["import", "traces", str(source), "-o", str(run)])
    assert result.exit_code == 0, result.output
    assert PLANTED["email"] in run.read_text()  # the import kept the query id: the build must mask it
    return run


@pytest.mark.parametrize("shape", ["csv", "jsonl", "traces"])
def test_no_planted_value_in_any_written_file(tmp_path: Path, shape: str) -> None:
    log = {"csv": lambda: _csv_log(tmp_path / "log.csv"), "jsonl": lambda: _jsonl_log(tmp_path / "log.jsonl"),
           "traces": lambda: _traces_log(tmp_path)}[shape]()  # fmt: skip
    out, cache = tmp_path / "g", tmp_path / "cache"
    result = _build(log, out, cache)
    assert result.exit_code == 0, result.output
    assert _leaks(out, cache) == []
    assert not any(form in result.output for value in PLANTED.values() for form in _forms(value))
    golden = GoldenSet.load(out)
    ids = [i for q in golden.questions for i in q.metadata.get("log_ids", [])]
    assert "[EMAIL]" in ids and "[TOKEN]" in ids  # the ids were masked, not dropped


def test_a_line_of_personal_data_only_is_dropped_counted_and_said(tmp_path: Path) -> None:
    out = tmp_path / "g"
    result = _build(_csv_log(tmp_path / "log.csv"), out, tmp_path / "cache")
    assert result.exit_code == 0, result.output
    golden = GoldenSet.load(out)
    assert not any(q.text.startswith("[") and q.text.endswith("]") for q in golden.questions)
    assert golden.manifest.counts["dropped_by_scrub"] == len(PLANTED)
    assert golden.manifest.counts["log_lines"] == len(PLANTED) + 1  # the kept lines: one per kind and the refund
    # the dropped lines are the CSV's rows 3, 5, 7, ... (row 1 is the header); the warning names the first five
    said = " ".join(result.output.split())
    dropped = f"{len(PLANTED)} logged question(s) held nothing but personal data once masked (line(s) 3, 5, 7, 9, 11"
    assert dropped in said
    assert "0 warning(s)" not in said


def test_a_log_of_personal_data_only_is_refused_and_nothing_written(tmp_path: Path) -> None:
    log = tmp_path / "log.txt"
    log.write_text("alice@example.com\n+44 20 7946 0958\n", encoding="utf-8")
    out = tmp_path / "g"
    result = _build(log, out, tmp_path / "cache")
    assert result.exit_code != 0
    assert "every logged question held nothing but personal data once masked (lines 1, 2)" in " ".join(
        result.output.split()
    )
    assert "Traceback" not in result.output and not out.exists()
