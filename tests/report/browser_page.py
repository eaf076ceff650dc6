"""Opening a report in headless Chromium for the browser tests, with every problem the page meets collected."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any


@contextmanager
def opened_report(browser: Any, path: Path) -> Iterator[Any]:
    """``path`` opened at 1280 x 900; ``page.problems`` collects console errors and warnings, page errors, dialogs
    and any request that leaves the file (none is expected)."""
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    page = context.new_page()
    problems: list[str] = []
    page.on("console", lambda m: problems.append(f"{m.type}: {m.text}") if m.type in {"error", "warning"} else None)
    page.on("pageerror", lambda e: problems.append(f"page error: {e}"))
    page.on("dialog", lambda d: (problems.append(f"dialog: {d.message}"), d.dismiss()))
    page.on("request", lambda r: None if r.url.startswith("file://") else problems.append(f"request: {r.url}"))
    page.goto(path.as_uri())
    page.wait_for_load_state("load")
    page.problems = problems
    try:
        yield page
    finally:
        context.close()
