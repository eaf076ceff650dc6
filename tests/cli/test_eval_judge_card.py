"""``assay eval`` shows the judge's card beside the metrics when one exists, and says plainly when none does."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from click.testing import CliRunner

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "pipelines" / "evaluate"))
from evaluate_fixture import good_lines, save_golden, write_run

from assay.cli import main


def run(*args: str | Path) -> Any:
    return CliRunner().invoke(main, [str(a) for a in args])


def evaluate(tmp_path: Path, golden: Path, out: str, *extra: str | Path) -> dict[str, Any]:
    result = run(
        "eval", golden, write_run(tmp_path / "good.jsonl", good_lines()), "-o", tmp_path / out, "--judge", "offline",
        "--n-boot", "200", "--cache-dir", tmp_path / "cache", "--no-add-labels", *extra,
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    data: dict[str, Any] = json.loads((tmp_path / out / "results.json").read_text())
    return {"card": data["judge_card"], "md": (tmp_path / out / "report.md").read_text(), "out": result.output}


def test_no_card_is_said_plainly_then_the_card_judge_check_kept_is_shown(tmp_path: Path) -> None:
    golden = save_golden(tmp_path / "golden")
    before = evaluate(tmp_path, golden, "r1")
    assert before["card"]["found"] is False
    assert "no judge card for offline" in before["md"] and "assay judge-check --judge offline" in before["md"]
    assert "no judge card for offline" in " ".join(before["out"].split())
    checked = run(
        "judge-check", "--judge", "offline", "--labels", golden, "--cache-dir", tmp_path / "cache",
        "-o", tmp_path / "card", "--queries", "4", "--repeats", "1",
    )  # fmt: skip
    assert checked.exit_code == 0, checked.output
    after = evaluate(tmp_path, golden, "r2")
    card = json.loads((tmp_path / "card" / "card.json").read_text())
    assert after["card"]["found"] is True and after["card"]["model"] == "offline" and after["card"]["note"] is None
    consistency = next(s for s in card["sections"] if s["name"] == "consistency")["figures"][0]
    assert consistency["key"] == "consistency.changed" and consistency["label"] in after["card"]["figures"]
    shown = after["card"]["figures"][consistency["label"]]
    assert shown == f"0.0% [0.0%, 0.0%] (n={consistency['n']})"  # the offline judge is deterministic
    assert "judge card:** judge card of offline" in after["md"] and "judge card of offline" in after["out"]
    # this golden set's drawn pairs hold no grade-0 pair: the card says which probes that leaves out
    assert any("irrelevant" in line for line in card["missing"])


def test_a_card_given_with_judge_card_for_another_model_is_shown_with_a_note(tmp_path: Path) -> None:
    golden = save_golden(tmp_path / "golden")
    checked = run("judge-check", "--judge", "offline", "--labels", golden, "--no-cache", "-o", tmp_path / "card",
                  "--queries", "2", "--repeats", "0")  # fmt: skip
    assert checked.exit_code == 0, checked.output
    card = json.loads((tmp_path / "card" / "card.json").read_text())
    card["model"] = "openai/other"
    (tmp_path / "card" / "card.json").write_text(json.dumps(card))
    shown = evaluate(tmp_path, golden, "r", "--judge-card", tmp_path / "card")
    assert shown["card"]["found"] is True
    assert "the card is of openai/other, not of the judge in use (offline)" in shown["md"]
