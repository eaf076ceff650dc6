"""The option ``import traces`` and ``traces watch`` share: ``--max-line``, the longest line of an export read."""

from __future__ import annotations

import re
from typing import Any

import click

from assay.formats.otlp import DEFAULT_MAX_LINE

__all__ = ["max_line_option"]

_UNITS = {"": 1, "K": 1024, "M": 1024**2, "G": 1024**3}
_SIZE = re.compile(r"(\d+)\s*([KMG]?)(?:I?B)?", re.IGNORECASE)


class ByteSize(click.ParamType):  # type: ignore[type-arg]
    """A size in bytes: a whole number with an optional K, M or G (powers of 1024), e.g. ``64M``."""

    name = "SIZE"

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> int:
        if isinstance(value, int):
            return value
        found = _SIZE.fullmatch(str(value).strip())
        if found is None or int(found.group(1)) == 0:
            self.fail(f"{value!r} is not a size: give bytes with an optional K, M or G, e.g. 64M", param, ctx)
        return int(found.group(1)) * _UNITS[found.group(2).upper()]


max_line_option = click.option(
    "--max-line",
    type=ByteSize(),
    default=DEFAULT_MAX_LINE,
    show_default="8M",
    help="Longest line of an export read (bytes, or with K, M or G); a longer one is an error naming its file and "
    "line, read no further than the limit.",
)
