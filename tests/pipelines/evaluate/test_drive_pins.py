"""Pins of the driven judging step of an evaluation (judging.drive), found by the mutation habit
(scripts/mutation.sh): the offline judge over hand-made runs of the passages fixture, what is judged, counted, kept
and written, and the dry run's stages, each written by hand."""

from __future__ import annotations

import json
from pathlib import Path

from passages_fixture import chunk_text, make_passages_golden

from assay.aio import run_sync
from assay.corpus.align import Span
from assay.formats.golden import GoldenSet
from assay.judge import Judge, Pair, make_judge
from assay.judge.base import ChatRequest, ChatResponse
from assay.judge.criteria import parse_criterion
from assay.judge.offline import OfflineBackend
from assay.judge.relevance import LISTWISE_PROMPT
from assay.pipelines.evaluate.judging.asking import JudgingSettings
from assay.pipelines.evaluate.judging.calls import plan_calls
from assay.pipelines.evaluate.judging.criteria import CRITERION_PROMPT
from assay.pipelines.evaluate.judging.drive import (
    _call_families,
    _judge_all,
    estimate_judging,
    judge_pool,
    judge_runs,
)
from assay.pipelines.evaluate.judging.pair_checks import PAIR_STAGE, estimate_pair_variables
from assay.pipelines.evaluate.runs.carry import Carried
from assay.pipelines.evaluate.runs.loaded import LoadedRun, RunLine, Search
from assay.pipelines.evaluate.runs.locate import Located
from assay.pipelines.evaluate.runs.units import ReadRun
from assay.pipelines.evaluate.scoring.names import LLM_FAMILIES
from assay.results import RunCounts
from assay.types import Nugget, Passage, ToolCall, ToolStep

TENT_Q = "How much does the Brackenhow 4 tent weigh?"
OWN = "The tent weighs 3.2 kg in its bag."  # the run's own passage, found nowhere
FOUND = "Brackenhow 4 tent weighs 3.2 kg"  # a search's passage, found in the tent document at 12..43


def _read() -> list[ReadRun]:
    """One line of q2: tent#3 and tent#0 (unlabelled) first, tent#1 (labelled), the run's own passages p:own and
    p:blank (no text), and shipping#0 (unlabelled, fifth); a search returned p:found (located in the tent document)."""
    span = Span(doc_id="tent", start=12, end=43, match="exact", score=0.75)
    own = {"p:own": Located(unit="p:own", match="unmatched", span=None, text=OWN),
           "p:blank": Located(unit="p:blank", match="unmatched", span=None, text=None)}  # fmt: skip
    line = RunLine(query_id="q2", ranked=["tent#3", "tent#0", "tent#1", "p:own", "shipping#0", "p:blank"], scores={},
                   located=own, answer="It weighs 3.2 kg.",
                   steps=[Search(query="tent", units=("p:found",))],
                   step_found={"p:found": Located(unit="p:found", match="exact", span=span, text=FOUND)})  # fmt: skip
    run = LoadedRun(name="a", path=Path("a.jsonl"), kind="jsonl", lines={"q2": line}, counts=RunCounts())
    return [ReadRun(run, run)]


def _carried() -> Carried:
    carried = Carried()
    carried.pending = [Pair("q2", TENT_Q, "p:own", OWN), Pair("q2", TENT_Q, "p:found", FOUND),
                       Pair("q2", TENT_Q, "p:blank", "a passage")]  # fmt: skip
    return carried


def test_the_runs_unlabelled_chunks_and_pending_passages_are_judged_counted_kept_and_written(tmp_path: Path) -> None:
    folder = tmp_path / "golden"
    make_passages_golden().save(folder)
    gold, read, carried = GoldenSet.load(folder), _read(), _carried()
    seen: list[tuple[str, int, int]] = []
    asking = JudgingSettings(depth=2, context_k=2)
    assessed, examples, _ = judge_runs(gold, folder, read, make_judge("offline"), asking=asking,
                                       families={"context_recall", "faithfulness"}, carried=carried,
                                       progress=lambda *a: seen.append(a))  # fmt: skip
    # tent#3, tent#0 (shipping#0 is below the depth), three pending passages, a context call and an answer call;
    # no diagnosis asked for: no claim_check
    assert examples == [] and set(assessed) == {"a"}
    assert seen == [("judging", n, 7) for n in range(1, 8)]
    assert list(assessed["a"]["q2"].rows[0].support) == ["tent#3", "tent#0"]  # the context: the top 2
    # judged now among the top 2: tent#3 and tent#0 (p:own, judged too, is fourth)
    assert read[0].projected.counts.labels_judged_now == 2
    assert carried.how == {("q2", "p:own"): "judged", ("q2", "p:found"): "judged", ("q2", "p:blank"): "judged"}
    new = {(label.query_id, label.chunk_id) for label in gold.qrels} - {
        (label.query_id, label.chunk_id) for label in make_passages_golden().qrels
    }
    assert new == {("q2", "tent#3"), ("q2", "tent#0")}
    kept = {p.id: p.model_copy(update={"labels": []}) for p in gold.passages}
    assert kept == {
        "p:own": Passage(id="p:own", text=OWN, match="unmatched", score=0.0, doc_id=None, start=None, end=None),
        "p:found": Passage(id="p:found", text=FOUND, match="exact", score=0.75, doc_id="tent", start=12, end=43),
        "p:blank": Passage(id="p:blank", text="", match="unmatched", score=0.0, doc_id=None, start=None, end=None),
    }
    assert {(p.id, len(p.labels)) for p in gold.passages} == {("p:own", 1), ("p:found", 1), ("p:blank", 1)}
    again = GoldenSet.load(folder)  # written back: the new chunk label and the passages with theirs
    assert ("q2", "tent#3") in {(label.query_id, label.chunk_id) for label in again.qrels}
    assert {p.id for p in again.passages} == {"p:own", "p:found", "p:blank"}


def test_without_add_labels_nothing_is_written_and_without_pending_passages_only_the_qrels(tmp_path: Path) -> None:
    folder = tmp_path / "golden"
    make_passages_golden().save(folder)
    before = {path.name: path.read_bytes() for path in folder.iterdir()}
    gold = GoldenSet.load(folder)
    asking = JudgingSettings(depth=2, context_k=2, add_labels=False)
    judge_runs(gold, folder, _read(), make_judge("offline"), asking=asking, families=set(), carried=_carried())
    assert {path.name: path.read_bytes() for path in folder.iterdir()} == before
    asking = JudgingSettings(depth=2, context_k=2)
    judge_runs(GoldenSet.load(folder), folder, _read(), make_judge("offline"), asking=asking, families=set(),
               carried=Carried())  # fmt: skip
    after = {path.name: path.read_bytes() for path in folder.iterdir()}
    # only the qrels (and the manifest, whose counts follow them) rewritten
    assert {name for name in after if after[name] != before.get(name)} == {"qrels.jsonl", "manifest.json"}
    again = GoldenSet.load(folder)
    assert ("q2", "tent#3") in {(label.query_id, label.chunk_id) for label in again.qrels} and again.passages == []


def test_the_pool_is_graded_counted_and_written_only_when_asked(tmp_path: Path) -> None:
    folder = tmp_path / "golden"
    make_passages_golden().save(folder)
    gold = GoldenSet.load(folder)
    pairs = [Pair("q2", TENT_Q, "tent#3", chunk_text("tent#3")), Pair("q2", TENT_Q, "tent#0", chunk_text("tent#0"))]
    seen: list[tuple[str, int, int]] = []
    asking = JudgingSettings(depth=2, context_k=2, listwise=5)
    judge = make_judge("offline")
    graded = judge_pool(judge, gold, folder, pairs, asking=asking, progress=lambda *a: seen.append(a))
    assert graded == 2 and seen == [("pooling", 1, 2), ("pooling", 2, 2)]
    assert judge.stats.calls == 1  # both pairs in one listwise call
    assert {("q2", "tent#3"), ("q2", "tent#0")} <= {(q.query_id, q.chunk_id) for q in GoldenSet.load(folder).qrels}
    other = tmp_path / "other"
    make_passages_golden().save(other)
    before = (other / "qrels.jsonl").read_bytes() if (other / "qrels.jsonl").is_file() else None
    quiet = JudgingSettings(depth=2, context_k=2, add_labels=False)
    assert judge_pool(make_judge("offline"), GoldenSet.load(other), other, pairs, asking=quiet) == 2
    assert ((other / "qrels.jsonl").read_bytes() if (other / "qrels.jsonl").is_file() else None) == before


def test_the_dry_run_counts_each_stage_the_judging_would_call() -> None:
    gold = make_passages_golden()
    carried = _carried()
    carried.pool = [Pair("q2", TENT_Q, "tent#1", chunk_text("tent#1"))]
    read = _read()
    judge = make_judge("offline")
    asking = JudgingSettings(depth=2, context_k=2, listwise=None)
    gold.questions[1].nuggets = [Nugget(id="n1", text="3.2 kg")]
    gold.questions[1].tool_calls = [ToolCall(name="weigh", arguments={"item": "tent 4"})]
    read[0].run.lines["q2"].steps.append(ToolStep(kind="tool", name="weigh", arguments={"item": "4 tent"}))
    families = {"context_recall", "faithfulness", "nugget_recall", "tool_args_judged"}
    got = estimate_judging(gold, read, judge, asking=asking, families=families, carried=carried)
    assert sorted(got) == ["answer", "context", "nuggets", "relevance", "tool_args"]
    # relevance: tent#3 and tent#0 (the top 2), the pool's tent#1 and the three pending passages, one call each
    assert got["relevance"].calls == 6
    assert [got[kind].calls for kind in ("context", "answer", "nuggets", "tool_args")] == [1, 1, 1, 1]
    context = plan_calls(gold, [read[0].run], context_k=2, families={"context_recall"}).calls[0]
    assert got["context"].prompt_tokens == judge.estimate("support", [context.variables]).prompt_tokens
    # two per listwise call: tent#3 and tent#0, then the pool's and the pending passages, four in two calls
    grouped = JudgingSettings(depth=2, context_k=2, listwise=2)
    assert estimate_judging(gold, read, judge, asking=grouped, families=set(), carried=carried)["relevance"].calls == 3
    none = estimate_judging(gold, read, judge, asking=asking, families=set(), carried=Carried())
    assert sorted(none) == ["relevance"] and none["relevance"].calls == 2


def test_call_families_are_the_call_kinds_and_the_diagnosis_needs_the_context_and_answer_calls() -> None:
    assert _call_families(set()) == {"none"}
    assert _call_families({"coverage_recall", "ragas_context_precision"}) == {"none"}
    assert _call_families({"faithfulness", "answer_relevance", "nugget_recall"}) == {"answer", "nugget_recall"}
    assert _call_families({"tool_args_judged"}) == {"tool_args"}
    diagnosis = next(name for name, kind in LLM_FAMILIES.items() if kind == "diagnosis")
    assert _call_families({diagnosis}) == {"diagnosis", "context_recall", "answer"}


def test_the_diagnosis_counts_its_calls_into_the_progress_and_the_dry_run(tmp_path: Path) -> None:
    """A diagnosis metric asks the context and answer calls, then the per-(claim, chunk) checks of the mode's sides
    and the claim_check calls: each call moves the progress once, and the total counts them all."""
    diagnosis = next(name for name, kind in LLM_FAMILIES.items() if kind == "diagnosis")
    gold, seen = make_passages_golden(), []
    asking = JudgingSettings(depth=2, context_k=2, diagnosis="exact")
    judge = make_judge("offline")
    judge_runs(gold, None, _read(), judge, asking=asking, families={diagnosis}, carried=Carried(),
                             progress=lambda *a: seen.append(a))  # fmt: skip
    # first the 2 labels and the context and answer calls (4); then the pair checks, one per (claim, chunk of the
    # top 2) of the answer's one claim and the reference's one (4), and one claim_check call: 9 in all
    assert seen == [("judging", n, 4) for n in range(1, 5)] + [("judging", n, 9) for n in range(5, 10)]
    assert judge.stats.calls == 8  # the 2 labels in one listwise call
    runs = [_read()[0].run]
    got = estimate_judging(gold, _read(), judge, asking=asking, families={diagnosis}, carried=Carried())
    pairs = estimate_pair_variables(gold, runs, 2, ("answer", "reference"))
    assert got[PAIR_STAGE].calls == judge.estimate("support", pairs).calls > 0
    assert got[PAIR_STAGE].prompt_tokens == judge.estimate("support", pairs).prompt_tokens
    approx = JudgingSettings(depth=2, context_k=2, diagnosis="approx")  # no pair checks
    assert PAIR_STAGE not in estimate_judging(gold, _read(), judge, asking=approx, families={diagnosis},
                                              carried=Carried())  # fmt: skip


class _Recording(OfflineBackend):
    """The offline judge's answers with every request kept; a criterion question is answered ``pass``."""

    def __init__(self) -> None:
        self.sent: list[ChatRequest] = []

    async def complete(self, request: ChatRequest) -> ChatResponse:
        self.sent.append(request)
        if request.prompt_name == CRITERION_PROMPT:
            return ChatResponse(content=json.dumps({"reason": "scripted", "label": "pass"}), finish_reason="stop")
        return await super().complete(request)


def _recording(model: str = "offline") -> tuple[Judge, _Recording]:
    """A judge over :class:`_Recording`; a model name other than ``offline`` makes it a model judge."""
    backend = _Recording()
    return Judge(backend, model=model), backend


# q1's unlabelled chunks (its labelled ones are returns#1, returns#2 and returns#4)
NINE = ["returns#0", "returns#3", "tent#0", "tent#1", "tent#2", "tent#3", "shipping#0", "shipping#1", "shipping#2"]
SHIP_Q = "How much does express shipping cost?"


def _read_q1() -> list[ReadRun]:
    line = RunLine(query_id="q1", ranked=list(NINE), scores={})
    run = LoadedRun(name="a", path=Path("a.jsonl"), kind="jsonl", lines={"q1": line}, counts=RunCounts())
    return [ReadRun(run, run)]


def test_the_seed_orders_the_passages_of_each_listwise_call_of_the_runs_and_of_the_pool() -> None:
    """A question's passages are shuffled by the seed before the listwise calls (against position bias): the same
    seed sends the same order, another seed another one; every passage is sent once."""

    def by_runs(seed: int) -> list[str]:
        judge, backend = _recording()
        asking = JudgingSettings(depth=9, context_k=2, listwise=9, seed=seed)
        judge_runs(make_passages_golden(), None, _read_q1(), judge, asking=asking, families=set(), carried=Carried())
        return [p["text"] for request in backend.sent for p in request.variables["passages"]]

    def by_pool(seed: int) -> list[str]:
        judge, backend = _recording()
        pairs = [Pair("q1", "How long do customers have to return an item?", cid, chunk_text(cid)) for cid in NINE]
        judge_pool(
            judge,
            make_passages_golden(),
            None,
            pairs,
            asking=JudgingSettings(depth=9, context_k=2, listwise=9, seed=seed),
        )
        return [p["text"] for request in backend.sent for p in request.variables["passages"]]

    assert sorted(by_runs(0)) == sorted(chunk_text(cid) for cid in NINE)
    assert by_runs(0) == by_runs(0) and by_runs(0) != by_runs(1)
    assert sorted(by_pool(0)) == sorted(chunk_text(cid) for cid in NINE)
    assert by_pool(0) == by_pool(0) and by_pool(0) != by_pool(1)


def test_the_dry_run_prices_the_listwise_calls_the_seed_makes() -> None:
    """Three pooled passages, two per call: the seed decides which one is alone, and so the calls' prompt tokens
    (counted per call, by its words or by its characters, whichever gives more: here a passage of short words and two
    of long strings); the dry run counts the very calls the pooling sends, seed by seed."""
    pairs = [Pair("q3", SHIP_Q, "tent#0", "one two three four " * 60), Pair("q3", SHIP_Q, "tent#3", "x" * 1600),
             Pair("q3", SHIP_Q, "returns#0", "y" * 400)]  # fmt: skip
    tokens = set()
    for seed in range(4):
        asking = JudgingSettings(depth=2, context_k=2, listwise=2, seed=seed)
        judge, backend = _recording()
        judge_pool(judge, make_passages_golden(), None, pairs, asking=asking)
        sent = make_judge("offline").estimate(LISTWISE_PROMPT, [r.variables for r in backend.sent])
        carried = Carried()
        carried.pool = pairs
        got = estimate_judging(make_passages_golden(), [], make_judge("offline"), asking=asking, families=set(),
                               carried=carried)["relevance"]  # fmt: skip
        assert got.calls == sent.calls == 2 and got.prompt_tokens == sent.prompt_tokens
        tokens.add(got.prompt_tokens)
    assert len(tokens) > 1  # the seeds do not all group the passages alike


GROUNDED = parse_criterion(
    b'+++\nname = "grounded"\nversion = "1"\ninputs = ["answer", "passages"]\nscale = "pass_fail"\n+++\n'
    b"The answer rests on the passages.\n",
    Path("grounded.md"),
)


def _with_empty_q1() -> list[ReadRun]:
    """_read's q2 line, and q1 answered with nothing in a run that answers (so q1 is "empty answer")."""
    read = _read()
    run = read[0].run
    run.lines["q1"] = RunLine(query_id="q1", ranked=[], scores={}, answer="")
    run.counts = RunCounts(with_answer=1, empty_answers=1)
    return read


def test_judged_criteria_are_asked_of_the_top_passages_counted_in_the_progress_and_priced() -> None:
    """A model judge asks the criterion about q2 (its top 2 passages, per the context depth) and records q1 unscored
    without a call; the progress counts the 2 labels and the criterion call: 3 in all."""
    judge, backend = _recording("scripted")
    seen: list[tuple[str, int, int]] = []
    asking = JudgingSettings(depth=2, context_k=2)
    _, _, judged = judge_runs(make_passages_golden(), None, _with_empty_q1(), judge, asking=asking, families=set(),
                              carried=Carried(), criteria=[GROUNDED], progress=lambda *a: seen.append(a))  # fmt: skip
    asked = [r.variables for r in backend.sent if r.prompt_name == CRITERION_PROMPT]
    assert len(asked) == 1 and asked[0]["answer"] == "It weighs 3.2 kg."
    assert asked[0]["passages"] == [chunk_text("tent#3"), chunk_text("tent#0")]
    assert judged.values["a"]["q2"].metrics == {"criterion:grounded": 1.0}
    assert judged.values["a"]["q1"].unscored == {"criterion:grounded": "empty answer"}
    assert seen == [("judging", n, 3) for n in range(1, 4)]
    got = estimate_judging(make_passages_golden(), _with_empty_q1(), _recording("scripted")[0], asking=asking,
                           families=set(), carried=Carried(), criteria=[GROUNDED])  # fmt: skip
    assert got["criterion:grounded"].calls == 1


def test_the_judging_without_criteria_asks_only_what_the_plan_holds() -> None:
    gold = make_passages_golden()
    judge, backend = _recording("scripted")
    plan = plan_calls(gold, [], context_k=2, families={"none"})
    assert run_sync(
        lambda: _judge_all(judge, gold, [], plan, JudgingSettings(depth=2, context_k=2), progress=None)
    ) == ([], [])
    assert backend.sent == []


def test_a_folder_whose_passages_get_no_new_label_keeps_its_passages_file(tmp_path: Path) -> None:
    """The first judging writes the pending passages' labels; the second, with no pending passage and a deeper top
    (shipping#0, fifth, is new), rewrites the qrels only: passages.jsonl stays the very file it was."""
    folder = tmp_path / "golden"
    make_passages_golden().save(folder)
    asking = JudgingSettings(depth=2, context_k=2)
    judge_runs(GoldenSet.load(folder), folder, _read(), make_judge("offline"), asking=asking, families=set(),
               carried=_carried())  # fmt: skip
    passages = folder / "passages.jsonl"
    before = passages.stat().st_ino, passages.read_bytes()
    qrels = (folder / "qrels.jsonl").read_bytes()
    deeper = JudgingSettings(depth=5, context_k=2)
    judge_runs(GoldenSet.load(folder), folder, _read(), make_judge("offline"), asking=deeper, families=set(),
               carried=Carried())  # fmt: skip
    assert (folder / "qrels.jsonl").read_bytes() != qrels
    assert (passages.stat().st_ino, passages.read_bytes()) == before
