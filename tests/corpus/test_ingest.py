"""Ingest: formats, ids, encodings, and the documented warnings and errors for bad input."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from assay.corpus import ingest
from assay.corpus.html_text import html_to_text
from assay.corpus.ingest import decode_text
from assay.errors import CorpusError, FormatError
from assay.text import content_hash

CORPUS = Path(__file__).parents[1] / "fixtures" / "corpus"


def _docs(result_docs: list) -> dict:  # type: ignore[type-arg]
    return {d.id: d for d in result_docs}


def test_folder_ids_are_relative_posix_paths_in_sorted_order() -> None:
    result = ingest(CORPUS / "good")
    assert [d.id for d in result.documents] == [
        "bom.txt",
        "faq.html",
        "beir-1",
        "2",
        "kb-101",
        "jsonl/docs.jsonl:2",
        "latin1.txt",
        "notes.txt",
        "policies/refunds.md",
    ]
    assert ".hidden.txt" not in {d.source for d in result.documents}
    assert result.skipped == []
    for doc in result.documents:
        assert doc.content_hash == content_hash(doc.text)


def test_two_ingests_are_identical() -> None:
    first, second = ingest(CORPUS / "good"), ingest(CORPUS / "good")
    assert [d.model_dump() for d in first.documents] == [d.model_dump() for d in second.documents]
    assert [c.model_dump() for c in first.chunks_given] == [c.model_dump() for c in second.chunks_given]


def test_markdown_title_front_matter_and_headings() -> None:
    doc = _docs(ingest(CORPUS / "good").documents)["policies/refunds.md"]
    assert doc.title == "Refund policy (2024 edition)"  # front matter title wins over the first heading
    assert doc.metadata == {"format": "md", "owner": "Support team"}
    assert doc.text.startswith("# Refund policy\n\nThis policy explains")
    assert "### Exceptions\n" in doc.text and "owner:" not in doc.text


def test_markdown_title_falls_back_to_first_heading(tmp_path: Path) -> None:
    (tmp_path / "a.md").write_text("Intro line.\n\n## Real title ##\n\nBody.\n", encoding="utf-8")
    assert ingest(tmp_path).documents[0].title == "Real title"


def test_html_drops_scripts_styles_and_navigation_and_keeps_headings() -> None:
    doc = _docs(ingest(CORPUS / "good").documents)["faq.html"]
    assert doc.title == "Shipping FAQ | Lumen Outfitters"
    hidden_texts = ("do-not-index-this-script", "another-script-body", "font-family", "navigation-menu", "noscript")
    for hidden in hidden_texts:
        assert hidden not in doc.text
    assert doc.text == (
        "# Shipping questions\n\nWe ship to all countries in the European Union.\n\n"
        "## How long does delivery take?\n\nStandard delivery takes 2 to 4 business days. Express delivery arrives "
        "the next business day when you order before 14:00.\n\n## What does shipping cost?\n\n"
        "- Orders over 50 euros ship for free.\n- Other orders cost 4.95 euros."
    )


def test_html_title_from_h1_when_there_is_no_title_element() -> None:
    text, title = html_to_text("<body><h1> Returns  desk </h1><p>Open <br>daily.</p><!-- a comment --></body>")
    assert title == "Returns desk"
    assert text == "# Returns desk\n\nOpen\ndaily."


def test_jsonl_documents_beir_and_given_chunks() -> None:
    result = ingest(CORPUS / "good")
    docs = _docs(result.documents)
    assert docs["kb-101"].title == "Warranty" and docs["kb-101"].metadata == {"format": "jsonl", "lang": "en"}
    assert docs["kb-101"].source == "jsonl/docs.jsonl:1"
    assert docs["beir-1"].title == "Loyalty points"
    assert docs["2"].title is None  # BEIR's empty title, and an integer _id becomes a string
    assert docs["jsonl/docs.jsonl:2"].text.startswith("A document without an id")
    given = result.chunks_given
    assert [(c.id, c.doc_id, c.ordinal, c.text) for c in given] == [
        ("manual-c1", "manual", 0, "Wash the jacket at 30 degrees."),
        ("manual-c2", "manual", 1, "Do not tumble dry."),
    ]
    assert given[0].model_extra == {"custom": "kept"} and given[0].metadata == {}  # passed through untouched


def test_encodings_bom_crlf_and_detected_legacy_encoding() -> None:
    result = ingest(CORPUS / "good")
    docs = _docs(result.documents)
    assert docs["bom.txt"].text == "Windows line ends and a byte order mark.\nSecond line.\n"
    assert "Après cette période, un crédit en magasin" in docs["latin1.txt"].text
    assert result.warnings == ["latin1.txt: not UTF-8, decoded as cp1252 (detected); re-save as UTF-8 to be sure."]


def test_utf16_with_bom_is_read(tmp_path: Path) -> None:
    (tmp_path / "u16.txt").write_bytes("Grüße aus Köln.\n".encode("utf-16"))
    assert ingest(tmp_path).documents[0].text == "Grüße aus Köln.\n"


def test_bad_files_are_skipped_with_reasons(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "pypdf", None)  # behave as if the pdf extra is not installed
    result = ingest(CORPUS / "bad")
    assert [d.id for d in result.documents] == ["good.txt"]
    assert dict(result.skipped) == {
        "binary.txt": "binary file (NUL bytes)",
        "blank.md": "empty file",
        "empty.txt": "empty file",
        "picture.png": "unsupported file type .png (assay reads .txt, .md, .markdown, .html, .htm, .jsonl, .pdf)",
        "report.pdf": "pdf support not installed (pip install 'assay[pdf]')",
        "undecodable.txt": "undecodable text: not UTF-8 and no encoding fits; re-save the file as UTF-8",
    }
    assert "report.pdf: PDF support is not installed; run pip install 'assay[pdf]'." in result.warnings
    assert "skipped undecodable.txt: undecodable text: not UTF-8 and no encoding fits; re-save the file as UTF-8." in (
        result.warnings
    )


def test_decode_text_refuses_gibberish() -> None:
    assert decode_text(bytes(range(128, 256)) * 3) == (None, None)
    assert decode_text(b"plain") == ("plain", "utf-8")


def test_nothing_usable_is_an_error_naming_the_reasons(tmp_path: Path) -> None:
    (tmp_path / "e.txt").write_bytes(b"")
    (tmp_path / "b.txt").write_bytes(b"\x00\x01")
    expected = r"no usable documents .*2 file\(s\) skipped: b\.txt: binary file.*e\.txt: empty"
    with pytest.raises(CorpusError, match=expected):
        ingest(tmp_path)


def test_empty_folder_is_an_error_with_the_fix(tmp_path: Path) -> None:
    (tmp_path / ".only-hidden").write_text("x")
    with pytest.raises(CorpusError, match=r"holds no files \(hidden files are ignored\): point assay at the folder"):
        ingest(tmp_path)


def test_missing_path_is_an_error(tmp_path: Path) -> None:
    with pytest.raises(CorpusError, match="does not exist"):
        ingest(tmp_path / "nope")


def test_duplicate_ids_name_both_sources() -> None:
    with pytest.raises(CorpusError, match=r"duplicate document id 'shared-id': from a\.jsonl:1 and from b\.jsonl:1"):
        ingest(CORPUS / "dup")


def test_jsonl_id_clashing_with_a_file_path(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("From a file.")
    (tmp_path / "b.jsonl").write_text('{"id": "a.txt", "text": "From a line."}\n')
    with pytest.raises(CorpusError, match=r"'a\.txt': from a\.txt and from b\.jsonl:1"):
        ingest(tmp_path)


def test_duplicate_given_chunk_ids(tmp_path: Path) -> None:
    line = '{"id": "c1", "doc_id": "d", "text": "x"}\n'
    (tmp_path / "c.jsonl").write_text(line + line)
    with pytest.raises(CorpusError, match=r"duplicate chunk id 'c1': at c\.jsonl:1 and at c\.jsonl:2"):
        ingest(tmp_path)


def test_bad_jsonl_lines_name_file_and_line(tmp_path: Path) -> None:
    (tmp_path / "d.jsonl").write_text('{"id": "1", "text": "ok"}\n{"id": "2", "body": "no text"}\n')
    with pytest.raises(FormatError, match=r"d\.jsonl:2: no string field 'text'"):
        ingest(tmp_path)
    (tmp_path / "d.jsonl").write_text('{"id": "1", "text": "ok"}\n\n{"id": 2,\n')
    with pytest.raises(FormatError, match=r"d\.jsonl:3: invalid JSON"):
        ingest(tmp_path)
    (tmp_path / "d.jsonl").write_text('{"id": "c", "doc_id": "d", "text": "x", "ordinal": "first"}\n')
    with pytest.raises(FormatError, match=r"d\.jsonl:1: field 'ordinal'"):
        ingest(tmp_path)


def test_assay_header_in_user_jsonl_is_understood(tmp_path: Path) -> None:
    (tmp_path / "c.jsonl").write_text(
        '{"assay": "chunks", "version": 1}\n{"id": "c", "doc_id": "d", "ordinal": 4, "text": "x", "heading_path": []}\n'
    )
    result = ingest(tmp_path)
    assert [(c.id, c.ordinal) for c in result.chunks_given] == [("c", 4)]


def test_list_of_files_and_root(tmp_path: Path) -> None:
    (tmp_path / "x").mkdir()
    (tmp_path / "x" / "a.txt").write_text("Alpha.")
    (tmp_path / "y.md").write_text("# Why\n\nBeta.")
    result = ingest([tmp_path / "x" / "a.txt", tmp_path / "y.md"])
    assert [d.id for d in result.documents] == ["x/a.txt", "y.md"]
    assert [d.id for d in ingest(tmp_path / "x" / "a.txt").documents] == ["a.txt"]
    with pytest.raises(CorpusError, match="outside the corpus root"):
        ingest([tmp_path / "y.md"], root=tmp_path / "x")


def test_case_is_kept_in_ids(tmp_path: Path) -> None:
    (tmp_path / "ReadMe.TXT").write_text("Upper case extension.")
    assert [d.id for d in ingest(tmp_path).documents] == ["ReadMe.TXT"]


def test_one_tiny_document_is_a_corpus() -> None:
    result = ingest(CORPUS / "tiny")
    assert [(d.id, d.text) for d in result.documents] == [("one.txt", "Hi there.\n")]


def test_pdf_text_is_read_when_pypdf_is_installed(tmp_path: Path) -> None:
    pypdf = pytest.importorskip("pypdf")
    writer = pypdf.PdfWriter()
    writer.add_blank_page(width=200, height=200)
    with (tmp_path / "blank.pdf").open("wb") as handle:
        writer.write(handle)
    (tmp_path / "t.txt").write_text("Text.")
    result = ingest(tmp_path)
    assert dict(result.skipped) == {"blank.pdf": "PDF with no extractable text (scanned images need OCR first)"}


def _text_pdf(pages: list[str]) -> bytes:
    """A minimal PDF whose pages draw the given text in Helvetica, with a correct cross-reference table."""
    objects = ["<< /Type /Catalog /Pages 2 0 R >>", ""]
    kids = []
    for text in pages:
        stream = f"BT /F1 12 Tf 72 712 Td ({text}) Tj ET".encode()
        page_no, content_no = len(objects) + 1, len(objects) + 2
        kids.append(f"{page_no} 0 R")
        objects.append(
            f"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents {content_no} 0 R "
            "/Resources << /Font << /F1 << /Type /Font /Subtype /Type1 /BaseFont /Helvetica >> >> >> >>"
        )
        objects.append(f"<< /Length {len(stream)} >>\nstream\n{stream.decode()}\nendstream")
    objects[1] = f"<< /Type /Pages /Kids [{' '.join(kids)}] /Count {len(kids)} >>"
    out = bytearray(b"%PDF-1.4\n")
    offsets = []
    for number, body in enumerate(objects, start=1):
        offsets.append(len(out))
        out += f"{number} 0 obj\n{body}\nendobj\n".encode()
    xref = len(out)
    out += f"xref\n0 {len(objects) + 1}\n0000000000 65535 f \n".encode()
    out += "".join(f"{offset:010d} 00000 n \n" for offset in offsets).encode()
    out += f"trailer\n<< /Size {len(objects) + 1} /Root 1 0 R >>\nstartxref\n{xref}\n%%EOF\n".encode()
    return bytes(out)


def test_pdf_pages_become_one_document(tmp_path: Path) -> None:
    pytest.importorskip("pypdf")
    (tmp_path / "policy.pdf").write_bytes(_text_pdf(["Refunds are due within 30 days.", "Returns need a receipt."]))
    result = ingest(tmp_path)
    assert [d.id for d in result.documents] == ["policy.pdf"]
    text = result.documents[0].text
    assert "Refunds are due within 30 days." in text and "Returns need a receipt." in text
    assert text.index("Refunds") < text.index("Returns")
    assert result.skipped == []


def test_broken_pdf_is_skipped_and_named(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    pytest.importorskip("pypdf")
    (tmp_path / "broken.pdf").write_bytes(b"%PDF-1.4\nthis is not a pdf body")
    (tmp_path / "ok.txt").write_text("Fine.")
    result = ingest(tmp_path)
    assert [d.id for d in result.documents] == ["ok.txt"]
    assert [name for name, _ in result.skipped] == ["broken.pdf"]
    assert result.skipped[0][1].startswith("unreadable PDF (")
    assert not [r for r in caplog.records if r.name.startswith("pypdf")]  # its repair notes stay out of the terminal
