"""Fixtures of the audit tests."""

from __future__ import annotations

from pathlib import Path

import pytest
from audit_fixtures import build_golden


@pytest.fixture
def golden_dir(tmp_path: Path) -> Path:
    return build_golden(tmp_path / "golden")
