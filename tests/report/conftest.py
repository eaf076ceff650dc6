"""Fixtures of the report tests: the committed EvalResult fixture and its per-query rows."""

from __future__ import annotations

from pathlib import Path

import pytest
from demo_evaluation import evaluate_demo
from report_fixture import load

from assay.pipelines.evaluate import Evaluated
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


@pytest.fixture(scope="session")
def demo_evaluated(tmp_path_factory: pytest.TempPathFactory) -> Evaluated:
    """A real evaluation of four runs over the demo golden set (about ten seconds, once per session)."""
    return evaluate_demo(tmp_path_factory.mktemp("demo-eval"))


@pytest.fixture(scope="session")
def demo_one_run(tmp_path_factory: pytest.TempPathFactory) -> Evaluated:
    """The demo golden set with one run evaluated: nothing to compare."""
    return evaluate_demo(tmp_path_factory.mktemp("demo-one"), runs=("hybrid",))


@pytest.fixture(scope="session")
def demo_folder(demo_evaluated: Evaluated) -> Path:
    return Path(demo_evaluated.result.golden)
