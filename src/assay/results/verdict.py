"""The answer first: the verdict record the reports render (the leader, each run's place, cost), and the offline
judge's warning."""

from __future__ import annotations

from pydantic import Field

from assay.results._model import _Model

__all__ = ["OFFLINE_WARNING", "SystemCost", "Verdict", "VerdictLead", "VerdictPlace"]


class VerdictLead(_Model):
    """The leader on the primary metric against the runner-up (or, when those two were not compared, against the
    run it was compared with): the paired comparison's delta (leader − other), family-adjusted interval and p, the
    questions both scored, and whether the evidence supports the lead (the comparison is significant). The leader is
    never behind the other on those questions (``delta`` >= 0, or <= 0 for a lower-is-better metric)."""

    leader: str
    other: str
    delta: float
    low: float
    high: float
    p_adjusted: float
    n: int
    supported: bool
    d_z: float | None = None
    # the two runs' means over those n questions, and whether n is fewer than one of them scored (then the headline
    # gives these means and says on how many questions; each run's own mean is over other questions)
    leader_mean: float | None = None
    other_mean: float | None = None
    shared: bool = False


class VerdictPlace(_Model):
    """One run's place on the primary metric: its mean and interval, its letters, its place and its ties.

    ``groups`` are the run's letters in a compact letter display over every comparison (``"ab"``): two runs that
    share a letter are not reliably different, two that share none are (a pair not compared counts as not
    distinguished); "" for a run with no mean. ``place``: walking down by mean, a run keeps the current place
    unless a run already at it differs significantly from it, so two significantly different runs never share a
    place; a run with no mean comes after all others. ``ties``: the runs it was compared with and found not reliably
    different from."""

    run: str
    mean: float | None
    low: float | None = None
    high: float | None = None
    place: int
    groups: str = ""  # "" in results written before the letters
    ties: list[str] = Field(default_factory=list)


class SystemCost(_Model):
    """What answering cost a system when its run recorded it (``assay run``): money and latency percentiles (ms)."""

    run: str
    cost_usd: float | None = None
    p50_ms: float | None = None
    p95_ms: float | None = None


class Verdict(_Model):
    """The answer first: what the evaluation says, for a reader deciding between systems.

    Built in one place from an :class:`EvalResult` (:func:`assay.report.verdict.build_verdict`); the terminal,
    Markdown and HTML reports only render it. The structured fields carry the figures; ``lines`` words them, one
    sentence each, in the order the reports print them: the lead (or the one run's figure), the ranking with letters,
    what the history is worth (``history``, with a rewrites run and a turns run of a conversational golden set), the
    pairwise preferences (``preference``, with ``--pairwise``), the judged criteria measured against people
    (``criteria``, once people labelled enough of their verdicts), the
    judge's trust, cost and latency when known, then the ``caveats`` (every one that applies, most severe first)."""

    metric: str | None  # the primary metric
    runs: int
    lead: VerdictLead | None = None
    places: list[VerdictPlace] = Field(default_factory=list)
    judge_measured: bool = False  # a judge card or audited labels measured the judge against people
    systems: list[SystemCost] = Field(default_factory=list)
    headline: str
    ranking: str | None = None
    judge: str
    cost: str | None = None
    caveats: list[str] = Field(default_factory=list)
    history: list[str] = Field(default_factory=list)  # a conversational evaluation: each history gain, a sentence
    preference: str | None = None  # --pairwise: the pairs' verdicts from the Bradley-Terry intervals
    criteria: str | None = None  # judged criteria validated against people: their agreement

    @property
    def lines(self) -> list[str]:
        """The sentences in print order (caveats excluded: they are listed under them)."""
        parts = (self.headline, self.ranking, *self.history, self.preference, self.criteria, self.judge, self.cost)
        return [line for line in parts if line]


OFFLINE_WARNING = "offline judge: a lexical baseline, not an LLM; use --judge MODEL for real judgements."
