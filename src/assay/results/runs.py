"""The records of one run: its metric summaries, its questions' rows, what was found in its file, how its system
behaved, its repeats and conversations, and :class:`RunResult`, which holds them."""

from __future__ import annotations

from pydantic import Field

from assay.results._model import _Model

__all__ = [
    "FILLED_SHARE",
    "BudgetFill",
    "ConversationSummary",
    "MetricSummary",
    "QueryResult",
    "RepeatSummary",
    "RunCounts",
    "RunResult",
    "SystemSummary",
    "VarianceSplit",
]

FILLED_SHARE = 0.8  # a budget filled below this share of its characters counts as not filled (BudgetFill.under)


class MetricSummary(_Model):
    """Mean of a metric over the scored queries, with a bootstrap interval and the unscored count and reasons."""

    mean: float | None  # None when no query could be scored
    low: float | None = None
    high: float | None = None
    n_scored: int = 0
    n_unscored: int = 0
    unscored_reasons: dict[str, int] = Field(default_factory=dict)


class BudgetFill(_Model):
    """How much of one context budget a run's passages filled, and how much of that text the pool of labelled spans
    grades (:mod:`assay.pipelines.evaluate.scoring.fill` has the rule). Per question in :attr:`QueryResult.budget`;
    per run in :attr:`RunResult.budget`, the medians over its questions.

    ``chars``: the budget in characters (letters and digits); ``filled``: the share of it the passages' text filled;
    ``judged``: of the characters shown within the budget, the share with a grade in the pool (any grade, 0
    included; text found in no document is unjudged), None when nothing was shown; ``k``: the passages that fill it
    (the rank that reached it, else extrapolated from the passages retrieved; per run the median, rounded up), None
    when nothing was shown; ``under``: per run, the share of its questions filled below :data:`FILLED_SHARE` (None
    per question); ``questions``: the questions measured (1 per question)."""

    chars: int
    filled: float
    judged: float | None = None
    k: int | None = None
    under: float | None = None
    questions: int = 1


class QueryResult(_Model):
    """One query of one run: its metric values (None = unscored), the fields it can be stratified by, and how full
    each budget is (``budget``: budget name, e.g. ``1000t``, to :class:`BudgetFill`)."""

    run: str
    query_id: str
    strata: dict[str, str] = Field(default_factory=dict)  # e.g. {"type": "numeric", "difficulty": "hard"}
    metrics: dict[str, float | None] = Field(default_factory=dict)
    unscored: dict[str, str] = Field(default_factory=dict)  # metric -> reason, for the None values above
    cluster: str | None = None  # the cluster the query is resampled with (its source document); None: itself
    budget: dict[str, BudgetFill] = Field(default_factory=dict)

    @property
    def unit(self) -> str:
        """What the statistics resample this query with: its cluster, else the query alone (``query:ID``)."""
        return self.cluster or f"query:{self.query_id}"


class RunCounts(_Model):
    """What was found in a run file: counted and reported, never silently dropped."""

    lines: int = 0
    queries_evaluated: int = 0
    unknown_query_ids: int = 0
    unknown_chunk_ids: int = 0
    duplicate_ids: int = 0
    empty_retrieved: int = 0
    missing_queries: int = 0  # golden questions the run has no line for
    with_answer: int = 0
    # lines whose answer is "" or only whitespace, or missing in a run that answers other questions: scored 0 on
    # the recall-type answer measures, unscored ("empty answer") on the others
    empty_answers: int = 0
    labels_judged_now: int = 0  # retrieved chunks without a label, judged during this evaluation
    # questions the system failed on (a line with "error"): 0 on the recall-type answer measures, every other metric
    # of them unscored
    failed: int = 0
    unmatched_rows: int = 0  # RAGAS rows matching no golden question (by query_id or question text)
    # lines of context turns (a conversation's unjudged turns, no question: asked with --history own for the history):
    # read for the contradiction check, never scored
    context_turns: int = 0
    # passages of a search step (a run line's ``steps``) located in no golden document: never relevant, and named by
    # line in the run's notes
    step_passages_unlocated: int = 0
    # how the retrieved items were matched to the golden set: id, offsets, exact, approximate, unmatched
    matched_by: dict[str, int] = Field(default_factory=dict)

    @property
    def answers_given(self) -> bool:
        """Whether some line has an ``answer`` field (empty or not): a run without one is retrieval-only."""
        return self.with_answer + self.empty_answers > 0

    @property
    def passage_free(self) -> bool:
        """Whether the run answers with no passage at all: every line it did not fail on has an empty (or no)
        ``retrieved``, and some line has an answer. Its ranking, budget and passage measures are unscored (``no
        passages in this run``), never 0; a run with passages on some lines scores an empty list 0 (a miss)."""
        answered = self.queries_evaluated - self.failed
        return self.answers_given and answered > 0 and self.empty_retrieved == answered


class SystemSummary(_Model):
    """How the system behaved while it wrote the run (``assay run``): its header (target with secrets removed,
    version label, start and end), the questions it failed on by kind (0 on the recall-type answer measures, else
    unscored), the latency percentiles of the answered ones (ms; linear interpolation), and tokens and cost summed
    over the lines that report them (None when no line does). A system that searches several times reports its
    ``steps`` per line: ``with_steps`` lines did, with ``steps`` each kind's mean number per such line."""

    target: str | None = None
    label: str | None = None
    started: str | None = None
    ended: str | None = None
    lines: int = 0
    failed: int = 0
    failures: dict[str, int] = Field(default_factory=dict)  # kind -> questions
    latency_ms: dict[str, float] = Field(default_factory=dict)  # p50, p95, mean, max over answered questions
    prompt_tokens: int | None = None
    completion_tokens: int | None = None
    cost_usd: float | None = None
    with_steps: int = 0  # lines that reported the system's steps (searches, tool and model calls)
    steps: dict[str, float] = Field(default_factory=dict)  # step kind -> mean per line that reported steps


class VarianceSplit(_Model):
    """One metric of a run asked every question several times: the variance of its per-question scores split in
    two. ``within`` = the mean over questions of the variance across repeats (ddof 1): how much the system's own
    answers vary when asked again; ``between`` = the variance of the per-question means minus within / repeats
    (floored at 0): how much the questions differ. ``within_share`` = within / (between + within). ``questions``
    counts the questions scored in every repeat (the others are left out of the split)."""

    between: float
    within: float
    within_share: float | None
    questions: int


class RepeatSummary(_Model):
    """A run whose system was asked every question ``repeats`` times (``assay run --repeats``): each repeat is
    scored, a question's value is its mean over the repeats that scored it, and the intervals and tests run on
    those means, so the within-question variance (divided by the repeats) is inside every interval. ``metrics``
    splits the headline metrics' variance; ``spread`` is the standard deviation of the run's mean over the repeats
    (each repeat alone), per headline metric."""

    repeats: int
    metrics: dict[str, VarianceSplit] = Field(default_factory=dict)
    spread: dict[str, float | None] = Field(default_factory=dict)


class ConversationSummary(_Model):
    """A run's conversation-level measures: its ``conversations`` and ``turns`` (judged turns, the questions it answers:
    context turns are never counted; ``dependent`` of them lean on the history); ``vital_coverage``: the mean over
    conversations of the share of a conversation's vital nuggets its turns' answers support (strict), over
    ``covered`` conversations, ``coverage_unscored`` more left out because a turn's nugget verdict is missing;
    ``rewrites``: turns whose line carries the system's own rewrite. ``contradiction_rate``: the mean over
    conversations of the share of a conversation's checked turns whose answer contradicts an earlier answer of the
    run (``contradiction``), over ``contradiction_conversations`` conversations; ``contradicting``: turns found
    contradicting, of ``contradiction_checked`` scored; ``contradiction_unscored``: turns the judge could not check
    (their conversations are left out of the rate).

    A run asked ``repeats`` N > 1 times (``assay run --repeats N``): both shares are computed per repeat, then each
    conversation's is its mean over the repeats that scored it (unscored when none did), as a question's metric is
    merged; the two rates are the mean of those over the conversations. The counts of turns (``rewrites``,
    ``contradicting``, ``contradiction_checked``, ``contradiction_unscored``) are summed over the repeats, as the
    run's counts are; ``conversations``, ``turns`` and ``dependent`` are one asking's."""

    conversations: int
    turns: int
    dependent: int
    rewrites: int = 0
    vital_coverage: float | None = None
    covered: int = 0
    coverage_unscored: int = 0
    contradiction_rate: float | None = None
    contradiction_conversations: int = 0
    contradicting: int = 0
    contradiction_checked: int = 0
    contradiction_unscored: int = 0
    repeats: int = 1


class TrajectorySummary(_Model):
    """How a run's trajectories went, in questions (the measures' means are in ``metrics``): ``questions`` with a
    trajectory measure, ``with_steps`` of them answered in steps (the others were one search); ``hop_questions``
    with two hops or more, ``hops_missed`` of them with a hop no search found; ``dropped``: questions where relevant
    text some search returned is not in the final context; ``looped``: questions where a step repeated an earlier
    search's query or tool call."""

    questions: int
    with_steps: int
    hop_questions: int = 0
    hops_missed: int = 0
    dropped: int = 0
    looped: int = 0


class RunResult(_Model):
    """Everything about one run."""

    name: str
    path: str
    counts: RunCounts = Field(default_factory=RunCounts)
    metrics: dict[str, MetricSummary] = Field(default_factory=dict)
    # metric family -> {k: mean}, e.g. {"ndcg": {"1": 0.4, "3": 0.5, ...}} (keys are str for JSON)
    curves: dict[str, dict[str, float | None]] = Field(default_factory=dict)
    # stratum field -> value -> metric -> summary
    strata: dict[str, dict[str, dict[str, MetricSummary]]] = Field(default_factory=dict)
    judged_at_k: dict[str, float | None] = Field(default_factory=dict)  # share of top-k retrieved that has a label
    # 11-point interpolated precision (recall 0.0, 0.1, ..., 1.0), mean over queries
    pr_curve: list[float] = Field(default_factory=list)
    grade_histogram: dict[str, int] = Field(default_factory=dict)  # grade of retrieved chunks in the top k_max
    # passage length in characters (count, min, p25, median, p75, max, mean) over every retrieved passage
    passage_lengths: dict[str, float] = Field(default_factory=dict)
    # how the passages of the top k_max got their labels: chunk, rule, stored, judged, unlabelled
    passage_labels: dict[str, int] = Field(default_factory=dict)
    system: SystemSummary | None = None  # latency, failures, tokens and cost, when the run recorded them
    budget: dict[str, BudgetFill] = Field(default_factory=dict)  # budget name (1000t) -> medians over questions
    repeats: RepeatSummary | None = None  # the system asked every question several times (None: once)
    conversations: ConversationSummary | None = None  # a golden set with conversations: per-conversation measures
    trajectories: TrajectorySummary | None = None  # some run's lines carry steps: how this run's paths went
