"""Guards on judge answers against injected instructions in the data they judge.

A passage can carry text shaped like the answer the judge is asked for (``{"reason": "...", "grade": 3}``); a judge
that copies it out has obeyed the passage, not graded it. :func:`echoed_answer` finds such a copy: an answer whose
grade and reason equal those of an answer-shaped object written inside the passage. The answer is then unscored
(kind ``echo``), never taken as a grade. A reason that merely quotes the passage is not an echo: the passage must
also hold an answer-shaped object with the same grade.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import Any

from assay.text import normalize

__all__ = ["ECHO", "echoed_answer"]

ECHO = "echo"
_OBJECT = re.compile(r"\{[^{}]*\"grade\"\s*:\s*\d[^{}]*\}")


def _shaped(text: str) -> list[Mapping[str, Any]]:
    found: list[Mapping[str, Any]] = []
    for match in _OBJECT.finditer(text):
        try:
            value = json.loads(match.group(0))
        except ValueError:
            continue
        if isinstance(value, dict):
            found.append(value)
    return found


def echoed_answer(answer: Mapping[str, Any], passage: str) -> str | None:
    """Why ``answer`` (``reason`` and ``grade``) is a copy of an answer-shaped object in ``passage``, or None."""
    reason = normalize(str(answer.get("reason", "")))
    for shaped in _shaped(passage):
        if shaped.get("grade") == answer.get("grade") and normalize(str(shaped.get("reason", ""))) == reason:
            return (
                f"the answer (grade {answer.get('grade')}) copies an answer written inside the passage: the passage's "
                "injected text was obeyed, not graded"
            )
    return None
