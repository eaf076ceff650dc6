"""Correcting a conversation turn's rewrite on the audit page: the store, the golden files, stale labels."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest
from audit_fixtures import add_context_turn, add_conversation
from starlette.testclient import TestClient

from assay.audit.access import open_store
from assay.audit.app import create_app
from assay.audit.rewrites import join_rewrites, record_rewrite, rewrite_events, stale_items
from assay.audit.store import LabelStore
from assay.errors import DatasetError
from assay.formats import atomic
from assay.formats.atomic import PENDING_GLOB
from assay.formats.golden import GoldenSet

BASE = "http://127.0.0.1:8765"


@pytest.fixture
def conv_dir(golden_dir: Path) -> Path:
    return add_conversation(golden_dir)


def client_for(golden_dir: Path) -> tuple[TestClient, dict[str, str]]:
    app = create_app(golden_dir, annotator="ann")
    return TestClient(app, base_url=BASE), {"X-Assay-Token": app.state.token, "Origin": BASE}


def index_of(client: TestClient, query_id: str, chunk_id: str) -> int:
    items = client.get("/api/queue").json()["items"]
    return next(row["i"] for row in items if (row["query_id"], row["chunk_id"]) == (query_id, chunk_id))


def test_item_of_a_turn_shows_its_history_and_rewrite(conv_dir: Path) -> None:
    client, _ = client_for(conv_dir)
    turn = client.get(f"/api/item?i={index_of(client, 'q2', 'c00')}").json()["turn"]
    assert turn["utterance"] == "and how do they compare?"
    assert turn["rewrite"] == "How do refunds compare?"
    assert (turn["turn"], turn["turns"], turn["dependency"], turn["rewrite_source"]) == (2, 2, "ellipsis", "generator")
    assert turn["history"] == [
        {"turn": 1, "utterance": "What is the refund window?", "rewrite": "What is the refund window?",
         "reference_answer": "30 days", "judged": True}
    ]  # fmt: skip
    assert client.get(f"/api/item?i={index_of(client, 'q1', 'c00')}").json()["turn"]["history"] == []


def test_a_context_turn_is_in_the_history_marked_not_judged_and_never_an_item(golden_dir: Path) -> None:
    client, _ = client_for(add_context_turn(golden_dir))
    turn = client.get(f"/api/item?i={index_of(client, 'q2', 'c00')}").json()["turn"]
    assert (turn["turn"], turn["turns"]) == (3, 3)
    assert turn["history"][1] == {"turn": 2, "utterance": "and for gift cards?", "judged": False,
                                  "rewrite": "What is the refund window for gift cards?",
                                  "reference_answer": "None: no refunds."}  # fmt: skip
    assert turn["history"][0]["judged"] is True
    assert "conv1-t2" not in {row["query_id"] for row in client.get("/api/queue").json()["items"]}


def test_correction_is_stored_written_and_makes_labels_stale(conv_dir: Path) -> None:
    client, headers = client_for(conv_dir)
    i = index_of(client, "q2", "c04")
    body = {"i": i, "text": "How do refunds to a card compare with gift-card refunds?", "reason": "too vague"}
    answer = client.post("/api/rewrite", json=body, headers=headers)
    assert answer.status_code == 200, answer.text
    item = answer.json()["item"]
    assert item["stale"] is True and item["turn"]["rewrite_source"] == "human"
    assert item["question"] == body["text"]
    store, _ = open_store(conv_dir)
    [event] = rewrite_events(store)
    assert (event.query_id, event.conversation_id, event.previous) == ("q2", "conv1", "How do refunds compare?")
    assert (event.text, event.reason, event.annotator) == (body["text"], "too vague", "ann")
    assert event.session == "page:disagreement:0"  # the page's queue (the default: judges disagree) and seed
    golden = GoldenSet.load(conv_dir)
    question = golden.question("q2")
    assert question.text == body["text"]
    assert question.flags["rewrite_corrected"]["previous"] == "How do refunds compare?"
    assert question.flags["stale_labels"] == 12  # every chunk the judge graded for q2
    prov = golden.conversations[0].turns[1].rewrite_provenance
    assert prov is not None and (prov.source, prov.annotator, prov.rationale) == ("human", "ann", "too vague")
    assert golden.question("q1").text == "What is the refund window?"  # other turns untouched
    # stale: every q2 item, none of q1; a grade after the correction makes the item current again
    assert {qid for qid, _ in stale_items(store, store.items())} == {"q2"}
    client.post("/api/label", json={"i": i, "grade": 2}, headers=headers)
    assert ("q2", "c04") not in stale_items(store, store.items())
    assert len(stale_items(store, store.items())) == 11


def test_queue_built_after_a_correction_puts_stale_items_first(conv_dir: Path) -> None:
    client, headers = client_for(conv_dir)
    client.post("/api/rewrite", json={"i": index_of(client, "q2", "c00"), "text": "A new rewrite"}, headers=headers)
    fresh, _ = client_for(conv_dir)
    rows = fresh.get("/api/queue?annotator=other").json()["items"]
    assert [row["query_id"] for row in rows[:12]] == ["q2"] * 12 and all(row["stale"] for row in rows[:12])
    assert not any(row["stale"] for row in rows[12:])


@pytest.mark.parametrize(
    ("body", "error"),
    [
        ({"text": ""}, "non-empty"),
        ({"text": 3}, "non-empty"),
        ({"text": "How do refunds compare?"}, "unchanged"),
        ({"text": "ok", "reason": 5}, "reason"),
    ],
)
def test_bad_corrections_are_refused_and_nothing_is_written(
    conv_dir: Path, body: dict[str, object], error: str
) -> None:
    client, headers = client_for(conv_dir)
    before = (conv_dir / "questions.jsonl").read_bytes(), (conv_dir / "conversations.jsonl").read_bytes()
    answer = client.post("/api/rewrite", json={"i": index_of(client, "q2", "c00"), **body}, headers=headers)
    assert answer.status_code == 400 and error in answer.json()["error"]
    assert ((conv_dir / "questions.jsonl").read_bytes(), (conv_dir / "conversations.jsonl").read_bytes()) == before
    store, _ = open_store(conv_dir)
    assert rewrite_events(store) == []


def test_a_single_question_has_no_rewrite_to_correct(golden_dir: Path) -> None:
    client, headers = client_for(golden_dir)
    answer = client.post("/api/rewrite", json={"i": 0, "text": "x"}, headers=headers)
    assert answer.status_code == 400 and "not a turn of a conversation" in answer.json()["error"]
    assert json.loads(client.get("/api/item?i=0").text)["turn"] is None


NEW = "How do card refunds compare with gift-card refunds?"


class Crash(BaseException):
    """The process dies here (a BaseException: nothing on the way catches it)."""


def _corrected(conv_dir: Path) -> Any:
    store, _ = open_store(conv_dir)
    record_rewrite(store, query_id="q2", conversation_id="conv1", previous="How do refunds compare?", text=NEW,
                   annotator="ann", reason="vague")  # fmt: skip
    return store


def _failing_rename(monkeypatch: pytest.MonkeyPatch, error: BaseException, name: str = "conversations.jsonl") -> None:
    """``os.replace`` of a staged file onto ``name`` raises ``error``; every other rename happens."""
    real = os.replace

    def replace(src: Any, dst: Any) -> None:
        if Path(dst).name == name and str(src).endswith(".staged"):
            raise error
        real(src, dst)

    monkeypatch.setattr(os, "replace", replace)


def _agrees(golden: GoldenSet) -> bool:
    """q2's text and its turn's provenance tell the same story (both corrected, or neither)."""
    corrected = golden.question("q2").text == NEW
    prov = golden.conversations[0].turns[1].rewrite_provenance
    return (
        corrected
        == (prov is not None and prov.source == "human")
        == ("rewrite_corrected" in golden.question("q2").flags)
    )


def _half_written(conv_dir: Path, monkeypatch: pytest.MonkeyPatch) -> LabelStore:
    """A correction whose pair of files is cut short between the two renames (questions.jsonl replaced only)."""
    store = _corrected(conv_dir)
    _failing_rename(monkeypatch, Crash())
    with pytest.raises(Crash):
        join_rewrites(store, conv_dir)
    monkeypatch.undo()
    return store


def test_a_crash_between_the_two_renames_is_finished_by_the_next_load(
    conv_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    store = _half_written(conv_dir, monkeypatch)
    # on disk the pair is half written: questions.jsonl new, conversations.jsonl old, and the record of the renames
    assert NEW in (conv_dir / "questions.jsonl").read_text()
    assert '"human"' not in (conv_dir / "conversations.jsonl").read_text()
    assert len(list(conv_dir.glob(PENDING_GLOB))) == 1
    golden = GoldenSet.load(conv_dir)  # finishes the renames before reading
    assert golden.question("q2").text == NEW and _agrees(golden)
    assert not list(conv_dir.glob(PENDING_GLOB)) and not list(conv_dir.glob(".*.staged"))
    assert join_rewrites(store, conv_dir) == 0  # the correction is in both files: nothing left to write


def _commit_fails(store: LabelStore, conv_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Write the store's correction into the files while the record of the renames cannot be written (the disk is
    full): nothing is replaced, the correction stays in the store only."""
    real = atomic.atomic_write_text

    def write(path: Any, text: str) -> None:
        if Path(path).name.startswith(".assay-pending."):
            raise OSError(28, "No space left on device")
        real(path, text)

    monkeypatch.setattr(atomic, "atomic_write_text", write)
    with pytest.raises(OSError, match="No space left"):
        join_rewrites(store, conv_dir)
    monkeypatch.undo()


def test_a_failure_before_the_commit_leaves_both_old_files_and_the_store_writes_it_later(
    conv_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    store = _corrected(conv_dir)
    before = (conv_dir / "questions.jsonl").read_bytes(), (conv_dir / "conversations.jsonl").read_bytes()
    _commit_fails(store, conv_dir, monkeypatch)
    assert ((conv_dir / "questions.jsonl").read_bytes(), (conv_dir / "conversations.jsonl").read_bytes()) == before
    assert [p.name for p in conv_dir.iterdir() if p.name.startswith(".")] == []  # no staged file, no record
    assert _agrees(GoldenSet.load(conv_dir))
    open_store(conv_dir)  # the next opening of the store writes the correction it kept
    golden = GoldenSet.load(conv_dir)
    assert golden.question("q2").text == NEW and _agrees(golden)


def test_a_half_written_pair_that_cannot_be_finished_is_refused(
    conv_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _half_written(conv_dir, monkeypatch)
    _failing_rename(monkeypatch, PermissionError(13, "Permission denied"))  # a read-only copy of the folder
    with pytest.raises(DatasetError, match="a write of several files was cut short and cannot be finished here"):
        GoldenSet.load(conv_dir)
    monkeypatch.undo()
    assert _agrees(GoldenSet.load(conv_dir))


def test_a_system_is_asked_the_corrected_rewrite_an_interrupted_audit_left_unwritten(
    conv_dir: Path, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """The correction is in the store only (the files' write failed): ``assay run`` writes it before asking, so a
    system asked the rewrites gets the corrected one."""
    from click.testing import CliRunner

    from assay.cli import main

    store = _corrected(conv_dir)
    _commit_fails(store, conv_dir, monkeypatch)
    assert NEW not in (conv_dir / "questions.jsonl").read_text()
    (tmp_path / "asked_app.py").write_text(
        "ASKED = []\ndef answer(question):\n    ASKED.append(question)\n    return {'retrieved': [], 'answer': 'x'}\n",
        encoding="utf-8",
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    result = CliRunner().invoke(main, ["run", str(conv_dir), "--target", "python:asked_app:answer",
                                       "--conversation-mode", "rewrites", "-o", str(tmp_path / "run.jsonl"),
                                       "--cache-dir", str(tmp_path / "cache")])  # fmt: skip
    assert result.exit_code == 0, result.output
    import asked_app  # type: ignore[import-not-found]

    assert NEW in asked_app.ASKED and _agrees(GoldenSet.load(conv_dir))


def test_the_answer_to_a_correction_is_the_annotators_item_and_progress(conv_dir: Path) -> None:
    client, headers = client_for(conv_dir)
    i = index_of(client, "q2", "c04")
    client.post("/api/label", json={"i": i, "grade": 2}, headers=headers)
    answer = client.post("/api/rewrite", json={"i": i, "text": NEW}, headers=headers).json()
    assert (answer["item"]["i"], answer["item"]["mine"]["grade"]) == (i, 2)
    assert answer["progress"] == {"done": 1, "total": 24, "per_grade": {"0": 0, "1": 0, "2": 1, "3": 0}}
