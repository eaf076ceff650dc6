"""Pins of audit/app.py: the whole JSON of an item, a queue and the adjudication list, each refusal's message, the
undo with nothing to undo, the static assets' types and the order-free rendering of a question's tool calls."""

from __future__ import annotations

from decimal import Decimal
from importlib import resources
from pathlib import Path

import pytest
from audit_fixtures import judge_label
from starlette.testclient import TestClient
from test_criteria_store import SCALE, TREE, _record, _walk_record

from assay.audit.app import create_app
from assay.audit.criteria import current_labels, queue_order, queue_verdicts
from assay.audit.records import LabelEvent
from assay.audit.store import LabelStore
from assay.formats.golden import GoldenSet
from assay.judge.criteria import parse_criterion
from assay.results import CriterionVote
from assay.types import ToolCall

BASE = "http://127.0.0.1:8765"
JUDGE = {"quotes": [], "annotator": "fake/judge", "prompt": "relevance@1", "source": "judge",
         "time": "2026-01-01T00:00:00+00:00"}  # fmt: skip


def _client(golden_dir: Path, **options: object) -> tuple[TestClient, dict[str, str]]:
    app = create_app(golden_dir, annotator="ann", **options)  # type: ignore[arg-type]
    return TestClient(app, base_url=BASE), {"X-Assay-Token": app.state.token, "Origin": BASE}


def _index(client: TestClient, query_id: str, chunk_id: str) -> int:
    rows = client.get("/api/queue").json()["items"]
    return next(r["i"] for r in rows if (r["query_id"], r["chunk_id"]) == (query_id, chunk_id))


def test_an_item_and_its_labels_in_full(golden_dir: Path) -> None:
    client, headers = _client(golden_dir)
    i = _index(client, "q1", "c02")  # judge grade (0 + 2) % 4 = 2
    assert client.get(f"/api/item?i={i}").json() == {
        "i": i, "query_id": "q1", "chunk_id": "c02", "kind": "chunk", "span": None,
        "question": "What is the refund window?", "question_type": "factoid", "difficulty": "easy",
        "reference_answer": "30 days", "tool_calls": [], "chunk_text": "Chunk 2 about refunds.",
        "text": "Chunk 2 about refunds.", "heading_path": ["Policy", "Part 2"], "doc_id": "doc1",
        "judge_hidden": False, "judges": [{"grade": 2, "reason": "judge says 2", **JUDGE}], "others": [],
        "mine": None, "turn": None, "stale": False,
    }  # fmt: skip
    bob = client.post("/api/label", json={"i": i, "grade": 3, "annotator": "bob", "reason": "all"}, headers=headers)
    assert bob.status_code == 200, bob.text
    mine = client.post("/api/label", json={"i": i, "grade": 1, "reason": "some"}, headers=headers).json()
    item = mine["item"]
    assert {k: v for k, v in item["mine"].items() if k != "time"} == {
        "grade": 1, "quotes": [], "reason": "some", "annotator": "ann", "prompt": None, "source": "human"
    }  # fmt: skip
    assert [(o["annotator"], o["grade"], o["reason"], o["source"]) for o in item["others"]] == [
        ("bob", 3, "all", "human")
    ]
    assert mine["progress"] == {"done": 1, "total": 24, "per_grade": {"0": 0, "1": 1, "2": 0, "3": 0}}
    assert client.get("/api/adjudication").json() == {
        "items": [{"query_id": "q1", "chunk_id": "c02", "question": "What is the refund window?",
                   "grades": {"ann": 1, "bob": 3}, "judge_grade": 2}],
        "annotators": ["ann", "bob"],
    }  # fmt: skip
    agreed = _index(client, "q2", "c00")
    for who in ("ann", "bob"):
        client.post("/api/label", json={"i": agreed, "grade": 2, "annotator": who}, headers=headers)
    assert [r["chunk_id"] for r in client.get("/api/adjudication").json()["items"]] == ["c02"]


def test_the_queue_in_full(golden_dir: Path) -> None:
    client, headers = _client(golden_dir, seed=5, blind=True, queue="stratified")
    client.post("/api/label", json={"i": 0, "grade": 0}, headers=headers)
    queue = client.get("/api/queue").json()
    assert {k: v for k, v in queue.items() if k != "items"} == {
        "annotator": "ann", "queue": "stratified", "seed": 5, "blind": True,
        "progress": {"done": 1, "total": 24, "per_grade": {"0": 1, "1": 0, "2": 0, "3": 0}},
    }  # fmt: skip
    first = queue["items"][0]
    assert (first["i"], first["kind"], first["grade"], first["stale"]) == (0, "chunk", 0, False)
    assert [r["i"] for r in queue["items"]] == list(range(24))


def test_refusals_say_what_to_fix(golden_dir: Path) -> None:
    client, headers = _client(golden_dir)

    def error(body: object) -> str:
        answer = client.post("/api/label", json=body, headers=headers)
        assert answer.status_code == 400
        return str(answer.json()["error"])

    assert error({"i": 24, "grade": 1}) == "item 24 is outside the queue of 24 items"
    assert error({"i": "1x", "grade": 1}) == "i must be an item number"
    assert error({"i": True, "grade": 1}) == "i must be an item number"
    assert error({"i": 0, "grade": "2"}) == "grade must be 0, 1, 2 or 3"
    assert error({"i": 0, "grade": 1, "reason": 5}) == "reason must be text of at most 2000 characters"
    assert error({"i": _index(client, "q1", "c05"), "accept_judge": True}) == (
        "the judge left this item unscored; grade it yourself (0-3)"
    )
    assert (
        client.post("/api/label", json={"i": 0, "grade": 2, "reason": "x" * 2000}, headers=headers).status_code == 200
    )
    rewrite = client.post("/api/rewrite", json={"i": 0, "text": "x"}, headers=headers)
    assert rewrite.json() == {"error": "question q1 is not a turn of a conversation: it has no rewrite to correct"}
    bad = client.post("/api/label", content=b"{", headers={**headers, "Content-Type": "application/json"})
    assert bad.status_code == 400 and bad.json()["error"].startswith("bad JSON body: ")
    blind, blind_headers = _client(golden_dir, blind=True)
    refused = blind.post("/api/label", json={"i": 0, "accept_judge": True, "annotator": "carol"}, headers=blind_headers)
    assert refused.json() == {
        "error": "blind mode: grade the item yourself first (0-3); the judge's grade shows after that"
    }


def test_undo_with_nothing_to_undo_and_the_accepted_judge_grade(golden_dir: Path) -> None:
    client, headers = _client(golden_dir)
    assert client.post("/api/undo", json={}, headers=headers).json() == {
        "undone": False, "i": None, "progress": {"done": 0, "total": 24, "per_grade": {"0": 0, "1": 0, "2": 0, "3": 0}},
    }  # fmt: skip
    i = _index(client, "q2", "c01")  # judge grade (1 + 1) % 4 = 2
    accepted = client.post("/api/label", json={"i": i, "accept_judge": True}, headers=headers).json()
    assert accepted["item"]["mine"]["grade"] == 2
    assert client.post("/api/undo", json={}, headers=headers).json()["i"] == i


def test_static_assets_and_a_refused_annotator_on_the_page(golden_dir: Path) -> None:
    client, _ = _client(golden_dir)
    static = resources.files("assay.audit").joinpath("static")
    script, style = client.get("/static/audit.js"), client.get("/static/audit.css")
    assert script.headers["content-type"] == "text/javascript; charset=utf-8"
    assert style.headers["content-type"] == "text/css; charset=utf-8"
    assert (script.content, style.content) == (static.joinpath("audit.js").read_bytes(),
                                               static.joinpath("audit.css").read_bytes())  # fmt: skip
    page = client.get("/?annotator=<b>x")
    assert page.status_code == 400 and page.text.startswith("<p>") and "&lt;b&gt;x" in page.text
    assert "<title>" in client.get("/?annotator=bob").text


def test_tool_calls_show_their_arguments_with_sorted_keys(golden_dir: Path) -> None:
    golden = GoldenSet.load(golden_dir)
    golden.questions[0].tool_calls = [ToolCall(name="convert", arguments={"to": "EUR", "amount": 30})]
    golden.save(golden_dir, overwrite=True)
    client, _ = _client(golden_dir)
    item = client.get(f"/api/item?i={_index(client, 'q1', 'c02')}").json()
    assert item["tool_calls"] == ['convert({"amount": 30, "to": "EUR"})']


def test_the_page_shows_the_set_the_annotator_the_queue_and_blind_mode_escaped(golden_dir: Path) -> None:
    named = golden_dir.rename(golden_dir.parent / "set <b>&")
    client, _ = _client(named, blind=True, queue="stratified")
    page = client.get("/?annotator=bob").text
    assert "<title>assay audit · set &lt;b&gt;&amp;</title>" in page and "<b>&" not in page
    assert 'data-annotator="bob" data-blind="true" data-queue="stratified"' in page
    seeing, _ = _client(named)
    assert 'data-annotator="ann" data-blind="false" data-queue="' in seeing.get("/").text


def test_a_get_serves_the_annotator_named_in_the_query(golden_dir: Path) -> None:
    client, _ = _client(golden_dir)
    assert client.get("/api/queue?annotator=bob").json()["annotator"] == "bob"
    assert client.get("/api/queue").json()["annotator"] == "ann"


def test_a_body_over_the_limit_while_read_is_refused_with_its_reason(golden_dir: Path) -> None:
    client, headers = _client(golden_dir)
    over = (b"x" * 1024 for _ in range(65))  # 66,560 bytes, no Content-Length: refused while reading
    refused = client.post("/api/label", content=over, headers={**headers, "Content-Type": "application/json"})
    assert (refused.status_code, refused.json()) == (413, {"error": "request body over 65536 bytes"})


def test_defaults_seed_zero_and_a_fresh_token_of_32_random_bytes(golden_dir: Path) -> None:
    app = create_app(golden_dir, annotator="ann")
    served = TestClient(app, base_url=BASE).get("/api/queue").json()
    assert served["seed"] == 0 and app.state.audit.queue == served["queue"]  # the CLI reads the queue chosen here
    tokens = {create_app(golden_dir, annotator="ann").state.token for _ in range(2)} | {app.state.token}
    assert len(tokens) == 3 and {len(t) for t in tokens} == {43}  # 32 bytes in unpadded url-safe base64: 43 chars


def test_an_annotator_that_is_not_text_in_a_post_is_refused(golden_dir: Path) -> None:
    client, headers = _client(golden_dir)
    refused = client.post("/api/label", json={"i": 0, "grade": 1, "annotator": 7}, headers=headers)
    assert refused.status_code == 400 and refused.json()["error"].startswith("annotator name '' is not allowed")
    assert client.get("/api/queue").json()["progress"]["done"] == 0


def test_in_blind_mode_the_judge_grade_can_be_accepted_once_the_annotator_graded(golden_dir: Path) -> None:
    client, headers = _client(golden_dir, blind=True)
    i = _index(client, "q2", "c01")  # judge grade (1 + 1) % 4 = 2
    client.post("/api/label", json={"i": i, "grade": 0}, headers=headers)
    accepted = client.post("/api/label", json={"i": i, "accept_judge": True}, headers=headers).json()
    assert accepted["item"]["mine"]["grade"] == 2


def _criteria_client(golden_dir: Path, **options: object) -> tuple[TestClient, dict[str, str], LabelStore]:
    """The audit fixture with two criteria's verdicts queued in its store (tone: i1, i2, i3; walk: w1)."""
    store = LabelStore.in_folder(golden_dir)
    tone = parse_criterion(SCALE.encode("utf-8"), golden_dir / "tone.md")
    walk = parse_criterion(TREE.encode("utf-8"), golden_dir / "walk.md")
    records = [_record("i1", "a", "good"), _record("i2", "a", "ok", "q2"), _record("i3", "a", None, "q3")]
    queue_verdicts(store, [tone], records, {"i1": {"answer": "hello"}, "i2": {"answer": "hm"}, "i3": {"answer": "x"}})
    queue_verdicts(store, [walk], [_walk_record("w1", [CriterionVote(model="m", label="none", reason="no")])],
                   {"w1": {"answer": "x"}})  # fmt: skip
    client, headers = _client(golden_dir, **options)
    return client, headers, store


def test_the_criteria_view_is_served_with_the_settings_given(golden_dir: Path) -> None:
    client, headers, store = _criteria_client(golden_dir, blind=True, seed=3, criterion="tone", token="tok-9")
    static = resources.files("assay.audit").joinpath("static")
    for name in ("page.js", "criteria.js"):
        asset = client.get(f"/static/{name}")
        assert asset.headers["content-type"] == "text/javascript; charset=utf-8"
        assert asset.content == static.joinpath(name).read_bytes()
    page = client.get("/criteria?annotator=bob")
    assert page.status_code == 200 and "/static/criteria.js" in page.text and "/static/audit.js" not in page.text
    assert f"<title>assay audit · criteria · {golden_dir.name}</title>" in page.text
    assert (
        '<meta name="assay-token" content="tok-9">' in page.text
        and 'data-annotator="bob" data-blind="true"' in page.text
    )
    order = queue_order(["i1", "i2", "i3"], 3)  # the criterion named: tone's items only, walk's left out
    queue = client.get("/api/criteria/queue?annotator=bob").json()
    assert [row["item"] for row in queue["items"]] == order and queue["annotator"] == "bob"
    assert (queue["seed"], queue["blind"]) == (3, True)
    at = order.index("i2")
    item = client.get(f"/api/criteria/item?i={at}").json()
    assert (item["i"], item["item"], item["judge_hidden"], item["verdicts"]) == (at, "i2", True, [])
    assert client.get("/api/criteria/item").status_code == 400  # no item number
    assert client.get("/api/criteria/label").status_code == 405 and client.get("/api/criteria/undo").status_code == 405
    done = client.post("/api/criteria/label", json={"i": at, "label": "bad", "annotator": "bob"}, headers=headers)
    assert done.json()["item"]["mine"]["label"] == "bad" and done.json()["item"]["verdicts"][0]["label"] == "ok"
    assert client.get("/api/criteria/queue?annotator=bob").json()["progress"] == {"done": 1, "total": 3}
    assert client.get("/api/criteria/queue").json()["progress"] == {"done": 0, "total": 3}  # ann's own
    assert client.get(f"/api/criteria/item?i={at}&annotator=bob").json()["mine"]["label"] == "bad"
    assert client.get(f"/api/criteria/item?i={at}").json()["mine"] is None
    assert client.post("/api/criteria/undo", json={}, headers=headers).json()["undone"] is False  # ann has none
    undone = client.post("/api/criteria/undo", json={"annotator": "bob"}, headers=headers).json()
    assert undone == {"undone": True, "i": at, "progress": {"done": 0, "total": 3}}
    assert current_labels(store) == {}


def test_progress_counts_each_grade_given(golden_dir: Path) -> None:
    client, headers = _client(golden_dir)
    for query_id, chunk_id in (("q1", "c02"), ("q1", "c04"), ("q2", "c00")):
        client.post("/api/label", json={"i": _index(client, query_id, chunk_id), "grade": 2}, headers=headers)
    last = client.post("/api/label", json={"i": _index(client, "q2", "c01"), "grade": 0}, headers=headers).json()
    assert last["progress"] == {"done": 4, "total": 24, "per_grade": {"0": 1, "1": 0, "2": 3, "3": 0}}


def test_labels_record_the_page_session_and_queue_and_answer_with_the_item_labelled(golden_dir: Path) -> None:
    client, headers = _client(golden_dir, seed=4, queue="stratified")
    store = LabelStore.in_folder(golden_dir)
    i = _index(client, "q1", "c02")
    done = client.post("/api/label", json={"i": i, "grade": 1}, headers=headers).json()
    assert done["item"]["i"] == i and done["item"]["mine"]["grade"] == 1
    event = store.events()[-1]
    assert (event.annotator, event.session, event.queue) == ("ann", "page:stratified:4", "stratified")
    client.post("/api/undo", json={}, headers=headers)
    assert store.events()[-1].session == "page:stratified:4"
    assert client.get(f"/api/item?i={i}").json()["mine"] is None  # undone: the label before (none) again


def test_someone_elses_grades_stay_theirs_in_the_queue_and_blind_mode_hides_them(golden_dir: Path) -> None:
    client, headers = _client(golden_dir, blind=True)
    i = _index(client, "q1", "c03")
    text = client.get(f"/api/item?i={i}").json()["text"]
    bob = client.post("/api/label", json={"i": i, "grade": 3, "annotator": "bob", "quotes": ["Refunds"]},
                      headers=headers)  # fmt: skip
    assert bob.status_code == 200, bob.text
    assert client.get("/api/queue").json()["items"][i]["grade"] is None  # bob's grade is not ann's
    assert client.get("/api/queue").json()["progress"]["done"] == 0
    hidden = client.get(f"/api/item?i={i}").json()
    assert hidden["judge_hidden"] is True and hidden["others"] == [] and hidden["judges"] == []
    client.post("/api/label", json={"i": i, "grade": 2}, headers=headers)
    [other] = client.get(f"/api/item?i={i}").json()["others"]
    assert other["annotator"] == "bob" and text.startswith("Refunds.")
    assert [(q["start"], q["end"]) for q in other["quotes"]] == [(0, 7)]  # placed in the item's text


def test_an_item_whose_question_left_the_golden_set_shows_without_it(golden_dir: Path) -> None:
    store = LabelStore.in_folder(golden_dir)
    store.import_judge_labels([judge_label("gone", "c01", 2, minute=9)])
    for who, grade in (("ann", 1), ("bob", 3)):
        store.record(LabelEvent(query_id="gone", chunk_id="c01", grade=grade, source="human", annotator=who))
    store.record(LabelEvent(query_id="q9", chunk_id="c00", grade=0, source="human", annotator="ann"))
    store.record(LabelEvent(query_id="q9", chunk_id="c00", grade=2, source="human", annotator="bob"))
    client, _ = _client(golden_dir)
    i = _index(client, "gone", "c01")
    item = client.get(f"/api/item?i={i}").json()
    fields = ("question", "question_type", "difficulty", "reference_answer", "tool_calls")
    assert {k: item[k] for k in fields} == dict.fromkeys(fields[:-1]) | {"tool_calls": []}
    assert item["chunk_text"] == "Chunk 1 about refunds." and item["judges"][0]["grade"] == 2
    rows = {r["query_id"]: r for r in client.get("/api/adjudication").json()["items"]}
    assert (rows["gone"]["question"], rows["gone"]["judge_grade"]) == (None, 2)
    assert (rows["q9"]["question"], rows["q9"]["judge_grade"], rows["q9"]["grades"]) == (
        None,
        None,
        {"ann": 0, "bob": 2},
    )


def test_a_person_named_like_a_judge_model_owns_none_of_its_grades(golden_dir: Path) -> None:
    label = judge_label("q1", "c02", 3, minute=9)
    assert label.provenance is not None
    store = LabelStore.in_folder(golden_dir)
    store.import_judge_labels(
        [label.model_copy(update={"provenance": label.provenance.model_copy(update={"model": "judgebot"})})]
    )
    client, _ = _client(golden_dir)
    queue = client.get("/api/queue?annotator=judgebot").json()
    assert queue["progress"]["done"] == 0 and all(row["grade"] is None for row in queue["items"])
    item = client.get(f"/api/item?i={_index(client, 'q1', 'c02')}&annotator=judgebot").json()
    assert item["mine"] is None and sorted(j["annotator"] for j in item["judges"]) == ["fake/judge", "judgebot"]


def test_a_label_without_a_grade_is_not_the_annotators_grade(golden_dir: Path) -> None:
    LabelStore.in_folder(golden_dir).record(
        LabelEvent(query_id="q1", chunk_id="c02", grade=None, reason="skipped", source="human", annotator="ann")
    )
    client, _ = _client(golden_dir, blind=True)
    item = client.get(f"/api/item?i={_index(client, 'q1', 'c02')}").json()
    assert (item["mine"], item["judge_hidden"], item["judges"]) == (None, True, [])


def test_an_item_number_is_an_int_or_text_never_another_type_that_prints_as_digits(golden_dir: Path) -> None:
    state = create_app(golden_dir, annotator="ann").state.audit
    assert state.item_at("ann", 2)[0] == state.item_at("ann", "2")[0] == 2
    with pytest.raises(ValueError, match="i must be an item number"):
        state.item_at("ann", Decimal(2))
