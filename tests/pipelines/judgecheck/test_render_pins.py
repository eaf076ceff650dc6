"""Pins of the judge card's rendering, on the card built by hand in card_fixture: the Markdown and HTML a reader
gets (written out here from the fixture's values), how each kind of figure is formatted, the headline, and the
folder rules of writing and loading a card."""

from __future__ import annotations

from pathlib import Path

import pytest
from card_fixture import small_card

from assay.errors import DatasetError, InputError
from assay.pipelines.judgecheck.card import Figure, KindCost, Section
from assay.pipelines.judgecheck.render import format_figure, headline, load_card, to_html, to_markdown, write_card

MARKDOWN = """# Judge card: openai/judge

12 pairs of 3 questions from golden `gold/<set>`, seed 7; prompts claims@v1, relevance@v2; assay 9.9.9.

## agreement with people

Baseline grades against people's grades.

| figure | value [95% interval] (items) |
|---|---|
| kappa at 1 | 0.500 [0.250, 0.750] (n=8) |
| leniency | -12.5p (n=8) |
| judge cut that best matches people's relevant | >= 2 |

## consistency

Repeats <asked> again.

| figure | value [95% interval] (items) |
|---|---|
| changed | 25.0% [0.0%, 50.0%] (n=4) |

## stuffing

Stuffed passages.

| figure | value [95% interval] (items) |
|---|---|
| mean change | 1.500 (n=2, 1 unscored) |
| rose | - (n=0, 3 unscored) |

### confusion matrix (rows: judge grade, columns: people's grade)

| judge \\ people | 0 | 1 | 2 | 3 |
|---|---|---|---|---|
| 0 | 1 | 0 | 0 | 0 |
| 1 | 0 | 2 | 0 | 0 |
| 2 | 0 | 0 | 3 | 0 |
| 3 | 4 | 0 | 0 | 5 |

## cost and unscored by kind

| kind | items | calls | cached | unscored | rejected | tokens/call | cost/call |
|---|---|---|---|---|---|---|---|
| baseline | 10 | 4 | 6 | 1 (10.0%) | 2 | 100 | $0.005000 |
| position | 0 | 0 | 0 | 0 (-) | 0 | - | unknown |
"""


def _table(head: list[str], rows: list[list[str]]) -> str:
    cells = "".join(f"<th>{h}</th>" for h in head)
    body = "".join("<tr>" + "".join(f"<td>{c}</td>" for c in r) + "</tr>" for r in rows)
    return f"<table><thead><tr>{cells}</tr></thead><tbody>{body}</tbody></table>"


COSTS = ["kind", "items", "calls", "cached", "unscored", "rejected", "tokens/call", "cost/call"]
HTML = (
    "<!doctype html><html><head><meta charset='utf-8'><title>Judge card: openai/judge</title><style>"
    "body{font-family:sans-serif;max-width:60em;margin:2em auto}td,th{border:1px solid #ccc;padding:.2em .5em}"
    "</style></head><body>"
    "<h1>Judge card: openai/judge</h1>"
    "<p>12 pairs of 3 questions from golden <code>gold/&lt;set&gt;</code>, seed 7.</p>"
    "<h2>agreement with people</h2><p>Baseline grades against people&#x27;s grades.</p>"
    + _table(
        ["figure", "value"],
        [
            ["kappa at 1", "0.500 [0.250, 0.750] (n=8)"],
            ["leniency", "-12.5p (n=8)"],
            ["judge cut that best matches people&#x27;s relevant", "&gt;= 2"],
        ],
    )
    + "<h2>consistency</h2><p>Repeats &lt;asked&gt; again.</p>"
    + _table(["figure", "value"], [["changed", "25.0% [0.0%, 50.0%] (n=4)"]])
    + "<h2>stuffing</h2><p>Stuffed passages.</p>"
    + _table(["figure", "value"], [["mean change", "1.500 (n=2, 1 unscored)"], ["rose", "- (n=0, 3 unscored)"]])
    + "<h3>confusion matrix (rows: judge, columns: people)</h3>"
    + _table(
        ["", "0", "1", "2", "3"],
        [["0", "1", "0", "0", "0"], ["1", "0", "2", "0", "0"], ["2", "0", "0", "3", "0"], ["3", "4", "0", "0", "5"]],
    )
    + "<h2>cost and unscored by kind</h2>"
    + _table(
        COSTS,
        [
            ["baseline", "10", "4", "6", "1 (10.0%)", "2", "100", "$0.005000"],
            ["position", "0", "0", "0", "0 (-)", "0", "-", "unknown"],
        ],
    )
    + "</body></html>\n"
)


def test_the_markdown_of_a_card() -> None:
    assert to_markdown(small_card()) == MARKDOWN


def test_the_html_of_a_card() -> None:
    assert to_html(small_card()) == HTML


def test_a_note_and_what_was_not_measured_come_before_the_sections() -> None:
    card = small_card(agreement_note="People graded <half> the items.", missing=["position: no group of 4", "x"])
    md = to_markdown(card)
    assert "assay 9.9.9.\n\nPeople graded <half> the items.\n\nNot measured: position: no group of 4.\n\n" in md
    assert "Not measured: x.\n\n## agreement with people" in md
    page = to_html(card)
    assert (
        "seed 7.</p><p>People graded &lt;half&gt; the items.</p><p>Not measured: position: no group of 4.</p>" in page
    )
    assert "<p>Not measured: x.</p><h2>agreement with people</h2>" in page


def test_a_card_without_agreement_has_no_agreement_section_or_confusion_matrix() -> None:
    card = small_card(agreement=None)
    md, page = to_markdown(card), to_html(card)
    assert "agreement with people" not in md and "confusion" not in md and md.count("## ") == 3
    assert "agreement with people" not in page and "confusion" not in page
    assert "assay 9.9.9.\n\n## consistency" in md


def test_a_model_name_is_escaped_in_the_page() -> None:
    page = to_html(small_card(model="openai/<b>"))
    assert "<h1>Judge card: openai/&lt;b&gt;</h1>" in page and "<title>Judge card: openai/&lt;b&gt;</title>" in page
    assert "<b>" not in page
    assert to_markdown(small_card(model="openai/<b>")).startswith("# Judge card: openai/<b>\n")


@pytest.mark.parametrize(
    ("key", "value", "low", "high", "shown"),
    [
        ("agreement.weighted_kappa", 0.21449, 0.1, 0.33, "0.214 [0.100, 0.330]"),
        ("stuffing.rise", 0.125, 0.0, 0.25, "12.5% [0.0%, 25.0%]"),
        ("length.fall", 0.5, None, None, "50.0%"),
        ("consistency.changed", 1.0, 1.0, 1.0, "100.0% [100.0%, 100.0%]"),
        ("generation.question_generation", 0.05, 0.0, 0.1, "5.0% [0.0%, 10.0%]"),
        ("generation.claims", 0.0, None, 0.2, "0.0%"),
        ("agreement.leniency", 0.031, -0.02, 0.08, "+3.1p [-2.0p, +8.0p]"),
        ("position.first_minus_last", -0.75, -1.0, -0.5, "-0.750 [-1.000, -0.500]"),
        ("stuffing.change", 1.5, 1.0, 2.0, "1.500 [1.000, 2.000]"),
    ],
)
def test_each_kind_of_figure_is_formatted_in_its_unit(
    key: str, value: float, low: float | None, high: float | None, shown: str
) -> None:
    assert format_figure(Figure(key=key, label="l", value=value, low=low, high=high, n=7)) == f"{shown} (n=7)"


def test_a_cost_row_with_calls_that_cost_nothing_is_zero_dollars() -> None:
    free = KindCost(
        kind="stuffing", items=3, calls=0, cached=3, unscored=0, prompt_tokens=0, completion_tokens=0, cost_usd=0.0
    )
    assert "| stuffing | 3 | 0 | 3 | 0 (0.0%) | 0 | - | $0 |" in to_markdown(small_card(costs=[free]))


def test_the_headline_is_the_five_figures_in_order_where_measured() -> None:
    assert [f.key for f in headline(small_card())] == ["agreement.kappa_at1", "consistency.changed", "stuffing.rise"]
    figures = [
        Figure(key=key, label=key, value=0.1, n=1)
        for key in ("position.changed", "injection_plain.rise", "stuffing.rise", "other.rise")
    ]
    card = small_card(sections=[Section(name="all", note="", figures=figures)], agreement=None)
    assert [f.key for f in headline(card)] == ["stuffing.rise", "injection_plain.rise", "position.changed"]


def test_a_card_is_written_as_three_files_and_read_back(tmp_path: Path) -> None:
    card = small_card()
    write_card(card, tmp_path / "card")
    assert sorted(p.name for p in (tmp_path / "card").iterdir()) == ["card.html", "card.json", "card.md"]
    assert (tmp_path / "card" / "card.md").read_text(encoding="utf-8") == MARKDOWN
    assert (tmp_path / "card" / "card.html").read_text(encoding="utf-8") == HTML
    raw = (tmp_path / "card" / "card.json").read_text(encoding="utf-8")
    assert raw.startswith('{\n  "format_version": 1,\n  "assay_version": "9.9.9",') and raw.endswith("}\n")
    assert load_card(tmp_path / "card") == card == load_card(tmp_path / "card" / "card.json")


def test_a_card_folder_is_replaced_but_another_folder_is_refused(tmp_path: Path) -> None:
    write_card(small_card(), tmp_path / "card")
    write_card(small_card(model="openai/other"), tmp_path / "card")
    assert load_card(tmp_path / "card").model == "openai/other"
    (tmp_path / "mine").mkdir()
    (tmp_path / "mine" / "notes.txt").write_text("keep me")
    with pytest.raises(InputError) as caught:
        write_card(small_card(), tmp_path / "mine")
    assert str(caught.value) == (
        f"-o {tmp_path / 'mine'}: the folder exists and holds no card.json; give a new or empty folder"
    )
    assert (tmp_path / "mine" / "notes.txt").read_text() == "keep me"
    (tmp_path / "empty").mkdir()
    write_card(small_card(), tmp_path / "empty")
    assert load_card(tmp_path / "empty").model == "openai/judge"


@pytest.mark.parametrize("content", ["{not json", '{"format_version": 1}', "[]"])
def test_a_file_that_is_not_a_card_is_named_with_the_fix(tmp_path: Path, content: str) -> None:
    (tmp_path / "card.json").write_text(content)
    with pytest.raises(DatasetError) as caught:
        load_card(tmp_path)
    message = str(caught.value)
    assert message.startswith(f"{tmp_path / 'card.json'}: not a judge card (")
    assert message.endswith("); write one with `assay judge-check`")
    with pytest.raises(DatasetError, match="not a judge card"):
        load_card(tmp_path / "missing.json")


def test_a_card_is_utf8_whatever_the_locale(tmp_path: Path, ascii_locale_env: dict[str, str]) -> None:
    """Written and read back by a Python whose locale encoding is ASCII (C locale, no coercion, no UTF-8 mode)."""
    import subprocess
    import sys

    script = (
        "import sys; sys.path.insert(0, sys.argv[2]); from pathlib import Path; from card_fixture import small_card; "
        "from assay.pipelines.judgecheck.render import load_card, write_card; "
        "card = small_card(model='openai/j\\u00fcdge', agreement_note='R\\u00e9sum\\u00e9 \\u2014 graded'); "
        "write_card(card, Path(sys.argv[1])); print(load_card(Path(sys.argv[1])).model == card.model)"
    )
    here = str(Path(__file__).parent)
    done = subprocess.run(
        [sys.executable, "-c", script, str(tmp_path / "card"), here],
        env=ascii_locale_env,
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0 and done.stdout.strip() == "True", done.stderr
    assert "# Judge card: openai/j\u00fcdge" in (tmp_path / "card" / "card.md").read_text(encoding="utf-8")
    assert "R\u00e9sum\u00e9 \u2014 graded" in (tmp_path / "card" / "card.html").read_text(encoding="utf-8")
    assert load_card(tmp_path / "card").model == "openai/j\u00fcdge"


def test_a_card_is_utf8_under_an_ascii_locale_in_this_process(tmp_path: Path) -> None:
    """The same in this process, with LC_CTYPE switched to C for the call (open() then defaults to ASCII), where
    UTF-8 mode is off; in UTF-8 mode every default is UTF-8 and the subprocess test above carries the check."""
    import locale
    import sys

    card = small_card(model="openai/j\u00fcdge", agreement_note="R\u00e9sum\u00e9 \u2014 graded")
    before = locale.setlocale(locale.LC_CTYPE)
    try:
        locale.setlocale(locale.LC_CTYPE, "C")
        if sys.flags.utf8_mode or locale.getpreferredencoding(False).lower() in ("utf-8", "utf8"):
            pytest.skip("this interpreter reads and writes UTF-8 by default whatever the locale")
        write_card(card, tmp_path / "card")
        loaded = load_card(tmp_path / "card")
    finally:
        locale.setlocale(locale.LC_CTYPE, before)
    assert loaded == card
    assert "# Judge card: openai/j\u00fcdge" in (tmp_path / "card" / "card.md").read_text(encoding="utf-8")
    assert "R\u00e9sum\u00e9 \u2014 graded" in (tmp_path / "card" / "card.html").read_text(encoding="utf-8")
