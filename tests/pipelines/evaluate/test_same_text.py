"""Same text, same score (issue 43): a chunk's text cut in two halves scores what the chunk scores on every budget
measure, even when a half's words also stand elsewhere (a sentence repeated in another section, a page kept in two
versions) and when the page opens with markup (an HTML banner) that a located passage does not start on; and a run's
character grades do not depend on which other runs were judged with it."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import pytest
from passages_fixture import paragraph_chunks

from assay.corpus.align import Span
from assay.formats.golden import GoldenSet
from assay.judge import Judge, make_judge
from assay.pipelines.evaluate import EvalSettings, evaluate
from assay.pipelines.evaluate.runs.locate import Resolver
from assay.pipelines.evaluate.runs.read import load_runs, specs_of
from assay.types import Chunk, Document, Manifest, Provenance, Question, RelevanceLabel

TIME = datetime(2025, 1, 1, tzinfo=UTC)
BANNER = '<p align="center"><img src="docs/logo.png" alt="Widgets logo banner" width="300"></p>\n\n'
INSTALL = "Install the package with pip. Then import it in your code."
CACHE = "Configure the cache folder before the first run, and give the model name in the settings file."
# The install sentences stand word for word in the quick start (earlier in the page) and in the set-up chunk.
PAGES = {
    "a-guide": (
        BANNER + "# Guide\n\nQuick start. " + INSTALL + " That is all.\n\n"
        "## Set-up\n\n" + INSTALL + " " + CACHE + "\n\n## Models\n\nModels are named as the provider names them."
    ),
    # an older version of the same page, sorted first: every passage of it also stands in a-guide
    "a-archive": "# Set-up (v1)\n\n" + INSTALL + " " + CACHE + "\n\nOld text.",
}
QUESTION = "How do I configure the cache folder and the model name?"


def _chunks() -> list[Chunk]:
    return paragraph_chunks(PAGES)


def _golden() -> GoldenSet:
    docs = [Document(id=d, source=f"{d}.md", text=t, content_hash=d) for d, t in sorted(PAGES.items())]
    chunks = _chunks()
    grades = {"a-guide#0": 0, "a-guide#1": 0, "a-guide#2": 1, "a-guide#3": 0, "a-guide#4": 3, "a-guide#5": 0}
    provenance = Provenance(source="judge", model="fixture", time=TIME)
    qrels = [RelevanceLabel(query_id="q1", chunk_id=c, grade=g, provenance=provenance) for c, g in grades.items()]
    questions = [Question(id="q1", text=QUESTION, source_doc_ids=["a-guide"], reference_answer=CACHE),
                 Question(id="q2", text="How do I install it?", source_doc_ids=["a-guide"])]  # fmt: skip
    return GoldenSet(Manifest(assay_version="test"), docs, chunks, questions, qrels, [])


ORDER = ["a-guide#4", "a-guide#0", "a-guide#2", "a-guide#5", "a-guide#3", "a-guide#1"]


def _by_id() -> list[dict[str, object]]:
    return [{"query_id": "q1", "retrieved": [{"id": c} for c in ORDER]}]


def _halves() -> list[dict[str, object]]:
    """Every chunk of six words or more cut at the space nearest its middle (the rest whole), in the same order."""
    texts = {c.id: c.text for c in _chunks()}
    items: list[dict[str, object]] = []
    for cid in ORDER:
        text = texts[cid]
        spaces = [i for i, ch in enumerate(text) if ch == " "]
        if len(text.split()) < 6:
            items.append({"text": text})
            continue
        cut = min(spaces, key=lambda i: abs(i - len(text) // 2))
        items += [{"text": text[:cut]}, {"text": text[cut:]}]
    return [{"query_id": "q1", "retrieved": items}]


BUDGETS = ("25t", "60t", "400c")
SETTINGS = EvalSettings(k_values=(3,), n_boot=100, add_labels=False, budgets=BUDGETS)


def _budget_values(result: object, run: str) -> dict[str, float | None]:
    found = next(r for r in result.runs if r.name == run)  # type: ignore[attr-defined]
    return {name: s.mean for name, s in found.metrics.items() if name.endswith(BUDGETS)}


def test_halves_score_what_the_chunks_score_on_every_budget_measure() -> None:
    result, _ = evaluate(_golden(), {"golden": _by_id(), "halves": _halves()}, settings=SETTINGS)
    golden, halves = _budget_values(result, "golden"), _budget_values(result, "halves")
    assert golden and golden == halves
    assert golden["ndcg@60t"] not in (None, 0.0)


def _located(run: list[dict[str, object]]) -> list[Span | None]:
    golden = _golden()
    line = next(iter(load_runs(specs_of({"r": run}), golden, Resolver(golden))[0].lines.values()))
    return [line.located[unit].span for unit in line.ranked]


def test_the_first_half_lands_in_its_chunk_not_in_the_earlier_copy_of_its_words() -> None:
    chunk = next(c for c in _chunks() if c.id == "a-guide#4")
    first_two = _located(_halves())[:2]
    assert all(s is not None and s.doc_id == "a-guide" for s in first_two)
    assert all(chunk.start <= s.start and s.end <= chunk.end for s in first_two if s is not None)


def test_a_repeated_text_goes_beside_its_neighbour_else_where_it_earned_a_grade_else_first() -> None:
    (alone,) = _located([{"query_id": "q1", "retrieved": [{"text": INSTALL}]}])
    set_up = next(c for c in _chunks() if c.id == "a-guide#4")  # graded 3: the same words earn it wherever
    assert alone is not None and alone.doc_id == "a-guide" and alone.start == set_up.start
    (other,) = _located([{"query_id": "q2", "retrieved": [{"text": INSTALL}]}])  # no label for q2
    assert other is not None and other.doc_id == "a-archive"  # the global rule: the lowest id first
    _, beside = _located([{"query_id": "q1", "retrieved": [{"id": "a-archive#0"}, {"text": INSTALL}]}])
    archive = PAGES["a-archive"]  # beside the archived heading it follows, though the guide's copy is graded 3
    assert beside is not None and (beside.doc_id, beside.start) == ("a-archive", archive.index(INSTALL))
    _, again = _located([{"query_id": "q1", "retrieved": [{"id": "a-guide#2"}, {"text": INSTALL}]}])
    assert again is not None and (again.doc_id, again.start) == ("a-guide", set_up.start)  # not the text #2 showed


def test_markup_counts_for_neither_a_chunk_nor_a_located_passage() -> None:
    """The banner chunk given by id and its markup given by text (found in no document: text that is never
    relevant) score the same: a tag's letters are not text, in a chunk or in a passage."""
    banner_only = PAGES["a-guide"].split("\n\n")[0]
    assert banner_only.startswith("<p")
    golden = _golden()
    by_id = [{"query_id": "q1", "retrieved": [{"id": "a-guide#0"}, {"id": "a-guide#4"}]}]
    by_text = [{"query_id": "q1", "retrieved": [{"text": banner_only}, {"id": "a-guide#4"}]}]
    result, _ = evaluate(golden, {"ids": by_id, "texts": by_text}, settings=SETTINGS)
    assert _budget_values(result, "ids") == _budget_values(result, "texts")


@pytest.fixture
def judge(tmp_path: Path) -> Judge:
    return make_judge("offline", cache_dir=tmp_path / "cache")


def test_judging_another_run_s_fragments_rewrites_no_score(tmp_path: Path, judge: Judge) -> None:
    """Issue 43's first finding: the halves of relevant chunks judged as passages (some 0 on their own) used to
    override the chunks' grades for every run. Evaluated alone or with its halves, the golden run scores the same on
    every ranking and budget measure."""
    alone_folder, together_folder = tmp_path / "alone", tmp_path / "together"
    _golden().save(alone_folder)
    _golden().save(together_folder)
    settings = EvalSettings(k_values=(3,), n_boot=100, add_labels=True, budgets=BUDGETS)
    alone, _ = evaluate(alone_folder, {"golden": _by_id()}, judge=judge, settings=settings)
    together, _ = evaluate(together_folder, {"golden": _by_id(), "halves": _halves()}, judge=judge, settings=settings)
    first = next(r for r in alone.runs if r.name == "golden").metrics
    second = next(r for r in together.runs if r.name == "golden").metrics
    shared = [n for n in first if "@" in n and n in second and not n.startswith(("judged", "grade"))]
    assert shared
    assert {n: first[n].mean for n in shared} == {n: second[n].mean for n in shared}
    assert GoldenSet.load(together_folder).passages  # the halves were judged as passages (their usefulness)


RETURNS = {
    "policy": "Customers may return any unused item within 30 days of delivery.\n\n"
    "Items can be returned by customers within 30 days, for any reason.\n\nGift cards are sold in every store.",
}


def _returns_golden() -> GoldenSet:
    """Three chunks; only the first is labelled for q1 (3) and the last (0): the second, which also answers, is
    unlabelled until a run retrieves it and the judge reads it."""
    text = RETURNS["policy"]
    docs = [Document(id="policy", source="policy.md", text=text, content_hash="policy")]
    chunks, start = [], 0
    for ordinal, part in enumerate(text.split("\n\n")):
        chunks.append(Chunk(id=f"policy#{ordinal}", doc_id="policy", ordinal=ordinal, text=part, start=start,
                            end=start + len(part)))  # fmt: skip
        start += len(part) + 2
    provenance = Provenance(source="judge", model="fixture", time=TIME)
    qrels = [RelevanceLabel(query_id="q1", chunk_id=c, grade=g, provenance=provenance)
             for c, g in (("policy#0", 3), ("policy#2", 0))]  # fmt: skip
    question = Question(id="q1", text="How many days do customers have to return an item?", source_doc_ids=["policy"])
    return GoldenSet(Manifest(assay_version="test"), docs, chunks, [question], qrels, [])


def test_a_score_moved_by_text_other_runs_brought_is_reported_with_the_score_alone(tmp_path: Path) -> None:
    """The one way a run's score evaluated with others may differ from alone: another run retrieved text no label
    covered and the judge found it relevant. The report names the question, the shift, and the mean the run scores
    evaluated alone on a fresh copy of the golden set."""
    settings = EvalSettings(k_values=(3,), n_boot=100, add_labels=True, budgets=("30t",), primary="ndcg@3")
    first = [{"query_id": "q1", "retrieved": [{"id": "policy#0"}, {"id": "policy#2"}]}]
    second = [{"query_id": "q1", "retrieved": [{"id": "policy#1"}, {"id": "policy#0"}]}]
    alone_folder, together_folder = tmp_path / "alone", tmp_path / "together"
    _returns_golden().save(alone_folder)
    _returns_golden().save(together_folder)
    judge = make_judge("offline", cache_dir=tmp_path / "cache")
    alone, _ = evaluate(alone_folder, {"first": first}, judge=judge, settings=settings)
    together, _ = evaluate(together_folder, {"first": first, "second": second}, judge=judge, settings=settings)
    added = GoldenSet.load(together_folder).qrels_map()["q1"]
    assert added.get("policy#1", 0) >= 1  # the premise: the second run's chunk was judged relevant
    (shift,) = together.pool_shifts  # the second run brought its own label: no shift for it
    alone_mean = next(r for r in alone.runs if r.name == "first").metrics["ndcg@3"].mean
    together_mean = next(r for r in together.runs if r.name == "first").metrics["ndcg@3"].mean
    assert shift.run == "first" and shift.metric == "ndcg@3" and shift.questions == ["q1"]
    assert shift.alone_mean == pytest.approx(alone_mean)
    assert shift.deltas["q1"] == pytest.approx(together_mean - alone_mean) and shift.deltas["q1"] < 0
    assert any(w.startswith("first: other runs made the judge read text") for w in together.warnings)
    first_alone = next(r for r in alone.runs if r.name == "first").metrics
    assert {"ndcg@3", "ndcg@30t", "recall@30t"} <= set(shift.alone_means)
    assert shift.alone_means == pytest.approx({name: first_alone[name].mean for name in shift.alone_means})


def test_the_same_text_given_twice_stands_for_both_copies_not_twice_for_one() -> None:
    """A block copied into two pages, retrieved as both copies: by id two units, so by text two places too."""
    block = INSTALL + " " + CACHE
    first, second = _located([{"query_id": "q1", "retrieved": [{"text": block}, {"text": block}]}])
    assert first is not None and second is not None
    assert {first.doc_id, second.doc_id} == {"a-guide", "a-archive"}


def test_quoted_words_are_as_relevant_in_their_other_copy() -> None:
    """The set-up chunk's label quotes the cache sentence; the archived page holds the same sentence word for word. A
    run retrieving the archived copy (by offsets) retrieved the same relevant text and scores the same."""
    golden = _golden()
    golden.qrels = [
        label.model_copy(update={"quotes": [CACHE]}) if label.chunk_id == "a-guide#4" else label
        for label in golden.qrels
    ]
    guide, archive = PAGES["a-guide"], PAGES["a-archive"]
    here = {"doc_id": "a-guide", "start": guide.index(CACHE), "end": guide.index(CACHE) + len(CACHE)}
    there = {"doc_id": "a-archive", "start": archive.index(CACHE), "end": archive.index(CACHE) + len(CACHE)}
    runs = {"here": [{"query_id": "q1", "retrieved": [here]}], "there": [{"query_id": "q1", "retrieved": [there]}]}
    result, _ = evaluate(golden, runs, settings=SETTINGS)
    assert _budget_values(result, "here") == _budget_values(result, "there")
    assert _budget_values(result, "here")["P@25t"] == pytest.approx(len("".join(CACHE.split()).replace(",", "")
                                                                        .replace(".", "")) / 100)  # fmt: skip


def test_a_judge_that_paraphrases_its_quotes_is_said_and_not_trusted() -> None:
    """Every quote the judge gives is its own wording: each is dropped and counted in one warning, and the labels
    count their whole text, as labels without quotes do."""
    import json

    from assay.judge.base import ChatRequest
    from assay.judge.client import Judge
    from assay.judge.limits import RetryPolicy
    from assay.testing import FakeBackend

    def paraphrase(request: ChatRequest) -> str:
        said = {"reason": "r", "grade": 2, "quotes": ["in other words, set the cache first"]}
        if request.prompt_name == "relevance":
            return json.dumps(said)
        return json.dumps({"judgements": [{"id": p["id"], **said} for p in request.variables["passages"]]})

    judge = Judge(FakeBackend(paraphrase), model="test/judge", retry=RetryPolicy.immediate())
    gold = _golden()
    result, _ = evaluate(gold, {"halves": _halves()}, judge=judge, settings=SETTINGS)
    labels = [label for label in gold.qrels if label.quotes_dropped]
    labels += [label for passage in gold.passages for label in passage.labels if label.quotes_dropped]
    said = [w for w in result.warnings if w.startswith("The judge gave")]
    assert len(labels) >= 2 and all(label.quotes is None for label in labels)
    assert said == [f"The judge gave {len(labels)} quote(s) that are not in their passage (paraphrases) on "
                    f"{len(labels)} label(s): dropped and never trusted; a label left with no quote counts its whole "
                    "text at its grade."]  # fmt: skip


def test_every_run_alone_is_what_the_report_says_it_would_score_alone(tmp_path: Path) -> None:
    """The property behind ``pool_shifts``, on runs that take each path to the judge: golden chunk ids; a window of
    text straddling a labelled and an unlabelled chunk (the unlabelled chunk is judged for the pool); a fragment of a
    labelled chunk (judged as a passage). Evaluated alone, each run scores, on every ranking and budget measure,
    exactly what the evaluation of all three says it would score alone (its mean, or its pool shift's mean alone)."""
    text = RETURNS["policy"]
    cut = text.index("Items can be returned")
    runs = {
        "ids": [{"query_id": "q1", "retrieved": [{"id": "policy#0"}, {"id": "policy#2"}]}],
        "window": [{"query_id": "q1", "retrieved": [{"text": text[30 : cut + 40]}]}],
        "fragment": [{"query_id": "q1", "retrieved": [{"text": text[: cut // 2]}, {"id": "policy#2"}]}],
    }
    settings = EvalSettings(k_values=(3,), n_boot=100, add_labels=True, budgets=("30t",), primary="ndcg@3")
    judge = make_judge("offline", cache_dir=tmp_path / "cache")

    def fresh(name: str) -> Path:
        folder = tmp_path / name
        _returns_golden().save(folder)
        return folder

    together, _ = evaluate(fresh("together"), runs, judge=judge, settings=settings)
    assert GoldenSet.load(tmp_path / "together").qrels_map()["q1"].get("policy#1", 0) >= 1  # the pool grew
    shifts = {s.run: s for s in together.pool_shifts}
    assert "ids" in shifts and "window" not in shifts  # the window brought that text itself
    after, before = GoldenSet.load(tmp_path / "together"), _returns_golden()
    grown = len(after.qrels) + sum(len(p.labels) for p in after.passages) - len(before.qrels)
    passages = sum(len(p.labels) for p in after.passages)
    note = next(w for w in together.warnings if w.startswith("This evaluation added"))
    assert grown >= 2 and passages >= 1
    assert note.startswith(f"This evaluation added {grown} labels to the pool, {passages} of them passages judged as "
                           "passages (chunks judged in each run's top: ids 0, window ")  # fmt: skip
    for name, run in runs.items():
        alone, _ = evaluate(fresh(name), {name: run}, judge=judge, settings=settings)
        mine = alone.runs[0].metrics
        said = next(r for r in together.runs if r.name == name).metrics
        measures = [
            m
            for m in said
            if m.endswith(("@3", "@30t"))
            and m in mine
            and mine[m].mean is not None
            and not m.startswith(("ragas", "span", "judged", "coverage"))
        ]  # ranking and budget measures
        assert measures
        expected = {m: shifts[name].alone_means.get(m) if name in shifts else said[m].mean for m in measures}
        assert expected == pytest.approx({m: mine[m].mean for m in measures}), name
