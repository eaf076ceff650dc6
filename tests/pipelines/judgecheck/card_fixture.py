"""A small judge card built by hand, for the pins of the card's lookup and rendering."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from assay.pipelines.judgecheck.card import Agreement, Figure, JudgeCard, KindCost, Section

CREATED = datetime(2026, 3, 4, 5, 6, 7, 891011, tzinfo=UTC)


def small_card(**changes: Any) -> JudgeCard:
    """A card of ``openai/judge`` with one figure in each headline place, an agreement and two cost rows."""
    agreement = Agreement(
        figures=[
            Figure(key="agreement.kappa_at1", label="kappa at 1", value=0.5, low=0.25, high=0.75, n=8),
            Figure(key="agreement.leniency", label="leniency", value=-0.125, n=8),
        ],
        confusion=[[1, 0, 0, 0], [0, 2, 0, 0], [0, 0, 3, 0], [4, 0, 0, 5]],
        best_cut=2,
        human_graded=True,
    )
    sections = [
        Section(
            name="consistency",
            note="Repeats <asked> again.",
            figures=[Figure(key="consistency.changed", label="changed", value=0.25, low=0.0, high=0.5, n=4)],
        ),
        Section(
            name="stuffing",
            note="Stuffed passages.",
            figures=[
                Figure(key="stuffing.change", label="mean change", value=1.5, n=2, unscored=1),
                Figure(key="stuffing.rise", label="rose", value=None, n=0, unscored=3),
            ],
        ),
    ]
    costs = [
        KindCost(
            kind="baseline",
            items=10,
            calls=4,
            cached=6,
            unscored=1,
            rejected=2,
            prompt_tokens=300,
            completion_tokens=101,
            cost_usd=0.02,
        ),
        KindCost(
            kind="position", items=0, calls=0, cached=0, unscored=0, prompt_tokens=0, completion_tokens=0, cost_usd=None
        ),
    ]
    fields: dict[str, Any] = {
        "assay_version": "9.9.9",
        "created": CREATED,
        "model": "openai/judge",
        "prompts": {"relevance@v2": "abc", "claims@v1": "def"},
        "source": {"kind": "golden", "path": "gold/<set>", "items": 12, "queries": 3},
        "settings": {"seed": 7},
        "agreement": agreement,
        "agreement_note": None,
        "sections": sections,
        "missing": [],
        "costs": costs,
    }
    fields.update(changes)
    return JudgeCard(**fields)
