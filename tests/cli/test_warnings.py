"""Every warning is a whole sentence: each one the CLI prints (``warning: ...``) and each one a result or manifest
keeps ends with a period. The commands are driven into as many warnings as they have (eval: an offline judge, a run
with an unknown query, unknown ids, texts found nowhere and a missing question, a grown pool, no judge; build: files
it skips or decodes as it can; import: qrels naming nothing), and producers no command here reaches are called
directly."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "pipelines" / "evaluate"))
from evaluate_fixture import PRODUCTS, answer_text, good_lines, qid, save_golden, write_run

from assay.cli import main
from assay.pipelines.bootstrap.strata import plan_warnings
from assay.pipelines.evaluate.runs.assemble import run_notes
from assay.results import OFFLINE_WARNING, RunCounts

TRANSFER = Path(__file__).resolve().parents[1] / "fixtures" / "transfer"
TINY = Path(__file__).resolve().parents[1] / "fixtures" / "corpus" / "tiny"


def run(*args: str | Path) -> Any:
    # wide enough that rich wraps no warning: each is one line, as a cut one would show
    return CliRunner().invoke(main, [str(a) for a in args], env={"COLUMNS": "1000"})


def _printed(text: str) -> list[str]:
    return [line.strip() for line in text.splitlines() if line.strip().startswith("warning:")]


def _unsentenced(warnings: list[str]) -> list[str]:
    return [w for w in warnings if not w.rstrip().endswith(".")]


def _odd_lines() -> list[dict[str, Any]]:
    """Passages given by text, one question left out, a query the golden set does not have, an id that is no chunk
    and a text found in no document."""
    lines: list[dict[str, Any]] = [
        {"query_id": qid(i), "retrieved": [{"text": answer_text(i)}, "no-such-chunk", {"text": "zq xv wk " * 20}]}
        for i in range(1, len(PRODUCTS))
    ]
    return [*lines, {"query_id": "not-a-question", "retrieved": ["no-such-chunk"]}]


def test_every_warning_of_eval_is_a_whole_sentence(tmp_path: Path) -> None:
    golden = save_golden(tmp_path / "golden")
    good = write_run(tmp_path / "good.jsonl", good_lines())
    odd = write_run(tmp_path / "odd.jsonl", _odd_lines())
    result = run("eval", golden, good, odd, "-o", tmp_path / "out", "--judge", "offline", "--n-boot", "200")
    assert result.exit_code == 0, result.output
    kept = json.loads((tmp_path / "out" / "results.json").read_text())["warnings"]
    assert len(kept) >= 6  # offline judge, unknown query, unknown ids, texts found nowhere, missing, pool grown
    assert _unsentenced(kept) == []
    shown = [w for w in kept if w != OFFLINE_WARNING]  # the summary says that one as the verdict's first caveat
    assert len(_printed(result.output)) >= len(shown) and _unsentenced(_printed(result.output)) == []
    no_judge = run("eval", golden, good, "-o", tmp_path / "out2")
    assert no_judge.exit_code == 0 and _printed(no_judge.output) and _unsentenced(_printed(no_judge.output)) == []


def test_every_warning_of_build_and_import_is_a_whole_sentence(tmp_path: Path) -> None:
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    for doc in TINY.iterdir():
        (corpus / doc.name).write_bytes(doc.read_bytes())
    (corpus / "empty.txt").write_text("")
    (corpus / "table.xyz").write_text("a file type assay does not read")
    (corpus / "latin1.txt").write_bytes("Caf\xe9 cr\xe8me, na\xefve fa\xe7ade: the menu of the week.".encode("cp1252"))
    built = run("build", corpus, "-o", tmp_path / "g", "--judge", "offline", "--questions", "1", "--max-per-doc", "1")
    assert built.exit_code == 0, built.output
    assert len(_printed(built.output)) >= 3 and _unsentenced(_printed(built.output)) == []
    manifest = json.loads((tmp_path / "g" / "manifest.json").read_text())
    assert _unsentenced(manifest["warnings"]) == []
    imported = run("import", "beir", TRANSFER / "beir", "-o", tmp_path / "b")
    assert imported.exit_code == 0 and len(_printed(imported.output)) >= 2
    assert _unsentenced(_printed(imported.output)) == []


@pytest.mark.parametrize(
    "warnings",
    [
        plan_warnings(1900, 2000, 8, 10, explicit=False),
        run_notes(
            "run",
            RunCounts(
                unknown_query_ids=1, unknown_chunk_ids=1, failed=1, missing_queries=1, matched_by={"unmatched": 3}
            ),
            [],
        ),
    ],
    ids=["build plan", "run notes"],
)
def test_producers_the_commands_above_do_not_reach_write_whole_sentences(warnings: list[str]) -> None:
    assert warnings and _unsentenced(warnings) == []
