"""The CLI skeleton: help, version, and the one-line error contract."""

from __future__ import annotations

from click.testing import CliRunner

from assay import __version__
from assay.cli import main


def test_help_lists_examples() -> None:
    result = CliRunner().invoke(main, ["--help"])
    assert result.exit_code == 0
    assert "Examples:" in result.output


def test_version() -> None:
    result = CliRunner().invoke(main, ["--version"])
    assert result.exit_code == 0
    assert __version__ in result.output
