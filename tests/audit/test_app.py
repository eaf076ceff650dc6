"""The audit app through starlette's TestClient: API, blind mode, CSRF and origin checks, size limit, escaping."""

from __future__ import annotations

from pathlib import Path

import pytest
from audit_fixtures import PAYLOAD
from starlette.testclient import TestClient

from assay.audit.app import create_app
from assay.audit.security import MAX_BODY
from assay.errors import AuditError

BASE = "http://127.0.0.1:8765"


def client_for(golden_dir: Path, **options: object) -> tuple[TestClient, dict[str, str]]:
    app = create_app(golden_dir, annotator="ann", **options)  # type: ignore[arg-type]
    client = TestClient(app, base_url=BASE)
    return client, {"X-Assay-Token": app.state.token, "Origin": BASE}


def find(client: TestClient, query_id: str, chunk_id: str) -> int:
    items = client.get("/api/queue").json()["items"]
    return next(row["i"] for row in items if (row["query_id"], row["chunk_id"]) == (query_id, chunk_id))


def test_page_embeds_token_and_escapes_the_annotator(golden_dir: Path) -> None:
    client, headers = client_for(golden_dir)
    page = client.get("/")
    assert page.status_code == 200
    assert f'<meta name="assay-token" content="{headers["X-Assay-Token"]}">' in page.text
    assert "script-src 'self'" in page.headers["content-security-policy"]
    assert client.get("/static/audit.js").headers["content-type"].startswith("text/javascript")
    assert client.get("/?annotator=<b>x</b>").status_code == 400
    assert client.get("/static/../store.py").status_code == 404


def test_label_progress_and_undo(golden_dir: Path) -> None:
    client, headers = client_for(golden_dir)
    queue = client.get("/api/queue").json()
    assert queue["progress"] == {"done": 0, "total": 24, "per_grade": {"0": 0, "1": 0, "2": 0, "3": 0}}
    answer = client.post("/api/label", json={"i": 0, "grade": 2, "reason": "partly"}, headers=headers)
    assert answer.status_code == 200, answer.text
    assert answer.json()["item"]["mine"]["grade"] == 2
    client.post("/api/label", json={"i": 1, "grade": 3}, headers=headers)
    assert client.get("/api/queue").json()["progress"]["per_grade"] == {"0": 0, "1": 0, "2": 1, "3": 1}
    undone = client.post("/api/undo", json={}, headers=headers).json()
    assert undone["i"] == 1 and undone["progress"]["done"] == 1
    assert [row["grade"] for row in client.get("/api/queue").json()["items"][:2]] == [2, None]


def test_accept_judge_and_unscored(golden_dir: Path) -> None:
    client, headers = client_for(golden_dir)
    i = find(client, "q2", "c02")  # judge grade (2 + 1) % 4 = 3
    answer = client.post("/api/label", json={"i": i, "accept_judge": True}, headers=headers)
    assert answer.json()["item"]["mine"]["grade"] == 3
    unscored = find(client, "q1", "c05")
    refused = client.post("/api/label", json={"i": unscored, "accept_judge": True}, headers=headers)
    assert refused.status_code == 400 and "unscored" in refused.json()["error"]


def test_bad_values_are_refused(golden_dir: Path) -> None:
    client, headers = client_for(golden_dir)
    for body in ({"i": 0, "grade": 4}, {"i": 0, "grade": True}, {"i": 99, "grade": 1}, {"i": "x", "grade": 1}):
        assert client.post("/api/label", json=body, headers=headers).status_code == 400
    long_reason = {"i": 0, "grade": 1, "reason": "x" * 2001}
    assert client.post("/api/label", json=long_reason, headers=headers).status_code == 400
    bad_name = {"i": 0, "grade": 1, "annotator": "../../etc"}
    assert client.post("/api/label", json=bad_name, headers=headers).status_code == 400
    assert client.get("/api/item?i=-1").status_code == 400
    assert client.get("/api/item").status_code == 400


def test_blind_mode_hides_the_judge_until_graded(golden_dir: Path) -> None:
    client, headers = client_for(golden_dir, blind=True)
    item = client.get("/api/item?i=0").json()
    assert item["judge_hidden"] is True and item["judges"] == []
    refused = client.post("/api/label", json={"i": 0, "accept_judge": True}, headers=headers)
    assert refused.status_code == 400 and "blind mode" in refused.json()["error"]
    graded = client.post("/api/label", json={"i": 0, "grade": 1}, headers=headers).json()["item"]
    assert graded["judge_hidden"] is False and graded["judges"][0]["reason"].startswith("judge says")


def test_annotators_by_name_and_adjudication(golden_dir: Path) -> None:
    client, headers = client_for(golden_dir)
    i = find(client, "q1", "c02")
    client.post("/api/label", json={"i": i, "grade": 0}, headers=headers)
    bob_i = next(
        row["i"]
        for row in client.get("/api/queue?annotator=bob").json()["items"]
        if (row["query_id"], row["chunk_id"]) == ("q1", "c02")
    )
    client.post("/api/label", json={"i": bob_i, "grade": 3, "annotator": "bob"}, headers=headers)
    assert client.get("/api/queue?annotator=bob").json()["progress"]["done"] == 1
    rows = client.get("/api/adjudication").json()["items"]
    assert [(r["query_id"], r["chunk_id"], r["grades"], r["judge_grade"]) for r in rows] == [
        ("q1", "c02", {"ann": 0, "bob": 3}, 2)
    ]


def test_post_without_token_or_from_another_site_is_refused(golden_dir: Path) -> None:
    client, headers = client_for(golden_dir)
    body = {"i": 0, "grade": 1}
    assert client.post("/api/label", json=body).status_code == 403
    assert client.post("/api/label", json=body, headers={**headers, "X-Assay-Token": "guess"}).status_code == 403
    evil = {**headers, "Origin": "http://evil.example"}
    assert client.post("/api/label", json=body, headers=evil).status_code == 403
    cross = {**headers, "Sec-Fetch-Site": "cross-site"}
    assert client.post("/api/label", json=body, headers=cross).status_code == 403
    form = client.post("/api/label", data={"i": "0", "grade": "1"}, headers=headers)
    assert form.status_code == 415
    rebinding = client.get("/api/queue", headers={"Host": "evil.example:8765"})
    assert rebinding.status_code == 400
    assert client.get("/api/queue").json()["progress"]["done"] == 0


def test_body_size_limit(golden_dir: Path) -> None:
    client, headers = client_for(golden_dir)
    big = {"i": 0, "grade": 1, "reason": "x" * MAX_BODY}
    assert client.post("/api/label", json=big, headers=headers).status_code == 413

    def chunks():  # no Content-Length: the limit holds while reading
        for _ in range(70):
            yield b"x" * 1024

    streamed = client.post("/api/label", content=chunks(), headers={**headers, "Content-Type": "application/json"})
    assert streamed.status_code == 413


@pytest.mark.parametrize("field", ["chunk_text"])
def test_payload_is_returned_as_data_and_page_has_no_inline_data(golden_dir: Path, field: str) -> None:
    client, _ = client_for(golden_dir)
    i = find(client, "q1", "c03")
    item = client.get(f"/api/item?i={i}").json()
    assert PAYLOAD in item[field]  # JSON carries the text; the page writes it with textContent
    page = client.get("/").text
    assert "<script>window" not in page and "onerror" not in page
    script = client.get("/static/audit.js").text
    assert "innerHTML" not in script and "insertAdjacentHTML" not in script and "document.write" not in script


def test_unknown_queue_is_refused_before_the_annotator_is_checked(golden_dir: Path) -> None:
    with pytest.raises(AuditError, match="unknown queue 'random'; choose one of: stratified, disagreement"):
        create_app(golden_dir, annotator="<bad>", queue="random")
