"""The committed fixture is what the builder makes, and it is internally consistent."""

from __future__ import annotations

import math

from report_fixture import FIXTURE_DIR, XSS_QUERY, fixture_texts

from assay.results import EvalResult, QueryResult


def test_committed_fixture_matches_builder() -> None:
    for name, text in fixture_texts().items():
        assert (FIXTURE_DIR / name).read_text(encoding="utf-8") == text, (
            f"rerun tests/report/report_fixture.py ({name})"
        )


def test_fixture_means_are_means_of_scored_rows(result: EvalResult, rows: list[QueryResult]) -> None:
    assert len(result.runs) == 3 and any(r.query_id == XSS_QUERY for r in rows)
    for run in result.runs:
        mine = [r for r in rows if r.run == run.name]
        for metric, summary in run.metrics.items():
            values = [r.metrics[metric] for r in mine]
            scored = [v for v in values if v is not None]
            assert summary.n_scored == len(scored)
            assert summary.n_unscored == len(values) - len(scored) == sum(summary.unscored_reasons.values())
            assert math.isclose(summary.mean or 0.0, sum(scored) / len(scored), abs_tol=1e-5)
    assert any(s.n_unscored for run in result.runs for s in run.metrics.values())


def test_results_written_before_agreement_still_load() -> None:
    """A results.json from before the agreement and audit-size fields loads, with those fields at their defaults."""
    old = EvalResult.model_validate_json((FIXTURE_DIR / "eval_result_v1_before_agreement.json").read_text("utf-8"))
    assert old.agreement is None and old.corrected
    assert all(c.audit_targets == [] and c.correlation is None for c in old.corrected)
