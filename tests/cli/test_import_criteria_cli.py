"""`assay import criteria`: peers' metric definitions to criteria files, refused over existing files without
--force, one file:line error for a definition it cannot read; an imported judged criterion under the offline judge is
unscored ("needs a model judge"), never 0 and never a crash."""

from __future__ import annotations

import json
import sys
from pathlib import Path

from click.testing import CliRunner

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "pipelines" / "evaluate"))
from evaluate_fixture import good_lines, save_golden, write_run

from assay.cli import main
from assay.judge.criteria import load_criteria

PEERS = Path(__file__).resolve().parents[1] / "fixtures" / "formats" / "peer_metrics" / "peers.py"
NAMES = ["correctness", "grounded", "policy_answer", "maliciousness", "uses_context", "helpfulness"]


def run(*args: str | Path) -> tuple[int, str]:
    result = CliRunner().invoke(main, [str(a) for a in args])
    return result.exit_code, result.output


def test_import_writes_one_loadable_file_per_definition_and_says_so(tmp_path: Path) -> None:
    out = tmp_path / "criteria"
    code, output = run("import", "criteria", PEERS, "-o", out)
    assert code == 0, output
    assert f"wrote {out / 'grounded.md'} from GEval 'Grounded' (line 17)" in output
    assert f"6 criteria imported from {PEERS}" in output
    assert [c.name for c in load_criteria([out / f"{name}.md" for name in NAMES])] == NAMES


def test_existing_files_are_refused_without_force(tmp_path: Path) -> None:
    out = tmp_path / "criteria"
    assert run("import", "criteria", PEERS, "-o", out)[0] == 0
    (out / "correctness.md").write_text("edited by hand", encoding="utf-8")
    code, output = run("import", "criteria", PEERS, "-o", out)
    assert code == 1
    assert f"{out / 'correctness.md'} exists" in output and "--force" in output
    assert (out / "correctness.md").read_text(encoding="utf-8") == "edited by hand"
    code, _ = run("import", "criteria", PEERS, "-o", out, "--force")
    assert code == 0
    assert load_criteria([out / "correctness.md"])[0].name == "correctness"


def test_a_definition_it_cannot_read_is_one_error_and_nothing_is_written(tmp_path: Path) -> None:
    peers = tmp_path / "metrics.py"
    peers.write_text('ok = AspectCritic(name="ok", definition="Polite?")\n'
                     'bad = AspectCritic(name="bad", definition=open("d.txt").read())\n', encoding="utf-8")  # fmt: skip
    code, output = run("import", "criteria", peers, "-o", tmp_path / "criteria")
    assert code == 1
    assert f"{peers}:2: AspectCritic definition is not a literal" in output and "fix:" in output
    assert "Traceback" not in output
    assert not (tmp_path / "criteria").exists()


def test_an_imported_judged_criterion_waits_for_a_model_judge_offline(tmp_path: Path) -> None:
    criteria = tmp_path / "criteria"
    assert run("import", "criteria", PEERS, "-o", criteria)[0] == 0
    golden = save_golden(tmp_path / "golden")
    good = write_run(tmp_path / "good.jsonl", good_lines())
    code, output = run("eval", golden, good, "--judge", "offline", "--n-boot", "200", "-c",
                       criteria / "maliciousness.md", "-o", tmp_path / "out")  # fmt: skip
    assert code == 0, output
    rows = [json.loads(line) for line in (tmp_path / "out" / "per_query.jsonl").read_text().splitlines()[1:]]
    assert rows, "per_query.jsonl has no question"
    assert {row["unscored"]["criterion:maliciousness"] for row in rows} == {"needs a model judge"}
    assert all(row["metrics"].get("criterion:maliciousness") is None for row in rows)
