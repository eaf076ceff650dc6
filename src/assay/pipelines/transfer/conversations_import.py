"""Conversational golden sets from RAGAS multi-turn samples and DeepEval conversational test cases (the formats
:mod:`assay.pipelines.transfer.conversations` exports).

Import (``assay import ragas-multiturn|deepeval FILE``): each conversation's user messages are its turns and the
assistant messages after them their reference answers; a user message whose metadata says ``judged: false`` (an
exported context turn) is a context turn again, with no question. A turn's standalone rewrite and dependency are
read back from assay's metadata when the file has it; otherwise the rewrite is the utterance
(``flags["rewrite_missing"]``, no rewrite provenance: correct it in ``assay audit``). RAGAS rows that are prefixes
of a longer row of the same conversation (as the export writes them) merge into it. DeepEval ``retrieval_context``
texts become passages (``ctx-`` + a hash of the text) labelled ``grade`` for their turn. Malformed input (a message
that is not ``{type|role, content}``, a role other than user/assistant or human/ai, a conversation that does not
start with the user, turn numbers with a gap) is a :class:`~assay.errors.FormatError` naming the file and line
(JSON: the case number) and nothing is written.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

from assay.errors import FormatError, InputError
from assay.text import content_hash
from assay.types import Chunk, Conversation, Question, Turn, turn_id

__all__ = ["ParsedConversation", "conversation_records", "read_deepeval", "read_ragas_multiturn"]

_USER, _ASSISTANT = {"human", "user"}, {"ai", "assistant"}


class ParsedConversation:
    """One conversation read from a file: id, scenario, and per turn (utterance, answer, metadata, contexts)."""

    def __init__(self, cid: str, where: str, scenario: str | None = None) -> None:
        self.id = cid
        self.where = where
        self.scenario = scenario
        self.turns: list[dict[str, Any]] = []

    def to_records(self) -> tuple[list[Question], Conversation, list[tuple[str, str]]]:
        """Questions, the conversation, and (question id, context text) pairs; a turn whose metadata says
        ``judged: false`` (assay's export of a context turn) is a context turn again, with no question."""
        questions, turns, contexts = [], [], []
        for n, item in enumerate(self.turns, start=1):
            meta = item["metadata"]
            qid = str(meta.get("query_id") or turn_id(self.id, n))
            rewrite = meta.get("rewrite")
            flags = {} if isinstance(rewrite, str) and rewrite.strip() else {"rewrite_missing": True}
            text = rewrite.strip() if not flags else item["utterance"]
            turns.append(_turn(qid, text, item))
            if not turns[-1].judged:
                continue
            questions.append(self._question(qid, n, text, item, flags))
            contexts += [(qid, text) for text in item.get("contexts", [])]
        return questions, Conversation(id=self.id, turns=turns, scenario=self.scenario), contexts

    def _question(self, qid: str, n: int, text: str, item: Mapping[str, Any], flags: dict[str, Any]) -> Question:
        meta = {"conversation_id": self.id, "turn": n, "utterance": item["utterance"], "imported_from": self.where}
        return Question(id=qid, text=text, type="unknown", reference_answer=item["answer"], flags=flags, metadata=meta)


def _turn(qid: str, rewrite: str, item: Mapping[str, Any]) -> Turn:
    """The turn of one imported user message: a context turn (with its rewrite and answer) when its metadata says
    ``judged: false``."""
    meta = item["metadata"]
    dependency = meta.get("dependency", "none")
    fields = {"question_id": qid, "utterance": item["utterance"], "dependency": dependency,
              "depends_on_history": bool(meta.get("depends_on_history", dependency != "none"))}  # fmt: skip
    if meta.get("judged") is False:
        fields |= {"judged": False, "rewrite": rewrite, "answer": item["answer"] or "", "dropped": meta.get("dropped")}
    return Turn.model_validate(fields)


def _message(path: Path, where: int, raw: Any, role_key: str) -> tuple[str, str, dict[str, Any], list[str]]:
    if not isinstance(raw, Mapping) or not isinstance(raw.get("content"), str) or role_key not in raw:
        raise FormatError(
            path,
            where,
            f"a message must be an object with {role_key!r} and string 'content', got {str(raw)[:80]!r}",
            'write messages as {"' + role_key + '": ..., "content": "..."}',
        )
    role = str(raw[role_key])
    if role not in _USER | _ASSISTANT:
        raise FormatError(
            path,
            where,
            f"message role {role!r} is not a user or assistant role",
            "use human/ai (RAGAS) or user/assistant (DeepEval, OpenAI format)",
        )
    contexts = raw.get("retrieval_context") or []
    if not isinstance(contexts, list) or not all(isinstance(c, str) for c in contexts):
        raise FormatError(path, where, "retrieval_context must be a list of strings", "give the context texts")
    meta = raw.get("metadata") or {}
    return ("user" if role in _USER else "assistant"), raw["content"], dict(meta), list(contexts)


def _pair_up(path: Path, where: int, messages: Sequence[Any], role_key: str) -> list[dict[str, Any]]:
    """User messages as turns, each with the assistant message after it as its answer."""
    turns: list[dict[str, Any]] = []
    for raw in messages:
        role, content, meta, contexts = _message(path, where, raw, role_key)
        if role == "user":
            turns.append({"utterance": content, "answer": None, "metadata": meta, "contexts": []})
        elif not turns:
            raise FormatError(
                path,
                where,
                "the conversation starts with an assistant message",
                "start each conversation with the user's first turn",
            )
        else:
            turns[-1]["answer"] = content
            turns[-1]["contexts"] += contexts
    if not turns:
        raise FormatError(path, where, "a conversation without a user message", "give at least one user turn")
    return turns


def _check_turn_numbers(path: Path, where: int, numbers: Sequence[int]) -> None:
    expected = list(range(1, len(numbers) + 1))
    if list(numbers) != expected:
        raise FormatError(
            path,
            where,
            f"turn numbers {list(numbers)} have a gap or are out of order",
            "number the turns of a conversation 1, 2, 3, ... with none missing",
        )


def _rows(path: Path) -> Iterator[tuple[int, dict[str, Any]]]:
    try:
        lines = path.read_text("utf-8").splitlines()
    except OSError as exc:
        raise InputError(f"cannot read {path}: {exc.strerror}") from None
    for line, text in enumerate(lines, start=1):
        if not text.strip():
            continue
        try:
            row = json.loads(text)
        except json.JSONDecodeError as exc:
            raise FormatError(path, line, f"not JSON ({exc.msg})", "one JSON object per line") from None
        if not isinstance(row, dict) or not isinstance(row.get("user_input"), list):
            raise FormatError(
                path,
                line,
                "a multi-turn sample needs 'user_input', a list of messages",
                "write RAGAS MultiTurnSample rows",
            )
        yield line, row


def read_ragas_multiturn(path: str | Path) -> list[ParsedConversation]:
    """Conversations from RAGAS multi-turn JSONL (module docstring): rows that are prefixes of a longer row of the
    same conversation merge into it; a row's ``reference`` answers its last user turn."""
    source = Path(path)
    found: dict[str, ParsedConversation] = {}
    utterances: dict[str, list[str]] = {}
    for line, row in _rows(source):
        turns = _pair_up(source, line, row["user_input"], "type")
        if isinstance(row.get("reference"), str):
            turns[-1]["answer"] = row["reference"]
        cid = str(row.get("conversation_id") or _by_prefix(utterances, turns) or f"conv-{line}")
        said = [t["utterance"] for t in turns]
        known = found.setdefault(cid, ParsedConversation(cid, f"{source.name}:{line}"))
        if isinstance(row.get("turn"), int) and row["turn"] != len(turns):
            _check_turn_numbers(source, line, [*range(1, len(turns)), row["turn"]])
        merged = _merge(known.turns, turns, source, line)
        known.turns = merged
        utterances[cid] = said if len(said) > len(utterances.get(cid, [])) else utterances[cid]
    return list(found.values())


def _by_prefix(utterances: Mapping[str, list[str]], turns: list[dict[str, Any]]) -> str | None:
    said = [t["utterance"] for t in turns]
    for cid, known in utterances.items():
        shorter, longer = (said, known) if len(said) <= len(known) else (known, said)
        if longer[: len(shorter)] == shorter:
            return cid
    return None


def _merge(known: list[dict[str, Any]], new: list[dict[str, Any]], path: Path, line: int) -> list[dict[str, Any]]:
    longer, shorter = (new, known) if len(new) >= len(known) else (known, new)
    out = [dict(t) for t in longer]
    for i, turn in enumerate(shorter):
        if out[i]["utterance"] != turn["utterance"]:
            raise FormatError(
                path,
                line,
                f"turn {i + 1} differs from the same conversation's other rows",
                "give each conversation a distinct conversation_id",
            )
        out[i]["answer"] = out[i]["answer"] if out[i]["answer"] is not None else turn["answer"]
        out[i]["metadata"] = {**turn["metadata"], **out[i]["metadata"]}
    return out


def read_deepeval(path: str | Path) -> list[ParsedConversation]:
    """Conversations from a JSON list of DeepEval conversational test cases (module docstring)."""
    source = Path(path)
    try:
        cases = json.loads(source.read_text("utf-8"))
    except OSError as exc:
        raise InputError(f"cannot read {source}: {exc.strerror}") from None
    except json.JSONDecodeError as exc:
        raise FormatError(source, exc.lineno, f"not JSON ({exc.msg})", "give a JSON list of test cases") from None
    if isinstance(cases, dict):
        cases = cases.get("test_cases", cases.get("goldens", [cases]))
    if not isinstance(cases, list):
        raise FormatError(source, 1, "expected a JSON list of conversational test cases", "wrap the cases in [...]")
    out = []
    for number, case in enumerate(cases, start=1):
        if not isinstance(case, dict) or not isinstance(case.get("turns"), list):
            raise FormatError(
                source,
                number,
                "a conversational test case needs 'turns', a list of messages",
                "write DeepEval ConversationalTestCase fields (test case number given as line)",
            )
        meta = (case.get("metadata") or {}).get("assay", {}) if isinstance(case.get("metadata"), dict) else {}
        cid = str(meta.get("conversation_id") or case.get("name") or f"conv-{number}")
        parsed = ParsedConversation(cid, f"{source.name}:case {number}", case.get("scenario"))
        parsed.turns = _pair_up(source, number, case["turns"], "role")
        out.append(parsed)
    return out


def context_chunk(text: str) -> Chunk:
    """A passage for an imported context text: id ``ctx-`` + a hash of the text (equal texts share one)."""
    cid = "ctx-" + content_hash(text, 8)
    return Chunk(id=cid, doc_id=cid, ordinal=0, text=text, start=0, end=len(text))


def check_ids(path: Path, parsed: Sequence[ParsedConversation]) -> None:
    """Conversation ids unique, question ids unique across conversations (FormatError naming where)."""
    seen: dict[str, str] = {}
    for conversation in parsed:
        if conversation.id in seen:
            raise FormatError(
                path,
                None,
                f"conversation id {conversation.id!r} appears twice ({seen[conversation.id]} and {conversation.where})",
                "give each conversation its own id",
            )
        seen[conversation.id] = conversation.where


def conversation_records(
    path: Path, parsed: Sequence[ParsedConversation]
) -> tuple[list[Question], list[Conversation], list[Chunk], list[tuple[str, str]]]:
    """Questions, conversations, context passages and (question id, chunk id) pairs of parsed conversations."""
    check_ids(path, parsed)
    questions: list[Question] = []
    conversations: list[Conversation] = []
    chunks: dict[str, Chunk] = {}
    pairs: list[tuple[str, str]] = []
    seen: set[str] = set()
    for one in parsed:
        records, conversation, contexts = one.to_records()
        for question in records:
            if question.id in seen:
                raise FormatError(
                    path,
                    None,
                    f"question id {question.id!r} appears in two turns ({one.where})",
                    "give every turn its own query_id, or leave it out",
                )
            seen.add(question.id)
        questions += records
        conversations.append(conversation)
        for qid, text in contexts:
            chunk = chunks.setdefault(context_chunk(text).id, context_chunk(text))
            pairs.append((qid, chunk.id))
    return questions, conversations, list(chunks.values()), list(dict.fromkeys(pairs))
