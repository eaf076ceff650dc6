"""Whitespace-separated columns of large text files, split and parsed with numpy a block of lines at a time.

A block is split into records of a fixed number of fields. The fast path (every field separated by one whitespace
byte, every line ending in ``\\n``, no blank line: what tools write) finds all separators in one pass; anything else
(runs of spaces, tabs mixed in, ``\\r\\n``, blank lines, a wrong number of fields) takes the general path, which
also names the first malformed line. A column becomes a zero-padded ``[records, width]`` byte matrix (width a
multiple of 8), viewed as a bytes array or parsed as numbers:

* decimals ``[+-]digits[.digits]`` with at most 19 digits and a mantissa m < 2^53 are m / 10^f (f fraction digits,
  at most 22): m and 10^f are exact doubles and IEEE division rounds correctly, so this is exactly ``float(token)``
  (Clinger's fast path); other tokens (exponents, ``inf``, long mantissas) go through ``float`` one by one;
* integers ``[+-]digits`` of at most 18 digits, others through ``int``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from assay.errors import FormatError
from assay.formats.progress import reading

IntArray = npt.NDArray[np.int64]
Words = npt.NDArray[np.uint64]

_POW10 = np.array([10.0**k for k in range(23)])  # 10^0 .. 10^22, all exact doubles
_EXACT = 2**53
_SLACK = 64
_MASKS = np.array([(1 << (8 * n)) - 1 for n in range(9)], dtype=np.uint64)  # the low n bytes of a word


def blocks(path: Path, block_bytes: int) -> Iterator[bytes]:
    """Blocks of whole lines (a last line without one gets its ``\\n``)."""
    try:
        handle = path.open("rb")
    except OSError as exc:
        raise FormatError(path, None, f"cannot open: {exc.strerror}", "a readable file") from None
    meter = reading(path)
    with handle:
        rest = b""
        while block := handle.read(block_bytes):
            meter.add(len(block))
            data = rest + block
            cut = data.rfind(b"\n") + 1
            if cut:
                yield data[:cut]
            rest = data[cut:]
        if rest:
            yield rest + b"\n"
    meter.finish()


@dataclass
class Fields:
    """A block's records: field k of record i is ``data[start(k)[i]:ends[i, k]]``, on line ``lines[i]``.

    ``padded`` is the block followed by zero bytes, so that every field can be read eight bytes at a time.
    ``starts`` is None when fields are separated by exactly one byte (field k starts after field k - 1 ends; field 0
    at ``line_starts``).
    """

    padded: bytes
    ends: IntArray
    lines: IntArray
    n_lines: int
    line_starts: IntArray
    starts: IntArray | None = None

    def __len__(self) -> int:
        return len(self.lines)

    def start(self, k: int) -> IntArray:
        if self.starts is not None:
            return self.starts[:, k]
        return self.line_starts if k == 0 else self.ends[:, k - 1] + 1

    def token(self, r: int, k: int) -> bytes:
        return self.padded[int(self.start(k)[r]) : int(self.ends[r, k])]

    def lengths(self, k: int) -> IntArray:
        return self.ends[:, k] - self.start(k)

    def words(self, k: int) -> Words:
        """Field k of every record as ``[records, n]`` little-endian uint64 words, zero past the field's end."""
        starts = self.start(k)
        lengths = self.ends[:, k] - starts
        n_words = max(1, -(-int(lengths.max(initial=1)) // 8))
        padded = self.padded
        if int(starts.max(initial=0)) + 8 * n_words > len(padded):
            padded += bytes(8 * n_words)
        unaligned = np.ndarray((len(padded) - 7,), dtype="<u8", buffer=padded, strides=(1,))
        out = np.empty((len(starts), n_words), dtype=np.uint64)
        for i in range(n_words):
            out[:, i] = unaligned[starts + 8 * i if i else starts] & _MASKS[np.clip(lengths - 8 * i, 0, 8)]
        return out

    def strings(self, k: int) -> npt.NDArray[np.bytes_]:
        """Field k as a bytes (``S``) array whose width is a multiple of 8."""
        words = self.words(k)
        return words.view(f"S{8 * words.shape[1]}").reshape(len(words))


def split(data: bytes, first_line: int, n_fields: int, *, path: Path, expected: str) -> Fields:
    """Split a block (ending in ``\\n``) into records of ``n_fields`` whitespace-separated fields."""
    padded = data + bytes(_SLACK)
    buf = np.frombuffer(padded, dtype=np.uint8)
    space = buf[: len(data)] <= 32
    seps = np.flatnonzero(space)
    if len(seps) % n_fields == 0 and len(seps) and seps[0] > 0:
        table = seps.reshape(-1, n_fields)
        kinds = buf[table]
        one_line_each = np.count_nonzero(kinds == 10) == len(table) and bool((kinds[:, -1] == 10).all())
        if one_line_each and not (space[1:] & space[:-1]).any():  # and no empty field
            line_starts = np.concatenate([[0], table[:-1, -1] + 1])
            lines = first_line + np.arange(len(table), dtype=np.int64)
            return Fields(padded, table, lines, len(table), line_starts)
    return _split_general(padded, len(data), first_line, n_fields, path=path, expected=expected)


def _split_general(padded: bytes, size: int, first_line: int, n_fields: int, *, path: Path, expected: str) -> Fields:
    """Any whitespace between fields, blank lines skipped; a line with another number of fields raises."""
    buf = np.frombuffer(padded, dtype=np.uint8, count=size)
    space = buf <= 32
    starts = np.flatnonzero(~space & np.concatenate([[True], space[:-1]]))
    ends = np.flatnonzero(~space & np.concatenate([space[1:], [True]])) + 1
    newlines = np.flatnonzero(buf == 10)
    counts = np.diff(np.searchsorted(starts, newlines), prepend=0)  # tokens per line (every block ends with \n)
    bad = np.flatnonzero((counts != 0) & (counts != n_fields))
    if len(bad):
        found = int(counts[bad[0]])
        raise FormatError(path, first_line + int(bad[0]), f"{found} field{'s' * (found != 1)}", expected)
    lines = first_line + np.flatnonzero(counts).astype(np.int64)
    shape = (-1, n_fields)
    table = starts.reshape(shape).astype(np.int64)
    return Fields(padded, ends.reshape(shape), lines, len(newlines), table[:, 0], table)


def _columns(words: Words, lengths: IntArray) -> npt.NDArray[np.uint8]:
    """The bytes of each field as ``[position, record]`` rows (one contiguous row per character position)."""
    width = int(lengths.max(initial=1))
    return np.ascontiguousarray(words.view(np.uint8).reshape(len(words), -1)[:, :width].T)


def _read_digits(words: Words, lengths: IntArray, *, decimal: bool) -> _Digits:
    """One pass over the character positions: mantissa, digit counts, fraction digits, sign, and well-formedness."""
    cols = _columns(words, lengths)
    n = cols.shape[1]
    negative = cols[0] == 45
    mantissa = np.zeros(n, dtype=np.uint64)
    n_digits = np.zeros(n, dtype=np.int64)
    frac = np.zeros(n, dtype=np.int64)
    seen_dot = np.zeros(n, dtype=bool)
    ok = np.ones(n, dtype=bool)
    for j, c in enumerate(cols):
        digit = (c - np.uint8(48)) < 10
        dot = (c == 46) if decimal else np.zeros(n, dtype=bool)
        allowed = digit | dot | (c == 0)
        if j == 0:
            allowed |= negative | (c == 43)
        ok &= allowed & ~(dot & seen_dot)
        mantissa = np.where(digit, mantissa * np.uint64(10) + (c - np.uint8(48)), mantissa)
        n_digits += digit
        frac += digit & seen_dot
        seen_dot |= dot
    return _Digits(mantissa, n_digits, frac, negative, ok & (n_digits >= 1))


@dataclass
class _Digits:
    mantissa: npt.NDArray[np.uint64]
    n_digits: IntArray
    frac: IntArray
    negative: npt.NDArray[np.bool_]
    ok: npt.NDArray[np.bool_]


def parse_floats(words: Words, lengths: IntArray, fallback: Callable[[Any], npt.NDArray[Any]]) -> Any:
    """Decimals as float64, exactly as ``float`` reads them; ``fallback(mask)`` parses the other records."""
    d = _read_digits(words, lengths, decimal=True)
    ok = d.ok & (d.n_digits <= 19) & (d.frac <= 22) & (d.mantissa < np.uint64(_EXACT))
    out = d.mantissa.astype(np.float64) / _POW10[np.minimum(d.frac, 22)]
    np.negative(out, out=out, where=d.negative)
    if not ok.all():
        out[~ok] = fallback(~ok)
    return out


def parse_ints(words: Words, lengths: IntArray, fallback: Callable[[Any], npt.NDArray[Any]]) -> Any:
    """Integers ``[+-]digits`` as int64; ``fallback(mask)`` parses the other records."""
    d = _read_digits(words, lengths, decimal=False)
    ok = d.ok & (d.n_digits <= 18)
    out = d.mantissa.astype(np.int64)
    np.negative(out, out=out, where=d.negative)
    if not ok.all():
        out[~ok] = fallback(~ok)
    return out
