"""SMART-format collections (CISI's layout): records, ids compared as numbers, errors with file and line."""

from __future__ import annotations

from pathlib import Path

import pytest

from assay.errors import FormatError
from assay.formats.smart import is_smart_folder, read_smart_folder


def write(folder: Path, rel: str = "1 10 0 0\n01 11\n") -> Path:
    folder.mkdir()
    (folder / "X.ALL").write_text(".I 10\n.T\nTitle ten\n.A\nSomeone\n.W\nBody of\nten.\n.I 11\n.W\nEleven.\n")
    (folder / "X.QRY").write_text(".I 001\n.W\nWhat is\nten?\n")
    (folder / "X.REL").write_text(rel)
    return folder


def test_documents_queries_and_relevant_pairs(tmp_path: Path) -> None:
    collection = read_smart_folder(write(tmp_path / "x"))
    assert collection.documents == {"10": ("Title ten", "Body of ten."), "11": ("", "Eleven.")}
    assert collection.queries == {"1": "What is ten?"}
    assert collection.qrels == {"1": {"10": 1, "11": 1}}  # "01" and "001" are query 1
    assert is_smart_folder(tmp_path / "x") and not is_smart_folder(tmp_path)


def test_a_short_qrels_line_names_file_and_line(tmp_path: Path) -> None:
    with pytest.raises(FormatError, match=r"X\.REL:2: 1 field"):
        read_smart_folder(write(tmp_path / "x", rel="1 10\n7\n"))
