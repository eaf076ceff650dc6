"""CSV rows with the line each starts on; a quote that swallows rows is an error at the line where it opened.

A quoted cell may hold line breaks (a spreadsheet writes a multi-line cell so), and a CSV reader then joins lines
into one row. Two mistakes look the same to it and would merge rows into one cell in silence, so a row that spans
lines is checked, and is a :class:`~assay.errors.FormatError` naming the line where its quote opened when:

1. the quote is never closed: the file ends inside the cell;
2. one of the lines it swallowed, read alone, is a row of its own (as many cells as the header, no quote character
   in it): a stray quote that a later stray quote happened to close.

A real multi-line cell (an address, a paragraph of a question) seldom splits into exactly the header's cells; when
it does, doubling a quote inside it (``""``) or putting the cell on one line reads it.
"""

from __future__ import annotations

import csv
import io
from collections.abc import Iterator
from pathlib import Path

from assay.errors import FormatError

__all__ = ["csv_rows"]

_FIX = 'a closing " before the end of the cell (write "" for a quote inside a cell)'


def csv_rows(path: Path, text: str, delimiter: str = ",") -> Iterator[tuple[int, list[str]]]:
    """``(line, cells)`` of each row of ``text`` (the file at ``path``), the header first; rows spanning lines are
    checked (module docstring)."""
    physical = io.StringIO(text, newline="").readlines()
    reader = csv.reader(io.StringIO(text, newline=""), delimiter=delimiter)
    start, width = 1, None
    try:
        for row in reader:
            end = reader.line_num
            width = len(row) if width is None else width
            if end > start:
                _check_span(path, physical[start - 1 : end], start, width, delimiter)
            yield start, row
            start = end + 1
    except csv.Error as exc:
        raise FormatError(path, start, f"bad CSV ({exc})", _FIX) from None


def _check_span(path: Path, lines: list[str], start: int, width: int, delimiter: str) -> None:
    try:
        list(csv.reader(lines, delimiter=delimiter, strict=True))
    except csv.Error:
        raise FormatError(path, start, "a quote opened on this line is never closed (the file ends inside it)",
                          _FIX) from None  # fmt: skip
    for offset, line in enumerate(lines[1:], start=1):
        alone = line.rstrip("\r\n")
        if alone.strip() and '"' not in alone and len(next(csv.reader([alone], delimiter=delimiter))) == width:
            raise FormatError(
                path, start, f"a quoted cell opened on this line runs over line {start + offset}, which reads as a "
                "row of its own (two rows would be merged into one)", _FIX,
            )  # fmt: skip
