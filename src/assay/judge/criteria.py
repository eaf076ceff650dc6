"""Criteria files: a team's own measure of an answer, read, checked and hashed before any call is made.

A criterion is one file ``NAME.md`` shaped like a prompt file (:mod:`assay.judge.prompts`): TOML front matter between
two lines that are exactly ``+++``, then a body. It adds the metric ``criterion:NAME`` per question. Two forms:

A **deterministic check** (no judge; :mod:`assay.judge.checks` has the kinds and what they score)::

    +++
    name = "cites_passage"
    version = "1"
    description = "The answer cites a retrieved passage, by [n] or by a quotation"
    [check]
    kind = "cites"
    +++
    (the body: notes for people, hashed with the file)

A **judged criterion**: what the judge sees (``inputs``, named from :data:`INPUTS`; nothing else is sent), a
``scale`` (``"pass_fail"``: pass scores 1, fail 0; or ordered labels, each ``[[scale]]`` with ``label``,
``description`` and a declared ``score``: the metric is the declared score of the label given, never rescaled), and
either optional ``steps`` the judge follows (its reason written before its label) or a decision ``[[tree]]``: yes/no
questions, each ``yes`` and ``no`` naming the next question's ``id`` or a label of the scale, the first question
first. The body is the criterion as the judge is told it. ``expected = true`` adds a second metric,
``criterion:NAME|expected``: the declared scores weighted by the judge's token probabilities of each label (or, for a
tree, of each yes and no; :mod:`assay.judge.label_probs`), where the server returns them.

Everything is checked when the file is read, and a bad file raises one :class:`~assay.errors.FormatError` naming the
file, the line and the fix: an unknown field, an input outside :data:`INPUTS`, duplicate labels or scores, a tree with
a dead end (an answer that leads nowhere), a loop or a question never reached, a check that cannot work (a callable
that cannot be imported among them). :meth:`Criterion.check_inputs` refuses an input the golden set or the runs do
not have, before the evaluation calls anything. ``content_hash`` is the blake2b digest of the file's bytes, for the
cache key of a judge's answers.
"""

from __future__ import annotations

import re
import tomllib
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from assay.errors import FormatError
from assay.judge.checks import Check, CheckSpecError, parse_check
from assay.metric_names import CRITERION_PREFIX
from assay.text import content_hash

__all__ = ["INPUTS", "PASS_FAIL", "Criterion", "Label", "TreeStep", "load_criteria", "parse_criterion"]

INPUTS = ("question", "answer", "passages", "reference_answer", "nuggets", "history")
PASS_FAIL = "pass_fail"  # noqa: S105 (a scale name, not a password)
_FENCE = "+++"
_FIELDS = ("name", "version", "description", "inputs", "scale", "steps", "tree", "expected", "check")
_LABEL_KEYS = ("label", "description", "score")
_STEP_KEYS = ("id", "question", "yes", "no")
_NAME = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_-]*")
_KEY_LINE = re.compile(r"\s*([A-Za-z0-9_\"'-]+)\s*=")
_HEADER = re.compile(r"\s*(\[\[?)\s*([A-Za-z0-9_.]+)\s*\]\]?")
_TOML_LINE = re.compile(r"at line (\d+)")


@dataclass(frozen=True)
class Label:
    """One label of a scale: its name, what it means, and the score it declares."""

    name: str
    description: str
    score: float


@dataclass(frozen=True)
class TreeStep:
    """One question of a decision tree; ``yes`` and ``no`` name the next step's id or a label."""

    id: str
    question: str
    yes: str
    no: str


@dataclass(frozen=True)
class Criterion:
    """A loaded criterion (module doc). ``check`` is set for a deterministic one (no ``labels``, ``steps`` or
    ``tree``); a judged one has ``labels`` and at most one of ``steps`` and ``tree``. ``lines``: the file line of
    each top-level field, for errors raised after loading."""

    name: str
    version: str
    description: str
    inputs: tuple[str, ...]
    path: Path
    content_hash: str
    instructions: str = ""
    labels: tuple[Label, ...] = ()
    steps: tuple[str, ...] = ()
    tree: tuple[TreeStep, ...] = ()
    expected: bool = False
    check: Check | None = field(default=None, repr=False)
    lines: Mapping[str, int] = field(default_factory=dict, repr=False)

    @property
    def metric(self) -> str:
        """``criterion:NAME``, the metric it adds per question."""
        return f"{CRITERION_PREFIX}{self.name}"

    @property
    def expected_metric(self) -> str:
        """``criterion:NAME|expected``, the expected score's metric (with ``expected = true``)."""
        return f"{self.metric}|expected"

    @property
    def metrics(self) -> tuple[str, ...]:
        """The metrics it adds: ``criterion:NAME``, and its expected score's when asked for."""
        return (self.metric, self.expected_metric) if self.expected else (self.metric,)

    @property
    def ref(self) -> str:
        """``name@version``."""
        return f"{self.name}@{self.version}"

    @property
    def judged(self) -> bool:
        """Whether a judge decides it (no deterministic check)."""
        return self.check is None

    def check_inputs(self, has: Mapping[str, bool]) -> None:
        """Refuse an input that ``has`` (input name -> whether the golden set or some run holds it) says is absent:
        one :class:`FormatError` at the line of ``inputs`` (of ``[check]`` for a check)."""
        missing = [name for name in self.inputs if not has.get(name, True)]
        if missing:
            line = self.lines.get("inputs", self.lines.get("check"))
            raise _error(self.path, line, f"criterion {self.name} reads {missing[0]}, which "
                              f"{_LACKS.get(missing[0], 'the data does not have')}",
                              f"give a golden set or run with {missing[0]}, or take it out of inputs")  # fmt: skip


# who lacks an input, said as the end of "criterion NAME reads INPUT, which ..."
_LACKS = {
    "answer": "no run has",
    "passages": "no run has",
    "reference_answer": "the golden set does not have",
    "nuggets": "the golden set does not have",
    "history": "the golden set does not have (no conversation)",
}


def _error(path: Path, line: int | None, problem: str, fix: str) -> FormatError:
    """One error naming the file, the line (when known), what is wrong and the fix."""
    return FormatError(path, line, f"{problem}; fix: {fix}")


class _Lines:
    """Where each key of the front matter is written: (table, entry of an array of tables, key) -> file line."""

    def __init__(self, front: str, first_line: int) -> None:
        self.keys: dict[tuple[str, int, str], int] = {}
        self.headers: dict[tuple[str, int], int] = {}
        table, counts = "", dict[str, int]()
        for offset, text in enumerate(front.splitlines()):
            line = first_line + offset
            header = _HEADER.match(text)
            if header is not None and not text.lstrip().startswith(("#",)) and "=" not in text.split("]")[0]:
                table = header.group(2)
                counts[table] = counts.get(table, -1) + 1 if header.group(1) == "[[" else 0
                self.headers.setdefault((table, counts[table]), line)
                continue
            key = _KEY_LINE.match(text)
            if key is not None:
                self.keys.setdefault((table, counts.get(table, 0), key.group(1).strip("\"'")), line)

    def of(self, key: str, table: str = "", entry: int = 0) -> int | None:
        """The line of ``key`` in ``table`` (its ``entry``-th element for an array of tables); the table's header
        line when the key is not written there; None when neither is."""
        found = self.keys.get((table, entry, key))
        if found is None and table == "" and key in ("scale", "tree", "check"):
            found = self.headers.get((key, 0))
        return found if found is not None else self.headers.get((table, entry))


def _split(text: str, path: Path) -> tuple[str, str]:
    lines = text.splitlines()
    if not lines or lines[0].strip() != _FENCE:
        raise _error(path, 1, "a criterion file starts with a line '+++' opening its TOML front matter",
                          "write '+++', the front matter, '+++', then the body")  # fmt: skip
    end = next((i for i in range(1, len(lines)) if lines[i].strip() == _FENCE), None)
    if end is None:
        raise _error(path, len(lines), "the front matter is never closed", "add a line '+++' after it")
    return "\n".join(lines[1:end]), "\n".join(lines[end + 1 :]).strip()


class _Reader:
    """Reads one file's front matter into a :class:`Criterion`, raising at the line of whatever is wrong."""

    def __init__(self, path: Path, front: str) -> None:
        self.path = path
        self.lines = _Lines(front, first_line=2)
        try:
            self.meta = tomllib.loads(front)
        except tomllib.TOMLDecodeError as exc:
            found = _TOML_LINE.search(str(exc))
            line = int(found.group(1)) + 1 if found else None
            raise _error(
                path, line, f"the front matter is not valid TOML ({exc})", "correct the TOML syntax at that line"
            ) from None

    def fail(self, problem: str, fix: str, key: str = "", table: str = "", entry: int = 0) -> FormatError:
        return _error(self.path, self.lines.of(key, table, entry), problem, fix)

    def text(self, key: str, *, required: bool) -> str:
        value = self.meta.get(key)
        if value is None and not required:
            return ""
        if not isinstance(value, (str, int)) or isinstance(value, bool) or not str(value).strip():
            missing = key not in self.meta
            problem = f"the front matter lacks {key}" if missing else f"{key} must be a non-empty string"
            raise self.fail(problem, f'{key} = "..."', key)
        return str(value)

    def criterion(self, data: bytes, body: str) -> Criterion:
        meta = self.meta
        unknown = [key for key in meta if key not in _FIELDS]
        if unknown:
            raise self.fail(f"unknown field {unknown[0]!r}", f"fields are {', '.join(_FIELDS)}", unknown[0])
        name = self.text("name", required=True)
        if not _NAME.fullmatch(name):
            raise self.fail(f"name {name!r} is not letters, digits, '_' and '-'", 'a name such as "cites_policy"',
                            "name")  # fmt: skip
        base = {"name": name, "version": self.text("version", required=True),
                "description": self.text("description", required=False), "path": self.path,
                "content_hash": content_hash(data), "instructions": body,
                "lines": {key: line for key in _FIELDS if (line := self.lines.of(key)) is not None}}  # fmt: skip
        if "check" in meta:
            return self._checked(base)
        return self._judged(base)

    def _checked(self, base: dict[str, Any]) -> Criterion:
        for key in ("scale", "steps", "tree", "expected"):
            if key in self.meta:
                raise self.fail(f"a check scores 1 when it passes and 0 when not: {key} does not apply",
                                f"remove {key}, or remove [check] for a judged criterion", key)  # fmt: skip
        table = self.meta["check"]
        if not isinstance(table, dict):
            raise self.fail("check must be a table", '[check] then kind = "contains" and its keys', "check")
        try:
            check = parse_check(table, self.path.parent)
        except CheckSpecError as exc:  # at the key's line in [check], or the table's header when no key is at fault
            raise self.fail(exc.problem, exc.fix, exc.key or "", "check", 0) from None
        inputs = self._inputs(required=False) or check.reads
        if set(inputs) != set(check.reads):
            raise self.fail(f"a {check.kind} check reads {', '.join(check.reads)}, not {', '.join(inputs)}",
                            f"inputs = {list(check.reads)}, or leave inputs out", "inputs")  # fmt: skip
        return Criterion(**base, inputs=tuple(check.reads), check=check)

    def _inputs(self, *, required: bool) -> tuple[str, ...]:
        value = self.meta.get("inputs")
        fix = f"inputs = [...] naming some of {', '.join(INPUTS)}"
        if value is None:
            if required:
                raise self.fail("a judged criterion lacks inputs (what the judge sees)", fix, "inputs")
            return ()
        if not isinstance(value, list) or not value or not all(isinstance(x, str) for x in value):
            raise self.fail("inputs must be a non-empty list of names", fix, "inputs")
        bad = [x for x in value if x not in INPUTS]
        if bad:
            raise self.fail(f"input {bad[0]!r} is not one assay sends", fix, "inputs")
        if len(set(value)) != len(value):
            raise self.fail("inputs names one input twice", "name each once", "inputs")
        return tuple(value)

    def _judged(self, base: dict[str, Any]) -> Criterion:
        inputs = self._inputs(required=True)
        labels = self._scale()
        steps, tree = self._steps(), self._tree(labels)
        if steps and tree:
            raise self.fail("steps and tree are two forms of the same thing", "keep one of them", "steps")
        expected = self.meta.get("expected", False)
        if not isinstance(expected, bool):
            raise self.fail("expected must be true or false", "expected = true (or leave it out)", "expected")
        return Criterion(**base, inputs=inputs, labels=labels, steps=steps, tree=tree, expected=expected)

    def _scale(self) -> tuple[Label, ...]:
        scale = self.meta.get("scale")
        fix = f'scale = "{PASS_FAIL}", or [[scale]] entries with label, description and score'
        if scale == PASS_FAIL:
            return (Label("pass", "the answer meets the criterion", 1.0),
                    Label("fail", "the answer does not meet it", 0.0))  # fmt: skip
        if not isinstance(scale, list) or len(scale) < 2 or not all(isinstance(x, dict) for x in scale):
            problem = "a judged criterion lacks a scale" if scale is None else "scale is not a scale"
            raise self.fail(f"{problem} (two labels or more)", fix, "scale")
        labels: list[Label] = []
        for entry, item in enumerate(scale):
            labels.append(self._label(item, entry))
            for earlier in labels[:-1]:
                if earlier.name == labels[-1].name:
                    raise self.fail(f"label {earlier.name!r} appears twice", "give each label once", "label", "scale",
                                    entry)  # fmt: skip
                if earlier.score == labels[-1].score:
                    raise self.fail(f"labels {earlier.name!r} and {labels[-1].name!r} declare the same score "
                                    f"{earlier.score:g}", "give each label its own score", "score", "scale",
                                    entry)  # fmt: skip
        return tuple(labels)

    def _label(self, item: Mapping[str, Any], entry: int) -> Label:
        unknown = [key for key in item if key not in _LABEL_KEYS]
        if unknown:
            raise self.fail(f"unknown key {unknown[0]!r} in a scale label", "label, description and score",
                            unknown[0], "scale", entry)  # fmt: skip
        name, score = item.get("label"), item.get("score")
        if not isinstance(name, str) or not _NAME.fullmatch(name):
            raise self.fail("a scale entry needs a label of letters, digits, '_' and '-'", 'label = "full"',
                            "label", "scale", entry)  # fmt: skip
        if not isinstance(score, (int, float)) or isinstance(score, bool):
            raise self.fail(f"label {name!r} declares no score", "score = 1.0 (the metric when it is given)",
                            "score", "scale", entry)  # fmt: skip
        description = item.get("description")
        if not isinstance(description, str) or not description.strip():
            raise self.fail(f"label {name!r} has no description", 'description = "what the label means"',
                            "description", "scale", entry)  # fmt: skip
        return Label(name, description, float(score))

    def _steps(self) -> tuple[str, ...]:
        steps = self.meta.get("steps", [])
        if not isinstance(steps, list) or not all(isinstance(s, str) and s.strip() for s in steps):
            raise self.fail("steps must be a list of non-empty strings", 'steps = ["Find ...", "Check ..."]', "steps")
        return tuple(steps)

    def _tree(self, labels: Sequence[Label]) -> tuple[TreeStep, ...]:
        tree = self.meta.get("tree", [])
        if not isinstance(tree, list) or not all(isinstance(x, dict) for x in tree):
            raise self.fail("tree must be [[tree]] entries", "[[tree]] with id, question, yes and no", "tree")
        steps = [self._tree_step(item, entry) for entry, item in enumerate(tree)]
        names = {label.name for label in labels}
        ids: dict[str, int] = {}
        for entry, step in enumerate(steps):
            if step.id in ids or step.id in names:
                what = "a label of the scale" if step.id in names else "another question's"
                raise self.fail(f"tree id {step.id!r} is already {what} id" if step.id in ids else
                                f"tree id {step.id!r} is also {what}", "give each question its own id", "id", "tree",
                                entry)  # fmt: skip
            ids[step.id] = entry
        for entry, step in enumerate(steps):
            for answer in ("yes", "no"):
                target = getattr(step, answer)
                if target not in ids and target not in names:
                    raise self.fail(f"tree question {step.id!r}: {answer} leads to {target!r}, which is neither a "
                                    "question id nor a label (a dead end)",
                                    f"name a question id or one of the labels {', '.join(sorted(names))}", answer,
                                    "tree", entry)  # fmt: skip
        self._walk(steps, ids)
        return tuple(steps)

    def _tree_step(self, item: Mapping[str, Any], entry: int) -> TreeStep:
        unknown = [key for key in item if key not in _STEP_KEYS]
        if unknown:
            raise self.fail(f"unknown key {unknown[0]!r} in a tree question", "id, question, yes and no", unknown[0],
                            "tree", entry)  # fmt: skip
        for key in _STEP_KEYS:
            if not isinstance(item.get(key), str) or not item[key].strip():
                raise self.fail(f"a tree question lacks {key}", f'{key} = "..."', key, "tree", entry)
        return TreeStep(item["id"], item["question"], item["yes"], item["no"])

    def _walk(self, steps: Sequence[TreeStep], ids: Mapping[str, int]) -> None:
        """Refuse a loop (a question reached again on the way from the first) and a question never reached."""
        reached: set[str] = set()

        def visit(step_id: str, path: tuple[str, ...]) -> None:
            if step_id in path:
                raise self.fail(f"tree loop: {' -> '.join([*path, step_id])}", "make every path end at a label",
                                "id", "tree", ids[step_id])  # fmt: skip
            reached.add(step_id)
            step = steps[ids[step_id]]
            for target in (step.yes, step.no):
                if target in ids:
                    visit(target, (*path, step_id))

        if steps:
            visit(steps[0].id, ())
        lost = [step for step in steps if step.id not in reached]
        if lost:
            raise self.fail(f"tree question {lost[0].id!r} is never reached from the first question {steps[0].id!r}",
                            "lead to it from a yes or no, or remove it", "id", "tree", ids[lost[0].id])  # fmt: skip


def parse_criterion(data: bytes, path: Path) -> Criterion:
    """Parse the bytes of a criterion file (``path`` in messages, and the folder a ``python`` check imports from)."""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise _error(path, None, f"not UTF-8 text ({exc})", "save it as UTF-8") from None
    front, body = _split(text, path)
    return _Reader(path, front).criterion(data, body)


def _files(source: Path) -> list[Path]:
    if source.is_dir():
        files = sorted(p for p in source.glob("*.md") if p.is_file())
        if not files:
            raise _error(
                source, None, "a folder of criteria with no NAME.md file in it", "add criterion files NAME.md to it"
            )
        return files
    if not source.is_file():
        raise _error(
            source, None, "no such criterion file or folder", "give the path of a NAME.md file or a folder of them"
        )
    return [source]


def load_criteria(sources: Iterable[Criterion | str | Path]) -> tuple[Criterion, ...]:
    """The criteria of ``sources`` in order: each a loaded :class:`Criterion`, a file, or a folder (its ``*.md``
    files, sorted by name). Two criteria of one name are refused, naming both files."""
    out: list[Criterion] = []
    for source in sources:
        if isinstance(source, Criterion):
            loaded = [source]
        else:
            loaded = [parse_criterion(path.read_bytes(), path) for path in _files(Path(source))]
        for one in loaded:
            twin = next((c for c in out if c.name == one.name), None)
            if twin is not None:
                raise _error(one.path, one.lines.get("name"), f"criterion {one.name!r} is also defined in "
                                  f"{twin.path}", "give each criterion its own name")  # fmt: skip
            out.append(one)
    return tuple(out)
