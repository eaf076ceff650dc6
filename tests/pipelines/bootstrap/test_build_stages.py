"""Each build stage on hand-made records, with scripted judge answers (the only fake is the model)."""

from __future__ import annotations

import asyncio
import json

import pytest
from build_helpers import backend_script, chunk, fake_judge, question

from assay.corpus.pooling import Bm25Index
from assay.errors import ConfigError
from assay.judge.base import ChatRequest
from assay.pipelines.bootstrap.filters import (
    difficulty_label,
    filter_evidence,
    filter_leakage,
    filter_near_duplicates,
    leakage_span,
    quote_score,
    relabel_single_chunk,
)
from assay.pipelines.bootstrap.judging import (
    BuildContext,
    check_unanswerable,
    critique_questions,
    generate_questions,
    grade_pools,
    tick_progress,
)
from assay.pipelines.bootstrap.sampling import Seed, allocate, parse_mix, sample_seeds, type_counts
from assay.pipelines.bootstrap.settings import BuildSettings
from assay.pipelines.bootstrap.support import map_support
from assay.testing import FakeBackend
from assay.types import Claim, Nugget, Provenance, RelevanceLabel

RETURNS = chunk(
    "returns.md",
    0,
    "Customers can return unopened items within 45 days of delivery. Summit members get 90 days. "
    "Refunds are issued to the original payment method within 10 business days.",
)
SHIPPING = chunk("shipping.md", 0, "Standard shipping is free for orders from $75. Express shipping costs $14.95.")
STOVE = chunk("stove.md", 0, "The Emberline 2 stove weighs 88 g and boils a litre of water in 3.5 minutes.")
CHUNKS = {c.id: c for c in (RETURNS, SHIPPING, STOVE)}
SETTINGS = BuildSettings()


def ctx() -> BuildContext:
    return BuildContext(CHUNKS, Bm25Index.build(list(CHUNKS.values())))


# ------------------------------------------------------------------------------------------------ sampling


def test_allocate_is_proportional_with_one_each_and_largest_remainders() -> None:
    # 1 each, then 7 shared as 0.7 / 2.1 / 4.2 -> floors 0, 2, 4 and the spare 1 to the largest fraction (0.7)
    assert allocate([100, 300, 600], total=10, cap=8) == [2, 3, 5]


def test_allocate_moves_what_a_cap_cuts_to_other_documents() -> None:
    assert allocate([1, 1000], total=10, cap=5) == [5, 5]


def test_type_counts_of_the_default_mix() -> None:
    counts = type_counts(parse_mix(None), 20)
    assert counts == {
        "factoid": 4,
        "explanatory": 3,
        "procedural": 2,
        "numeric": 3,
        "conditional": 2,
        "multi-hop": 2,
        "comparison": 2,
        "unanswerable": 2,
    }


def test_parse_mix_normalises_and_rejects_unknown_types() -> None:
    assert parse_mix("factoid=3,numeric=1")["factoid"] == 0.75
    assert parse_mix("factoid=3,numeric=1")["multi-hop"] == 0.0
    with pytest.raises(ConfigError, match="unknown question type 'trivia'"):
        parse_mix("trivia=1")
    with pytest.raises(ConfigError, match="TYPE=SHARE"):
        parse_mix("factoid=lots")
    with pytest.raises(ConfigError, match="add up to 0"):
        parse_mix("factoid=0")


def test_sample_seeds_gives_every_document_a_question_and_is_seeded() -> None:
    chunks = list(CHUNKS.values())
    index = Bm25Index.build(chunks)
    mix = parse_mix("multi-hop=1")
    one = sample_seeds(chunks, index, total=3, per_doc=None, max_per_doc=8, mix=mix, seed=7)
    assert sorted(s.doc_ids[0] for s in one.seeds) == ["returns.md", "shipping.md", "stove.md"]
    assert not one.warnings and one.documents == []
    for seed in one.seeds:  # multi-hop partners come from another document
        assert seed.type == "multi-hop" and len(seed.chunk_ids) == 2 and len(set(seed.doc_ids)) == 2
    again = sample_seeds(chunks, index, total=3, per_doc=None, max_per_doc=8, mix=mix, seed=7)
    assert again.seeds == one.seeds


def test_fewer_questions_than_documents_draws_that_many_documents() -> None:
    chunks = list(CHUNKS.values())
    index = Bm25Index.build(chunks)
    mix = parse_mix("factoid=1")
    drawn = {
        tuple(sample_seeds(chunks, index, total=2, per_doc=None, max_per_doc=8, mix=mix, seed=s).documents)
        for s in range(30)
    }
    assert all(len(d) == 2 and len(set(d)) == 2 for d in drawn) and len(drawn) > 1  # the seed decides
    one = sample_seeds(chunks, index, total=2, per_doc=None, max_per_doc=8, mix=mix, seed=3)
    assert len(one.seeds) == 2 and sorted(s.doc_ids[0] for s in one.seeds) == sorted(one.documents)
    assert one.counts["seed_documents"] == 2 and "2 questions from 2 of 3 documents" in one.plan
    assert one.warnings == []


def test_sample_seeds_on_one_chunk_falls_back_to_factoid() -> None:
    index = Bm25Index.build([STOVE])
    result = sample_seeds([STOVE], index, total=None, per_doc=2, max_per_doc=8, mix=parse_mix("comparison=1"), seed=0)
    assert [s.type for s in result.seeds] == ["factoid", "factoid"]
    assert result.counts["type_fallback"] == 2
    assert len({s.id for s in result.seeds}) == 2


def test_numeric_questions_go_to_chunks_with_numbers_and_the_mix_is_kept() -> None:
    words = [chunk(f"policy{i}.md", 0, f"Returns need a receipt and the original box, policy {w}.") for i, w in
             enumerate(["one", "two", "three", "four"])]  # fmt: skip
    chunks = [*words, STOVE, SHIPPING]
    index = Bm25Index.build(chunks)
    mix = parse_mix("numeric=1,factoid=2")  # 2 numeric of 6, whatever the shuffle puts them on
    for seed in range(20):
        result = sample_seeds(chunks, index, total=6, per_doc=None, max_per_doc=1, mix=mix, seed=seed)
        by_chunk = {s.chunk_ids[0]: s.type for s in result.seeds}
        assert by_chunk[STOVE.id] == by_chunk[SHIPPING.id] == "numeric"
        assert sorted(by_chunk.values()) == ["factoid"] * 4 + ["numeric"] * 2
        assert result.counts["type_fallback"] == 0


def test_numeric_without_any_number_in_the_corpus_falls_back_to_factoid() -> None:
    plain = chunk("plain.md", 0, "Returns need a receipt and the original box.")
    index = Bm25Index.build([plain])
    result = sample_seeds([plain], index, total=None, per_doc=2, max_per_doc=8, mix=parse_mix("numeric=1"), seed=0)
    assert [(s.type, s.fallback_from) for s in result.seeds] == [("factoid", "numeric")] * 2
    assert result.counts["type_fallback"] == 2


def test_seeds_of_one_chunk_and_type_never_repeat_a_prompt() -> None:
    # 45 styles (5 personas x 3 phrasings x 3 lengths): 20 seeds of one chunk would repeat one by chance (p = 0.993)
    index = Bm25Index.build([STOVE])
    mix = parse_mix("factoid=1")
    result = sample_seeds([STOVE], index, total=None, per_doc=20, max_per_doc=20, mix=mix, seed=0)
    assert len(result.seeds) == 20 == len({(s.chunk_ids, s.type, s.style) for s in result.seeds})
    assert len({s.id for s in result.seeds}) == 20
    assert any("20 questions from 1 chunks (more than 4 per chunk)" in w for w in result.warnings)


# ------------------------------------------------------------------------------------------------ filters


def test_quote_score_exact_fuzzy_and_absent() -> None:
    text = RETURNS.text
    assert quote_score("customers can return  UNOPENED items within 45 days", text) == 1.0
    # one word of eleven changed: 10 of 11 words matched in order
    assert quote_score("Customers can return unopened items within 45 days of the delivery.", text) >= 0.85
    assert quote_score("Store credit is given for items bought without a receipt.", text) < 0.5
    assert quote_score("", text) == 0.0


def test_evidence_filter_drops_a_quote_not_in_its_chunk() -> None:
    good = question("q1", "How long is the window?", sources=[RETURNS.id], evidence=["Summit members get 90 days."])
    bad = question("q2", "What does express cost?", sources=[SHIPPING.id], evidence=["Express shipping is free."])
    none = question("q3", "What is it?", sources=[STOVE.id])
    unanswerable = question("q4", "Do you ship to the Moon?", qtype="unanswerable", sources=[])
    out = filter_evidence([good, bad, none, unanswerable], CHUNKS, SETTINGS)
    assert [q.id for q in out.records] == ["q1", "q4"]
    assert out.counts == {"dropped_by_evidence": 2}
    assert {q.id: q.flags["dropped"] for q in out.dropped} == {"q2": "evidence", "q3": "evidence"}
    assert "quote 1 not found" in bad.flags["dropped_detail"]


def test_evidence_cited_in_the_wrong_chunk_is_not_found() -> None:
    q = question("q1", "x?", sources=[RETURNS.id, SHIPPING.id], evidence=["Summit members get 90 days."])
    q.metadata["evidence_chunk_ids"] = [SHIPPING.id]
    assert filter_evidence([q], CHUNKS, SETTINGS).counts["dropped_by_evidence"] == 1


def test_leakage_span_and_filter() -> None:
    copied = "Can customers return unopened items within 45 days of delivery to any store?"
    assert leakage_span(copied, RETURNS.text) == 8  # "return unopened items within 45 days of delivery"
    long_copy = question("q1", "Refunds are issued to the original payment method within 10 business days, right?",
                         sources=[RETURNS.id])  # fmt: skip
    flagged = question("q2", copied, sources=[RETURNS.id])
    clean = question("q3", "How long do I have to send back a parcel?", sources=[RETURNS.id])
    out = filter_leakage([long_copy, flagged, clean], CHUNKS, SETTINGS)
    assert [q.id for q in out.records] == ["q2", "q3"]
    assert out.counts == {"dropped_by_leakage": 1, "flagged_leakage": 2}
    assert flagged.flags["leakage_span"] == 8 and "leakage_span" not in clean.flags


def test_leakage_ratio_drops_a_short_question_that_is_all_copy() -> None:
    q = question("q1", "Summit members get 90 days?", sources=[RETURNS.id])  # 5 of 5 words copied
    assert filter_leakage([q], CHUNKS, SETTINGS).counts["dropped_by_leakage"] == 1


def test_near_duplicates_keep_the_first() -> None:
    # bigrams: 5 and 7, 5 shared -> Jaccard 5/7 = 0.714 >= 0.7
    first = question("q1", "How long is the return window?")
    twin = question("q2", "How long is the return window for members?")
    other = question("q3", "What does express shipping cost?")
    out = filter_near_duplicates([first, twin, other], SETTINGS)
    assert [q.id for q in out.records] == ["q1", "q3"]
    assert out.counts == {"dropped_by_near_duplicate": 1}
    assert twin.flags["dropped_detail"] == "near-duplicate of q1"


def test_multi_hop_answerable_from_one_chunk_is_relabelled() -> None:
    single = question("q1", "a?", qtype="multi-hop", sources=[RETURNS.id, SHIPPING.id], reference_answer="45 days.")
    single.metadata["evidence_chunk_ids"] = [RETURNS.id, RETURNS.id]
    both = question("q2", "b?", qtype="comparison", sources=[RETURNS.id, SHIPPING.id], reference_answer="x")
    long_answer = question("q3", "c?", qtype="comparison", sources=[RETURNS.id, STOVE.id],
                           reference_answer="Summit gets 90 days. Others get 45 days.", cited=[STOVE.id])  # fmt: skip
    out = relabel_single_chunk([single, both, long_answer])
    assert out.counts == {"relabelled": 2}
    assert (single.type, single.source_chunk_ids, single.metadata["planned_type"]) == (
        "factoid",
        [RETURNS.id],
        "multi-hop",
    )
    assert both.type == "comparison" and both.source_chunk_ids == [RETURNS.id, SHIPPING.id]
    assert long_answer.type == "explanatory" and long_answer.flags["relabelled"] == "comparison->explanatory"
    assert single.hops == [] and long_answer.hops == []  # one chunk: no path to walk


def test_a_multi_hop_question_records_its_evidence_chunks_as_hops_in_source_order() -> None:
    # evidence cited partner first, and a third chunk the sources do not name: the hops follow the sources
    ordered = question("q1", "a?", qtype="multi-hop", sources=[RETURNS.id, SHIPPING.id],
                       cited=[SHIPPING.id, RETURNS.id, STOVE.id])  # fmt: skip
    # evidence in one source chunk and one that is no source: the sources stand as the hops
    loose = question("q2", "b?", qtype="comparison", sources=[SHIPPING.id, RETURNS.id], cited=[SHIPPING.id, STOVE.id])
    factoid = question("q3", "c?", sources=[RETURNS.id, SHIPPING.id])
    relabel_single_chunk([ordered, loose, factoid])
    assert ordered.hops == [RETURNS.id, SHIPPING.id]
    assert loose.hops == [SHIPPING.id, RETURNS.id]
    assert factoid.hops == []
    assert "hops" not in factoid.model_dump() and ordered.model_dump()["hops"] == [RETURNS.id, SHIPPING.id]


@pytest.mark.parametrize(
    ("hops", "rank", "overlap", "label"),
    [
        (1, 1, 0.8, "easy"),  # 0 + 0 + 0
        (1, 3, 0.8, "easy"),  # 0 + 1 + 0
        (1, 3, 0.5, "medium"),  # 0 + 1 + 1
        (2, 1, 0.7, "medium"),  # 2 + 0 + 0
        (1, None, 0.1, "hard"),  # 0 + 2 + 2
        (2, 15, 0.7, "hard"),  # 2 + 2 + 0
    ],
)
def test_difficulty_points(hops: int, rank: int | None, overlap: float, label: str) -> None:
    assert difficulty_label(hops, rank, overlap) == label


# ------------------------------------------------------------------------------------------------ judge stages


def _seed(qtype: str, *chunk_ids: str) -> Seed:
    docs = tuple(CHUNKS[c].doc_id for c in chunk_ids)
    return Seed(f"q-{qtype}", qtype, tuple(chunk_ids), docs, "persona: x", "English")


def test_generation_builds_questions_and_counts_unscored_as_dropped() -> None:
    def broken(request: ChatRequest) -> str:
        return "not json" if request.variables["question_type"] == "numeric" else backend_script()(request)

    backend = FakeBackend(broken)
    seeds = [_seed("factoid", RETURNS.id), _seed("numeric", SHIPPING.id), _seed("multi-hop", RETURNS.id, STOVE.id)]
    out = asyncio.run(generate_questions(seeds, fake_judge(backend), SETTINGS, ctx(), None))
    assert out.counts == {"generated": 2, "dropped_by_generation_unscored": 1}
    assert [q.id for q in out.records] == ["q-factoid", "q-multi-hop"]
    assert out.dropped[0].flags["dropped"] == "generation_unscored"
    factoid, multi = out.records
    assert factoid.evidence == ["Customers can return unopened items within 45 days of delivery."]
    assert factoid.metadata["evidence_chunk_ids"] == [RETURNS.id]
    assert factoid.nuggets[0].id == "q-factoid-n1" and factoid.nuggets[0].importance == "vital"
    assert factoid.provenance is not None and factoid.provenance.source == "generator"
    assert multi.metadata["evidence_chunk_ids"] == [RETURNS.id, STOVE.id]
    assert len(backend.requests) == 4  # the broken one was asked twice (one repair), never accepted


def test_generated_unanswerable_has_no_source_chunks() -> None:
    judge = fake_judge(FakeBackend(backend_script()))
    out = asyncio.run(generate_questions([_seed("unanswerable", STOVE.id)], judge, SETTINGS, ctx(), None))
    assert out.records[0].source_chunk_ids == [] and out.records[0].metadata["seed_chunk_ids"] == [STOVE.id]


def test_critic_keeps_drops_and_counts_unscored() -> None:
    scores = {"q1": (5, 5, 5), "q2": (2, 5, 5), "q3": (1, 4, 4), "q4": (1, 2, 5)}

    def critic(request: ChatRequest) -> str:
        qid = next(q for q in scores if request.variables["question"].startswith(q))
        if qid == "q4":
            return "{}"
        a, s, c = scores[qid]
        return json.dumps({"reason": "r", "answerable": a, "self_contained": s, "clear": c})

    questions = [
        question("q1", "q1 ok?", sources=[RETURNS.id]),
        question("q2", "q2 low answerable?", sources=[RETURNS.id]),
        question("q3", "q3 unanswerable?", qtype="unanswerable", sources=[], cited=[]),
        question("q4", "q4 broken?", sources=[RETURNS.id]),
    ]
    questions[2].metadata["seed_chunk_ids"] = [STOVE.id]
    judge = fake_judge(FakeBackend(backend_script({"question_critic": critic})))
    out = asyncio.run(critique_questions(questions, judge, SETTINGS, ctx(), None))
    assert [q.id for q in out.records] == ["q1", "q3"]  # an unanswerable question is not held to 'answerable'
    assert out.counts == {"dropped_by_critic": 1, "dropped_by_critic_unscored": 1}
    assert questions[1].flags["dropped_detail"] == "critic scores below 3: answerable=2"


def test_pools_are_graded_and_unscored_labels_kept_as_none() -> None:
    def relevance(request: ChatRequest) -> str:
        if "Express" in request.variables["passage"]:
            return "no"
        grade = 3 if "45 days" in request.variables["passage"] else 1
        return json.dumps({"reason": "r", "grade": grade})

    q = question("q1", "How many days do customers have to return unopened items?", sources=[RETURNS.id])
    judge = fake_judge(FakeBackend(backend_script({"relevance": relevance})))
    out = asyncio.run(grade_pools([q], judge, BuildSettings(pool_k=5, listwise=None), ctx(), None))
    grades = {label.chunk_id: label.grade for label in out.records}
    assert grades[RETURNS.id] == 3
    assert out.counts["pooled_pairs"] == len(out.records) and out.counts["pool_source"] == 1
    assert all(label.provenance.source == "judge" and label.provenance.prompt == "relevance@4" for label in out.records)
    unscored = [label for label in out.records if label.grade is None]
    assert out.counts["qrels_unscored_pairs"] == len(unscored)
    assert all(label.unscored is not None for label in unscored)


def test_listwise_pools_group_chunks_and_leave_a_missing_judgement_unscored() -> None:
    def listwise(request: ChatRequest) -> str:
        items = [
            {"id": p["id"], "reason": "r", "grade": 3 if "45 days" in p["text"] else 1}
            for p in request.variables["passages"]
            if "Express" not in p["text"]  # the model forgets this passage
        ]
        return json.dumps({"judgements": items})

    text = "How many days do customers have to return unopened items, a stove, or express shipping?"
    q = question("q1", text, sources=[RETURNS.id])
    backend = FakeBackend(backend_script({"relevance_listwise": listwise}))
    out = asyncio.run(grade_pools([q], fake_judge(backend), BuildSettings(pool_k=5, listwise=2), ctx(), None))
    grades = {label.chunk_id: label.grade for label in out.records}
    assert grades == {RETURNS.id: 3, SHIPPING.id: None, STOVE.id: 1}  # the pool is the whole 3-chunk corpus
    assert backend.calls == 2 and sorted(len(r.variables["passages"]) for r in backend.requests) == [1, 2]
    assert out.counts["pooled_pairs"] == 3 and out.counts["qrels_unscored_pairs"] == 1
    assert {label.provenance.prompt for label in out.records} == {"relevance_listwise@4"}


def test_tick_progress_reports_the_start_then_one_more_per_call() -> None:
    seen: list[tuple[str, int, int]] = []
    tick = tick_progress(lambda *report: seen.append(report), "support", 5, start=3)
    tick(0, "a judgement")
    tick("a label")
    assert seen == [("support", 3, 5), ("support", 4, 5), ("support", 5, 5)]
    tick_progress(None, "support", 1)()  # no progress callback: nothing reported, nothing raised


def test_unanswerable_graded_3_somewhere_is_dropped_with_its_labels() -> None:
    q1 = question("q1", "a?", qtype="unanswerable")
    q2 = question("q2", "b?", qtype="unanswerable")
    prov = Provenance(source="judge")
    labels = [
        RelevanceLabel(query_id=q, chunk_id=RETURNS.id, grade=g, provenance=prov) for q, g in (("q1", 3), ("q2", 2))
    ]
    out, kept = check_unanswerable([q1, q2], labels)
    assert [q.id for q in out.records] == ["q2"] and out.counts == {"dropped_by_unanswerable_answered": 1}
    assert [label.query_id for label in kept] == ["q2"]


def test_support_maps_nuggets_and_claims_to_chunks_graded_2_or_more() -> None:
    def support(request: ChatRequest) -> str:
        passages = {p["id"]: p["text"] for p in request.variables["passages"]}
        items = []
        for s in request.variables["statements"]:
            hits = [pid for pid, text in passages.items() if "90" in text and "90" in s["text"]]
            level = "support" if hits else "none"
            items.append({"statement_id": s["id"], "reason": "r", "support": level, "passage_ids": hits})
        return json.dumps({"assignments": items})

    q = question("q1", "How long do Summit members have?", sources=[RETURNS.id])
    q.nuggets = [Nugget(id="q1-n1", text="Summit members get 90 days"), Nugget(id="q1-n2", text="Ask in store")]
    q.claims = [Claim(id="q1-c1", text="Summit members get 90 days to return items.")]
    prov = Provenance(source="judge")
    labels = [
        RelevanceLabel(query_id="q1", chunk_id=RETURNS.id, grade=3, provenance=prov),
        RelevanceLabel(query_id="q1", chunk_id=SHIPPING.id, grade=1, provenance=prov),
        RelevanceLabel(query_id="q1", chunk_id=STOVE.id, grade=None, provenance=prov),
    ]
    backend = FakeBackend(backend_script({"support": support}))
    settings = BuildSettings(support_passages=1)
    out = asyncio.run(map_support([q], labels, judge=fake_judge(backend), settings=settings, ctx=ctx(), progress=None))
    assert out.counts["support_calls"] == 1  # only RETURNS is graded >= 2
    assert [p["text"] for p in backend.requests[0].variables["passages"]] == [RETURNS.text]
    by_nugget = {s.nugget_id: s.chunk_ids for s in out.records}
    assert by_nugget == {"q1-n1": [RETURNS.id], "q1-n2": []}
    assert q.nuggets[0].supported_by == [RETURNS.id] and q.claims[0].supported_by == [RETURNS.id]


def test_unscored_support_leaves_no_records_and_is_counted() -> None:
    q = question("q1", "a?", sources=[RETURNS.id])
    q.nuggets = [Nugget(id="q1-n1", text="Summit members get 90 days")]
    labels = [RelevanceLabel(query_id="q1", chunk_id=RETURNS.id, grade=2, provenance=Provenance(source="judge"))]
    judge = fake_judge(FakeBackend(backend_script({"support": lambda r: "nope"})))
    out = asyncio.run(map_support([q], labels, judge=judge, settings=SETTINGS, ctx=ctx(), progress=None))
    assert out.records == [] and out.counts["support_unscored"] == 1 and q.flags["support_unscored"] == 1


# Each statement is a set of facts; the scripted model says "support" when the passages it is shown state every
# fact between them (naming the passages that contribute), "partial" when they state some, else "none".
FACTS = {
    "Summit members get 90 days; standard shipping is free from $75": ("90 days", "$75"),
    "The stove weighs 88 g": ("88 g",),
    "Summit members get 90 days and a free tent": ("90 days", "free tent"),
}


def _support_by_facts(request: ChatRequest) -> str:
    passages = {p["id"]: p["text"] for p in request.variables["passages"]}
    items = []
    for s in request.variables["statements"]:
        facts = FACTS[s["text"]]
        ids = [pid for pid, text in passages.items() if any(f in text for f in facts)]
        stated = {f for f in facts if any(f in passages[pid] for pid in ids)}
        level = "support" if stated == set(facts) else "partial" if stated else "none"
        items.append({"statement_id": s["id"], "reason": "r", "support": level, "passage_ids": ids})
    return json.dumps({"assignments": items})


@pytest.mark.parametrize(("per_call", "calls", "followups"), [(8, 1, 0), (2, 3, 1), (1, 4, 1)])
def test_support_split_across_batches_is_found_by_a_follow_up(per_call: int, calls: int, followups: int) -> None:
    joint, alone, half = FACTS
    q = question("q1", "What do Summit members get?", sources=[RETURNS.id])
    q.nuggets = [Nugget(id="q1-n1", text=joint), Nugget(id="q1-n2", text=alone)]
    q.claims = [Claim(id="q1-c1", text=half)]  # partial from one chunk only: no follow-up for it
    prov = Provenance(source="judge")
    labels = [  # batches best grade first: RETURNS, then STOVE and SHIPPING (pool order within grade 2)
        RelevanceLabel(query_id="q1", chunk_id=cid, grade=g, provenance=prov)
        for cid, g in ((RETURNS.id, 3), (STOVE.id, 2), (SHIPPING.id, 2))
    ]
    backend = FakeBackend(backend_script({"support": _support_by_facts}))
    settings = BuildSettings(support_passages=per_call)
    out = asyncio.run(map_support([q], labels, judge=fake_judge(backend), settings=settings, ctx=ctx(), progress=None))
    assert backend.calls == out.counts["support_calls"] == calls
    assert out.counts["support_followup_calls"] == out.counts["support_joint"] == followups
    assert {s.nugget_id: s.chunk_ids for s in out.records} == {
        "q1-n1": sorted([RETURNS.id, SHIPPING.id]),
        "q1-n2": [STOVE.id],
    }
    assert q.claims[0].supported_by == [] and {s.nugget_id: s.partial_chunk_ids for s in out.records}["q1-n1"] == []
    if followups:
        last = backend.requests[-1].variables
        assert [s["id"] for s in last["statements"]] == ["N1"]
        assert [p["text"] for p in last["passages"]] == [RETURNS.text, SHIPPING.text]


def test_partial_support_from_one_batch_gets_no_follow_up_and_stays_partial() -> None:
    q = question("q1", "What do Summit members get?", sources=[RETURNS.id])
    q.nuggets = [Nugget(id="q1-n1", text="Summit members get 90 days and a free tent")]  # no chunk has the tent
    prov = Provenance(source="judge")
    labels = [RelevanceLabel(query_id="q1", chunk_id=c, grade=2, provenance=prov) for c in (RETURNS.id, SHIPPING.id)]
    backend = FakeBackend(backend_script({"support": _support_by_facts}))
    settings = BuildSettings(support_passages=1)
    out = asyncio.run(map_support([q], labels, judge=fake_judge(backend), settings=settings, ctx=ctx(), progress=None))
    assert backend.calls == 2 and out.counts["support_followup_calls"] == 0  # partial in one batch only
    assert out.records[0].chunk_ids == [] and out.records[0].partial_chunk_ids == [RETURNS.id]
