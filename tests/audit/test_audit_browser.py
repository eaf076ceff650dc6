"""The audit page end to end in headless Debian Chromium driven by playwright (never `playwright install`)."""

from __future__ import annotations

import os
import socket
import threading
from pathlib import Path
from typing import Any

import pytest
import uvicorn
from audit_fixtures import (
    PAYLOAD,
    SPAN,
    add_context_turn,
    add_conversation,
    add_judge_quotes,
    add_spans,
    build_golden,
    span_id,
)

from assay.audit.access import open_store
from assay.audit.app import create_app
from assay.audit.rewrites import rewrite_events
from assay.formats.golden import GoldenSet

SCREENSHOT = os.environ.get("ASSAY_AUDIT_SCREENSHOT")

pytestmark = pytest.mark.browser


class Server:
    """uvicorn serving the audit app in a thread on 127.0.0.1, on a free port."""

    def __init__(self, golden: Path, **options: Any) -> None:
        self.app = create_app(golden, annotator="ann", **options)
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.port = self.sock.getsockname()[1]
        self.server = uvicorn.Server(uvicorn.Config(self.app, log_level="warning", lifespan="off"))
        self.thread = threading.Thread(target=self.server.run, kwargs={"sockets": [self.sock]}, daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def __enter__(self) -> Server:
        self.thread.start()
        while not self.server.started:  # uvicorn sets this once it listens; no sleep needed with a short join
            self.thread.join(0.01)
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.should_exit = True
        self.thread.join(10)
        self.sock.close()


@pytest.fixture
def golden(tmp_path: Path) -> Path:
    return build_golden(tmp_path / "golden")


def open_page(browser: Any, url: str) -> tuple[Any, Any, list[str]]:
    context = browser.new_context()
    page = context.new_page()
    dialogs: list[str] = []
    page.on("dialog", lambda dialog: (dialogs.append(dialog.message), dialog.dismiss()))
    page.goto(url)
    page.wait_for_selector("#position:has-text('Item')")
    return context, page, dialogs


def position(page: Any) -> str:
    return str(page.text_content("#position"))


def human_grades(golden: Path, annotator: str) -> dict[tuple[str, str], int | None]:
    store, _ = open_store(golden)
    return {lab.item: lab.grade for lab in store.current_labels(annotator=annotator, role="human")}


def test_grade_five_by_keyboard_and_reload_keeps_them(browser: Any, golden: Path) -> None:
    with Server(golden) as server:
        context, page, _ = open_page(browser, server.url)
        for key in ["3", "2", "1", "0", "2"]:
            before = position(page)
            page.keyboard.press(key)
            page.wait_for_function("p => document.getElementById('position').textContent !== p", arg=before)
        assert page.text_content("#progress").startswith("5 / 24 done")
        page.reload()
        page.wait_for_selector("#position:has-text('Item 6 of 24')")
        assert page.text_content("#progress").startswith("5 / 24 done")
        page.keyboard.press("ArrowLeft")
        page.wait_for_selector("#mine:has-text('Your grade: 2')")
        page.keyboard.press("u")
        page.wait_for_selector("#progress:has-text('4 / 24 done')")
        page.wait_for_selector("#mine:has-text('Not graded yet.')")
        page.keyboard.press("ArrowLeft")
        page.wait_for_selector("#mine:has-text('Your grade: 0')")
        if SCREENSHOT:
            page.set_viewport_size({"width": 1280, "height": 800})
            page.screenshot(path=SCREENSHOT)
        page.keyboard.press("?")
        assert page.is_visible("#help")
        context.close()
    grades = human_grades(golden, "ann")
    assert sorted(g for g in grades.values() if g is not None) == [0, 1, 2, 3]


def test_enter_accepts_judge_and_reason_box(browser: Any, golden: Path) -> None:
    with Server(golden, queue="uncertainty") as server:
        context, page, _ = open_page(browser, server.url)
        page.keyboard.press("ArrowRight")  # item 2: q1/c05, unscored by the judge
        page.wait_for_selector("#judge:has-text('unscored')")
        page.keyboard.press("Enter")
        page.wait_for_selector("#status:has-text('unscored')")
        page.keyboard.press("ArrowLeft")  # item 1: q1/c01, pointwise 1, listwise 3
        page.wait_for_selector("#position:has-text('Item 1 of')")
        page.keyboard.press("Enter")
        page.wait_for_selector("#position:has-text('Item 2 of')")
        page.keyboard.press("ArrowLeft")
        page.wait_for_selector("#mine:has-text('Your grade: 1')")
        page.keyboard.press("r")
        page.fill("#reason", "listwise was too kind")
        page.keyboard.press("Enter")
        page.wait_for_selector("#mine:has-text('listwise was too kind')")
        context.close()
    store, _ = open_store(golden)
    mine = store.current_labels(annotator="ann")
    assert [(lab.item, lab.grade, lab.reason) for lab in mine] == [(("q1", "c01"), 1, "listwise was too kind")]


def test_edit_the_quotes_of_a_label(browser: Any, golden: Path) -> None:
    """The judge's quote is marked in the chunk and saved with the grade; then a quote is removed, one typed, one
    selected with the mouse's selection and q, and a quote not in the chunk is refused with the server's reason."""
    add_judge_quotes(golden)
    with Server(golden) as server:
        context, page, _ = open_page(browser, server.url + "/#q=q1&c=c02")
        page.wait_for_selector("#chunk-id:has-text('c02')")
        assert page.text_content("#chunk mark.quote") == "about refunds"
        assert page.text_content("#chunk") == "Chunk 2 about refunds."
        page.keyboard.press("2")
        page.wait_for_selector("#status:has-text('Saved grade 2')")
        page.keyboard.press("ArrowLeft")
        page.wait_for_selector("#quotes-whose:has-text('yours')")
        assert page.text_content("#quotes li span") == "about refunds"
        page.click("#quotes li button.remove")
        page.wait_for_selector("#status:has-text('Removed the quote.')")
        assert page.locator("#chunk mark.quote").count() == 0
        page.fill("#quote-text", "chunk   2")
        page.press("#quote-text", "Enter")
        page.wait_for_selector("#status:has-text('Saved the quote.')")
        page.evaluate(
            """() => {
                document.activeElement.blur();  // a selection made with the mouse leaves the text box
                const nodes = [...document.getElementById('chunk').childNodes];
                const node = nodes.find((n) => n.textContent.includes('refunds'));
                const range = document.createRange();
                const at = node.textContent.indexOf('refunds');
                range.setStart(node, at);
                range.setEnd(node, at + 'refunds'.length);
                getSelection().removeAllRanges();
                getSelection().addRange(range);
            }"""
        )
        page.keyboard.press("q")
        page.wait_for_selector("#quotes li:nth-child(2)")
        assert [m.text_content() for m in page.locator("#chunk mark.quote").all()] == ["Chunk 2", "refunds"]
        page.fill("#quote-text", "money comes back")
        page.press("#quote-text", "Enter")
        page.wait_for_selector("#status.error:has-text('this quote is not in the passage')")
        context.close()
    store, _ = open_store(golden)
    [mine] = store.current_labels(annotator="ann")
    assert (mine.item, mine.grade, mine.quotes) == (("q1", "c02"), 2, ("Chunk 2", "refunds"))


def test_script_payload_shows_as_text_and_runs_nothing(browser: Any, golden: Path) -> None:
    with Server(golden) as server:
        context, page, dialogs = open_page(browser, server.url)
        for _ in range(30):
            if "c03" in page.text_content("#chunk-id") and page.text_content("#question").startswith("What"):
                break
            before = position(page)
            page.keyboard.press("ArrowRight")
            page.wait_for_function("p => document.getElementById('position').textContent !== p", arg=before)
        assert page.text_content("#chunk") == f"Refunds. {PAYLOAD}"
        assert page.evaluate("document.querySelectorAll('#chunk *').length") == 0
        assert page.evaluate("typeof window.__pwned") == "undefined"
        assert page.evaluate("document.querySelectorAll('img').length") == 0
        assert dialogs == []
        context.close()


def test_cross_site_post_is_refused(browser: Any, golden: Path) -> None:
    with Server(golden) as server:
        context, page, _ = open_page(browser, server.url)
        attacker = context.new_page()
        # a page on another origin (127.0.0.2 resolves nowhere here, so use a data: page): its POST must fail
        attacker.set_content("<html><body>attacker</body></html>")
        status = attacker.evaluate(
            """async (url) => {
                try {
                    const r = await fetch(url + '/api/label', {method: 'POST', mode: 'no-cors',
                        headers: {'Content-Type': 'text/plain'}, body: JSON.stringify({i: 0, grade: 3})});
                    return r.type;
                } catch (e) { return 'error'; }
            }""",
            server.url,
        )
        assert status in ("opaque", "error")
        forged = page.evaluate(
            """async () => (await fetch('/api/label', {method: 'POST', headers: {'Content-Type': 'application/json'},
                body: JSON.stringify({i: 0, grade: 3})})).status"""
        )
        assert forged == 403
        context.close()
    assert human_grades(golden, "ann") == {}


def test_two_contexts_labelling_at_once_lose_nothing(browser: Any, golden: Path) -> None:
    with Server(golden) as server:
        ann_ctx, ann, _ = open_page(browser, server.url)
        bob_ctx, bob, _ = open_page(browser, server.url + "/?annotator=bob")
        for step in range(8):
            for page, key in ((ann, str(step % 4)), (bob, str((step + 1) % 4))):
                page.keyboard.press(key)
        ann.wait_for_selector("#progress:has-text('8 / 24 done')")
        bob.wait_for_selector("#progress:has-text('8 / 24 done')")
        ann_ctx.close()
        bob_ctx.close()
    store, _ = open_store(golden)
    human = [e for e in store.events() if e.source == "human"]
    assert sorted((e.annotator, e.grade) for e in human) == sorted(
        [("ann", s % 4) for s in range(8)] + [("bob", (s + 1) % 4) for s in range(8)]
    )
    assert len(human_grades(golden, "ann")) == len(human_grades(golden, "bob")) == 8


def test_a_span_label_shows_marked_in_its_document_and_takes_a_grade(browser: Any, tmp_path: Path) -> None:
    golden = add_spans(build_golden(tmp_path / "spans"))
    with Server(golden) as server:
        context, page, _ = open_page(browser, server.url)
        for _ in range(30):
            if page.text_content("#chunk-id") == span_id() and page.text_content("#question").startswith("What"):
                break
            before = position(page)
            page.keyboard.press("ArrowRight")
            page.wait_for_function("p => document.getElementById('position').textContent !== p", arg=before)
        assert page.text_content("#item-kind") == "Span"
        assert page.text_content("#chunk mark") == SPAN
        assert "how refunds work" in page.text_content("#chunk")  # the document's text around the span
        assert "Refund guide" in page.text_content("#span-head") and page.is_hidden("#span-note")
        page.keyboard.press("3")
        page.wait_for_selector("#status:has-text('Saved grade 3')")
        context.close()
    label = GoldenSet.load(golden).passage_labels()[("q1", span_id())]
    assert (label.grade, label.provenance.source, label.provenance.annotator) == (3, "human", "ann")


def test_a_link_to_one_label_opens_it(browser: Any, golden: Path) -> None:
    """``/#q=QID&c=ID`` (the report's explorer links) opens that label, also on a later change of the link; a label
    outside the queue says so."""
    with Server(golden) as server:
        context, page, _ = open_page(browser, f"{server.url}/#q=q2&c=c07")
        page.wait_for_selector("#chunk-id:has-text('c07')")
        assert page.text_content("#question") == "How do refunds compare?"
        page.evaluate("location.hash = 'q=q1&c=c03'")
        page.wait_for_selector("#chunk-id:has-text('c03')")
        assert page.text_content("#question") == "What is the refund window?"
        page.evaluate("location.hash = 'q=q1&c=nowhere'")
        page.wait_for_selector("#status:has-text('is not in this queue')")
        context.close()


def test_a_context_turn_in_the_history_is_marked_not_judged(browser: Any, golden: Path) -> None:
    add_context_turn(golden)
    with Server(golden) as server:
        context, page, _ = open_page(browser, server.url + "/#q=q2&c=c01")
        page.wait_for_selector("#utterance:has-text('and how do they compare?')")
        marked = page.text_content("#history li.context") or ""
        assert "and for gift cards?" in marked and "context turn: not judged, not scored" in marked
        assert page.locator("#history li").count() == 2 and page.locator("#history li.context").count() == 1
        context.close()


def test_correct_a_turns_rewrite_by_keyboard(browser: Any, golden: Path) -> None:
    add_conversation(golden)
    new = "How do refunds to a card compare with gift-card refunds?"
    with Server(golden) as server:
        context, page, _ = open_page(browser, server.url + "/#q=q2&c=c01")
        page.wait_for_selector("#utterance:has-text('and how do they compare?')")
        assert page.text_content("#rewrite") == "How do refunds compare?"
        assert "What is the refund window?" in page.text_content("#history")
        assert "30 days" in page.text_content("#history")
        assert not page.is_visible("#stale")
        page.keyboard.press("w")
        page.wait_for_selector("#rewrite-text", state="visible")
        page.keyboard.press("Escape")  # cancel: nothing saved
        assert not page.is_visible("#rewrite-box")
        page.keyboard.press("w")
        page.wait_for_selector("#rewrite-text", state="visible")
        page.fill("#rewrite-text", new)
        page.keyboard.press("Tab")
        page.keyboard.type("the rewrite lost the gift cards")
        page.keyboard.press("Enter")
        page.wait_for_selector("#rewrite-source:has-text('corrected by ann')")
        assert page.text_content("#rewrite") == new
        assert page.is_visible("#stale")
        context.close()
    store, _ = open_store(golden)
    [event] = rewrite_events(store)
    assert (event.query_id, event.text, event.reason, event.annotator) == (
        "q2", new, "the rewrite lost the gift cards", "ann"
    )  # fmt: skip
    saved = GoldenSet.load(golden)
    assert saved.question("q2").text == new
    prov = saved.conversations[0].turns[1].rewrite_provenance
    assert prov is not None and (prov.source, prov.annotator) == ("human", "ann")
    assert human_grades(golden, "ann") == {}  # correcting the rewrite graded nothing


def test_label_criterion_verdicts_by_keyboard(browser: Any, golden: Path, tmp_path: Path) -> None:
    """The criteria view: digits give the scale's labels (lowest score first), Enter accepts the judge's, u undoes,
    r keeps a reason for the next label; what the judge saw is text, never markup."""
    from assay.audit.criteria import current_labels, queue_verdicts
    from assay.audit.store import LabelStore
    from assay.judge.criteria import parse_criterion
    from assay.results import CriterionVerdictRecord, CriterionVote

    text = '+++\nname = "ok"\nversion = "1"\ninputs = ["answer"]\nscale = "pass_fail"\n+++\nIs it fine?\n'
    criterion = parse_criterion(text.encode(), tmp_path / "ok.md")
    verdicts = [CriterionVerdictRecord(run="r", query_id=f"q{n}", criterion="ok", ref="ok@1", item=f"i{n}",
                                       label="pass", score=1.0, votes=[CriterionVote(model="m", label="pass",
                                                                                     reason="fine")])
                for n in range(3)]  # fmt: skip
    shown = {f"i{n}": {"answer": PAYLOAD if n == 0 else f"answer {n}"} for n in range(3)}
    store = LabelStore.in_folder(golden)
    assert queue_verdicts(store, [criterion], verdicts, shown) == 3
    with Server(golden) as server:
        context = browser.new_context()
        page = context.new_page()
        page.goto(server.url + "/criteria")
        page.wait_for_selector("#position:has-text('1 / 3')")
        page.keyboard.press("1")  # fail (score 0), the first label
        page.wait_for_selector("#progress:has-text('1 / 3 labelled')")
        page.keyboard.press("Enter")  # the judge's pass
        page.wait_for_selector("#progress:has-text('2 / 3 labelled')")
        page.keyboard.press("u")
        page.wait_for_selector("#progress:has-text('1 / 3 labelled')")
        page.keyboard.press("r")
        page.fill("#reason", "no number given")
        page.keyboard.press("Enter")
        page.keyboard.press("1")
        page.wait_for_selector("#progress:has-text('2 / 3 labelled')")
        assert page.evaluate("window.__pwned === undefined")  # the payload in an answer ran nothing
        context.close()
    mine = {item: (e.label, e.reason) for item, by in current_labels(store).items() for e in by.values()}
    assert sorted(mine.values(), key=str) == [("fail", "no number given"), ("fail", None)]
