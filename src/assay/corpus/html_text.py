"""HTML to text for the corpus: visible text with headings as ``#`` lines, and the page title.

Parsed with BeautifulSoup on the stdlib ``html.parser``; ``script``, ``style``, ``nav``, ``noscript``, ``template``,
``head``, ``iframe``, ``svg`` and ``form`` are dropped.
"""

from __future__ import annotations

import re
from typing import Any

__all__ = ["html_to_text"]

_PARA, _LINE = "\u2029", "\u2028"  # paragraph and line separators, as markers while flattening HTML
_HTML_DROP = ["script", "style", "nav", "noscript", "template", "head", "iframe", "svg", "form"]
_HTML_BLOCKS = [
    "p", "div", "section", "article", "main", "header", "footer", "aside", "ul", "ol", "table", "blockquote",
    "pre", "figure", "figcaption", "dl", "address", "hr",
]  # fmt: skip


def html_to_text(html: str) -> tuple[str, str | None]:
    """Visible text of an HTML page with headings as ``#`` lines, and its title (``<title>``, else first ``<h1>``).

    Whitespace in the source is folded (as a browser does, ``<pre>`` included); blocks (paragraphs, divs, lists,
    tables) are separated by one blank line, list items start a line with ``- ``, table rows and ``<br>`` end a line.
    """
    from bs4 import BeautifulSoup

    soup = BeautifulSoup(html, "html.parser")
    title = _html_title(soup)
    for tag in soup.find_all(_HTML_DROP):
        tag.decompose()
    for level in range(1, 7):
        for tag in soup.find_all(f"h{level}"):
            tag.replace_with(f"{_PARA}{'#' * level} {' '.join(tag.get_text(' ').split())}{_PARA}")
    for tag in soup.find_all(["br", "tr", "dt", "dd"]):
        tag.insert_after(_LINE)
    for tag in soup.find_all("li"):
        tag.insert_before(f"{_LINE}- ")
    for tag in soup.find_all(["td", "th"]):
        tag.insert_after(" ")
    for tag in soup.find_all(_HTML_BLOCKS):
        if tag.find_parent("li") is None:  # a paragraph inside a list item stays on the item's line
            tag.insert_before(_PARA)
            tag.insert_after(_PARA)
    text = re.sub(r"[ \t\n\r\f\v\xa0]+", " ", soup.get_text())
    breaks = f"[ {_PARA}{_LINE}]*[{_PARA}{_LINE}][ {_PARA}{_LINE}]*"
    text = re.sub(breaks, lambda m: "\n\n" if _PARA in m.group() else "\n", text)
    return text.strip(), title


def _html_title(soup: Any) -> str | None:
    for tag in (soup.title, soup.find("h1")):
        if tag is not None:
            text = " ".join(tag.get_text(" ").split())
            if text:
                return text
    return None
