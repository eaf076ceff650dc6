"""Quotes in the audit: placed in the text under review, edited on the page with provenance, refused when they are
not text of the passage or sit on a grade 0, and carried out of the store (CSV, passages.jsonl) into the character
grades of the evaluation."""

from __future__ import annotations

import csv
import random
import sqlite3
from pathlib import Path

import pytest
from audit_fixtures import GUIDE, SPAN, add_judge_quotes, add_spans, build_golden, span_id
from starlette.testclient import TestClient

from assay.audit import store as store_module
from assay.audit.access import open_store
from assay.audit.app import create_app
from assay.audit.exchange import export_csv, import_csv
from assay.audit.quoting import quote_place
from assay.audit.store import LabelStore
from assay.errors import AuditError
from assay.formats.golden import GoldenSet
from assay.judge.quotes import stands_in
from assay.pipelines.evaluate.runs.carry import SpanIndex
from assay.pipelines.evaluate.runs.locate import Resolver
from assay.text import normalized_words
from assay.types import LabelEvent

BASE = "http://127.0.0.1:8765"
C02 = "Chunk 2 about refunds."  # q1's judge grade of c02 is 2 (audit_fixtures: (i + j) % 4)
NINE = ["Chunk", "2", "about", "refunds", "Chunk 2", "2 about", "about refunds", "Chunk 2 about", "2 about refunds"]


@pytest.fixture
def quoted_dir(tmp_path: Path) -> Path:
    return add_judge_quotes(build_golden(tmp_path / "golden"))


@pytest.fixture
def spans_dir(tmp_path: Path) -> Path:
    return add_spans(build_golden(tmp_path / "golden"))


def client_for(golden_dir: Path, annotator: str = "ann", **options: object) -> tuple[TestClient, dict[str, str]]:
    app = create_app(golden_dir, annotator=annotator, **options)  # type: ignore[arg-type]
    return TestClient(app, base_url=BASE), {"X-Assay-Token": app.state.token, "Origin": BASE}


def index_of(client: TestClient, query_id: str, item_id: str) -> int:
    rows = client.get("/api/queue").json()["items"]
    return next(row["i"] for row in rows if (row["query_id"], row["chunk_id"]) == (query_id, item_id))


def human_events(folder: Path) -> list[LabelEvent | object]:
    return [e for e in LabelStore.in_folder(folder).events() if e.source != "judge"]


# -- the place of a quote ---------------------------------------------------------------------------------------------


def test_a_quote_is_placed_from_its_first_word_to_its_last() -> None:
    text = "Refunds are paid, within <b>30</b> days. Gift cards: store credit."
    assert quote_place("paid within 30 days", text) == (text.index("paid"), text.index("days") + 4)
    assert quote_place("GIFT CARDS store", text) == (text.index("Gift"), text.index("store") + 5)
    assert quote_place("Refunds", "No refunds here. Refunds later.") == (3, 10)  # the first place, case folded
    assert quote_place("within 31 days", text) is None
    assert quote_place("b 30", text) is None  # markup is no word
    assert quote_place("  ", text) is None


def test_a_quote_is_placed_exactly_when_it_stands_in_the_text() -> None:
    """Against the judge's own test (stands_in) on random texts with markup, punctuation, case and spacing."""
    rng = random.Random(7)
    vocab = ["refund", "Card", "30", "days", "café", "gift", "the", "paid", "e-mail", "Ünïcode"]
    seps = [" ", ", ", ".\n", " <i>", "</i> ", " -- ", "\t"]
    for _ in range(400):
        pieces = [rng.choice(vocab) + rng.choice(seps) for _ in range(rng.randint(1, 12))]
        text = "".join(pieces)
        first = rng.randrange(len(pieces))
        run = pieces[first : first + rng.randint(1, 4)]
        quote = "".join(p.upper() if rng.random() < 0.3 else p for p in run)
        quote = quote if rng.random() < 0.7 else rng.choice(vocab)
        place = quote_place(quote, text)
        assert (place is not None) == stands_in(quote, text), (quote, text)
        if place is not None:
            assert normalized_words(text[place[0] : place[1]]) == normalized_words(quote)


# -- the page ------------------------------------------------------------------------------------------------------


def test_the_judges_quotes_are_shown_at_their_place(quoted_dir: Path) -> None:
    client, _ = client_for(quoted_dir)
    view = client.get(f"/api/item?i={index_of(client, 'q1', 'c02')}").json()
    assert view["text"] == C02
    pointwise = next(j for j in view["judges"] if j["prompt"] == "relevance@1")
    assert pointwise["quotes"] == [
        {"text": "about refunds", "start": 8, "end": 21},  # "Chunk 2 " is 8 characters, "about refunds" 13
        {"text": "money comes back", "start": None, "end": None},  # not in the text: listed, never marked
    ]


def test_blind_mode_hides_the_judges_quotes_until_graded(quoted_dir: Path) -> None:
    client, headers = client_for(quoted_dir, blind=True)
    i = index_of(client, "q1", "c02")
    assert client.get(f"/api/item?i={i}").json()["judges"] == []
    client.post("/api/label", json={"i": i, "grade": 1}, headers=headers)
    assert client.get(f"/api/item?i={i}").json()["judges"][0]["quotes"][0]["start"] == 8


def test_a_person_saves_quotes_with_a_grade_and_undo_restores_the_previous(quoted_dir: Path) -> None:
    client, headers = client_for(quoted_dir)
    i = index_of(client, "q1", "c02")
    first = client.post("/api/label", json={"i": i, "grade": 3, "quotes": ["about   refunds"]}, headers=headers)
    assert first.status_code == 200, first.text
    assert first.json()["item"]["mine"]["quotes"] == [{"text": "about refunds", "start": 8, "end": 21}]
    second = {"i": i, "grade": 2, "quotes": ["chunk 2", "Chunk 2", "refunds."], "reason": "two bits"}
    assert client.post("/api/label", json=second, headers=headers).status_code == 200
    store = LabelStore.in_folder(quoted_dir)
    [mine] = store.current_labels(annotator="ann")
    # word for word as the chunk has them (case, punctuation), a quote given twice kept once
    assert (mine.grade, mine.quotes, mine.source) == (2, ("Chunk 2", "refunds"), "human")
    client.post("/api/undo", json={}, headers=headers)
    [restored] = store.current_labels(annotator="ann")
    assert (restored.grade, restored.quotes) == (3, ("about refunds",))
    client.post("/api/label", json={"i": i, "grade": 3}, headers=headers)  # no quotes sent: the label has none
    assert store.current_labels(annotator="ann")[0].quotes is None


def test_a_quote_not_in_the_passage_or_on_grade_0_is_refused_and_never_stored(quoted_dir: Path) -> None:
    client, headers = client_for(quoted_dir)
    i = index_of(client, "q1", "c02")
    cases = [
        ({"grade": 3, "quotes": ["money comes back"]}, "this quote is not in the passage: 'money comes back'"),
        ({"grade": 2, "quotes": ["Chunk 3"]}, "this quote is not in the passage"),  # the words of another chunk
        ({"grade": 0, "quotes": ["about refunds"]}, "grade 0 quotes nothing"),
        ({"grade": 2, "quotes": "about refunds"}, "quotes must be a list of texts"),
        ({"grade": 2, "quotes": NINE}, "9 quotes; quote at most 8"),
    ]
    for body, message in cases:
        answer = client.post("/api/label", json={"i": i, **body}, headers=headers)
        assert answer.status_code == 400 and message in answer.json()["error"], (body, answer.text)
    assert human_events(quoted_dir) == []


def test_a_quote_is_checked_before_it_is_saved(quoted_dir: Path) -> None:
    client, _ = client_for(quoted_dir)
    i = index_of(client, "q1", "c02")
    found = client.get("/api/quote", params={"i": i, "text": "2\nabout"})
    assert found.json() == {"text": "2 about", "start": 6, "end": 13}
    refused = client.get("/api/quote", params={"i": i, "text": "<script>x</script>"})
    assert refused.status_code == 400 and "this quote is not in the passage" in refused.json()["error"]
    assert human_events(quoted_dir) == []


# -- out of the store ----------------------------------------------------------------------------------------------


def test_a_span_labels_quotes_reach_the_pool_and_the_character_grades(spans_dir: Path) -> None:
    client, headers = client_for(spans_dir)
    i = index_of(client, "q1", span_id())
    assert client.get(f"/api/item?i={i}").json()["text"] == SPAN
    answer = client.post("/api/label", json={"i": i, "grade": 3, "quotes": ["within 30 days"]}, headers=headers)
    assert answer.status_code == 200, answer.text
    golden = GoldenSet.load(spans_dir)
    label = golden.passage_labels()[("q1", span_id())]
    assert (label.grade, label.quotes, label.provenance.source) == (3, ["within 30 days"], "human")
    painted = SpanIndex(golden, Resolver(golden)).painted("q1")
    start, quote = GUIDE.index(SPAN), GUIDE.index("within 30 days")
    assert ("guide", quote, quote + len("within 30 days"), 3) in painted  # the quote, with the person's grade
    assert ("guide", start, start + len(SPAN), 0) in painted  # the rest of the span: read, not what answers


def test_several_people_quote_one_span(spans_dir: Path) -> None:
    store, _ = open_store(spans_dir)
    people = {who: client_for(spans_dir, who) for who in ("ann", "bob", "cy")}

    def grade(who: str, grade: int, quotes: list[str] | None = None) -> None:
        client, headers = people[who]
        body = {"i": index_of(client, "q1", span_id()), "grade": grade, "quotes": quotes}
        assert client.post("/api/label", json=body, headers=headers).status_code == 200

    grade("ann", 2, ["original card"])
    grade("bob", 3, ["30 days", "original card"])
    grade("cy", 0)

    def quotes() -> tuple[int | None, list[str] | None]:
        label = GoldenSet.load(spans_dir).passage_labels()[("q1", span_id())]
        return label.grade, label.quotes

    assert quotes() == (2, ["original card", "30 days"])  # median grade 2; the quotes of those who graded 1-3
    grade("cy", 3)  # cy graded the whole text, quoting nothing: it paints whole
    assert quotes() == (3, None)
    grade("ann", 0)
    grade("bob", 0)
    assert quotes() == (0, None)
    assert "004_quotes" in store.migrations()


def test_quotes_travel_through_the_csv(quoted_dir: Path, tmp_path: Path) -> None:
    store, golden = open_store(quoted_dir)
    store.record(LabelEvent(query_id="q1", chunk_id="c02", grade=2, source="human", annotator="ann",
                            quotes=["about refunds", "Chunk 2"]))  # fmt: skip
    out = tmp_path / "labels.csv"
    export_csv(store, out, golden)
    [row] = list(csv.DictReader(out.open(encoding="utf-8")))
    assert row["quotes"] == "about refunds\nChunk 2"
    fresh_dir = add_judge_quotes(build_golden(tmp_path / "fresh"))
    fresh, fresh_golden = open_store(fresh_dir)
    assert import_csv(fresh, out, fresh_golden).added == 1
    assert fresh.current_labels(role="human")[0].quotes == ("about refunds", "Chunk 2")
    assert import_csv(fresh, out, fresh_golden).unchanged == 1
    row["quotes"] = "about refunds\nrefunds are late"
    with out.open("w", encoding="utf-8", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=list(row))
        writer.writeheader()
        writer.writerow(row)
    with pytest.raises(AuditError, match=r"labels.csv:2: this quote is not in the passage: 'refunds are late'"):
        import_csv(fresh, out, fresh_golden)


def test_a_store_made_before_quotes_opens_with_its_labels_unquoted(
    quoted_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    with monkeypatch.context() as patched:
        patched.setattr(store_module, "MIGRATIONS", store_module.MIGRATIONS[:3])
        LabelStore.in_folder(quoted_dir)
    with sqlite3.connect(quoted_dir / "audit.sqlite") as conn:  # a label as the store wrote it then
        assert "quotes" not in [row[1] for row in conn.execute("PRAGMA table_info(events)")]
        conn.execute(
            "INSERT INTO events (kind, query_id, chunk_id, grade, source, annotator, time)"
            " VALUES ('label', 'q1', 'c02', 1, 'human', 'ann', '2026-01-01T00:00:00+00:00')"
        )
    store, _ = open_store(quoted_dir)
    assert store.migrations() == ["001_events", "002_queues", "003_rewrites", "004_quotes", "005_criteria"]
    [mine] = store.current_labels(annotator="ann")
    assert (mine.grade, mine.quotes) == (1, None)
