"""Asking the turns of a golden set's conversations: what each turn sends, with which history.

The rule, step by step (``assay run --conversation-mode``, ``--history``):

1. A question that is no turn of a conversation is asked as a single question, whatever the modes.
2. ``rewrites``: every turn is asked as its standalone rewrite (the golden question's text), alone, without history,
   as a single question is. This is the reference point of the history gain (the same system asked the rewrites
   versus the raw turns with their history).
3. ``turns`` (the default): a turn is asked as the user typed it (its ``utterance``), with ``messages``: the history
   and the turn in the OpenAI format, ``[{"role": "user", "content": utterance 1}, {"role": "assistant",
   "content": answer 1}, ..., {"role": "user", "content": this utterance}]``.
4. ``--history reference`` (the default, teacher-forced): the assistant messages are the golden reference answers
   of the earlier turns ("" for a turn without one; a context turn's own ``answer``), so every system sees the same
   conversation and turns are asked concurrently.
5. ``--history own``: the assistant messages are the system's own answers ("" when it gave none, e.g. a retriever),
   so the turns of one conversation are asked in order (conversations concurrently). A turn that fails ends its
   conversation: the later turns are not asked and are recorded as failed (kind ``history_failed``, naming the
   turn), never asked with a history the system did not produce.
6. ``both`` (``assay eval --target-conversation-mode both``, ``assay.evaluate(..., conversing=...)``; never
   ``assay run``, which writes one run): the target is asked twice, into two runs (:func:`ways`): ``NAME``, the raw
   turns with the chosen history (steps 3 to 5), and ``NAME (rewrites)``, the rewrites (step 2), whose history gain
   the evaluation reports. A golden set without conversations refuses it: there would be nothing to compare.
7. Context turns (``Turn.judged`` False: no golden question, never scored) are in the history of the later turns.
   With ``--history own`` the system is asked them too, in their place in the conversation, so that its own answer
   is in that history: their lines carry the turn's id (``{conversation}-t{n}``) and ``assay eval`` counts and
   skips them. A context turn after the last judged one is not asked (its answer would be nobody's history), nor
   is any context turn in the other modes (the reference history holds its answer; ``rewrites`` has no history).

Every line of a turn carries ``conversation_id`` and ``turn`` (its index in the conversation, from 0), and the
system's own rewrite of the turn as ``rewrite`` when its reply has a ``rewrite`` (or ``query``) string. The answers
cache keys a turn by what was sent, history included: a turn asked after other answers is asked again.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

from assay.errors import ConfigError
from assay.formats.golden import GoldenSet
from assay.targets.callers import Ask
from assay.types import Conversation

__all__ = [
    "BOTH",
    "CONVERSATION_MODES",
    "HISTORY_MODES",
    "Conversing",
    "after",
    "broken_line",
    "messages_of",
    "rewrites_name",
    "turn_asks",
    "ways",
]

HISTORY_MODES = ("reference", "own")
CONVERSATION_MODES = ("turns", "rewrites")
BOTH = "both"  # step 6: one target asked both ways, as two runs (assay eval --target and assay.evaluate only)
Message = Mapping[str, str]


@dataclass(frozen=True)
class Conversing:
    """How the turns of conversations are asked: ``mode`` ``turns`` or ``rewrites`` (or ``both``: two runs, step 6),
    ``history`` ``reference`` or ``own`` (module docstring)."""

    history: str = "reference"
    mode: str = "turns"

    def checked(self, *, both: bool = False) -> Conversing:
        """These settings, or :class:`ConfigError` naming the flag and its values; mode ``both`` only when ``both``
        (a caller that writes two runs, step 6)."""
        if self.history not in HISTORY_MODES:
            raise ConfigError(f"--history {self.history}: use one of {', '.join(HISTORY_MODES)}")
        if self.mode == BOTH and not both:
            raise ConfigError(
                "--conversation-mode both asks a target twice, into two runs (NAME and NAME (rewrites)): assay eval "
                "--target-conversation-mode both and assay.evaluate(..., conversing=Conversing(mode='both')) do; "
                "assay run writes one run: give turns or rewrites, one run each"
            )
        modes = (*CONVERSATION_MODES, BOTH) if both else CONVERSATION_MODES
        if self.mode not in modes:
            raise ConfigError(f"--conversation-mode {self.mode}: use one of {', '.join(modes)}")
        return self

    @property
    def own(self) -> bool:
        """Whether turns wait for the system's own earlier answers (step 5)."""
        return self.mode == "turns" and self.history == "own"


def messages_of(history: Sequence[tuple[str, str]], utterance: str) -> tuple[dict[str, str], ...]:
    """The OpenAI messages of a turn: each earlier ``(utterance, answer)`` as a user and an assistant message, then
    this utterance as the last user message."""
    out: list[dict[str, str]] = []
    for said, answered in history:
        out += [{"role": "user", "content": said}, {"role": "assistant", "content": answered}]
    return (*out, {"role": "user", "content": utterance})


def turn_asks(golden: GoldenSet, conversing: Conversing, repeat: int | None = None) -> list[Ask]:
    """One :class:`Ask` per golden question in the golden set's order (steps 1 to 4); with ``own`` history a turn's
    messages hold only the turn itself, and :func:`after` adds the answers as they come; the context turns asked
    with ``own`` history (step 7) come just before their conversation's next judged turn."""
    turns = {turn.question_id: (conversation, i) for conversation in golden.conversations
             for i, turn in enumerate(conversation.turns)}  # fmt: skip
    out: list[Ask] = []
    asked: set[str] = set()  # the context turns asked so far
    for question in golden.questions:
        found = turns.get(question.id)
        if found is None:
            out.append(Ask(question.id, question.text, dict(question.metadata), repeat=repeat))
            continue
        conversation, index = found
        ask = Ask(question.id, question.text, dict(question.metadata), repeat, conversation.id, index)
        if conversing.own:
            out += _context_asks(conversation, index, asked, repeat)
        out.append(ask if conversing.mode == "rewrites" else _with_history(golden, ask, conversation, conversing))
    return out


def _with_history(golden: GoldenSet, ask: Ask, conversation: Conversation, conversing: Conversing) -> Ask:
    """A turn asked as typed, with its reference history (step 4; none yet with ``own`` history, step 5)."""
    index = ask.turn or 0
    utterance = conversation.turns[index].utterance
    earlier = [] if conversing.own else [
        (turn.utterance, golden.turn_texts(turn)[1]) for turn in conversation.turns[:index]
    ]  # fmt: skip
    return replace(ask, question=utterance, messages=messages_of(earlier, utterance))


def _context_asks(conversation: Conversation, index: int, asked: set[str], repeat: int | None) -> list[Ask]:
    """The context turns of ``conversation`` before turn ``index`` not in ``asked`` yet, as asks (step 7); they
    join ``asked``."""
    out = []
    for i, turn in enumerate(conversation.turns[:index]):
        if turn.judged or turn.question_id in asked:
            continue
        asked.add(turn.question_id)
        meta = {"conversation_id": conversation.id, "turn": i + 1, "utterance": turn.utterance,
                "dependency": turn.dependency}  # fmt: skip
        out.append(Ask(turn.question_id, turn.utterance, meta, repeat, conversation.id, i,
                       messages_of([], turn.utterance)))  # fmt: skip
    return out


def after(ask: Ask, earlier: Sequence[tuple[Ask, Mapping[str, Any]]]) -> Ask:
    """``ask`` with the system's own history: each earlier turn's utterance and the answer of its run line."""
    history = [(one.question, str(line.get("answer") or "")) for one, line in earlier]
    return replace(ask, messages=messages_of(history, ask.question))


def broken_line(ask: Ask, failed: Ask, line: Mapping[str, Any]) -> dict[str, Any]:
    """The line of a turn not asked because turn ``failed`` of its conversation failed (step 5)."""
    kind = line.get("error", {}).get("kind", "history_failed")
    message = (f"not asked: turn {failed.turn} ({failed.query_id}) of conversation {ask.conversation_id} failed "
               f"({kind}), and with --history own its answer is this turn's history")  # fmt: skip
    return {"query_id": ask.query_id, "error": {"kind": "history_failed", "message": message}}


def rewrites_name(name: str) -> str:
    """The name of the rewrites run of target ``name`` asked both ways (step 6): ``NAME (rewrites)``."""
    return f"{name} (rewrites)"


def ways(name: str, conversing: Conversing, golden: GoldenSet) -> list[tuple[str, Conversing]]:
    """The runs target ``name`` is asked into, each ``(run name, how)``: itself as ``conversing`` says, or with mode
    ``both`` (step 6) ``name`` asked the raw turns with ``conversing``'s history and :func:`rewrites_name` asked the
    rewrites; :class:`ConfigError` for ``both`` on a golden set without conversations."""
    how = conversing.checked(both=True)
    if how.mode != BOTH:
        return [(name, how)]
    if not golden.conversations:
        raise ConfigError(
            f"--conversation-mode both asks {name} the raw turns and the rewrites of the golden set's "
            "conversations, but it has none (no conversations.jsonl): give turns, or a golden set built with assay "
            "build --conversations N"
        )
    return [(name, replace(how, mode="turns")), (rewrites_name(name), replace(how, mode="rewrites"))]
