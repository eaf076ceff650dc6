"""Where a judge's card is kept, and the summary of it that ``assay eval`` puts beside its metrics.

``assay judge-check`` keeps a copy of each card beside the judge cache, in ``CACHE/cards/MODEL/card.json`` (MODEL
with every character outside letters, digits, ``.``, ``_`` and ``-`` turned into ``_``). ``assay eval`` looks there
for the judge in use, or at ``--judge-card PATH``, and says plainly when there is none. A card made with other
relevance prompt (by name: another version or text) than the judge uses now is shown with a note saying so.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from pathlib import Path

from assay.errors import DatasetError
from assay.pipelines.judgecheck.render import CARD_FILE, format_figure, headline, load_card
from assay.results import JudgeCardSummary

__all__ = ["card_home", "summarize_card"]

_UNSAFE = re.compile(r"[^A-Za-z0-9._-]")


def card_home(cache_dir: Path, model: str) -> Path:
    """The folder holding the kept card of ``model`` beside the judge cache ``cache_dir``."""
    return cache_dir / "cards" / _UNSAFE.sub("_", model)


def _none(where: Path, model: str) -> JudgeCardSummary:
    note = (
        f"no judge card for {model} (looked in {where}); measure the judge first: "
        f"assay judge-check --judge {model} --labels GOLDEN_OR_CISI -o CARD/"
    )
    return JudgeCardSummary(found=False, where=str(where), note=note)


def summarize_card(path: Path, model: str, prompts: Mapping[str, str]) -> JudgeCardSummary:
    """The headline of the card at ``path`` (a ``card.json`` or its folder) for ``model``, whose relevance prompts
    are ``prompts`` (``name@version`` -> content hash); a missing card gives a summary that says so."""
    file = path / CARD_FILE if path.is_dir() or not path.suffix else path
    if not file.is_file():
        return _none(file, model)
    try:
        card = load_card(file)
    except DatasetError as exc:
        return JudgeCardSummary(found=False, where=str(file), note=f"the judge card could not be read: {exc}")
    figures = {f.label: format_figure(f) for f in headline(card)}
    notes = []
    if card.model != model:
        notes.append(f"the card is of {card.model}, not of the judge in use ({model})")
    made = {ref.partition("@")[0]: (ref, digest) for ref, digest in card.prompts.items()}
    stale = sorted(
        ref for ref, digest in prompts.items() if made.get(ref.partition("@")[0], (ref, digest)) != (ref, digest)
    )
    if stale:
        notes.append(f"the card was made with other prompts than {', '.join(stale)}: run assay judge-check again")
    created = card.created.isoformat(timespec="seconds")
    note = "; ".join(notes) or None
    return JudgeCardSummary(found=True, where=str(file), model=card.model, created=created, figures=figures, note=note)
