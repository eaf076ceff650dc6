"""The options of ``assay eval`` and what they ask, read once: the option group :func:`eval_options` (after the judge
options, in the order of ``assay eval --help``), and :meth:`EvalOptions.from_flags`, which checks the flags and builds
the evaluation's settings before any work. ``-k``, the RUN arguments and ``--fail-under`` are parsed by
:func:`parse_k`, :func:`parse_runs` and :func:`parse_fail_under`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import click

from assay.cli._judge_options import JudgeOptions, optional_judge_options
from assay.errors import ConfigError
from assay.pipelines.evaluate import EvalSettings
from assay.pipelines.evaluate.runs.given import NamedRun, named_runs
from assay.pipelines.evaluate.scoring.available import Available
from assay.pipelines.evaluate.scoring.names import check_gate, joined_k

__all__ = ["EvalOptions", "eval_options", "parse_fail_under", "parse_k", "parse_runs"]


def parse_k(texts: str | Sequence[str]) -> tuple[int, ...]:
    """``"1,3,5,10"``, or the values of ``-k`` repeated (``["5", "10,20"]``), -> the cut-offs of all of them,
    sorted and without repeats."""
    values: set[int] = set()
    for text in [texts] if isinstance(texts, str) else texts:
        try:
            values |= {int(part) for part in text.split(",") if part.strip()}
        except ValueError:
            raise ConfigError(f"-k {text!r}: give whole numbers separated by commas, e.g. -k 1,3,5,10") from None
        if not values or min(values) < 1:
            raise ConfigError(f"-k {text!r}: cut-offs must be >= 1, e.g. -k 1,3,5,10")
    return tuple(sorted(values))


def parse_runs(args: Sequence[str]) -> list[NamedRun]:
    """Each RUN is PATH (named by its file stem) or NAME=PATH (``=`` splits unless the whole argument is a file);
    named and checked by :func:`~assay.pipelines.evaluate.runs.given.named_runs`, as every caller's runs are."""
    return named_runs([_name_path(arg) for arg in args])


def _name_path(arg: str) -> str | tuple[str, str]:
    """``NAME=PATH`` -> (name, path); a file whose name holds ``=`` and a bare PATH stay a path."""
    name, sep, path = arg.partition("=")
    return (name, path) if sep and name and not Path(arg).exists() else arg


def parse_fail_under(values: Sequence[str]) -> list[tuple[str, float]]:
    """``ndcg@10=0.6`` -> ("ndcg@10", 0.6); the last ``=`` splits, so ``recall@5|g>=2=0.5`` works; a bare ``0.6``
    -> ("", 0.6): the evaluation's own primary (:func:`~assay.pipelines.evaluate.statistics.gates.default_metric`)."""
    out = []
    for value in values:
        metric, sep, number = value.rpartition("=")
        threshold = _number(number)
        if threshold is None or (sep and not metric):
            raise ConfigError(
                f"--fail-under {value!r}: write METRIC=VALUE, e.g. --fail-under ndcg@10=0.6, or VALUE alone to gate "
                "on the evaluation's primary metric, e.g. --fail-under 0.6"
            )
        out.append((metric, threshold))
    return out


def _number(text: str) -> float | None:
    try:
        return float(text)
    except ValueError:
        return None


_NO_JUDGE = click.option("--no-judge", is_flag=True, help="No LLM: trec_eval's convention (unjudged = not relevant).")


def eval_options(f: Any) -> Any:
    """Add eval's own options to the command ``f``, after the judge options (and ``--no-judge``), in --help order."""
    options = [
        optional_judge_options(_NO_JUDGE),
        click.option(
            "-k",
            "k_texts",
            multiple=True,
            default=("1,3,5,10",),
            show_default=True,
            help="Cut-offs, comma-separated or repeated: -k 5,10 and -k 5 -k 10 are the same.",
        ),
        click.option("-m", "--metric", "metrics", multiple=True, help="Only these (repeatable), whatever -k says."),
        click.option(
            "-c",
            "--criterion",
            "criteria",
            multiple=True,
            type=click.Path(exists=True, path_type=Path),
            metavar="FILE_OR_FOLDER",
            help="Your own criterion file (or a folder of them; repeatable): adds criterion:NAME per question. "
            "Deterministic checks run with any judge; judged criteria are asked of the model judge (each judge of a "
            "panel) and unscored under the offline judge; their verdicts are queued for assay audit GOLDEN --criteria, "
            "and once people labelled them the report gives each one's agreement and PPI-corrected means (README, "
            "'Your own criteria').",
        ),
        click.option(
            "--pairwise",
            default=None,
            metavar="FILE|builtin",
            help="Compare the runs' answers in pairs, each pair judged in both orders (needs a model judge): a "
            "criterion file saying what to prefer, or builtin (which answer better answers the question, given the "
            "reference). Adds wins, ties, position consistency and Bradley-Terry strengths to the verdict.",
        ),
        click.option(
            "--pairs",
            type=click.Choice(["all", "baseline"]),
            default="all",
            show_default=True,
            help="With --pairwise: every pair of runs, or each run with --baseline (default the first run) only.",
        ),
        click.option("--by", "strata", multiple=True, help="Also stratify by this question field (repeatable)."),
        click.option(
            "-b",
            "--budget",
            "budgets",
            multiple=True,
            metavar="B",
            help="Context budget of the budget measures, with a unit: 1000t (tokens, 4 characters each) or 4000c "
            "(repeatable; default 1000t).",
        ),
        click.option(
            "--listwise",
            default=10,
            show_default=True,
            type=click.IntRange(0, 50),
            help="Chunks per relevance call (0: one call per chunk).",
        ),
        click.option("--context-k", type=click.IntRange(1, 100), default=None, help="Chunks given to the answer."),
        click.option("--seed", default=0, show_default=True, help="Seed of the bootstrap, tests and shuffles."),
        click.option("--n-boot", default=2000, show_default=True, type=click.IntRange(100), help="Resamples."),
        click.option(
            "--fail-under",
            multiple=True,
            help="METRIC=X: exit 1 when a run's mean is worse than X (below it; above it where less is better: "
            "hallucination, noise_sensitivity_*, contradiction); X alone: on the primary metric. A measure counted "
            "in golden chunks (ndcg@10, P@5, map) for a run whose passages are under half a golden chunk is refused "
            "(exit 1): gate on a budget measure (ndcg@1000t).",
        ),
        click.option("--baseline", default=None, help="Compare each run with this run (default: every pair)."),
        click.option(
            "--primary",
            default=None,
            help="Metric leading the verdict, computed whatever -k says (default: first --fail-under, else ndcg@10; "
            "nDCG at the first budget when the runs cut their text differently).",
        ),
        click.option(
            "--correction",
            type=click.Choice(["holm", "tukey", "none"]),
            default="holm",
            show_default=True,
            help="Over the run pairs of each metric: Holm, randomized Tukey HSD, or none.",
        ),
        click.option(
            "--cluster-by",
            default="doc",
            show_default=True,
            metavar="doc|none|FIELD",
            help="Questions that move together, resampled as one unit by the tests and intervals: doc (questions "
            "sharing a source document), none (every question alone), or a question field such as product.",
        ),
        click.option(
            "--judge-repeats",
            default=0,
            show_default=True,
            type=click.IntRange(0, 10),
            metavar="N",
            help="Ask the judge again N times on a sample of the labels in the runs' top k: how often its grade "
            "changes, and how much the primary metric moves with it (stated beside its interval).",
        ),
        click.option(
            "--judge-repeats-max",
            default=300,
            show_default=True,
            type=click.IntRange(1),
            metavar="PAIRS",
            help="At most this many labels re-asked by --judge-repeats (a sample spread over the questions).",
        ),
        click.option(
            "--detect",
            type=float,
            multiple=True,
            metavar="X",
            help="A difference on the primary metric to plan for (repeatable; default 0.02 and 0.05): the report says "
            "how many questions (and documents) a comparison needs to detect it at 80% power.",
        ),
        click.option(
            "--diagnosis",
            "diagnosis_mode",
            type=click.Choice(["approx", "answers", "exact"]),
            default="answers",
            show_default=True,
            help="Claim x chunk entailment of the diagnosis: 'answers' checks each answer claim against each chunk "
            "as RAGChecker does (5 claims per call) and reads the reference claims off the context call; 'exact' "
            "checks both; 'approx' reads both off the context and answer calls (3 calls per sample).",
        ),
        click.option("--no-add-labels", is_flag=True, help="Do not write labels judged now into the golden set."),
        click.option(
            "--judge-card",
            type=click.Path(path_type=Path),
            default=None,
            help="The (first) judge's card to show beside the metrics (default: the one judge-check kept).",
        ),
        click.option("--dry-run", is_flag=True, help="Count calls, cached items, tokens and cost; call nothing."),
    ]
    for option in reversed(options):
        f = option(f)
    return f


@dataclass(frozen=True)
class EvalOptions:
    """What one ``assay eval`` is asked, read once from its flags (:meth:`from_flags`): the evaluation's
    ``settings`` (every metric name checked), the ``--fail-under`` ``gates``, the judge options (no ``specs``: no
    judge), ``--no-judge``, ``--dry-run`` and ``--judge-card``. A new flag of eval is read here, once."""

    settings: EvalSettings
    gates: tuple[tuple[str, float], ...]
    judging: JudgeOptions
    no_judge: bool
    dry_run: bool
    judge_card: Path | None

    @classmethod
    def from_flags(
        cls, flags: dict[str, Any], judging: JudgeOptions, available: Available | None = None
    ) -> EvalOptions:
        """Check eval's own ``flags`` (click's values) against ``judging`` before any work; with ``available`` (the
        golden set read, no run yet), the names offered for a bad metric name are those that exist for it."""
        if judging.specs and flags["no_judge"]:
            raise ConfigError("give --judge MODEL or --no-judge, not both")
        if judging.batch and not judging.specs:
            raise ConfigError("--batch sends judge calls through a batch API: give --judge MODEL too")
        if flags["judge_repeats"] and len(judging.specs) != 1:
            raise ConfigError("--judge-repeats re-asks one judge: give exactly one --judge MODEL")
        gates = tuple(parse_fail_under(flags["fail_under"]))
        return cls(
            settings=_settings(flags, gates, judged=bool(judging.specs), available=available),
            gates=gates,
            judging=judging,
            no_judge=flags["no_judge"],
            dry_run=flags["dry_run"],
            judge_card=flags["judge_card"],
        )


def _settings(
    flags: dict[str, Any], gates: Sequence[tuple[str, float]], *, judged: bool, available: Available | None
) -> EvalSettings:
    """The settings of the flags; a metric named by ``--fail-under`` (``also``) or ``--primary`` is computed too
    (besides -m, or besides the defaults), its cut-off joining -k; every name checked before any work."""
    k_values, budgets = parse_k(flags["k_texts"]), tuple(flags["budgets"]) or EvalSettings.budgets
    named = [(name, "--fail-under") for name, _ in gates if name]
    named += [(flags["primary"], "--primary")] * bool(flags["primary"])
    keep = None if available is None else available.keep
    cuts = {check_gate(name, judged=judged, flag=flag, k_values=k_values, budgets=budgets, keep=keep)
            for name, flag in named}  # fmt: skip
    settings = EvalSettings(
        k_values=joined_k(k_values, {cut for cut in cuts if cut is not None}),
        metrics=tuple(flags["metrics"]),
        also=tuple(name for name, _ in gates if name),
        seed=flags["seed"],
        n_boot=flags["n_boot"],
        context_k=flags["context_k"],
        listwise=flags["listwise"] or None,
        add_labels=not flags["no_add_labels"],
        strata=tuple(flags["strata"]),
        budgets=budgets,
        baseline=flags["baseline"],
        primary=flags["primary"] or next((m for m, _ in gates if m), None),
        correction=flags["correction"],
        diagnosis=flags["diagnosis_mode"],
        cluster_by=flags["cluster_by"],
        judge_repeats=flags["judge_repeats"],
        judge_repeats_max=flags["judge_repeats_max"],
        detect=tuple(flags["detect"]) or EvalSettings.detect,
        criteria=tuple(flags["criteria"]),
        pairwise=_pairwise(flags["pairwise"]),
        pairs=flags["pairs"],
    ).checked()
    if available is not None:
        settings.check_available(available)
    return settings


def _pairwise(value: str | None) -> str | Path | None:
    """``--pairwise``: ``builtin``, or a criterion file that must exist."""
    if value is None or value == "builtin":
        return value
    path = Path(value)
    if not path.is_file():
        raise click.BadParameter(f"{value}: no such criterion file; give a NAME.md criterion file or builtin",
                                 param_hint="--pairwise")  # fmt: skip
    return path
