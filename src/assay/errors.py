"""The one exception tree of assay.

Every error assay raises on purpose derives from :class:`AssayError`; the CLI prints its message on one line and
exits 1. Messages say what went wrong, where (item, file and line), and how to fix it.

::

    AssayError
    ├── InputError              bad user input: a file, a flag, a value
    │   ├── FormatError         a malformed line or record in a file (carries path and line number)
    │   └── CorpusError         a corpus that cannot be ingested (empty folder, duplicate ids, undecodable text)
    ├── ConfigError             a setting that cannot work (unknown judge, missing key, bad option combination)
    ├── DatasetError            a golden-set folder that is missing, incomplete or of an unknown format version
    ├── NothingProduced         a run that made nothing useful (no question accepted, every label unscored)
    ├── JudgeError              the judge layer cannot go on
    │   ├── PromptError         a prompt file that cannot be loaded or rendered (names the missing variable)
    │   ├── BackendError        a model call failed for good (400/401/403/404, unsupported parameter)
    │   │   ├── TransientBackendError  a failure worth retrying (429, 408, 409, 5xx, connection, timeout)
    │   │   └── ItemRejected    this item only cannot be judged (answer cut at max_tokens, prompt over the context,
    │   │                       a content filter)
    │   └── BudgetExceeded      ``--max-cost`` was reached; the run stopped cleanly and can resume from the cache
    └── AuditError              the label store or the audit page refused an operation

Metric-name errors come from :mod:`assay.metrics`, which imports nothing from the rest of assay; they are
:class:`assay.metrics.MetricError` (a ``ValueError``), and the CLI treats them like an ``AssayError``.
"""

from __future__ import annotations

from pathlib import Path

__all__ = [
    "AssayError",
    "AuditError",
    "BackendError",
    "BudgetExceeded",
    "ConfigError",
    "CorpusError",
    "DatasetError",
    "FormatError",
    "InputError",
    "ItemRejected",
    "JudgeError",
    "NothingProduced",
    "PromptError",
    "TransientBackendError",
]


class AssayError(Exception):
    """Base of every error assay raises on purpose."""


class InputError(AssayError):
    """Bad user input: a file, a flag or a value."""


class FormatError(InputError):
    """A malformed line or record; the message names the file, the line and what was expected."""

    def __init__(self, path: str | Path, line: int | None, problem: str, expected: str | None = None) -> None:
        self.path = str(path)
        self.line = line
        self.problem = problem
        self.expected = expected
        where = f"{self.path}:{line}" if line is not None else self.path
        message = f"{where}: {problem}"
        if expected:
            message += f" (expected {expected})"
        super().__init__(message)


class CorpusError(InputError):
    """A corpus that cannot be ingested."""


class ConfigError(AssayError):
    """A setting that cannot work."""


class DatasetError(AssayError):
    """A golden-set folder that is missing, incomplete or of an unknown format version."""


class NothingProduced(AssayError):
    """A run that produced nothing useful; the message names the stage that lost everything and the likely cause."""


class JudgeError(AssayError):
    """The judge layer cannot go on."""


class PromptError(JudgeError):
    """A prompt that cannot be loaded or rendered."""


class BackendError(JudgeError):
    """A model call that failed for good; ``status`` is the HTTP status when there was one."""

    def __init__(self, message: str, *, status: int | None = None) -> None:
        self.status = status
        super().__init__(message)


class TransientBackendError(BackendError):
    """A model call that failed in a way worth retrying; ``retry_after`` is in seconds when the server said."""

    def __init__(self, message: str, *, status: int | None = None, retry_after: float | None = None) -> None:
        self.retry_after = retry_after
        super().__init__(message, status=status)


class ItemRejected(BackendError):
    """A call that failed for this item only and would fail the same way again: the answer was cut at
    ``max_tokens`` (``kind="truncated"``, or ``"loop"`` when the cut text repeats itself), or the prompt does not
    fit the model's context (``kind="too_long"``), or the provider's content filter refused the prompt or withheld the
    answer (``kind="content_filter"``). Not retried; the item is recorded as unscored and the run goes on.
    """

    def __init__(
        self, message: str, *, kind: str, status: int | None = None, raw: str | None = None, answer: str | None = None
    ) -> None:
        self.kind = kind
        self.raw = raw
        self.answer = answer  # the whole cut answer, for an output whose complete part can stand (judge/results.py)
        super().__init__(message, status=status)

    @classmethod
    def content_filter(cls, said: str, *, status: int | None = None) -> ItemRejected:
        """The item a provider's content filter refused; ``said`` is what the server said of it."""
        return cls(
            f"the provider's content filter refused this item; the server said: {said} -- the item is left "
            "unscored; read its text, or judge it with a model or deployment whose filter allows it",
            kind="content_filter",
            status=status,
        )


class BudgetExceeded(JudgeError):
    """The cost budget was reached; what was done is cached, and a rerun resumes from there."""


class AuditError(AssayError):
    """The label store or the audit page refused an operation."""
