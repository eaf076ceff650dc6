"""Evaluating runs of conversation turns: the turn strata, rewrite quality, history gain (rewrites vs turns),
vital-nugget coverage per conversation, a run line naming a turn the golden set lacks, clustering by conversation."""

from __future__ import annotations

import json
import re
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from evaluate_fixture import good_lines, make_golden, qid, weak_lines
from test_evaluate_judged import FAST, PASSAGE, STATEMENT, _schema, _user, http_judge, scripted

from assay.errors import FormatError
from assay.formats.golden import GoldenSet
from assay.pipelines.evaluate import evaluate
from assay.pipelines.evaluate.scoring.conversations import token_f1, vital_coverage
from assay.report.markdown import render_markdown
from assay.testing import FakeOpenAIServer
from assay.types import Conversation, Turn


def conversational() -> GoldenSet:
    """The evaluator's fixture with its twelve questions as four conversations of three turns; the first turn of
    each is standalone, the other two lean on it (a pronoun)."""
    gold = make_golden()
    gold.conversations = [
        Conversation(id=f"c{c}", turns=[
            Turn(question_id=qid(3 * c + t), utterance=f"turn {t}", depends_on_history=t > 0,
                 dependency="pronoun" if t else "none")
            for t in range(3)
        ])
        for c in range(4)
    ]  # fmt: skip
    return gold


def _turned(lines: list[dict[str, Any]], **extra: Any) -> list[dict[str, Any]]:
    return [{**line, "conversation_id": f"c{i // 3}", "turn": i % 3, **extra} for i, line in enumerate(lines)]


def _run(path: Path, lines: list[dict[str, Any]], mode: str, target: str = "python:app:answer") -> Path:
    head = {"assay": "runs", "version": 1, "target": target, "conversation_mode": mode}
    if mode == "turns":
        head["history"] = "reference"
    path.write_text("\n".join(json.dumps(x) for x in [head, *lines]) + "\n", encoding="utf-8")
    return path


def test_token_f1_and_vital_coverage_by_hand() -> None:
    golden = "How many days does the Alder kettle warranty last?"
    assert token_f1("how many days does the alder kettle warranty last", golden) == 1.0
    # shared: how, the, warranty: P = 3/5, R = 3/9, F1 = 2PR/(P+R) = 3/7
    assert token_f1("How long is the warranty?", golden) == pytest.approx(3 / 7)
    assert token_f1("tents", golden) == 0.0
    # words counted as multisets: the first pair shares "the" twice, P = R = 2/3, F1 2/3 (over sets it would share
    # one word, F1 1/3); the second shares it once, P = 1/3, R = 1/2, F1 = 2 (1/6) / (5/6) = 2/5
    assert token_f1("the the way", "the the path") == pytest.approx(2 / 3)
    assert token_f1("the the way", "the path") == pytest.approx(2 / 5)
    gold = conversational()
    # c0: 1 + 0 + 1 of 3 vital nuggets; c1: a verdict missing; c2, c3: not judged
    supported = {qid(0): (1, 1), qid(1): (0, 1), qid(2): (1, 1), qid(3): (1, 1), qid(4): None}
    assert vital_coverage(gold, supported) == {"c0": pytest.approx(2 / 3), "c1": None}


def test_strata_rewrites_and_clusters_of_a_turns_run(tmp_path: Path) -> None:
    gold = conversational()
    lines = _turned(good_lines())
    lines[1]["rewrite"] = "How long is the warranty?"  # q01 asks about the Birch lantern
    lines[2]["rewrite"] = "How many days does the Cedar stove warranty last?"
    result, rows = evaluate(gold, [_run(tmp_path / "turns.jsonl", lines, "turns")])
    run = result.runs[0]
    assert set(run.strata["depends_on_history"]) == {"yes", "no"}
    assert run.strata["depends_on_history"]["yes"]["ndcg@10"].n_scored == 8
    assert set(run.strata["dependency"]) == {"none", "pronoun"}
    by_id = {row.query_id: row for row in rows}
    assert by_id[qid(1)].metrics["rewrite_f1"] == pytest.approx(2 * (3 / 5) * (3 / 9) / (3 / 5 + 3 / 9))
    assert by_id[qid(2)].metrics["rewrite_f1"] == 1.0
    assert by_id[qid(2)].metrics["rewrite_bm25_ndcg@10"] == by_id[qid(2)].metrics["gold_rewrite_bm25_ndcg@10"]
    lost = by_id[qid(1)].metrics
    assert lost["rewrite_bm25_ndcg@10"] is not None and lost["gold_rewrite_bm25_ndcg@10"] is not None
    assert lost["rewrite_bm25_ndcg@10"] < lost["gold_rewrite_bm25_ndcg@10"]  # "warranty" is in every answer chunk
    assert "rewrite_f1" not in by_id[qid(0)].metrics  # no rewrite reported: no rewrite metric
    assert by_id[qid(0)].cluster == by_id[qid(2)].cluster != by_id[qid(3)].cluster
    assert result.clustering is not None and result.clustering.clusters == 4
    assert run.conversations is not None
    assert (run.conversations.conversations, run.conversations.turns, run.conversations.dependent) == (4, 12, 8)
    assert run.conversations.rewrites == 2 and run.conversations.vital_coverage is None  # no judge


def test_history_gain_pairs_the_rewrites_run_with_the_turns_run(tmp_path: Path) -> None:
    gold = conversational()
    # asked with the history, the system fails the dependent turns (weak lines there); the rewrites run is good
    turned = [weak if i % 3 else good for i, (good, weak) in enumerate(zip(good_lines(), weak_lines(), strict=True))]
    runs = [_run(tmp_path / "rewrites.jsonl", _turned(good_lines()), "rewrites"),
            _run(tmp_path / "turns.jsonl", _turned(turned), "turns")]  # fmt: skip
    result, rows = evaluate(gold, runs)
    [gain] = result.history_gain
    assert (gain.rewrites, gain.turns, gain.metric, gain.history) == ("rewrites", "turns", "ndcg@10", "reference")
    assert gain.standalone is not None and gain.standalone.delta == 0.0 and gain.standalone.n == 4
    assert gain.dependent is not None and gain.dependent.n == 8 and gain.dependent.delta < 0
    scores = {(r.run, r.query_id): r.metrics["ndcg@10"] for r in rows}
    by_hand = [scores["turns", qid(i)] - scores["rewrites", qid(i)] for i in range(12) if i % 3]
    assert gain.dependent.delta == pytest.approx(sum(by_hand) / 8)  # type: ignore[arg-type]
    assert gain.dependent.clusters == 4  # a conversation's turns are resampled together
    assert gain.all is not None and gain.all.n == 12
    again = json.loads(result.model_dump_json())
    assert again["history_gain"][0]["dependent"]["n"] == 8


def test_history_gain_pairs_only_runs_of_the_same_target(tmp_path: Path) -> None:
    """Two systems, each run both ways: the rewrites run of one is never compared with the turns run of the other
    (that would measure the systems, not the history)."""
    gold = conversational()
    runs = [_run(tmp_path / "a_rewrites.jsonl", _turned(good_lines()), "rewrites", "python:a:answer"),
            _run(tmp_path / "b_rewrites.jsonl", _turned(weak_lines()), "rewrites", "python:b:answer"),
            _run(tmp_path / "a_turns.jsonl", _turned(good_lines()), "turns", "python:a:answer"),
            _run(tmp_path / "b_turns.jsonl", _turned(weak_lines()), "turns", "python:b:answer")]  # fmt: skip
    result, _ = evaluate(gold, runs)
    assert [(g.rewrites, g.turns) for g in result.history_gain] == [
        ("a_rewrites", "a_turns"),
        ("b_rewrites", "b_turns"),
    ]
    for gain in result.history_gain:  # each system asked alike both ways: no gain either way
        assert gain.all is not None and gain.all.delta == 0.0 and gain.all.n == 12


def test_vital_coverage_from_the_nugget_verdicts(tmp_path: Path) -> None:
    missed = {"q01-n1", "q04-n1", "q07-n1", "q10-n1"}  # the second turn of every conversation misses its vital one

    def nuggets(body: dict[str, Any]) -> str:
        if _schema(body) != "SupportAssignments":
            return scripted(body)
        first = PASSAGE.findall(_user(body))[0][0]
        items = [{"statement_id": sid, "reason": "r", "support": "none" if sid in missed else "support",
                  "passage_ids": [first]} for sid in STATEMENT.findall(_user(body))]  # fmt: skip
        return json.dumps({"assignments": items})

    with FakeOpenAIServer(nuggets) as server:
        judge = http_judge(server, tmp_path / "cache")
        result, _ = evaluate(conversational(), [_run(tmp_path / "t.jsonl", _turned(good_lines()), "turns")],
                             judge=judge, settings=FAST)  # fmt: skip
    summary = result.runs[0].conversations
    assert summary is not None and summary.covered == 4 and summary.coverage_unscored == 0
    assert summary.vital_coverage == pytest.approx(2 / 3)  # 2 of the 3 vital nuggets in every conversation


def test_a_line_naming_a_turn_the_golden_set_lacks_is_an_error(tmp_path: Path) -> None:
    lines = _turned(good_lines())
    lines[4]["turn"] = 2
    path = _run(tmp_path / "t.jsonl", lines, "turns")
    message = "query 'q04' is given as turn 2 of conversation 'c1', but in the golden set it is turn 1 of"
    with pytest.raises(FormatError, match=re.escape(f"t.jsonl:6: {message}")):
        evaluate(conversational(), [path])


def context_at_end() -> GoldenSet:
    """``conversational()`` with a context turn (unjudged, no question) after the last turn of c3: ``c3-t4``."""
    gold = conversational()
    gold.conversations[3].turns.append(Turn(question_id="c3-t4", utterance="and that?", judged=False,
                                            rewrite="And the warranty?", answer="30 days."))  # fmt: skip
    return gold


def test_a_context_turns_line_is_counted_and_skipped_an_unknown_id_still_counted_as_unknown(tmp_path: Path) -> None:
    context = {"query_id": "c3-t4", "conversation_id": "c3", "turn": 3, "retrieved": [qid(0)], "answer": "x"}
    stranger = {"query_id": "nope", "retrieved": [], "answer": "y"}
    path = _run(tmp_path / "t.jsonl", [*_turned(good_lines()), context, stranger], "turns")
    result, rows = evaluate(context_at_end(), [path])
    counts, summary = result.runs[0].counts, result.runs[0].conversations
    assert (counts.context_turns, counts.unknown_query_ids, counts.queries_evaluated, counts.lines) == (1, 1, 12, 14)
    assert "c3-t4" not in {row.query_id for row in rows} and len(rows) == 12
    assert summary is not None and (summary.conversations, summary.turns, summary.dependent) == (4, 12, 8)
    assert set(result.runs[0].strata["dependency"]) == {"none", "pronoun"}  # the context turn is in no stratum
    assert "context turns asked for the history (not scored)" in render_markdown(result)
    wrong = _run(tmp_path / "w.jsonl", [*_turned(good_lines()), {**context, "turn": 1}], "turns")
    with pytest.raises(FormatError, match="query 'c3-t4' is given as turn 1 of conversation 'c3', but in the golden"):
        evaluate(context_at_end(), [wrong])


def test_a_line_naming_a_conversation_the_golden_set_lacks_is_an_error(tmp_path: Path) -> None:
    lines = _turned(good_lines())
    lines[2] = {**lines[2], "query_id": "c9-t1", "conversation_id": "c9"}
    path = _run(tmp_path / "t.jsonl", lines, "turns")
    message = "query 'c9-t1' is given as turn 2 of conversation 'c9', but in the golden set it has no such question"
    with pytest.raises(FormatError, match=re.escape(f"t.jsonl:4: {message}")):
        evaluate(conversational(), [path])
    plain = _run(tmp_path / "p.jsonl", [*good_lines(), {"query_id": "extra", "retrieved": []}], "turns")
    assert evaluate(conversational(), [plain])[0].runs[0].counts.unknown_query_ids == 1  # no turn named: counted


def test_reports_show_the_history_gain_and_the_conversations(tmp_path: Path) -> None:
    from io import StringIO

    from rich.console import Console

    from assay.report.html import render_html
    from assay.report.markdown import md_escape, render_markdown
    from assay.report.terminal import render_terminal
    from assay.report.verdict import build_verdict

    turned = [weak if i % 3 else good for i, (good, weak) in enumerate(zip(good_lines(), weak_lines(), strict=True))]
    runs = [_run(tmp_path / "rewrites.jsonl", _turned(good_lines()), "rewrites"),
            _run(tmp_path / "turns.jsonl", _turned(turned), "turns")]  # fmt: skip
    result, _ = evaluate(conversational(), runs)
    gain = result.history_gain[0].dependent
    assert gain is not None
    markdown = render_markdown(result)
    assert "## Conversations" in markdown and "turns: 4 conversations, 12 turns (8 depend on the history)" in markdown
    assert "History gain on ndcg@10, turns (raw turns with the reference history) minus rewrites" in markdown
    assert f"dependent turns {gain.delta:.3f}"[:22] in markdown
    assert "depends\\_on\\_history" in markdown or "depends_on_history" in markdown
    assert 'id="conversations"' in render_html(result)
    out = StringIO()
    render_terminal(result, Console(file=out, width=200), verbose=True)
    assert "History gain on ndcg@10" in out.getvalue()
    alone = result.history_gain[0].standalone
    assert alone is not None and not alone.significant
    verdict = build_verdict(result)  # the answer first: what the history is worth, in the summary too
    assert len(verdict.history) == 1
    sentence = verdict.history[0]
    assert sentence.startswith("History: asked the raw turns with the reference history rather than the standalone "
                               f"rewrites, turns scores {gain.delta:.3f}")  # fmt: skip
    assert f"on the {gain.n} turns that depend on the history" in sentence
    assert f"on the {alone.n} standalone ones (no reliable difference, as expected)" in sentence
    summary = StringIO()
    render_terminal(result, Console(file=summary, width=200))
    assert sentence in " ".join(summary.getvalue().split()) and md_escape(sentence) in markdown


def _repeated(path: Path, marks: list[dict[str, str]]) -> Path:
    """A turns run asked twice: repeat r's answer to question i carries ``marks[r].get(qid(i), "")``."""
    head = {"assay": "runs", "version": 1, "target": "python:app:answer", "conversation_mode": "turns",
            "history": "own", "repeats": len(marks)}  # fmt: skip
    lines = [{**line, "repeat": r, "answer": f"{line['answer']}{marks[r].get(line['query_id'], '')}"}
             for r in range(len(marks)) for line in _turned(good_lines())]  # fmt: skip
    path.write_text("\n".join(json.dumps(x) for x in [head, *lines]) + "\n", encoding="utf-8")
    return path


def test_vital_coverage_of_a_repeated_run_is_the_mean_over_its_repeats(tmp_path: Path) -> None:
    def nuggets(body: dict[str, Any]) -> str:
        passages = PASSAGE.findall(_user(body))
        if _schema(body) != "SupportAssignments" or [p for p, _ in passages] != ["answer"]:
            return scripted(body)
        said = passages[0][1]
        items = [{"statement_id": sid, "reason": "r", "support": "none" if " MISSES" in said else "support",
                  "passage_ids": ["answer"]} for sid in STATEMENT.findall(_user(body))
                 if not (" GONE" in said and sid.endswith("-n1"))]  # fmt: skip
        return json.dumps({"assignments": items})

    miss, gone = " MISSES", " GONE"  # the answer supports none of its nuggets; the vital one gets no verdict
    marks = [
        {qid(3): miss, qid(9): gone},
        {qid(1): miss, qid(4): miss, qid(6): miss, qid(7): miss, qid(8): miss, qid(10): miss, qid(11): miss},
    ]
    with FakeOpenAIServer(nuggets) as server:
        judge = http_judge(server, tmp_path / "cache")
        settings = replace(FAST, metrics=("ndcg@10", "nugget_recall_vital_strict"))
        result, rows = evaluate(conversational(), [_repeated(tmp_path / "t.jsonl", marks)], judge=judge,
                                settings=settings)  # fmt: skip
    summary = result.runs[0].conversations
    assert summary is not None and summary.repeats == 2
    # per conversation, the mean over the repeats that scored it (c3's first repeat lacks a verdict):
    # c0 (1 + 2/3) / 2, c1 (2/3 + 2/3) / 2, c2 (1 + 0) / 2, c3 1/3
    assert summary.vital_coverage == pytest.approx((5 / 6 + 2 / 3 + 1 / 2 + 1 / 3) / 4, abs=1e-6)
    assert (summary.covered, summary.coverage_unscored, summary.turns) == (4, 0, 12)
    assert len(rows) == 12 and result.runs[0].repeats is not None
