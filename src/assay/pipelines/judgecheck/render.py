"""Write a judge card as ``card.json`` (the record), ``card.md`` and ``card.html`` (one self-contained page).

The folder appears complete or not at all (:func:`assay.formats.atomic.atomic_dir`); a folder that exists and is
not a card is never replaced.
"""

from __future__ import annotations

import html
from pathlib import Path

from pydantic import ValidationError

from assay.errors import DatasetError, InputError
from assay.formats.atomic import atomic_dir
from assay.pipelines.judgecheck.card import Figure, JudgeCard, KindCost

__all__ = ["CARD_FILE", "format_figure", "headline", "load_card", "to_html", "to_markdown", "write_card"]

CARD_FILE = "card.json"
HEADLINE = (
    "agreement.kappa_at1",
    "consistency.changed",
    "stuffing.rise",
    "injection_plain.rise",
    "position.changed",
)
_SHARES = ("rise", "fall", "changed", "leniency", "question_generation", "claims")


def format_figure(f: Figure) -> str:
    """``0.214 [0.102, 0.330] (n=40)``; shares in percent; ``-`` for no value; unscored items named."""
    share = f.key.endswith(_SHARES)

    def num(x: float | None) -> str:
        if x is None:
            return "-"
        return f"{100 * x:+.1f}p" if f.key.endswith("leniency") else f"{100 * x:.1f}%" if share else f"{x:.3f}"

    interval = f" [{num(f.low)}, {num(f.high)}]" if f.low is not None and f.high is not None else ""
    left = f", {f.unscored} unscored" if f.unscored else ""
    return f"{num(f.value)}{interval} (n={f.n}{left})"


def headline(card: JudgeCard) -> list[Figure]:
    """The card's headline figures: kappa >= 1, consistency, stuffing, plain injection, position (where measured)."""
    return [f for f in (card.figure(key) for key in HEADLINE) if f is not None]


def _cost_row(c: KindCost) -> list[str]:
    per_call = "unknown" if c.cost_usd is None else f"${c.cost_usd / c.calls:.6f}" if c.calls else "$0"
    rate = f"{100 * c.unscored / c.items:.1f}%" if c.items else "-"
    tokens = f"{(c.prompt_tokens + c.completion_tokens) / c.calls:.0f}" if c.calls else "-"
    return [
        c.kind,
        str(c.items),
        str(c.calls),
        str(c.cached),
        f"{c.unscored} ({rate})",
        str(c.rejected),
        tokens,
        per_call,
    ]


_COST_HEAD = ["kind", "items", "calls", "cached", "unscored", "rejected", "tokens/call", "cost/call"]


def _rows(card: JudgeCard) -> list[tuple[str, str, list[list[str]]]]:
    """(title, note, rows of [figure, value]) per section, agreement first."""
    out = []
    if card.agreement is not None:
        rows = [[f.label, format_figure(f)] for f in card.agreement.figures]
        rows.append(["judge cut that best matches people's relevant", f">= {card.agreement.best_cut}"])
        out.append(("agreement with people", "Baseline grades against people's grades.", rows))
    for s in card.sections:
        out.append((s.name, s.note, [[f.label, format_figure(f)] for f in s.figures]))
    return out


def _md_table(head: list[str], rows: list[list[str]]) -> str:
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    return "\n".join([*lines, *("| " + " | ".join(r) + " |" for r in rows)])


def to_markdown(card: JudgeCard) -> str:
    """The card as Markdown."""
    source = card.source
    parts = [
        f"# Judge card: {card.model}",
        f"{source['items']} pairs of {source['queries']} questions from {source['kind']} `{source['path']}`, "
        f"seed {card.settings['seed']}; prompts {', '.join(sorted(card.prompts))}; assay {card.assay_version}.",
    ]
    if card.agreement_note:
        parts.append(card.agreement_note)
    parts += [f"Not measured: {line}." for line in card.missing]
    for title, note, rows in _rows(card):
        parts += [f"## {title}", note, _md_table(["figure", "value [95% interval] (items)"], rows)]
    if card.agreement is not None:
        head = ["judge \\ people", "0", "1", "2", "3"]
        confusion = [[str(g), *map(str, row)] for g, row in enumerate(card.agreement.confusion)]
        parts += ["### confusion matrix (rows: judge grade, columns: people's grade)", _md_table(head, confusion)]
    parts += ["## cost and unscored by kind", _md_table(_COST_HEAD, [_cost_row(c) for c in card.costs])]
    return "\n\n".join(parts) + "\n"


def _html_table(head: list[str], rows: list[list[str]]) -> str:
    cells = "".join(f"<th>{html.escape(h)}</th>" for h in head)
    body = "".join("<tr>" + "".join(f"<td>{html.escape(c)}</td>" for c in r) + "</tr>" for r in rows)
    return f"<table><thead><tr>{cells}</tr></thead><tbody>{body}</tbody></table>"


def to_html(card: JudgeCard) -> str:
    """The card as one self-contained HTML page."""
    source = card.source
    parts = [
        f"<h1>Judge card: {html.escape(card.model)}</h1>",
        f"<p>{source['items']} pairs of {source['queries']} questions from {html.escape(str(source['kind']))} "
        f"<code>{html.escape(str(source['path']))}</code>, seed {card.settings['seed']}.</p>",
    ]
    if card.agreement_note:
        parts.append(f"<p>{html.escape(card.agreement_note)}</p>")
    parts += [f"<p>Not measured: {html.escape(line)}.</p>" for line in card.missing]
    for title, note, rows in _rows(card):
        parts += [
            f"<h2>{html.escape(title)}</h2>",
            f"<p>{html.escape(note)}</p>",
            _html_table(["figure", "value"], rows),
        ]
    if card.agreement is not None:
        confusion = [[str(g), *map(str, row)] for g, row in enumerate(card.agreement.confusion)]
        parts += [
            "<h3>confusion matrix (rows: judge, columns: people)</h3>",
            _html_table(["", "0", "1", "2", "3"], confusion),
        ]
    parts += ["<h2>cost and unscored by kind</h2>", _html_table(_COST_HEAD, [_cost_row(c) for c in card.costs])]
    style = "body{font-family:sans-serif;max-width:60em;margin:2em auto}td,th{border:1px solid #ccc;padding:.2em .5em}"
    head = f"<meta charset='utf-8'><title>Judge card: {html.escape(card.model)}</title><style>{style}</style>"
    return f"<!doctype html><html><head>{head}</head><body>{''.join(parts)}</body></html>\n"


def write_card(card: JudgeCard, folder: Path) -> None:
    """Write ``card.json``, ``card.md`` and ``card.html`` into ``folder`` (replacing an earlier card there)."""
    if folder.is_dir() and any(folder.iterdir()) and not (folder / CARD_FILE).is_file():
        raise InputError(f"-o {folder}: the folder exists and holds no {CARD_FILE}; give a new or empty folder")
    with atomic_dir(folder, overwrite=True) as tmp:
        (tmp / CARD_FILE).write_text(card.model_dump_json(indent=2) + "\n", encoding="utf-8")
        (tmp / "card.md").write_text(to_markdown(card), encoding="utf-8")
        (tmp / "card.html").write_text(to_html(card), encoding="utf-8")


def load_card(path: Path) -> JudgeCard:
    """A card from ``card.json`` (or a folder holding it); a bad file raises naming it and the fix."""
    file = path / CARD_FILE if path.is_dir() else path
    try:
        return JudgeCard.model_validate_json(file.read_text(encoding="utf-8"))
    except (OSError, ValidationError, ValueError) as exc:
        raise DatasetError(f"{file}: not a judge card ({exc}); write one with `assay judge-check`") from None
