"""The input of ``assay grade``: JSONL, one (question, chunk) pair a line, with an optional assay header line.

Each line holds ``query_id``, ``question``, ``chunk_id`` and ``text`` (non-empty strings; ids may be integers, read as
their decimal text); other fields are ignored. A pair (``query_id``, ``chunk_id``) appears once.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

from pydantic import BaseModel, ConfigDict, Field, StrictInt, StrictStr, ValidationError

from assay.errors import FormatError, InputError
from assay.formats.jsonl import first_problem, iter_json_lines

__all__ = ["PairRecord", "read_pairs"]

_Text = Annotated[StrictStr, Field(min_length=1)]
_Id = _Text | StrictInt


class PairRecord(BaseModel):
    """One line of a pairs file; integer ids are turned into text."""

    model_config = ConfigDict(extra="ignore", frozen=True)

    query_id: _Id
    question: _Text
    chunk_id: _Id
    text: _Text

    @property
    def key(self) -> tuple[str, str]:
        """(query_id, chunk_id) as text."""
        return str(self.query_id), str(self.chunk_id)


def read_pairs(path: str | Path) -> list[PairRecord]:
    """Read a pairs file; a bad line or a repeated pair is a :class:`FormatError` naming file and line."""
    source = Path(path)
    pairs: list[PairRecord] = []
    seen: dict[tuple[str, str], int] = {}
    for line, obj in iter_json_lines(source, header="optional"):
        try:
            pair = PairRecord.model_validate(obj)
        except ValidationError as exc:
            raise FormatError(source, line, first_problem(exc), "query_id, question, chunk_id and text") from None
        if pair.key in seen:
            raise FormatError(source, line, f"pair {pair.key} already given on line {seen[pair.key]}", "each pair once")
        seen[pair.key] = line
        pairs.append(pair)
    if not pairs:
        raise InputError(f"{source}: no pairs; each line needs query_id, question, chunk_id and text")
    return pairs
