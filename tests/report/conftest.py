"""Fixtures of the report tests: the committed EvalResult fixture and its per-query rows."""

from __future__ import annotations

import pytest
from report_fixture import load

from assay.report import render_html
from assay.results import EvalResult, QueryResult


@pytest.fixture(scope="session")
def fixture_result() -> tuple[EvalResult, list[QueryResult]]:
    return load()


@pytest.fixture
def result(fixture_result: tuple[EvalResult, list[QueryResult]]) -> EvalResult:
    return fixture_result[0].model_copy(deep=True)


@pytest.fixture
def rows(fixture_result: tuple[EvalResult, list[QueryResult]]) -> list[QueryResult]:
    return [row.model_copy(deep=True) for row in fixture_result[1]]


@pytest.fixture(scope="session")
def fixture_html(fixture_result: tuple[EvalResult, list[QueryResult]]) -> str:
    """The fixture rendered once (drawing the plots takes a few seconds)."""
    return render_html(*fixture_result)
