"""Conversations of ``assay build --conversations N``: planned, written, checked and cut like questions.

A turn of a conversation IS a golden question: its text is the standalone rewrite (TREC CAsT), so after generation
the turns go through the same filters (evidence, leakage, near-duplicates, relabel), difficulty, pooling, grading,
the unanswerable check and support as single questions do, in the same stages; a turn the leakage or near-duplicate
filter drops stays in its conversation as an unjudged context turn (**Cut** below). Only three steps are their own:

1. **Plan** (:func:`plan_conversations`). Seed chunks are drawn as question seeds are (:func:`.sampling.sample_seeds`
   with ``total = N``: spread over the documents by size, seeded); a chunk opens one conversation (one drawn again
   gives way to the next unused chunk in corpus order; a corpus of fewer chunks than N plans fewer, with a warning).
   Each conversation gets up to three passages: P1 the seed chunk, P2 the next chunk of its document (when there is
   one), P3 the BM25-nearest chunk of another document (:func:`.sampling.second_chunk`). Its number of turns is drawn
   in ``settings.turns`` and its plan of dependencies is: turn 1 ``none`` (about P1), then the kinds pronoun,
   ellipsis, comparison, topic_shift, unanswerable in a seeded order whose first is one that leans on the opening
   turn (pronoun, ellipsis or comparison, as a first follow-up does), repeating (pronoun and ellipsis about P2 or P1;
   comparison and topic_shift about P3, or pronoun when there is no P3). Seeded by ``settings.seed`` and the seed
   chunk, so a rerun plans the same.
2. **Write** (:func:`generate_conversations`): one ``conversation`` call per plan (judge stage ``conversation``).
   Each turn becomes a question ``{conversation id}-t{n}``: the rewrite as its text, the answer, evidence, claims
   and nuggets as a generated question's; ``metadata`` holds ``conversation_id``, ``turn``, ``utterance`` and
   ``dependency``; its ``source_doc_ids`` are the documents of the passages its evidence cites (P1's for an
   unanswerable turn), so a turn links only the documents it is about. Type: ``unanswerable`` and ``comparison``
   turns take that type, the others ``factoid``. A turn
   depends on the history when its dependency is pronoun, ellipsis or comparison.
3. **Check** (:func:`critique_turns`): one ``rewrite_check`` call per turn (judge stage ``rewrite_check``) with the
   earlier turns' utterances and reference answers: the rewrite must score at least ``critic_min`` on answerable
   (unanswerable turns aside), self-contained, faithful (means the utterance given the history) and clear; drops
   count in ``dropped_by_critic`` / ``dropped_by_critic_unscored`` as the question critic's do.

**Cut** (:func:`cut_conversations`): a later turn leans on the earlier ones, so what becomes of a dropped turn
decides what becomes of the rest, as in TREC CAsT, where not every turn of a topic is judged:

1. A turn dropped by the **leakage** or **near-duplicate** filter (:data:`CONTEXT_DROPS`) is a fine turn, only too
   easy (its rewrite copies a run of its passage) or repeated as a test item: it stays as a **context turn**
   (``Turn.judged`` False, with its rewrite, reference answer and ``dropped``: the filter). It has no question in
   ``questions.jsonl``, is never pooled, graded or scored (so it costs nothing after generation; nor does the
   rewrite check see it: the filters run first), and it is in the history of the later turns. The conversation
   goes on.
2. A turn dropped for any other reason (evidence not found: its answer is not grounded; the rewrite check or its
   unscored answer; an unanswerable turn that a passage answers) cuts its conversation there: the later turns
   are dropped (``dropped_by_conversation_cut``), since their history would hold an answer the build could not
   stand behind.
3. A conversation is kept when at least two turns are left and at least one of them is judged; otherwise it is
   dropped whole (its judged turns counted in ``dropped_by_conversation_cut``).

It runs after the critic (given the dropped turns, to tell rule 1 from rule 2) and again after the unanswerable
check (whose dropped turns take their labels; rule 2 for them, context turns stay).

Counts: ``conversation_seeds = conversations_generated + dropped_by_conversation_unscored``; ``turns_generated``
adds to ``generated``, so ``generated = accepted + sum of dropped_by_*`` still holds with the cut counted (a context
turn stays counted in its ``dropped_by_leakage`` / ``dropped_by_near_duplicate``); at the end
``conversations_accepted``, ``turns_accepted`` (judged turns: the questions of the conversations) and
``context_turns`` (turns kept as context). A build asked for conversations that accepts none fails
(:func:`check_conversations`) and writes nothing.
"""

from __future__ import annotations

import random
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from assay.corpus.pooling import Bm25Index
from assay.errors import NothingProduced
from assay.judge.client import Judge, Judgement
from assay.pipelines.bootstrap.judging import BuildContext, drafted_claims, drafted_nuggets, passages_of, tick_progress
from assay.pipelines.bootstrap.sampling import detect_language, parse_mix, sample_seeds, second_chunk
from assay.pipelines.bootstrap.settings import BuildSettings, ProgressFn, StageOutput, drop
from assay.pipelines.bootstrap.strata import source_group
from assay.text import content_hash
from assay.types import Chunk, Conversation, Document, Provenance, Question, Turn, turn_id

__all__ = [
    "CONTEXT_DROPS",
    "CONVERSATION",
    "CUT_COUNTS",
    "FOLLOW_UPS",
    "REWRITE_CHECK",
    "ConversationSeed",
    "check_conversations",
    "conversation_variables",
    "critique_turns",
    "cut_conversations",
    "generate_conversations",
    "plan_conversations",
    "planned_note",
]

CONVERSATION, REWRITE_CHECK = "conversation", "rewrite_check"  # judge stages (and prompt names)
FOLLOW_UPS = ("pronoun", "ellipsis", "comparison", "topic_shift", "unanswerable")
_DEPENDENT = frozenset({"pronoun", "ellipsis", "comparison"})
MIN_TURNS = 2
# Filters whose dropped turns stay as context turns: fine as a turn of the conversation, only too easy (it copies its
# passage) or repeated as a test item. Any other drop (evidence, rewrite check, unanswerable answered) cuts.
CONTEXT_DROPS = frozenset({"leakage", "near_duplicate"})
# The cut's totals: each cut (after the critic, after the unanswerable check) replaces the previous one's.
CUT_COUNTS = ("conversations_accepted", "turns_accepted", "context_turns")


@dataclass(frozen=True)
class ConversationSeed:
    """One planned conversation: id, its passages (P1, P2, P3 in order) and their documents, and per turn
    (dependency, passage id)."""

    id: str
    chunk_ids: tuple[str, ...]
    doc_ids: tuple[str, ...]
    chunk_docs: tuple[str, ...]  # the document of each of chunk_ids
    plan: tuple[tuple[str, str], ...]
    style: str
    language: str


def plan_conversations(
    chunks: list[Chunk], index: Bm25Index, settings: BuildSettings, documents: Sequence[Document] = ()
) -> list[ConversationSeed]:
    """The conversations a build plans (module docstring, step 1); none when ``settings.conversations`` is 0."""
    if not settings.conversations:
        return []
    drawn = sample_seeds(
        chunks,
        index,
        total=settings.conversations,
        per_doc=None,
        max_per_doc=settings.max_per_doc,
        mix=parse_mix({"factoid": 1.0}),
        seed=settings.seed,
        groups={d.id: source_group(d.source) for d in documents},
    ).seeds
    following = {(c.doc_id, c.ordinal): c.id for c in chunks}
    out: list[ConversationSeed] = []
    for seed, first in zip(drawn, _distinct([index.chunk(s.chunk_ids[0]) for s in drawn], chunks), strict=False):
        cid = "c-" + content_hash(f"{first.id}|conversation|1", 5)
        rng = random.Random(f"{settings.seed}:{cid}")
        ids = [first.id]
        nxt = following.get((first.doc_id, first.ordinal + 1))
        ids += [nxt] if nxt is not None else []
        other = second_chunk(index, first)
        ids += [other] if other is not None and other not in ids else []
        plan = _plan(rng, rng.randint(*settings.turns), has_next=nxt is not None, other=len(ids) if other else None)
        chunk_docs = tuple(index.chunk(c).doc_id for c in ids)
        out.append(ConversationSeed(cid, tuple(ids), tuple(dict.fromkeys(chunk_docs)), chunk_docs, plan, seed.style,
                                    detect_language(first.text)))  # fmt: skip
    return out


def _distinct(drawn: Sequence[Chunk], chunks: Sequence[Chunk]) -> list[Chunk]:
    """``drawn`` with each chunk drawn again replaced by the next unused chunk in corpus order (the same document's
    next chunk first): a chunk opens one conversation, since two conversations opening on one passage open alike.
    Ends when every chunk is used."""
    position = {c.id: i for i, c in enumerate(chunks)}
    used: set[str] = set()
    out: list[Chunk] = []
    for chunk in drawn:
        start = position[chunk.id]
        onward = (chunks[(start + k) % len(chunks)] for k in range(len(chunks)))
        found = next((c for c in onward if c.id not in used), None)
        if found is None:
            break
        used.add(found.id)
        out.append(found)
    return out


def planned_note(planned: int, settings: BuildSettings, chunks: int) -> str | None:
    """The warning of a build asked for more conversations than its corpus has chunks to open them."""
    if planned >= settings.conversations:
        return None
    return (f"{settings.conversations} conversations were asked for, but the corpus has {chunks} chunks and a chunk "
            f"opens one conversation: {planned} are planned.")  # fmt: skip


def _plan(rng: random.Random, turns: int, *, has_next: bool, other: int | None) -> tuple[tuple[str, str], ...]:
    kinds = list(FOLLOW_UPS)
    rng.shuffle(kinds)
    first = next(i for i, kind in enumerate(kinds) if kind in _DEPENDENT)
    kinds.insert(0, kinds.pop(first))  # the first follow-up leans on the opening turn, as first follow-ups do
    plan = [("none", "P1")]
    for i in range(turns - 1):
        kind = kinds[i % len(kinds)]
        if kind in ("comparison", "topic_shift") and other is None:
            kind = "pronoun"
        passage = f"P{other}" if kind in ("comparison", "topic_shift") else "P2" if has_next else "P1"
        plan.append((kind, "" if kind == "unanswerable" else passage))
    return tuple(plan)


def conversation_variables(seed: ConversationSeed, chunks: Mapping[str, Chunk]) -> dict[str, Any]:
    """The ``conversation`` prompt variables of one planned conversation."""
    turns = [{"number": n, "dependency": kind, "passage": p} for n, (kind, p) in enumerate(seed.plan, start=1)]
    return {"passages": passages_of(seed.chunk_ids, chunks), "turns": turns, "style": seed.style,
            "language": seed.language}  # fmt: skip


async def generate_conversations(
    seeds: Sequence[ConversationSeed], judge: Judge, ctx: BuildContext, progress: ProgressFn | None
) -> tuple[StageOutput[Question], list[Conversation]]:
    """One ``conversation`` call per plan -> its turns as questions, and the conversations (module docstring)."""
    variables = [conversation_variables(seed, ctx.chunks) for seed in seeds]
    tick = tick_progress(progress, CONVERSATION, len(seeds))
    results = await judge.ajudge_many(CONVERSATION, variables, stage=CONVERSATION, on_result=tick)
    counts = {"conversations_generated": 0, "dropped_by_conversation_unscored": 0, "turns_generated": 0}
    out = StageOutput[Question](records=[], counts=counts)
    conversations: list[Conversation] = []
    for seed, judgement in zip(seeds, results, strict=True):
        turns = _turns(seed, judgement)
        if not turns:
            out.counts["dropped_by_conversation_unscored"] += 1
            continue
        out.counts["conversations_generated"] += 1
        out.counts["turns_generated"] += len(turns)
        out.records.extend(question for question, _ in turns)
        scenario = judgement.output.scenario.strip() if judgement.output is not None else None
        conversations.append(Conversation(id=seed.id, turns=[turn for _, turn in turns], scenario=scenario or None,
                                          source_doc_ids=list(seed.doc_ids)))  # fmt: skip
    out.counts["generated"] = out.counts["turns_generated"]
    return out, conversations


def _turns(seed: ConversationSeed, j: Judgement[Any]) -> list[tuple[Question, Turn]]:
    """The turns of one answer (at most the planned number; empty when unscored or a turn is empty)."""
    if j.output is None:
        return []
    made = j.output.turns[: len(seed.plan)]
    if not made or any(not t.utterance.strip() or not t.rewrite.strip() for t in made):
        return []
    local = {f"P{i}": cid for i, cid in enumerate(seed.chunk_ids, start=1)}
    provenance = Provenance(source="generator", model=j.model, prompt=j.prompt, prompt_hash=j.prompt_hash)
    out = []
    for n, made_turn in enumerate(made, start=1):
        question = _turn_question(
            seed, n, made_turn, local, provenance.model_copy(update={"rationale": made_turn.reason})
        )
        turn = Turn(question_id=question.id, utterance=made_turn.utterance.strip(),
                    depends_on_history=made_turn.dependency in _DEPENDENT, dependency=made_turn.dependency,
                    rewrite_provenance=provenance)  # fmt: skip
        out.append((question, turn))
    return out


def _turn_question(seed: ConversationSeed, n: int, t: Any, local: dict[str, str], provenance: Provenance) -> Question:
    qid = turn_id(seed.id, n)
    answerable = t.dependency != "unanswerable"
    evidence = t.evidence if answerable else []
    cited = [local.get(e.passage_id.strip()) for e in evidence]
    sources = list(dict.fromkeys(c for c in cited if c)) or [seed.chunk_ids[0]]
    qtype = "unanswerable" if not answerable else "comparison" if t.dependency == "comparison" else "factoid"
    meta = {"seed_chunk_ids": list(seed.chunk_ids), "evidence_chunk_ids": cited, "conversation_id": seed.id,
            "turn": n, "utterance": t.utterance.strip(), "dependency": t.dependency, "style": seed.style,
            "language": seed.language, "planned_dependency": seed.plan[n - 1][0]}  # fmt: skip
    docs = [doc for chunk, doc in zip(seed.chunk_ids, seed.chunk_docs, strict=True) if chunk in sources]
    return Question(
        id=qid,
        text=t.rewrite.strip(),
        type=qtype,
        reference_answer=t.answer.strip(),
        source_doc_ids=docs,
        source_chunk_ids=sources if answerable else [],
        evidence=[e.quote for e in evidence],
        claims=drafted_claims(qid, t.claims if answerable else []),
        nuggets=drafted_nuggets(qid, t.nuggets if answerable else []),
        metadata=meta,
        provenance=provenance,
    )


async def critique_turns(
    turns: Sequence[Question],
    generated: Mapping[str, Question],
    *,
    judge: Judge,
    settings: BuildSettings,
    ctx: BuildContext,
    progress: ProgressFn | None,
) -> StageOutput[Question]:
    """One ``rewrite_check`` per turn with its history from ``generated`` (every generated turn by id)."""
    out = StageOutput[Question](records=[], counts={"dropped_by_critic": 0, "dropped_by_critic_unscored": 0})
    if not settings.critic:
        out.records = list(turns)
        return out
    variables = [_check_variables(turn, generated, ctx) for turn in turns]
    tick = tick_progress(progress, REWRITE_CHECK, len(turns))
    results = await judge.ajudge_many(REWRITE_CHECK, variables, stage=REWRITE_CHECK, on_result=tick)
    for turn, judgement in zip(turns, results, strict=True):
        verdict = _verdict(turn, judgement, settings.critic_min)
        if verdict is None:
            out.records.append(turn)
        else:
            drop(out, turn, *verdict)
    return out


def history_of(question: Question, generated: Mapping[str, Question]) -> list[dict[str, str]]:
    """The earlier turns of ``question``'s conversation as ``{utterance, answer}`` (reference answers)."""
    cid, n = question.metadata["conversation_id"], int(question.metadata["turn"])
    earlier = [generated.get(turn_id(cid, i)) for i in range(1, n)]
    return [{"utterance": str(q.metadata.get("utterance", q.text)), "answer": q.reference_answer or ""}
            for q in earlier if q is not None]  # fmt: skip


def _check_variables(turn: Question, generated: Mapping[str, Question], ctx: BuildContext) -> dict[str, Any]:
    return {
        "history": history_of(turn, generated),
        "utterance": str(turn.metadata.get("utterance", turn.text)),
        "rewrite": turn.text,
        "answer": turn.reference_answer or "",
        "passages": passages_of(turn.metadata["seed_chunk_ids"], ctx.chunks, heading=False),
    }


def _verdict(turn: Question, j: Judgement[Any], minimum: int) -> tuple[str, str] | None:
    if j.output is None:
        return "critic_unscored", j.unscored.reason if j.unscored is not None else "no check"
    o = j.output
    scores = {"answerable": o.answerable, "self_contained": o.self_contained, "faithful": o.faithful, "clear": o.clear}
    turn.flags["critic"] = {**scores, "reason": o.reason}
    checked = [k for k in scores if not (k == "answerable" and turn.type == "unanswerable")]
    low = [f"{k}={scores[k]}" for k in checked if scores[k] < minimum]
    return ("critic", f"rewrite check scores below {minimum}: {', '.join(low)}") if low else None


def cut_conversations(
    conversations: Sequence[Conversation], questions: Sequence[Question], dropped: Mapping[str, Question] | None = None
) -> tuple[StageOutput[Question], list[Conversation]]:
    """The cut (module docstring): each conversation up to its first turn dropped for a reason that cuts, a turn
    dropped by a filter of :data:`CONTEXT_DROPS` kept as a context turn; kept with at least two turns, one judged.
    ``dropped``: the turns' questions set aside so far, by id (``flags['dropped']`` names the filter; a missing turn
    not found there cuts). Questions that are no turn pass through; order is kept."""
    kept_ids = {q.id for q in questions}
    out = StageOutput[Question](records=[], counts={"dropped_by_conversation_cut": 0})
    survivors: list[Conversation] = []
    for conversation in conversations:
        turns = _kept_turns(conversation, kept_ids, dropped or {})
        if len(turns) >= MIN_TURNS and any(turn.judged for turn in turns):
            survivors.append(conversation.model_copy(update={"turns": turns}))
    keep = {t.question_id for c in survivors for t in c.turns if t.judged}
    turn_ids = {t.question_id for c in conversations for t in c.turns}
    for question in questions:
        if question.id not in turn_ids or question.id in keep:
            out.records.append(question)
        else:
            why = ("an earlier turn of its conversation was dropped by a check that cuts, or its conversation kept "
                   "fewer than two turns or no judged turn")  # fmt: skip
            drop(out, question, "conversation_cut", why)
    out.counts["conversations_accepted"] = len(survivors)
    out.counts["turns_accepted"] = len(keep)
    out.counts["context_turns"] = sum(not t.judged for c in survivors for t in c.turns)
    return out, survivors


def _kept_turns(conversation: Conversation, kept: set[str], dropped: Mapping[str, Question]) -> list[Turn]:
    """The turns of ``conversation`` before the first one that is neither kept, a context turn already, nor dropped
    by a filter of :data:`CONTEXT_DROPS` (that one becomes a context turn)."""
    out: list[Turn] = []
    for turn in conversation.turns:
        stays = not turn.judged or turn.question_id in kept
        kept_turn = turn if stays else _as_context(turn, dropped.get(turn.question_id))
        if kept_turn is None:
            break
        out.append(kept_turn)
    return out


def _as_context(turn: Turn, question: Question | None) -> Turn | None:
    """``turn`` as a context turn (unjudged, with its question's rewrite and reference answer and the filter that
    dropped it) when a filter of :data:`CONTEXT_DROPS` dropped its question; None otherwise."""
    reason = question.flags.get("dropped") if question is not None else None
    if question is None or reason not in CONTEXT_DROPS:
        return None
    update = {"judged": False, "rewrite": question.text, "answer": question.reference_answer or "", "dropped": reason}
    return turn.model_copy(update=update)


def check_conversations(counts: Mapping[str, int], settings: BuildSettings, unscored: str = "") -> None:
    """Raise :class:`NothingProduced` when conversations were asked for and none was accepted, saying where their
    turns were lost and which drops cut a conversation (context turns do not); ``unscored``: what the judge's
    unscored answers were (``; unscored judge answers: ...``)."""
    if not settings.conversations or counts.get("conversations_accepted", 0):
        return
    planned = counts.get("conversation_seeds", 0)
    written = counts.get("conversations_generated", 0)
    if written == 0:
        raise NothingProduced(
            f"no conversation was written: the model's answers to all {planned} conversation prompts did not parse "
            f"(or had an empty turn){unscored}. Nothing was written; try a larger model with --judge"
        )
    raise NothingProduced(
        f"no conversation was accepted: {planned} planned, {written} written with {counts.get('turns_generated', 0)} "
        f"turns, {counts.get('dropped_by_conversation_cut', 0)} turns cut after a dropped earlier turn{unscored}. A "
        "conversation needs two turns before its first turn dropped by the evidence or rewrite check, one of them "
        "judged (a turn dropped by the leakage or near-duplicate filter stays as an unjudged context turn; see the "
        "dropped_by_* counts: turns whose rewrite is not standalone or does not mean the utterance fail the rewrite "
        "check). Nothing was written; try a larger model with --judge, or more --turns"
    )
