"""Drafted reference tool calls in the audit: the question leads the queue and its item shows the calls beside the
reference answer (people confirm them as they confirm a drafted reference)."""

from __future__ import annotations

from pathlib import Path

from starlette.testclient import TestClient

from assay.audit.app import create_app
from assay.audit.queues import confirm_first
from assay.formats.golden import GoldenSet
from assay.types import ToolCall


def test_drafted_tool_calls_lead_the_queue_and_show_on_the_item(golden_dir: Path) -> None:
    assert confirm_first({"q1": {}, "q2": {"drafted_tool_calls": True}}) == {"q2"}
    golden = GoldenSet.load(golden_dir)
    first = golden.questions[-1]  # the last question: its items come first only because of the flag
    first.tool_calls = [ToolCall(name="calculator", arguments={"expression": "45 - 30"})]
    first.flags["drafted_tool_calls"] = True
    golden.save(golden_dir, overwrite=True)
    client = TestClient(create_app(golden_dir, annotator="ann"), base_url="http://127.0.0.1:8765")
    items = client.get("/api/queue").json()["items"]
    assert items[0]["query_id"] == first.id  # its items come first
    item = client.get("/api/item?i=0").json()
    assert item["tool_calls"] == ['calculator({"expression": "45 - 30"})']
    other = next(row["i"] for row in items if row["query_id"] != first.id)
    assert client.get(f"/api/item?i={other}").json()["tool_calls"] == []
