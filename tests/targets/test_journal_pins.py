"""The answers cache pinned by hand: its file name and keys are fixed digests (a cache made by one version is found
by the next), each repeat from the second on keyed apart, non-ASCII kept as written, a missing folder made, a
reopened journal appending after a close, and what ``load`` skips (a broken line, a record that is not an object)
without stopping."""

from __future__ import annotations

import hashlib
from pathlib import Path

from assay.targets.callers import Ask
from assay.targets.journal import Journal, question_key


def _blake(text: str) -> str:
    return hashlib.blake2b(text.encode("utf-8"), digest_size=16).hexdigest()


def test_the_file_is_named_by_the_digest_of_identity_and_label(tmp_path: Path) -> None:
    journal = Journal(tmp_path, {"target": "cmd:app"}, "v1")
    assert journal.path == tmp_path / (_blake('{"identity":{"target":"cmd:app"},"label":"v1"}') + ".jsonl")
    assert len(journal.path.stem) == 32


def test_a_questions_key_is_the_digest_of_its_json_and_its_repeat_from_the_second_on() -> None:
    plain = '{"metadata":{"a":1},"query_id":"q1","question":"why?"}'
    assert question_key(Ask("q1", "why?", {"a": 1})) == _blake(plain)
    assert question_key(Ask("q1", "why?", {"a": 1}, repeat=0)) == _blake(plain)
    second = '{"metadata":{"a":1},"query_id":"q1","question":"why?","repeat":2}'
    assert question_key(Ask("q1", "why?", {"a": 1}, repeat=2)) == _blake(second)
    assert question_key(Ask("q1", "why?", {"a": 1}, repeat=1)) != question_key(Ask("q1", "why?", {"a": 1}, repeat=2))


def test_records_are_written_as_text_in_a_folder_made_for_them_and_appended_after_a_close(tmp_path: Path) -> None:
    journal = Journal(tmp_path / "cache" / "answers", {"target": "t"}, None)
    journal.append("k1", {"answer": "café"})
    journal.close()
    journal.append("k2", {"answer": "naïve"})
    journal.close()
    text = journal.path.read_text(encoding="utf-8")
    assert text == '{"key": "k1", "record": {"answer": "café"}}\n{"key": "k2", "record": {"answer": "naïve"}}\n'
    assert journal.load() == {"k1": {"answer": "café"}, "k2": {"answer": "naïve"}}


def test_load_skips_what_it_cannot_use_and_reads_on(tmp_path: Path) -> None:
    journal = Journal(tmp_path, {"target": "t"}, None)
    lines = [
        b'{"key": "k1", "record": {"answer": "one"}}',
        b'{"key": "k2", "rec',  # a line cut by a kill, in the middle after a restart
        b'{"key": "k3", "record": 5}',  # a record that is not an object
        b'["not", "an", "object"]',
        b'{"key": "k4", "record": {"answer": "caf\xff"}}',  # a byte that is not UTF-8: replaced
        b'{"key": "k5", "record": {"answer": "five"}}',
    ]
    journal.path.write_bytes(b"\n".join(lines) + b"\n")
    assert journal.load() == {"k1": {"answer": "one"}, "k4": {"answer": "caf\ufffd"}, "k5": {"answer": "five"}}
