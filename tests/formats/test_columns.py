"""The block splitter and the vectorized number parsers behind the TREC readers, against Python's own parsing."""

from __future__ import annotations

import math
import random
import struct
from pathlib import Path

import numpy as np
import pytest

from assay.errors import FormatError
from assay.formats._columns import parse_floats, parse_ints, split


def fields_of(tokens: list[str], n_fields: int = 1, sep: str = " "):
    lines = [sep.join(tokens[i : i + n_fields]) for i in range(0, len(tokens), n_fields)]
    return split(("\n".join(lines) + "\n").encode(), 1, n_fields, path=Path("x"), expected="tokens")


def python_fallback(fields, k: int, kind: type):
    def parse(mask):
        return np.array([kind(fields.token(r, k)) for r in np.flatnonzero(mask).tolist()])

    return parse


def bits(x: float) -> bytes:
    return struct.pack("<d", x)


def random_decimal(rng: random.Random) -> str:
    digits = "".join(rng.choice("0123456789") for _ in range(rng.randint(1, 21)))
    if rng.random() < 0.7:
        cut = rng.randint(0, len(digits))
        digits = digits[:cut] + "." + digits[cut:]
    return rng.choice(["", "", "-", "+"]) + digits


def test_decimals_equal_float_bit_for_bit() -> None:
    rng = random.Random(3)
    tokens = [random_decimal(rng) for _ in range(20_000)]
    tokens += ["0", "-0", "-0.0", "+.5", "5.", "007.250", "9007199254740993", "0.30000000000000004", "44.25"]
    tokens += ["1e5", "-2.5E-3", "inf", "-Infinity", "1_000.5", "123456789012345678901234.5"]
    fields = fields_of(tokens)
    got = parse_floats(fields.words(0), fields.lengths(0), python_fallback(fields, 0, float))
    for token, value in zip(tokens, got.tolist(), strict=True):
        assert bits(value) == bits(float(token)), token


def test_integers_equal_int() -> None:
    rng = random.Random(4)
    tokens = [rng.choice(["", "-", "+"]) + str(rng.randint(0, 10 ** rng.randint(1, 18))) for _ in range(5_000)]
    tokens += ["0", "-0", "007", "-1", "1_0", "9223372036854775807", "-0000000000000000000012"]  # last 3: fallback
    fields = fields_of(tokens)
    got = parse_ints(fields.words(0), fields.lengths(0), python_fallback(fields, 0, int))
    assert got.tolist() == [int(t) for t in tokens]


def test_long_fields_are_read_whole() -> None:
    rng = random.Random(5)
    tokens = ["".join(rng.choice("abcxyz0123é") for _ in range(rng.randint(1, 70))) for _ in range(300)]
    fields = fields_of(tokens, 3)
    for k in range(3):
        assert [b.decode() for b in fields.strings(k).tolist()] == tokens[k::3]


@pytest.mark.parametrize("sep", [" ", "\t", "  ", " \t "])
def test_fast_and_general_paths_agree(sep: str) -> None:
    tokens = [f"q{i // 7} Q0 d{i} {i} {i / 3!r} tag" for i in range(50)]
    fields = fields_of(" ".join(tokens).split(" "), 6, sep)
    assert len(fields) == 50 and fields.n_lines == 50
    assert [b.decode() for b in fields.strings(2).tolist()] == [f"d{i}" for i in range(50)]
    assert fields.lines.tolist() == list(range(1, 51))


def test_general_path_counts_blank_lines_and_names_a_short_line() -> None:
    fields = split(b"a b\n\n\r\nc d\r\n", 10, 2, path=Path("x"), expected="2 fields")
    assert fields.lines.tolist() == [10, 13] and fields.n_lines == 4
    with pytest.raises(FormatError, match="1 field") as info:
        split(b"a b\nc\n", 10, 2, path=Path("x"), expected="2 fields")
    assert info.value.line == 11


def test_nan_is_left_to_the_fallback() -> None:
    fields = fields_of(["nan", "1.5"])
    got = parse_floats(fields.words(0), fields.lengths(0), python_fallback(fields, 0, float))
    assert math.isnan(got[0]) and got[1] == 1.5
