"""Whole builds: the demo corpus with the offline judge, a small corpus through the fake OpenAI server, bad inputs,
and a budget stop followed by a resumed rerun that repeats no call."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from build_helpers import backend_script, fake_judge

from assay.errors import BudgetExceeded, CorpusError, DatasetError
from assay.formats.golden import GoldenSet
from assay.judge import JudgeCache, make_judge
from assay.judge.limits import RetryPolicy
from assay.pipelines.bootstrap import DEMO_SETTINGS, DROP_COUNTS, BuildSettings, build_golden, estimate_build
from assay.testing import FakeBackend, FakeOpenAIServer
from assay.text import canonical_json

ROOT = Path(__file__).resolve().parents[3]
DEMO = ROOT / "datasets" / "demo" / "corpus"
FIXTURES = ROOT / "tests" / "fixtures" / "corpus"
RUNS = ROOT / "datasets" / "demo" / "runs"


@pytest.fixture(scope="module")
def demo(tmp_path_factory: pytest.TempPathFactory) -> tuple[GoldenSet, Path]:
    out = tmp_path_factory.mktemp("demo") / "golden"
    build_golden(DEMO, judge=make_judge("offline"), settings=DEMO_SETTINGS, output=out)
    return GoldenSet.load(out), out


def test_demo_counts_add_up(demo: tuple[GoldenSet, Path]) -> None:
    golden, _ = demo
    counts = golden.manifest.counts
    assert counts["seeds"] == 80 == counts["generated"] + counts["dropped_by_generation_unscored"]
    assert counts["generated"] == counts["accepted"] + sum(counts[k] for k in DROP_COUNTS)
    assert counts["accepted"] == counts["questions"] == len(golden.questions) > 0
    assert counts["documents"] == 32 and counts["chunks"] == len(golden.chunks)
    assert counts["dropped_by_unanswerable_answered"] == 0  # the offline judge gives no 3 to an absent concept
    assert counts["pooled_pairs"] == counts["qrels"] == len(golden.qrels)
    assert counts["files_skipped"] == 0


def test_demo_every_question_has_its_sources_graded_and_nuggets_supported(demo: tuple[GoldenSet, Path]) -> None:
    golden, _ = demo
    qrels = golden.qrels_map()
    types = {q.type for q in golden.questions}
    assert {"factoid", "numeric", "multi-hop", "unanswerable"} <= types
    for q in golden.questions:
        for cid in q.source_chunk_ids:
            assert cid in qrels.get(q.id, {}), f"{q.id}: source {cid} not graded"
        if q.type == "unanswerable":
            assert q.source_chunk_ids == [] and q.difficulty is None
            assert 3 not in qrels.get(q.id, {}).values()
        else:
            assert q.difficulty in ("easy", "medium", "hard")
            assert q.provenance is not None and q.provenance.prompt == "question_generation@2"
    supported = [s for s in golden.nuggets if s.chunk_ids]
    assert supported, "no nugget is supported by any chunk"
    for s in golden.nuggets:
        grades = qrels[s.query_id]
        assert all(grades.get(cid, 0) >= 2 for cid in s.chunk_ids)  # support only from chunks graded >= 2


def test_demo_manifest_records_versions_prompts_seeds_and_usage(demo: tuple[GoldenSet, Path]) -> None:
    golden, folder = demo
    m = golden.manifest
    assert m.corpus_hash and m.models["relevance"] == "offline"
    assert set(m.prompts) == {"question_generation@2", "question_critic@2", "relevance_listwise@4", "support@2"}
    assert m.seeds == {"sampling": 0, "listwise": 0} and m.settings["pool_k"] == 20 and m.settings["listwise"] == 10
    # listwise by default: ceil(pool / 10) calls per question, one per group of up to 10 pooled chunks
    pools = [q.metadata["pool"]["size"] for q in golden.questions]
    assert sum(pools) == m.counts["pooled_pairs"] and max(pools) > 10
    assert m.usage["relevance"].calls == sum(-(-size // 10) for size in pools) < m.counts["pooled_pairs"] / 5
    assert {label.provenance.prompt for label in golden.qrels} == {"relevance_listwise@4"}
    assert m.usage["generation"].calls == 80 and m.usage["generation"].prompt_tokens > 0
    assert sorted(p.name for p in folder.parent.iterdir()) == ["golden"]  # no temporary folder left beside it


def test_demo_ids_are_identical_across_builds(demo: tuple[GoldenSet, Path]) -> None:
    golden, _ = demo
    again = build_golden(DEMO, judge=make_judge("offline"), settings=DEMO_SETTINGS)
    assert [q.id for q in again.questions] == [q.id for q in golden.questions]
    assert [q.text for q in again.questions] == [q.text for q in golden.questions]
    assert [c.id for c in again.chunks] == [c.id for c in golden.chunks]
    assert [(r.query_id, r.chunk_id, r.grade) for r in again.qrels] == [
        (r.query_id, r.chunk_id, r.grade) for r in golden.qrels
    ]
    assert again.manifest.corpus_hash == golden.manifest.corpus_hash


@pytest.fixture(scope="module")
def demo_pointwise() -> GoldenSet:
    return build_golden(DEMO, judge=make_judge("offline"), settings=replace(DEMO_SETTINGS, listwise=None))


def test_demo_pointwise_build_gives_the_same_golden_set(
    demo: tuple[GoldenSet, Path], demo_pointwise: GoldenSet
) -> None:
    # the offline judge grades a passage the same in a list as alone, so the committed runs and hand labels (made
    # from a listwise build) hold for either setting
    golden, _ = demo
    pointwise = demo_pointwise
    assert pointwise.manifest.usage["relevance"].calls == pointwise.manifest.counts["pooled_pairs"]
    assert "relevance@4" in pointwise.manifest.prompts
    assert [(r.query_id, r.chunk_id, r.grade) for r in pointwise.qrels] == [
        (r.query_id, r.chunk_id, r.grade) for r in golden.qrels
    ]
    assert [q.id for q in pointwise.questions] == [q.id for q in golden.questions]


@pytest.mark.parametrize("listwise", [10, None])
def test_dry_run_range_holds_the_demo_build(
    demo: tuple[GoldenSet, Path], demo_pointwise: GoldenSet, listwise: int | None
) -> None:
    golden = demo[0] if listwise else demo_pointwise
    settings = replace(DEMO_SETTINGS, listwise=listwise)
    estimate = estimate_build(DEMO, judge=make_judge("offline"), settings=settings)
    stages = {s.stage: s for s in estimate.stages}
    usage = golden.manifest.usage
    assert stages["generation"].exact and stages["generation"].low == stages["generation"].calls == 80
    assert usage["generation"].calls == 80
    for name in ("critic", "relevance", "support"):
        stage, actual = stages[name], usage[name]
        assert not stage.exact and stage.low < actual.calls < stage.calls, (name, stage, actual.calls)
        assert stage.prompt_tokens_low is not None and stage.cost_usd_low == stage.cost_usd == 0.0  # offline: free
        assert stage.prompt_tokens_low < actual.prompt_tokens < stage.prompt_tokens, name
    assert estimate.calls_low < sum(u.calls for u in usage.values()) < estimate.calls
    assert estimate.prompt_tokens_low < sum(u.prompt_tokens for u in usage.values()) < estimate.prompt_tokens


def test_committed_demo_runs_name_questions_and_chunks_of_a_fresh_build(demo: tuple[GoldenSet, Path]) -> None:
    golden, _ = demo
    question_ids = {q.id for q in golden.questions}
    for name in ("bm25", "hybrid", "weak"):
        lines = [json.loads(line) for line in (RUNS / f"{name}.jsonl").read_text().splitlines()]
        assert {line["query_id"] for line in lines} == question_ids, name
        for line in lines:
            assert all(golden.has_chunk(item["id"]) for item in line["retrieved"]), name
            assert all(golden.has_chunk(cid) for cid in line["citations"]), name


def test_hand_labels_name_pairs_of_a_fresh_build(demo: tuple[GoldenSet, Path]) -> None:
    import csv

    golden, _ = demo
    with (ROOT / "datasets" / "demo" / "human_labels.csv").open(newline="") as handle:
        rows = list(csv.DictReader(handle))
    assert len(rows) == 50 and {r["annotator"] for r in rows} == {"demo-annotator"}
    judged = {(r.query_id, r.chunk_id) for r in golden.qrels}
    for row in rows:
        assert (row["query_id"], row["chunk_id"]) in judged and row["grade"] in {"0", "1", "2", "3"} and row["reason"]


def test_no_script_text_reaches_the_golden_set(demo: tuple[GoldenSet, Path]) -> None:
    golden, _ = demo
    text = " ".join(c.text for c in golden.chunks)
    for decoy in ("every Sunday 7:00-22:00", "Repairs are always free", "holds 70 litres", "only 50 g"):
        assert decoy not in text


# ------------------------------------------------------------------------------------------------ fake server


def _responder(body: dict[str, Any]) -> str:
    from build_helpers import scripted_answer

    schema = body["response_format"]["json_schema"]["name"]
    user = body["messages"][-1]["content"]
    qtype = user.split("Question type: ", 1)[1].split("\n", 1)[0] if "Question type: " in user else "factoid"
    return scripted_answer(schema, body["messages"], qtype)


def _small_corpus(root: Path) -> Path:
    corpus = root / "corpus"
    corpus.mkdir()
    texts = {
        "tents.md": "# Tents\n\nThe Skerry 2 tent weighs 2.1 kg packed. It costs $429 and was released in April 2022.",
        "stoves.md": "# Stoves\n\nThe Emberline 2 stove weighs 88 g. It boils one litre of water in 3.5 minutes.",
        "returns.txt": "Unopened items can be returned within 45 days. Summit members have 90 days to return items.",
    }
    for name, text in texts.items():
        (corpus / name).write_text(text, encoding="utf-8")
    return corpus


@pytest.mark.parametrize("listwise", [10, 2, None])
def test_build_through_the_fake_openai_server(tmp_path: Path, listwise: int | None) -> None:
    corpus = _small_corpus(tmp_path)
    mix = {"factoid": 1, "multi-hop": 1, "unanswerable": 1}
    settings = BuildSettings(per_doc=2, mix=mix, pool_k=5, listwise=listwise)
    with FakeOpenAIServer(_responder) as server:
        judge = make_judge("openai/fake-model", api_base=server.url, api_key="k", retry=RetryPolicy.immediate())
        golden = build_golden(corpus, judge=judge, settings=settings, output=tmp_path / "golden")
        calls = server.calls
    counts = golden.manifest.counts
    assert counts["seeds"] == 6 and counts["accepted"] == len(golden.questions) > 0
    assert calls == sum(u.calls for u in golden.manifest.usage.values())
    model_free = ("dropped_by_evidence", "dropped_by_leakage", "dropped_by_near_duplicate")
    critic_calls = counts["generated"] - sum(counts[k] for k in model_free)
    pools = [q.metadata["pool"]["size"] for q in golden.questions]  # no question is dropped after pooling here
    assert sum(pools) == counts["pooled_pairs"]
    relevance_calls = counts["pooled_pairs"] if listwise is None else sum(-(-size // listwise) for size in pools)
    assert golden.manifest.usage["relevance"].calls == relevance_calls
    assert calls == counts["seeds"] + critic_calls + relevance_calls + counts["support_calls"]
    loaded = GoldenSet.load(tmp_path / "golden")
    assert all(label.grade == 2 for label in loaded.qrels)
    assert {s.query_id for s in loaded.nuggets} == {q.id for q in loaded.questions if q.type != "unanswerable"}


# ------------------------------------------------------------------------------------------------ bad inputs


def test_empty_folder_is_a_clear_error_and_writes_nothing(tmp_path: Path) -> None:
    (tmp_path / "empty").mkdir()
    with pytest.raises(CorpusError, match="holds no files"):
        build_golden(tmp_path / "empty", judge=make_judge("offline"), settings=BuildSettings(), output=tmp_path / "g")
    assert not (tmp_path / "g").exists()


def test_binary_empty_and_undecodable_files_are_skipped_with_warnings(tmp_path: Path) -> None:
    golden = build_golden(
        FIXTURES / "bad", judge=make_judge("offline"), settings=BuildSettings(), output=tmp_path / "g"
    )
    warnings = golden.manifest.model_extra["warnings"] if golden.manifest.model_extra else []
    assert golden.manifest.counts["files_skipped"] >= 3
    joined = " ".join(warnings)
    for reason in ("binary file", "empty file", "undecodable text"):
        assert reason in joined
    assert json.loads((tmp_path / "g" / "manifest.json").read_text())["warnings"] == warnings


def test_duplicate_document_ids_name_both_sources(tmp_path: Path) -> None:
    with pytest.raises(CorpusError, match=r"a\.jsonl.*b\.jsonl|b\.jsonl.*a\.jsonl"):
        build_golden(FIXTURES / "dup", judge=make_judge("offline"), settings=BuildSettings(), output=tmp_path / "g")
    assert not (tmp_path / "g").exists()


def test_a_corpus_of_one_tiny_document_builds_with_a_warning(tmp_path: Path) -> None:
    settings = BuildSettings(per_doc=3, mix={"multi-hop": 1})
    golden = build_golden(FIXTURES / "tiny", judge=make_judge("offline"), settings=settings)
    assert golden.manifest.counts["type_fallback"] == 3
    assert any("one chunk" in w for w in golden.manifest.model_extra["warnings"])  # type: ignore[index]


def test_an_existing_output_needs_overwrite_before_any_work(tmp_path: Path) -> None:
    (tmp_path / "g").mkdir()
    (tmp_path / "g" / "keep.txt").write_text("mine")
    backend = FakeBackend(backend_script())
    with pytest.raises(DatasetError, match="--overwrite"):
        build_golden(FIXTURES / "tiny", judge=fake_judge(backend), settings=BuildSettings(), output=tmp_path / "g")
    assert backend.calls == 0 and (tmp_path / "g" / "keep.txt").read_text() == "mine"


def test_a_golden_set_inside_the_corpus_is_skipped_and_a_rebuild_gives_the_same_ids(tmp_path: Path) -> None:
    corpus = _small_corpus(tmp_path)
    settings = BuildSettings(per_doc=2, pool_k=5)
    first = build_golden(corpus, judge=make_judge("offline"), settings=settings, output=corpus / "golden")
    again = build_golden(
        corpus, judge=make_judge("offline"), settings=settings, output=corpus / "golden", overwrite=True
    )
    assert (
        [d.id for d in again.documents] == [d.id for d in first.documents] == ["returns.txt", "stoves.md", "tents.md"]
    )
    assert [(q.id, q.text) for q in again.questions] == [(q.id, q.text) for q in first.questions]
    assert any("skipped" in w and "golden set" in w for w in again.manifest.model_extra["warnings"])  # type: ignore[index]
    with pytest.raises(CorpusError, match=r"is an assay golden set, not a corpus.*assay eval"):
        build_golden(corpus / "golden", judge=make_judge("offline"), settings=settings)


def test_an_output_path_that_is_a_file_is_refused_before_any_work(tmp_path: Path) -> None:
    out = tmp_path / "g.txt"
    out.write_text("mine")
    backend = FakeBackend(backend_script())
    with pytest.raises(DatasetError, match="is a file, not a folder"):
        build_golden(FIXTURES / "tiny", judge=fake_judge(backend), settings=BuildSettings(), output=out, overwrite=True)
    assert backend.calls == 0 and out.read_text() == "mine"


# ------------------------------------------------------------------------------------------------ budget + resume


def _keys(backend: FakeBackend) -> list[str]:
    return [canonical_json([r.prompt_name, r.variables]) for r in backend.requests]


def test_budget_stop_writes_nothing_and_the_rerun_repeats_no_call(tmp_path: Path) -> None:
    corpus = _small_corpus(tmp_path)
    settings = BuildSettings(per_doc=2, pool_k=5)
    cache = tmp_path / "cache"
    first = FakeBackend(backend_script())
    per_call = 120 / 1e6  # the fake backend reports 100 prompt + 20 completion tokens; price $1 per million
    judge = fake_judge(first, cache=JudgeCache(cache), concurrency=1, max_cost=per_call * 9.5)
    with pytest.raises(BudgetExceeded, match="rerun"):
        build_golden(corpus, judge=judge, settings=settings, output=tmp_path / "g")
    assert not (tmp_path / "g").exists() and first.calls == 10
    second = FakeBackend(backend_script())
    golden = build_golden(
        corpus, judge=fake_judge(second, cache=JudgeCache(cache)), settings=settings, output=tmp_path / "g"
    )
    assert set(_keys(first)).isdisjoint(_keys(second))
    assert golden.manifest.usage["generation"].cached == 6 and (tmp_path / "g" / "manifest.json").is_file()
    third = FakeBackend(backend_script())
    build_golden(corpus, judge=fake_judge(third, cache=JudgeCache(cache)), settings=settings)
    assert third.calls == 0  # a complete rerun is served from the cache


def test_estimate_counts_generation_exactly_and_sees_the_cache(tmp_path: Path) -> None:
    corpus = _small_corpus(tmp_path)
    settings = BuildSettings(per_doc=2, pool_k=5)
    cache = JudgeCache(tmp_path / "cache")
    estimate = estimate_build(corpus, judge=fake_judge(FakeBackend(backend_script()), cache=cache), settings=settings)
    stages = {s.stage: s for s in estimate.stages}
    assert estimate.seeds == 6 and stages["generation"].calls == 6 and stages["generation"].exact
    assert not stages["relevance"].exact and stages["relevance"].calls > 0
    for stage in ("critic", "relevance", "support"):  # priced at $1 per million tokens in and out
        low, high = stages[stage].cost_usd_low, stages[stage].cost_usd
        assert low is not None and high is not None and 0 < low < high
    assert estimate.cost_usd_low is not None and estimate.cost_usd is not None
    assert 0 < estimate.cost_usd_low < estimate.cost_usd
    build_golden(corpus, judge=fake_judge(FakeBackend(backend_script()), cache=cache), settings=settings)
    after = estimate_build(corpus, judge=fake_judge(FakeBackend(backend_script()), cache=cache), settings=settings)
    assert {s.stage: s for s in after.stages}["generation"].cached == 6


def _paraphrasing(request: Any) -> str:
    """A generator that never quotes its passage (as a too-small model does): every evidence quote is invented."""
    return json.dumps(
        {
            "reason": "scripted",
            "question": "What colour is the sky on Tuesdays?",
            "answer": "Blue, mostly.",
            "evidence": [{"passage_id": "1", "quote": "the sky is a lovely shade on Tuesdays"}],
            "claims": ["The sky is blue on Tuesdays."],
            "nuggets": [{"text": "blue on Tuesdays", "importance": "vital"}],
        }
    )


def test_a_build_that_accepts_no_question_fails_naming_the_stage_and_writes_nothing(tmp_path: Path) -> None:
    from assay.errors import NothingProduced

    backend = FakeBackend(backend_script({"question_generation": _paraphrasing}))
    with pytest.raises(NothingProduced) as caught:
        build_golden(
            _small_corpus(tmp_path), judge=fake_judge(backend), settings=BuildSettings(per_doc=2), output=tmp_path / "g"
        )
    message = str(caught.value)
    assert "no question was accepted" in message and "Most were lost at evidence" in message
    assert "too small" in message and "Nothing was written" in message
    assert not (tmp_path / "g").exists()
    assert {r.prompt_name for r in backend.requests} == {"question_generation"}  # no pool graded for nothing


def test_a_build_whose_every_relevance_label_is_unscored_fails(tmp_path: Path) -> None:
    from assay.errors import ItemRejected, NothingProduced

    def cut(request: Any) -> Any:
        return ItemRejected("the answer was cut at max_tokens=8", kind="truncated")

    backend = FakeBackend(backend_script({"relevance_listwise": cut, "relevance": cut}))
    with pytest.raises(NothingProduced, match=r"relevance labels is unscored; unscored judge answers: \d+ truncated"):
        build_golden(_small_corpus(tmp_path), judge=fake_judge(backend), settings=BuildSettings(per_doc=2))


def test_the_plan_is_told_before_the_first_call_and_the_draw_is_in_the_manifest(tmp_path: Path) -> None:
    backend = FakeBackend(backend_script())
    told: list[tuple[str, int]] = []
    golden = build_golden(
        DEMO,
        judge=fake_judge(backend),
        settings=BuildSettings(questions=4, seed=5),
        notify=lambda line: told.append((line, backend.calls)),
    )
    assert told[0] == ("plan: 4 questions from 4 of 32 documents (drawn with the seed, stratified by source folder "
                       "or file and by size; one question each)", 0)  # fmt: skip
    sampling = golden.manifest.model_extra["sampling"]  # type: ignore[index]
    assert sampling["seed"] == 5 and len(sampling["documents"]) == 4
    assert {d for q in golden.questions for d in q.source_doc_ids[:1]} <= set(sampling["documents"])
