"""Peers' custom metrics as assay criteria files: DeepEval's G-Eval and DAG metrics, RAGAS's aspect critics and rubrics.

:func:`read_peer_criteria` reads a user's Python file of definitions without running it
(:mod:`assay.formats.peer_source`) and makes one criterion file per definition; :func:`write_criteria` writes them
into a folder. Each file is checked by :func:`assay.judge.criteria.parse_criterion` before anything is written, and
its TOML comments say where it came from and how its scores were declared. The mappings:

- DeepEval ``GEval``: ``evaluation_params`` become the inputs (INPUT -> question, ACTUAL_OUTPUT -> answer,
  EXPECTED_OUTPUT -> reference_answer, CONTEXT and RETRIEVAL_CONTEXT -> passages; another is refused);
  ``criteria`` is the body, ``evaluation_steps`` the steps. G-Eval scores on 0-10 and reports the score divided by
  10. With a ``rubric`` (two ranges or more: one label is no scale), each ``Rubric(score_range=(a, b),
  expected_outcome=...)`` is a label ``score_a_to_b`` declaring b / 10 (the range's upper bound on G-Eval's own
  reported scale), written in the file. Without one, no label set is G-Eval's: the criterion is pass/fail, the body
  telling the judge to pass an answer that would score at least ``threshold`` x 10 of 10 (threshold 0.5 by default,
  1.0 with ``strict_mode=True``), as DeepEval's success test does.
- DeepEval ``DAGMetric``: its one root's ``BinaryJudgementNode``\\ s are the ``[[tree]]`` questions (``q1`` the
  root, then in the order met), ``VerdictNode(verdict=True|False, ...)`` their yes and no; a verdict's ``score``
  (0-10) is the label ``score_S`` declaring S / 10, as DAGMetric reports it. A ``NonBinaryJudgementNode`` with two
  verdicts is a yes/no question naming both; with more, a ``TaskNode``, a metric as a verdict's child or several
  roots, the file is refused (a yes/no tree cannot hold them). The inputs are the nodes' ``evaluation_params``;
  none given: question and answer.
- RAGAS ``AspectCritic(name, definition)``: pass/fail (RAGAS's verdict 1 or 0), the definition as the body. RAGAS
  sends the question and response, and the retrieved contexts and reference when the sample has them; a criterion
  file names what it sends, so the inputs are question and answer, plus passages when the definition speaks of
  context, passages, documents or retrieval, and reference_answer when it speaks of a reference or ground truth.
- RAGAS ``RubricsScore(name, rubrics={"score1_description": ..., ...})``: a label ``scoreN`` per entry declaring N
  (RAGAS's score is that number), inputs as for an aspect critic, read from all the rubric's text.
"""

from __future__ import annotations

import ast
import itertools
import json
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from assay.errors import FormatError, InputError
from assay.formats.atomic import atomic_files
from assay.formats.peer_source import Member, PeerCall, PeerSource, callee
from assay.judge.criteria import parse_criterion

__all__ = ["PEER_KINDS", "ImportedCriterion", "read_peer_criteria", "write_criteria"]

PEER_KINDS = ("GEval", "DAGMetric", "AspectCritic", "RubricsScore")
_PARAMS = {"INPUT": "question", "ACTUAL_OUTPUT": "answer", "EXPECTED_OUTPUT": "reference_answer",
           "CONTEXT": "passages", "RETRIEVAL_CONTEXT": "passages"}  # fmt: skip
_ORDER = ("question", "answer", "passages", "reference_answer")
_MENTIONS_PASSAGES = re.compile(r"\b(context|contexts|passages?|documents?|retriev\w*|sources?)\b", re.IGNORECASE)
_MENTIONS_REFERENCE = re.compile(r"\b(reference|ground[ _-]?truth|expected (?:answer|output))\b", re.IGNORECASE)
_RUBRIC_KEY = re.compile(r"score(\d+)_description")
_SLUG = re.compile(r"[^A-Za-z0-9]+")


@dataclass(frozen=True)
class ImportedCriterion:
    """One definition made a criterion: the file name's stem, what it came from, its line, and the file's text."""

    name: str
    source: str
    line: int
    text: str


@dataclass(frozen=True)
class _Spec:
    """What a criterion file holds, before it is written out as TOML."""

    name: str
    description: str
    notes: tuple[str, ...]
    inputs: tuple[str, ...]
    body: str
    scale: tuple[tuple[str, str, float], ...] = ()  # (label, description, score); empty: pass_fail
    steps: tuple[str, ...] = ()
    tree: tuple[tuple[str, str, str, str], ...] = ()  # (id, question, yes, no)


def read_peer_criteria(path: str | Path) -> tuple[ImportedCriterion, ...]:
    """The criteria of every peer definition in the Python file ``path`` (read, never run), in file order."""
    source = PeerSource(Path(path))
    out: list[ImportedCriterion] = []
    for node in source.calls(PEER_KINDS):
        if _inside_another(source, node):
            continue
        reader = _Reader(source, node)
        spec = reader.spec()
        twin = next((c for c in out if c.name == spec.name), None)
        if twin is not None:
            raise source.fail(node.lineno, f"criterion name {spec.name!r} is also made from line {twin.line}",
                              "give the two metrics different names")  # fmt: skip
        text = _render(spec)
        parse_criterion(text.encode("utf-8"), Path(f"{spec.name}.md"))  # a mapping fault shows here, not in a run
        out.append(ImportedCriterion(spec.name, f"{reader.call.kind} {reader.title!r}", node.lineno, text))
    if not out:
        raise source.fail(None, f"no definition assay imports ({', '.join(PEER_KINDS)})",
                          "give the file that defines the metrics")  # fmt: skip
    return tuple(out)


def _inside_another(source: PeerSource, node: ast.Call) -> bool:
    """Whether ``node`` is written inside another definition's call (a G-Eval as a DAG verdict's child: that DAG
    refuses it, and it is no criterion of its own)."""
    return any(outer is not node and any(inner is node for inner in ast.walk(outer))
               for outer in source.calls(PEER_KINDS))  # fmt: skip


def write_criteria(criteria: Sequence[ImportedCriterion], out: str | Path, *, force: bool = False) -> list[Path]:
    """Write each criterion to ``out/NAME.md`` together (all or none); an existing file is refused, naming it,
    unless ``force``. The paths written, in order."""
    folder = Path(out)
    if folder.exists() and not folder.is_dir():
        raise InputError(f"{folder} is a file: give a folder for the criteria")
    targets = [folder / f"{c.name}.md" for c in criteria]
    taken = [path for path in targets if path.exists()]
    if taken and not force:
        raise InputError(f"{taken[0]} exists: choose another folder or pass --force to replace it")
    folder.mkdir(parents=True, exist_ok=True)
    with atomic_files(folder) as stage:
        for criterion, target in zip(criteria, targets, strict=True):
            stage(target.name).write_text(criterion.text, encoding="utf-8")
    return targets


class _Reader:
    """One definition's call read into a :class:`_Spec`."""

    def __init__(self, source: PeerSource, node: ast.Call) -> None:
        self.source = source
        positional = {"GEval": ("name", "evaluation_params", "criteria", "evaluation_steps", "rubric"),
                      "DAGMetric": ("name", "dag"), "AspectCritic": ("name", "definition")}  # fmt: skip
        self.call = source.call(node, positional.get(callee(node) or "", ()))
        default = "rubrics_score" if self.call.kind == "RubricsScore" else None
        self.title = self.text(self.call, "name", default=default)
        self.name = _SLUG.sub("_", self.title).strip("_").lower()
        if not self.name:
            raise self.fail(self.call.line, f"name {self.title!r} has no letter or digit", 'name="my_metric"')
        self.origin = f"{source.path.name} line {self.call.line}"

    def fail(self, line: int | None, problem: str, fix: str) -> FormatError:
        return self.source.fail(line, problem, fix)

    def text(self, call: PeerCall, key: str, default: str | None = None) -> str:
        """A required string argument, non-empty."""
        expr = call.args.get(key)
        if expr is None and default is not None:
            return default
        value = None if expr is None else self.source.plain(expr, f"{call.kind} {key}")
        if not isinstance(value, str) or not value.strip():
            raise self.fail(call.line, f"{call.kind} needs {key} as a non-empty string", f'{key}="..."')
        return value.strip()

    def optional(self, call: PeerCall, key: str, *, nodes: bool = False) -> Any:
        """An optional argument's value; a call (a node of a graph, a ``Rubric``) only where ``nodes``."""
        expr = call.args.get(key)
        if expr is None:
            return None
        read = self.source.value if nodes else self.source.plain
        return read(expr, f"{call.kind} {key}")

    def spec(self) -> _Spec:
        kind = self.call.kind
        if kind == "GEval":
            return _GEval(self).spec()
        if kind == "DAGMetric":
            return _Dag(self).spec()
        return _Ragas(self).spec()

    def inputs(self, params: Any, line: int) -> tuple[str, ...]:
        """The assay inputs of DeepEval ``evaluation_params`` (a list of ``LLMTestCaseParams.X``)."""
        if not isinstance(params, list) or not params:
            raise self.fail(line, "evaluation_params must be a non-empty list",
                            "evaluation_params=[LLMTestCaseParams.INPUT, LLMTestCaseParams.ACTUAL_OUTPUT]")  # fmt: skip
        names: set[str] = set()
        for param in params:
            member = param.name if isinstance(param, Member) else str(param).upper()
            if member not in _PARAMS:
                raise self.fail(getattr(param, "line", line), f"evaluation param {member} has no assay input "
                                f"(assay sends {', '.join(_ORDER)})", f"keep only {', '.join(_PARAMS)}")  # fmt: skip
            names.add(_PARAMS[member])
        return tuple(name for name in _ORDER if name in names)


class _GEval:
    def __init__(self, reader: _Reader) -> None:
        self.r, self.call = reader, reader.call

    def spec(self) -> _Spec:
        r, call = self.r, self.call
        inputs = r.inputs(r.optional(call, "evaluation_params", nodes=True), call.line)
        criteria = r.optional(call, "criteria")
        steps = r.optional(call, "evaluation_steps") or []
        if not isinstance(steps, list) or not all(isinstance(s, str) and s.strip() for s in steps):
            raise r.fail(call.line, "evaluation_steps must be a list of non-empty strings", 'evaluation_steps=["..."]')
        if criteria is not None and (not isinstance(criteria, str) or not criteria.strip()):
            raise r.fail(call.line, "criteria must be a non-empty string", 'criteria="..."')
        if criteria is None and not steps:
            raise r.fail(call.line, "a GEval needs criteria or evaluation_steps", 'criteria="..."')
        body = criteria.strip() if criteria else "Judge the answer by the steps."
        base = {"name": r.name, "inputs": inputs, "steps": tuple(s.strip() for s in steps)}
        rubric = r.optional(call, "rubric", nodes=True)
        if rubric:
            return self._rubric(rubric, base, body)
        return self._pass_fail(base, body)

    def _pass_fail(self, base: dict[str, Any], body: str) -> _Spec:
        threshold = self.r.optional(self.call, "threshold")
        strict = self.r.optional(self.call, "strict_mode") is True
        threshold = 1.0 if strict else (0.5 if threshold is None else threshold)
        if not isinstance(threshold, (int, float)) or isinstance(threshold, bool) or not 0 <= threshold <= 1:
            raise self.r.fail(self.call.line, "threshold must be a number from 0 to 1", "threshold=0.5")
        tenths = f"{threshold * 10:g}"
        notes = (f"Imported from DeepEval GEval {self.r.title!r} ({self.r.origin}).",
                 "G-Eval scores 0-10 and reports the score / 10, passing at score / 10 >= threshold; with no rubric",
                 "its scale has no labels, so this criterion is pass/fail: pass (score 1) when the answer would score",
                 f"at least {tenths} of 10 (threshold {threshold:g}), fail (score 0) otherwise.")  # fmt: skip
        body += f"\n\nPass when the answer would score at least {tenths} out of 10 on this; fail otherwise."
        description = f"DeepEval G-Eval {self.r.title!r}: pass when it would score >= {tenths} of 10"
        return _Spec(**base, description=description, notes=notes, body=body)

    def _rubric(self, rubric: Any, base: dict[str, Any], body: str) -> _Spec:
        if not isinstance(rubric, list):
            raise self.r.fail(self.call.line, "rubric must be a list of Rubric(...)", "rubric=[Rubric(...), ...]")
        ranges = sorted(self._range(item) for item in rubric)
        if len(ranges) < 2:  # one label is no scale: refused here, at the user's line, not by the criterion parser
            raise self.r.fail(self.call.line, "a rubric of one range is a scale of one label",
                              "give two Rubric(...) ranges or more, or no rubric for pass/fail")  # fmt: skip
        for (_, b1, _), (a2, _, _) in itertools.pairwise(ranges):
            if a2 <= b1:
                raise self.r.fail(self.call.line, f"rubric ranges overlap at {a2}", "make the score ranges disjoint")
        labels = tuple((f"score_{a}" if a == b else f"score_{a}_to_{b}", text, b / 10) for a, b, text in ranges)
        notes = (f"Imported from DeepEval GEval {self.r.title!r} ({self.r.origin}).",
                 "G-Eval scores 0-10 and reports the score / 10; each label is one rubric range of that 0-10 scale",
                 "and declares its upper bound / 10, the most G-Eval would report for it.")  # fmt: skip
        description = f"DeepEval G-Eval {self.r.title!r}: rubric ranges of 0-10, each declaring its upper bound / 10"
        return _Spec(**base, description=description, notes=notes, body=body, scale=labels)

    def _range(self, item: Any) -> tuple[int, int, str]:
        if not isinstance(item, ast.Call) or callee(item) != "Rubric":
            raise self.r.fail(self.call.line, "a rubric entry is not Rubric(...)", "Rubric(score_range=(0, 2), "
                              'expected_outcome="...")')  # fmt: skip
        call = self.r.source.call(item, ())
        span = self.r.optional(call, "score_range")
        outcome = self.r.text(call, "expected_outcome")
        ok = isinstance(span, list) and len(span) == 2 and all(type(x) is int and 0 <= x <= 10 for x in span)
        if not ok or span[0] > span[1]:
            raise self.r.fail(call.line, "score_range must be two whole numbers 0 <= a <= b <= 10",
                              "score_range=(0, 2)")  # fmt: skip
        return span[0], span[1], outcome


class _Dag:
    def __init__(self, reader: _Reader) -> None:
        self.r = reader
        self.ids: dict[int, str] = {}
        self.steps: dict[str, tuple[str, str, str, str]] = {}
        self.order: list[str] = []
        self.leaves: dict[int, list[str]] = {}
        self.params: set[str] = set()
        self.open: set[int] = set()

    def spec(self) -> _Spec:
        r = self.r
        dag = r.optional(r.call, "dag", nodes=True)
        if not isinstance(dag, ast.Call) or callee(dag) != "DeepAcyclicGraph":
            raise r.fail(r.call.line, "DAGMetric needs dag=DeepAcyclicGraph(root_nodes=[...])", "pass dag=...")
        graph = r.source.call(dag, ("root_nodes",))
        roots = r.optional(graph, "root_nodes", nodes=True)
        if not isinstance(roots, list) or len(roots) != 1:
            raise r.fail(graph.line, "assay's tree starts at one question; this graph has "
                         f"{len(roots) if isinstance(roots, list) else 'no'} root nodes",
                         "give root_nodes one judgement node, or import each root as its own DAGMetric")  # fmt: skip
        self.node(roots[0], graph.line)
        scores = sorted(self.leaves)
        if len(scores) < 2:
            raise r.fail(r.call.line, f"every path of the graph ends at score {scores[0]}: a scale needs two",
                         "give the verdicts different scores")  # fmt: skip
        labels = tuple((f"score_{s}", f"DeepEval verdict score {s} of 10, reached by: {self.paths(s)}", s / 10)
                       for s in scores)  # fmt: skip
        inputs = tuple(name for name in _ORDER if name in self.params) or ("question", "answer")
        notes = (f"Imported from DeepEval DAGMetric {r.title!r} ({r.origin}).",
                 "Each judgement node is a yes/no question; each verdict's score S (0-10) is the label score_S,",
                 "declaring S / 10 as DAGMetric reports it." + ("" if self.params else
                 " No node named evaluation_params: the judge sees the question and answer."))  # fmt: skip
        return _Spec(name=r.name, description=f"DeepEval DAG {r.title!r}: verdict scores of 0-10, each declaring "
                     "S / 10", notes=notes, inputs=inputs, body="Answer each question about the answer yes or no.",
                     scale=labels, tree=tuple(self.steps[i] for i in self.order))  # fmt: skip

    def node(self, expr: Any, line: int) -> str:
        """The tree id of a judgement node (made once, however many verdicts lead to it)."""
        kind = callee(expr) if isinstance(expr, ast.Call) else None
        if not isinstance(expr, ast.Call) or kind not in ("BinaryJudgementNode", "NonBinaryJudgementNode"):
            why = ("a TaskNode writes text for later nodes, which a yes/no tree cannot carry" if kind == "TaskNode"
                   else f"a {kind or 'value'} is not a judgement node assay's yes/no tree can ask")  # fmt: skip
            raise self.r.fail(getattr(expr, "lineno", line), f"DAG node not imported: {why}",
                              "rewrite it as a BinaryJudgementNode, or write the criterion file by hand")  # fmt: skip
        if id(expr) in self.ids:
            return self.ids[id(expr)]
        if id(expr) in self.open:
            raise self.r.fail(expr.lineno, "the graph loops back to this node", "make every path end at a score")
        self.open.add(id(expr))
        step_id = f"q{len(self.order) + 1}"
        self.order.append(step_id)
        call = self.r.source.call(expr, ("criteria", "children"))
        criteria = self.r.text(call, "criteria")
        params = self.r.optional(call, "evaluation_params", nodes=True)
        if params:
            self.params.update(self.r.inputs(params, call.line))
        verdicts = self.verdicts(call)
        if kind == "BinaryJudgementNode":
            question, yes, no = criteria, verdicts.get(True), verdicts.get(False)
        else:
            (first, yes), (second, no) = list(verdicts.items())
            question = f"{criteria} Answer yes if the verdict is {first!r}, no if it is {second!r}."
        if yes is None or no is None:
            raise self.r.fail(call.line, "a BinaryJudgementNode needs one verdict True and one False",
                              "children=[VerdictNode(verdict=False, ...), VerdictNode(verdict=True, ...)]")  # fmt: skip
        self.steps[step_id] = (step_id, question, self.target(yes, step_id, "yes"), self.target(no, step_id, "no"))
        self.ids[id(expr)] = step_id
        self.open.discard(id(expr))
        return step_id

    def verdicts(self, call: PeerCall) -> dict[Any, PeerCall]:
        children = self.r.optional(call, "children", nodes=True)
        binary = call.kind == "BinaryJudgementNode"
        if not isinstance(children, list) or len(children) != 2:
            count = len(children) if isinstance(children, list) else 0
            raise self.r.fail(call.line, f"a {call.kind} with {count} verdicts: assay's tree asks yes/no questions",
                              "two verdicts, or split the choice into yes/no BinaryJudgementNodes")  # fmt: skip
        out: dict[Any, PeerCall] = {}
        for child in children:
            if not isinstance(child, ast.Call) or callee(child) != "VerdictNode":
                raise self.r.fail(call.line, f"a child of a {call.kind} is not a VerdictNode", "VerdictNode(...)")
            verdict_call = self.r.source.call(child, ("verdict", "score", "child"))
            verdict = self.r.optional(verdict_call, "verdict")
            if (binary and not isinstance(verdict, bool)) or (not binary and not isinstance(verdict, str)):
                raise self.r.fail(verdict_call.line, f"verdict {verdict!r} does not fit a {call.kind}",
                                  "verdict=True or False (a string for a NonBinaryJudgementNode)")  # fmt: skip
            if verdict in out:
                raise self.r.fail(verdict_call.line, f"verdict {verdict!r} appears twice", "give each verdict once")
            out[verdict] = verdict_call
        return out

    def paths(self, score: int) -> str:
        """The answers that end at ``score``, in the order of their questions."""
        return "; ".join(sorted(self.leaves[score], key=_step_order))

    def target(self, verdict: PeerCall, step_id: str, answer: str) -> str:
        score, child = verdict.args.get("score"), verdict.args.get("child")
        if child is not None and score is None:
            return self.node(self.r.source.value(child, "VerdictNode child"), verdict.line)
        if score is None or child is not None:
            raise self.r.fail(verdict.line, "a VerdictNode needs a score or a child, not both",
                              "score=10, or child=another judgement node")  # fmt: skip
        value = self.r.source.plain(score, "VerdictNode score")
        if type(value) is not int or not 0 <= value <= 10:
            raise self.r.fail(verdict.line, f"score {value!r} is not a whole number 0-10", "score=0 ... score=10")
        self.leaves.setdefault(value, []).append(f"{step_id} {answer}")
        return f"score_{value}"


class _Ragas:
    def __init__(self, reader: _Reader) -> None:
        self.r = reader

    def spec(self) -> _Spec:
        r = self.r
        note = ("RAGAS sends the question and response, with the retrieved contexts and reference when a sample",
                "has them; this file names its inputs: question and answer, plus passages or reference_answer",
                "when the text speaks of them.")  # fmt: skip
        if r.call.kind == "AspectCritic":
            definition = r.text(r.call, "definition")
            notes = (f"Imported from RAGAS AspectCritic {r.title!r} ({r.origin}).",
                     "RAGAS's verdict is 1 or 0: pass declares 1, fail 0.", *note)  # fmt: skip
            return _Spec(name=r.name, description=f"RAGAS aspect critic {r.title!r}: pass 1, fail 0", notes=notes,
                         inputs=_ragas_inputs([definition]), body=definition)  # fmt: skip
        rubrics = r.optional(r.call, "rubrics")
        if not isinstance(rubrics, dict) or len(rubrics) < 2:
            raise r.fail(r.call.line, "RubricsScore needs rubrics, a dict of two entries or more (RAGAS's default "
                         "rubric is not copied)", 'rubrics={"score1_description": "...", ...}')  # fmt: skip
        labels = sorted(self._label(key, text) for key, text in rubrics.items())
        for (n1, key1, _), (n2, key2, _) in itertools.pairwise(labels):
            if n1 == n2:  # score1_ and score01_: one label twice, refused here at the user's line
                raise r.fail(r.call.line, f"rubric entries {key1!r} and {key2!r} both declare score {n1}",
                             "give each score one entry")  # fmt: skip
        notes = (f"Imported from RAGAS RubricsScore {r.title!r} ({r.origin}).",
                 "Each rubric entry scoreN_description is the label scoreN, declaring N: RAGAS's score is that number.",
                 *note)  # fmt: skip
        return _Spec(name=r.name, description=f"RAGAS rubric {r.title!r}: label scoreN declares N", notes=notes,
                     inputs=_ragas_inputs([text for _, _, text in labels]),
                     body="Score the answer by the rubric: give the label whose description fits it.",
                     scale=tuple((f"score{n}", text, float(n)) for n, _, text in labels))  # fmt: skip

    def _label(self, key: Any, text: Any) -> tuple[int, str, str]:
        found = _RUBRIC_KEY.fullmatch(key) if isinstance(key, str) else None
        if found is None or not isinstance(text, str) or not text.strip():
            raise self.r.fail(self.r.call.line, f"rubric entry {key!r} is not scoreN_description with a text",
                              '"score1_description": "what a score of 1 means"')  # fmt: skip
        return int(found.group(1)), key, text.strip()


def _step_order(path: str) -> int:
    """``q12 yes`` -> 12, so that paths list in the order of their questions."""
    return int(path.split(maxsplit=1)[0][1:])


def _ragas_inputs(texts: Iterable[str]) -> tuple[str, ...]:
    text = " ".join(texts)
    extra = {"passages": bool(_MENTIONS_PASSAGES.search(text)),
             "reference_answer": bool(_MENTIONS_REFERENCE.search(text))}  # fmt: skip
    return tuple(name for name in _ORDER if name in ("question", "answer") or extra.get(name))


def _toml(value: str) -> str:
    """A TOML basic string (JSON's escapes are TOML's; DEL must be escaped too)."""
    return json.dumps(value, ensure_ascii=False).replace("\x7f", "\\u007f")


def _render(spec: _Spec) -> str:
    """The criterion file: comments for people, the front matter, then the body the judge is told."""
    lines = ["+++", *(f"# {note}" for note in spec.notes), f"name = {_toml(spec.name)}", 'version = "1"',
             f"description = {_toml(spec.description)}",
             f"inputs = [{', '.join(_toml(name) for name in spec.inputs)}]"]  # fmt: skip
    if not spec.scale:
        lines.append('scale = "pass_fail"')
    if spec.steps:
        lines.append(f"steps = [{', '.join(_toml(step) for step in spec.steps)}]")
    for label, description, score in spec.scale:
        lines += ["", "[[scale]]", f"label = {_toml(label)}", f"description = {_toml(description)}",
                  f"score = {score!r}"]  # fmt: skip
    for step_id, question, yes, no in spec.tree:
        lines += ["", "[[tree]]", f"id = {_toml(step_id)}", f"question = {_toml(question)}", f"yes = {_toml(yes)}",
                  f"no = {_toml(no)}"]  # fmt: skip
    return "\n".join([*lines, "+++", spec.body, ""])
