"""The terminal output of an evaluation (rich): a one-screen summary by default, everything with ``verbose``.

Both open with the header (golden set, judge, k, labels; the judge card's lines with ``verbose``) and the verdict
(:mod:`assay.report.verdict`: the lead, the ranking with letters, the judge's trust, cost and latency, the caveats).
Of the caveats, the summary prints the :data:`TERMINAL_CAVEATS` most severe (the unscored share always among them,
:func:`assay.report.caveats.first_caveats`) and then "N more in REPORT" (the ``report`` file when one was written,
else report.html and results.json); ``verbose`` prints them all. Below the verdict,
:mod:`assay.report.terminal_summary` prints the summary's matrices (at most 60 lines for four runs at 80 columns)
and :mod:`assay.report.terminal_verbose` everything ``assay eval --verbose`` adds.
"""

from __future__ import annotations

from pathlib import Path

from rich.console import Console
from rich.text import Text

from assay.report import _agreement as agr
from assay.report import _format as fmt
from assay.report.caveats import first_caveats
from assay.report.terminal_summary import print_summary
from assay.report.terminal_verbose import print_details
from assay.report.verdict import build_verdict
from assay.results import EvalResult, Verdict

__all__ = ["TERMINAL_CAVEATS", "render_terminal"]

# caveats the summary prints, the most severe first; the rest are counted (three keep four runs within 60 lines)
TERMINAL_CAVEATS = 3


def render_terminal(result: EvalResult, console: Console, *, verbose: bool = False, report: Path | None = None) -> None:
    """Print the summary of ``result`` on ``console`` (everything with ``verbose``). ``report``: the report file
    written with it, named where the caveats left out are. Text from the data is never read as rich markup."""
    console.print(_header(result, cards=verbose))  # the summary's verdict says what the judge card says
    console.print()
    _print_verdict(console, build_verdict(result), room=None if verbose else TERMINAL_CAVEATS, report=report)
    if verbose:
        print_details(console, result)
    else:
        print_summary(console, result)


def _print_verdict(console: Console, verdict: Verdict, *, room: int | None, report: Path | None) -> None:
    """The verdict: a title, its sentences as bullets, then the caveats (each sentence wraps under its bullet): all
    of them when ``room`` is None, else the first ``room`` and a line saying where the others are."""
    console.print(Text("Verdict", style="bold"))
    for line in verdict.lines:
        console.print(Text(f"• {line}"), overflow="fold")
    shown, left = (verdict.caveats, 0) if room is None else first_caveats(verdict.caveats, room)
    for caveat in shown:
        console.print(Text(f"! {caveat}", style="yellow"), overflow="fold")
    if left:
        where = str(report) if report is not None else "report.html and results.json"
        console.print(Text(f"! {left} more caveat{'s' if left > 1 else ''} in {where}", style="yellow"),
                      overflow="fold")  # fmt: skip


def _header(result: EvalResult, *, cards: bool = True) -> Text:
    text = Text()
    text.append("assay evaluation", style="bold")
    text.append(f"  ·  assay {result.assay_version}  ·  golden {result.golden}\n")
    text.append(f"judge: {result.judge}" if result.judge else fmt.NO_JUDGE, style="" if result.judge else "yellow")
    ks = ", ".join(str(k) for k in result.k_values)
    text.append(f"  ·  k = {ks}  ·  {len(result.runs)} run(s)")
    labels = agr.labels_line(result)
    if labels is not None:
        text.append(f"  ·  labels: {labels}")
    for line in fmt.judge_card_lines(result) if cards else []:
        found = result.judge_card is not None and result.judge_card.found
        text.append(f"\n{line}", style="" if found else "yellow")
    return text
