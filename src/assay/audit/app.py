"""The audit page: one HTML page in plain JavaScript over a small JSON API, served by starlette on loopback.

Routes (``?annotator=NAME`` picks the person on GETs, ``"annotator"`` in the body on POSTs; default: the CLI's)::

    GET  /                      the page (jinja2, autoescaped; the CSRF token sits in a meta tag); ``/#q=QID&c=ID``
                                opens the label of question QID and chunk (or passage) ID when it is in the queue
    GET  /static/audit.js|css   the page's script and style, read once at start (no request path reaches the disk);
                                ``page.js`` holds what the relevance and criteria views share
    GET  /api/queue             the annotator's queue (order recorded in the store) with their grades, and progress
    GET  /api/item?i=N          item N: question, reference answer, chunk with heading path (``kind`` "chunk") or,
                                for a span label (``kind`` "span"), the passage's span in its document with context
                                (:mod:`assay.audit.spans`), judge labels (hidden in blind mode until the annotator
                                graded it), the annotator's label, others' labels
    GET  /api/quote?i=N&text=Q  where quote Q stands in item N's text (``start``, ``end``), or 400 when it does not
    GET  /api/adjudication      items where annotators differ, with every grade and the judge's
    POST /api/label             {"i", "grade" 0-3 | "accept_judge": true, "reason"?, "quotes"?}: record a human label
                                with the quotes given (:mod:`assay.audit.quoting`: each must stand in the item's text,
                                none on a grade 0)
    POST /api/undo              undo the annotator's latest label still in effect
    POST /api/rewrite           {"i", "text", "reason"?}: correct the standalone rewrite of item i's conversation turn
                                (:mod:`assay.audit.rewrites`: kept in the store, written to questions.jsonl and
                                conversations.jsonl, the turn's labels flagged stale)

An item of a conversation turn carries ``turn`` (utterance, rewrite, history: earlier utterances, rewrites and
reference answers, context turns marked ``judged: false``; a context turn has no labels, so it is no item); ``stale``
marks an item whose labels were graded against an earlier rewrite, and stale items come first in a queue built after
the correction.

Every label (the judge's, the annotator's, others') carries its quotes, each with its place in the item's text
(``text`` the text shown; :func:`~assay.audit.quoting.quote_places`), which the page marks.

A grade or undo of a span label is also written into passages.jsonl, where the pool of ``assay eval`` reads it
(:func:`assay.audit.pool.join_pool`).

The criteria view (``/criteria`` and ``/api/criteria/...``: judged criteria's verdicts labelled by people) is
:mod:`assay.audit.criteria_page`'s.

Writes pass through :class:`assay.audit.security.Guard` (token, same origin, JSON, size).
"""

from __future__ import annotations

import html
import json
import secrets
import threading
from collections.abc import Awaitable, Callable, Iterable, Mapping
from importlib import resources
from json import JSONDecodeError
from pathlib import Path
from typing import Any

import jinja2
from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.middleware import Middleware
from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse, Response
from starlette.routing import Route

from assay.audit._golden import GoldenView, load_golden
from assay.audit.access import open_store
from assay.audit.criteria_page import CriteriaState
from assay.audit.pool import join_pool
from assay.audit.queues import check_queue, confirm_first, default_queue, queue_for
from assay.audit.quoting import item_text, person_quotes, placed_quote, quote_places
from assay.audit.records import MAX_REASON, CurrentLabel, Item, check_annotator, first_judge
from assay.audit.rewrites import join_rewrites, record_rewrite, stale_first, stale_items
from assay.audit.security import BodyTooLarge, Guard, read_json
from assay.audit.spans import span_view
from assay.audit.store import LabelStore
from assay.errors import AuditError
from assay.types import LabelEvent

__all__ = ["AuditState", "create_app"]

Handler = Callable[[Request], Awaitable[Response]]


class AuditState:
    """What the page serves: the store, the golden set, the settings, and each annotator's queue."""

    def __init__(
        self, store: LabelStore, golden: GoldenView, *, annotator: str, blind: bool, queue: str | None, seed: int
    ) -> None:
        self.queue = check_queue(queue) if queue is not None else default_queue(store.current_labels())
        self.store, self.golden = store, golden
        self.annotator, self.blind, self.seed = check_annotator(annotator), blind, seed
        self._queues: dict[str, list[Item]] = {}
        self._lock = threading.Lock()

    def items(self, annotator: str) -> list[Item]:
        with self._lock:
            if annotator not in self._queues:
                first = confirm_first({qid: q.flags for qid, q in self.golden.questions.items()})
                self._queues[annotator] = stale_first(
                    self.store, queue_for(self.store, annotator, self.queue, self.seed, first)
                )
            return self._queues[annotator]

    def item_at(self, annotator: str, raw: Any) -> tuple[int, Item]:
        items = self.items(annotator)
        if isinstance(raw, bool) or not isinstance(raw, int | str) or not str(raw).isdigit():
            raise ValueError("i must be an item number")
        index = int(raw)
        if index >= len(items):
            raise ValueError(f"item {index} is outside the queue of {len(items)} items")
        return index, items[index]

    def progress(self, annotator: str) -> dict[str, Any]:
        return _progress(self.items(annotator), self._mine(annotator))

    def queue_view(self, annotator: str) -> dict[str, Any]:
        mine, items = self._mine(annotator), self.items(annotator)
        stale = stale_items(self.store, items)
        rows = [
            {
                "i": i,
                "query_id": q,
                "chunk_id": c,
                "kind": self._kind(c),
                "grade": mine[q, c].grade if (q, c) in mine else None,
                "stale": (q, c) in stale,
            }
            for i, (q, c) in enumerate(items)
        ]
        settings = {"annotator": annotator, "queue": self.queue, "seed": self.seed, "blind": self.blind}
        return {**settings, "items": rows, "progress": _progress(items, mine)}

    def _kind(self, item_id: str) -> str:
        return "span" if self.golden.is_span(item_id) else "chunk"

    def _mine(self, annotator: str) -> dict[Item, CurrentLabel]:
        """The annotator's graded items."""
        labels = self.store.current_labels(annotator=annotator, role="human")
        return {lab.item: lab for lab in labels if lab.grade is not None}

    def item_view(self, annotator: str, index: int, item: Item) -> dict[str, Any]:
        labels, text = _item_labels(self.store, item), item_text(self.golden, item[1])
        mine = next((lab for lab in labels if lab.source != "judge" and lab.annotator == annotator), None)
        graded = mine is not None and mine.grade is not None
        hidden = self.blind and not graded
        judges = [_label_json(lab, text) for lab in labels if lab.source == "judge"]
        others = [_label_json(lab, text) for lab in labels if lab.source != "judge" and lab.annotator != annotator]
        question, chunk = self.golden.questions.get(item[0]), self.golden.chunks.get(item[1])
        span = None
        if self.golden.is_span(item[1]):
            passage = self.golden.passages[item[1]]
            span = span_view(passage, self.golden.documents.get(passage.doc_id or ""))
        return {
            "i": index,
            "query_id": item[0],
            "chunk_id": item[1],
            "kind": "span" if span else "chunk",
            "span": span,
            "question": question.text if question else None,
            "question_type": question.type if question else None,
            "difficulty": question.difficulty if question else None,
            "reference_answer": question.reference_answer if question else None,
            "tool_calls": [f"{c.name}({json.dumps(c.arguments, sort_keys=True)})" for c in question.tool_calls]
            if question
            else [],
            "chunk_text": chunk.text if chunk else None,
            "text": text,
            "heading_path": list(chunk.heading_path) if chunk else [],
            "doc_id": chunk.doc_id if chunk else None,
            "judge_hidden": hidden,
            "judges": [] if hidden else judges,
            "others": [] if hidden else [o for o in others if o["grade"] is not None],
            "mine": _label_json(mine, text) if graded and mine else None,
            "turn": self.golden.turn_view(item[0]),
            "stale": bool(stale_items(self.store, [item])),
        }

    def label(self, annotator: str, body: dict[str, Any]) -> dict[str, Any]:
        index, item = self.item_at(annotator, body.get("i"))
        reason = body.get("reason")
        if reason is not None and (not isinstance(reason, str) or len(reason) > MAX_REASON):
            raise ValueError(f"reason must be text of at most {MAX_REASON} characters")
        grade = self._judge_grade(annotator, index, item) if body.get("accept_judge") is True else body.get("grade")
        if isinstance(grade, bool) or grade not in (0, 1, 2, 3):
            raise ValueError("grade must be 0, 1, 2 or 3")
        quotes = person_quotes(body.get("quotes"), item_text(self.golden, item[1]), grade)
        event = LabelEvent(query_id=item[0], chunk_id=item[1], grade=grade, reason=reason or None, source="human",
                           annotator=annotator, quotes=quotes)  # fmt: skip
        self.store.record(event, session=f"page:{self.queue}:{self.seed}", queue=self.queue)
        self._join_pool(item)
        return {"item": self.item_view(annotator, index, item), "progress": self.progress(annotator)}

    def quote(self, annotator: str, params: Mapping[str, str]) -> dict[str, Any]:
        """Where quote ``text`` stands in item ``i``'s text, before it is saved with a grade (the page marks it)."""
        _, item = self.item_at(annotator, params.get("i"))
        return placed_quote(params.get("text"), item_text(self.golden, item[1]))

    def rewrite(self, annotator: str, body: dict[str, Any]) -> dict[str, Any]:
        """Correct the rewrite of item i's turn (:mod:`assay.audit.rewrites`); the golden files follow at once."""
        index, item = self.item_at(annotator, body.get("i"))
        if item[0] not in self.golden.turns:
            raise ValueError(f"question {item[0]} is not a turn of a conversation: it has no rewrite to correct")
        question = self.golden.questions[item[0]]
        record_rewrite(
            self.store,
            query_id=item[0],
            conversation_id=self.golden.turns[item[0]][0].id,
            previous=question.text,
            text=body.get("text"),
            annotator=annotator,
            reason=body.get("reason"),
            session=f"page:{self.queue}:{self.seed}",
        )
        join_rewrites(self.store, self.golden.path)
        self._reload_turns()
        return {"item": self.item_view(annotator, index, item), "progress": self.progress(annotator)}

    def _reload_turns(self) -> None:
        fresh = load_golden(self.golden.path)
        self.golden.questions, self.golden.turns = fresh.questions, fresh.turns

    def _join_pool(self, item: Item) -> None:
        """A span label's grades go to passages.jsonl, where the pool reads them (chunk labels stay in the store)."""
        if self.golden.is_span(item[1]):
            join_pool(self.store, self.golden.path, [item])

    def _judge_grade(self, annotator: str, index: int, item: Item) -> int:
        view = self.item_view(annotator, index, item)
        if view["judge_hidden"]:
            raise ValueError("blind mode: grade the item yourself first (0-3); the judge's grade shows after that")
        judges = view["judges"]
        if not judges or judges[0]["grade"] is None:
            raise ValueError("the judge left this item unscored; grade it yourself (0-3)")
        return int(judges[0]["grade"])

    def undo(self, annotator: str) -> dict[str, Any]:
        event = self.store.undo(annotator, session=f"page:{self.queue}:{self.seed}")
        if event is not None:
            self._join_pool((event.query_id, event.chunk_id))
        index = None
        if event is not None and (event.query_id, event.chunk_id) in self.items(annotator):
            index = self.items(annotator).index((event.query_id, event.chunk_id))
        return {"undone": event is not None, "i": index, "progress": self.progress(annotator)}

    def adjudication(self) -> dict[str, Any]:
        current = self.store.current_labels()
        judge = first_judge(current)
        by_item: dict[Item, dict[str, int]] = {}
        for lab in current:
            if lab.source != "judge" and lab.grade is not None:
                by_item.setdefault(lab.item, {})[lab.annotator] = lab.grade
        rows = []
        for item, grades in sorted(by_item.items()):
            if len(set(grades.values())) > 1:
                question = self.golden.questions.get(item[0])
                rows.append(
                    {
                        "query_id": item[0],
                        "chunk_id": item[1],
                        "question": question.text if question else None,
                        "grades": dict(sorted(grades.items())),
                        "judge_grade": judge[item].grade if item in judge else None,
                    }
                )
        return {"items": rows, "annotators": self.store.annotators()}


def create_app(
    golden_dir: str | Path,
    *,
    annotator: str,
    blind: bool = False,
    queue: str | None = None,
    seed: int = 0,
    hosts: Iterable[str] = (),
    token: str | None = None,
    criterion: str | None = None,
) -> Starlette:
    """The audit app for ``golden_dir``. ``hosts`` adds Host names besides loopback (the ``--host`` given). ``queue``
    None: :func:`~assay.audit.queues.default_queue` (disagreement when judges disagree on some item, else
    stratified); ``app.state.audit.queue`` says which. ``criterion``: the criteria view shows that criterion's
    verdicts only (None: every judged criterion's)."""
    store, golden = open_store(golden_dir)
    state = AuditState(store, golden, annotator=annotator, blind=blind, queue=queue, seed=seed)
    criteria = CriteriaState(store, blind=blind, seed=seed, criterion=criterion)
    csrf = token or secrets.token_urlsafe(32)
    page = _page_renderer(Path(golden_dir).name, csrf, state)
    assets = {name: _asset(name) for name in ("page.js", "audit.js", "audit.css", "criteria.js")}
    routes = [
        Route("/", page),
        Route("/criteria", _page_renderer(Path(golden_dir).name, csrf, state, "criteria.html")),
        Route("/static/page.js", _static(assets["page.js"], "text/javascript; charset=utf-8")),
        Route("/static/audit.js", _static(assets["audit.js"], "text/javascript; charset=utf-8")),
        Route("/static/criteria.js", _static(assets["criteria.js"], "text/javascript; charset=utf-8")),
        Route("/static/audit.css", _static(assets["audit.css"], "text/css; charset=utf-8")),
        Route("/api/queue", _get(state, lambda who, request: state.queue_view(who))),
        Route(
            "/api/item",
            _get(state, lambda who, request: state.item_view(who, *state.item_at(who, request.query_params.get("i")))),
        ),
        Route("/api/quote", _get(state, lambda who, request: state.quote(who, request.query_params))),
        Route("/api/adjudication", _get(state, lambda who, request: state.adjudication())),
        Route("/api/label", _post(state, state.label), methods=["POST"]),
        Route("/api/undo", _post(state, lambda who, body: state.undo(who)), methods=["POST"]),
        Route("/api/rewrite", _post(state, state.rewrite), methods=["POST"]),
        Route("/api/criteria/queue", _get(state, lambda who, request: criteria.queue_view(who))),
        Route(
            "/api/criteria/item",
            _get(state, lambda who, request: criteria.item_view(who, *criteria.item_at(request.query_params.get("i")))),
        ),
        Route("/api/criteria/label", _post(state, criteria.label), methods=["POST"]),
        Route("/api/criteria/undo", _post(state, lambda who, body: criteria.undo(who)), methods=["POST"]),
    ]
    app = Starlette(routes=routes, middleware=[Middleware(Guard, token=csrf, hosts=hosts)])
    app.state.audit, app.state.criteria = state, criteria
    app.state.token = csrf
    return app


def _asset(name: str) -> bytes:
    return resources.files("assay.audit").joinpath("static", name).read_bytes()


def _static(content: bytes, media_type: str) -> Handler:
    async def handler(request: Request) -> Response:
        return Response(content, media_type=media_type)

    return handler


def _page_renderer(title: str, token: str, state: AuditState, name: str = "audit.html") -> Handler:
    source = resources.files("assay.audit").joinpath("templates", name).read_text(encoding="utf-8")
    template = jinja2.Environment(autoescape=True, undefined=jinja2.StrictUndefined).from_string(source)

    async def handler(request: Request) -> Response:
        try:
            who = check_annotator(request.query_params.get("annotator", state.annotator))
        except AuditError as exc:
            return HTMLResponse(f"<p>{html.escape(str(exc))}</p>", status_code=400)
        page = template.render(title=title, token=token, annotator=who, blind=state.blind, queue=state.queue)
        return HTMLResponse(page)

    return handler


def _get(state: AuditState, view: Callable[[str, Request], dict[str, Any]]) -> Handler:
    async def handler(request: Request) -> Response:
        name = request.query_params.get("annotator", state.annotator)
        return await _answer(lambda: view(check_annotator(name), request))

    return handler


def _post(state: AuditState, action: Callable[[str, dict[str, Any]], dict[str, Any]]) -> Handler:
    async def handler(request: Request) -> Response:
        try:
            body = await read_json(request)
        except BodyTooLarge as exc:
            return JSONResponse({"error": str(exc)}, status_code=413)
        except (ValueError, JSONDecodeError) as exc:
            return JSONResponse({"error": f"bad JSON body: {exc}"}, status_code=400)
        name = body.get("annotator", state.annotator)
        return await _answer(lambda: action(check_annotator(name if isinstance(name, str) else ""), body))

    return handler


async def _answer(work: Callable[[], dict[str, Any]]) -> Response:
    try:
        return JSONResponse(await run_in_threadpool(work))
    except (ValueError, AuditError) as exc:
        return JSONResponse({"error": str(exc)}, status_code=400)


def _progress(items: list[Item], mine: dict[Item, CurrentLabel]) -> dict[str, Any]:
    per_grade = {str(g): 0 for g in range(4)}
    for item in items:
        if item in mine:
            per_grade[str(mine[item].grade)] = per_grade.get(str(mine[item].grade), 0) + 1
    return {"done": sum(per_grade.values()), "total": len(items), "per_grade": per_grade}


def _item_labels(store: LabelStore, item: Item) -> list[CurrentLabel]:
    """Current labels of one item, oldest first (so the first judge label is the golden set's own)."""
    return sorted(store.item_labels(*item), key=lambda lab: lab.event_id)


def _label_json(lab: CurrentLabel, text: str | None) -> dict[str, Any]:
    return {
        "grade": lab.grade,
        "quotes": quote_places(lab.quotes, text),
        "reason": lab.reason,
        "annotator": lab.annotator,
        "prompt": lab.prompt,
        "source": lab.source,
        "time": lab.time,
    }
