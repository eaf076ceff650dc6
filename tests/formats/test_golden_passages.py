"""Bad span labels in ``passages.jsonl`` (issue 28): a span outside its document, two passages with one id, and
labels of one span that disagree are each one clear error naming the file and the line, and ``assay eval`` writes
nothing."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "pipelines" / "evaluate"))
from passages_fixture import DOCS, TIME, make_passages_golden

from assay.cli import main
from assay.errors import FormatError
from assay.formats.golden import GoldenSet
from assay.types import Passage, Provenance, RelevanceLabel


def label(grade: int, model: str = "offline", qid: str = "q2") -> RelevanceLabel:
    return RelevanceLabel(query_id=qid, chunk_id="", grade=grade,
                          provenance=Provenance(source="judge", model=model, time=TIME))  # fmt: skip


def passage(start: int, end: int, *labels: RelevanceLabel, doc: str = "tent") -> Passage:
    pid = f"p:{doc}:{start}-{end}"
    text = DOCS[doc][start:end] if doc in DOCS else "x"
    return Passage(id=pid, text=text, match="exact", doc_id=doc, start=start, end=end, score=1.0,
                   labels=[lab.model_copy(update={"chunk_id": pid}) for lab in labels])  # fmt: skip


def saved(tmp_path: Path, *passages: Passage) -> Path:
    gold = make_passages_golden()
    gold.passages = list(passages)
    folder = tmp_path / "golden"
    gold.save(folder)
    return folder


def test_good_passages_load(tmp_path: Path) -> None:
    folder = saved(tmp_path, passage(0, 10, label(1)), passage(5, 20, label(3)))  # overlap, other spans: fine
    assert [p.id for p in GoldenSet.load(folder).passages] == ["p:tent:0-10", "p:tent:5-20"]


@pytest.mark.parametrize(
    ("bad", "said"),
    [
        (passage(10, len(DOCS["tent"]) + 5, label(1)), "outside document 'tent'"),
        (passage(0, 10, label(1), doc="nowhere"), "unknown doc_id 'nowhere'"),
        (passage(0, 10, label(1), label(3)), "disagree (1 and 3) on the same span"),
    ],
)
def test_a_bad_span_label_names_the_file_and_line(tmp_path: Path, bad: Passage, said: str) -> None:
    folder = saved(tmp_path, passage(20, 30, label(0)), bad)
    with pytest.raises(FormatError, match=r"passages\.jsonl:3") as caught:  # line 1 is the header
        GoldenSet.load(folder)
    assert said in str(caught.value)
    out = tmp_path / "report"
    run = tmp_path / "run.jsonl"
    run.write_text(json.dumps({"query_id": "q2", "retrieved": ["tent#1"]}) + "\n", encoding="utf-8")
    result = CliRunner().invoke(main, ["eval", str(folder), str(run), "-o", str(out), "--no-judge"])
    assert result.exit_code == 1 and "passages.jsonl:3" in result.output and said in result.output
    assert not out.exists()  # nothing written


def test_two_lines_with_one_passage_id(tmp_path: Path) -> None:
    folder = saved(tmp_path, passage(0, 10, label(1)))
    path = folder / "passages.jsonl"
    lines = path.read_text(encoding="utf-8").splitlines()
    path.write_text("\n".join([*lines, lines[1]]) + "\n", encoding="utf-8")
    with pytest.raises(FormatError, match=r"passages.jsonl:3: duplicate passage id 'p:tent:0-10' \(first on line 2\)"):
        GoldenSet.load(folder)


def test_labels_of_different_models_may_disagree(tmp_path: Path) -> None:
    folder = saved(tmp_path, passage(0, 10, label(1, model="a"), label(3, model="b")))
    assert len(GoldenSet.load(folder).passages[0].labels) == 2
