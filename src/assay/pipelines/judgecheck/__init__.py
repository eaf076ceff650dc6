"""Judge cards: how far a judge agrees with people, and how far position, length, keyword stuffing and injected
instructions move its grades, measured before the judge is trusted with a golden set.

``source`` draws graded (question, passage) pairs from a golden set or a SMART collection (CISI); ``probes`` alters
passages one way each; ``plan`` lists every call (priced by ``--dry-run``); ``run`` asks them through the judge
(cached like any call) and computes the figures of ``card``; ``render`` writes ``card.json``, ``card.md`` and
``card.html``; ``lookup`` keeps a copy of each card beside the judge cache and gives ``assay eval`` its summary;
``answers`` measures a judge's answer measures against people's judgements of answers (``--answers``);
``criterion`` measures a team's judged criterion on such answers (``--criterion``: consistency, verbosity,
injection).
"""

from __future__ import annotations

from assay.pipelines.judgecheck.card import JudgeCard
from assay.pipelines.judgecheck.plan import CheckSettings, plan
from assay.pipelines.judgecheck.render import load_card, write_card
from assay.pipelines.judgecheck.run import check_judge, estimate_check
from assay.pipelines.judgecheck.source import ProbeSource, load_source

__all__ = [
    "CheckSettings",
    "JudgeCard",
    "ProbeSource",
    "check_judge",
    "estimate_check",
    "load_card",
    "load_source",
    "plan",
    "write_card",
]
