"""One judge-options group: ``build``, ``grade`` and ``eval`` offer the same judge options, in the same order."""

from __future__ import annotations

import re

from click.testing import CliRunner

from assay.cli import main

JUDGE_OPTIONS = ["--judge", "--api-base", "--api-key", "--concurrency", "--rpm", "--tpm", "--cache-dir", "--no-cache",
                 "--max-cost", "--price", "--no-structured", "--timeout", "--max-tokens", "--prompt-dir"]  # fmt: skip


def _options(command: str) -> list[str]:
    result = CliRunner().invoke(main, [command, "--help"], terminal_width=200)
    assert result.exit_code == 0, result.output
    options = result.output.split("\nOptions:\n", 1)[1]
    return re.findall(r"^\s+(?:-\w, )?(--[\w-]+)", options, flags=re.MULTILINE)


def test_build_grade_and_eval_share_the_judge_options_in_one_order() -> None:
    for command in ("build", "grade", "eval"):
        shown = [name for name in _options(command) if name in JUDGE_OPTIONS]
        assert shown == JUDGE_OPTIONS, command


def test_eval_places_no_judge_right_after_judge() -> None:
    shown = _options("eval")
    assert shown[shown.index("--judge") + 1] == "--no-judge"
