"""People's judgements of RAG answers: ratings of single answers and preferences between two, in three formats.

What ``assay judge-check --answers FILE`` and ``bench/answers.py`` measure a judge's answer measures against. The
format is told from the content:

- **MTRAG** (IBM/mt-rag-benchmark, ``mtrag-human/evaluations/reference_subset_with_human_evaluations.json``): one
  JSON document with ``documents``, ``tasks`` and ``evaluations``. The question is a task's last user turn, the
  reference its first target, the passages its contexts' documents; each evaluation of a model other than
  ``reference`` is a rated answer, each annotator's rating of every categorical criterion (completeness,
  faithfulness, appropriateness, naturalness; 1-4) kept.
- **RAGChecker** (amazon-science/RAGChecker, ``data/meta_evaluation/human_labeled_data.json``): a JSON list with
  ``model1`` and ``model2`` (``model_name``, ``response``), ``query``, ``gt_answer`` and ``*_label`` (-2..2, positive
  when the second answer is better), two annotators per ``instance_id``: a preference pair with both labels kept.
- **JSONL**, one judgement per line: a rated answer ``{"question", "reference", "answer", "ratings": {criterion:
  value or [values]}}`` or a pair ``{"question", "reference", "answer_a", "answer_b", "preference": {criterion:
  value or [values]}}`` (positive: ``answer_b`` is better), each with optional ``question_id``, ``system`` (or
  ``system_a``/``system_b``) and ``contexts`` (passage texts).

A malformed record raises :class:`~assay.errors.FormatError` naming the file, the line (JSONL) or the record
(JSON), and what was expected. A JSON document larger than :data:`MAX_JSON_BYTES` is refused (it is read whole).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from assay.errors import FormatError, InputError
from assay.formats.jsonl import iter_json_lines

__all__ = ["MAX_JSON_BYTES", "AnswerJudgements", "JudgedAnswer", "JudgedPair", "read_answer_judgements"]

MAX_JSON_BYTES = 1 << 30
MTRAG_CRITERIA = ("completeness", "faithfulness", "appropriateness", "naturalness")
RAGCHECKER_CRITERIA = ("correctness", "completeness", "overall")


@dataclass(frozen=True)
class JudgedAnswer:
    """One system's answer to one question and what each person rated it, per criterion."""

    question_id: str
    question: str
    reference: str
    system: str
    answer: str
    passages: tuple[str, ...]
    ratings: Mapping[str, tuple[float, ...]]


@dataclass(frozen=True)
class JudgedPair:
    """Two systems' answers to one question and each person's preference, per criterion (> 0: the second)."""

    question_id: str
    question: str
    reference: str
    first: tuple[str, str]  # (system, answer)
    second: tuple[str, str]
    passages: tuple[str, ...]
    preferences: Mapping[str, tuple[float, ...]]


@dataclass(frozen=True)
class AnswerJudgements:
    """A file of judgements: its format, rated answers, preference pairs and criteria (in the file's order)."""

    source: str
    answers: tuple[JudgedAnswer, ...]
    pairs: tuple[JudgedPair, ...]
    criteria: tuple[str, ...]


def _text(record: Mapping[str, Any], key: str, path: Path, where: int | None, *, required: bool = True) -> str:
    value = record.get(key)
    if value is None and not required:
        return ""
    if not isinstance(value, str):
        problem = f"{key!r} is missing" if value is None else f"{key!r} is {type(value).__name__}"
        raise FormatError(path, where, problem, f"{key!r} as a string")
    return value


def _votes(value: Any, key: str, path: Path, where: int | None) -> tuple[float, ...]:
    values = value if isinstance(value, list) else [value]
    if not values or not all(isinstance(v, int | float) and not isinstance(v, bool) for v in values):
        raise FormatError(path, where, f"{key} is {value!r}", f"{key} as a number or a list of numbers")
    return tuple(float(v) for v in values)


def _scores(record: Mapping[str, Any], key: str, path: Path, where: int | None) -> dict[str, tuple[float, ...]]:
    block = record.get(key)
    if not isinstance(block, dict) or not block:
        raise FormatError(path, where, f"{key!r} is missing or empty", f'"{key}": {{criterion: value or [values]}}')
    return {str(c): _votes(v, f"{key}.{c}", path, where) for c, v in block.items()}


def _contexts(record: Mapping[str, Any], path: Path, where: int | None) -> tuple[str, ...]:
    contexts = record.get("contexts") or []
    if not isinstance(contexts, list) or not all(isinstance(c, str) for c in contexts):
        raise FormatError(path, where, "'contexts' is not a list of strings", '"contexts": ["passage text", ...]')
    return tuple(contexts)


def _criteria(seen: list[str], names: Mapping[str, Any]) -> None:
    seen.extend(name for name in names if name not in seen)


def _read_jsonl(path: Path) -> AnswerJudgements:
    answers: list[JudgedAnswer] = []
    pairs: list[JudgedPair] = []
    criteria: list[str] = []
    for line, record in iter_json_lines(path, header="optional"):
        qid = str(record.get("question_id") or f"line-{line}")
        question, reference = _text(record, "question", path, line), _text(record, "reference", path, line)
        if "ratings" in record:
            ratings = _scores(record, "ratings", path, line)
            _criteria(criteria, ratings)
            answers.append(
                JudgedAnswer(
                    qid,
                    question,
                    reference,
                    str(record.get("system") or "system"),
                    _text(record, "answer", path, line),
                    _contexts(record, path, line),
                    ratings,
                )
            )
        elif "preference" in record:
            preferences = _scores(record, "preference", path, line)
            _criteria(criteria, preferences)
            first = (str(record.get("system_a") or "a"), _text(record, "answer_a", path, line))
            second = (str(record.get("system_b") or "b"), _text(record, "answer_b", path, line))
            if first[0] == second[0]:
                raise FormatError(path, line, f"both answers are system {first[0]!r}", "two different systems")
            pairs.append(
                JudgedPair(qid, question, reference, first, second, _contexts(record, path, line), preferences)
            )
        else:
            raise FormatError(
                path,
                line,
                "neither 'ratings' nor 'preference'",
                'a rated answer {"answer", "ratings"} or a pair {"answer_a", "answer_b", "preference"}',
            )
    if not answers and not pairs:
        raise InputError(
            f"{path}: no judgement in the file; give one JSON object per line (module assay.formats.answer_judgements)"
        )
    return AnswerJudgements("JSONL", tuple(answers), tuple(pairs), tuple(criteria))


def _read_mtrag(path: Path, data: Mapping[str, Any]) -> AnswerJudgements:
    try:
        docs = {d["document_id"]: d["text"] for d in data["documents"]}
        tasks = {t["task_id"]: t for t in data["tasks"]}
    except (KeyError, TypeError) as exc:
        raise FormatError(path, None, f"an MTRAG file without {exc}", "documents with document_id and text") from exc
    answers = []
    for n, ev in enumerate(data["evaluations"], 1):
        where = f"evaluation {n}"
        try:
            if ev["model_id"] == "reference":
                continue
            task = tasks[ev["task_id"]]
            notes = ev["annotations"]
            ratings = {c: tuple(float(v["value"]) for v in notes[c].values()) for c in MTRAG_CRITERIA if c in notes}
            passages = tuple(docs[c["document_id"]] for c in task.get("contexts", []))
            answers.append(
                JudgedAnswer(
                    ev["task_id"],
                    task["input"][-1]["text"],
                    task["targets"][0]["text"],
                    ev["model_id"],
                    ev["model_response"],
                    passages,
                    ratings,
                )
            )
        except (KeyError, TypeError, ValueError, IndexError) as exc:
            raise FormatError(path, None, f"{where}: {type(exc).__name__} {exc}", "an MTRAG evaluation") from exc
    return AnswerJudgements("MTRAG", tuple(answers), (), MTRAG_CRITERIA)


def _read_ragchecker(path: Path, data: list[Any]) -> AnswerJudgements:
    grouped: dict[Any, list[Mapping[str, Any]]] = {}
    for record in data:
        grouped.setdefault(record.get("instance_id"), []).append(record)
    pairs = []
    for instance, records in grouped.items():
        first = records[0]
        try:
            qid = f"{first['dataset']}-{first['query_id']}"
            preferences = {c: tuple(float(r[f"{c}_label"]) for r in records) for c in RAGCHECKER_CRITERIA}
            pairs.append(
                JudgedPair(
                    qid,
                    first["query"],
                    first["gt_answer"],
                    (first["model1"]["model_name"], first["model1"]["response"]),
                    (first["model2"]["model_name"], first["model2"]["response"]),
                    (),
                    preferences,
                )
            )
        except (KeyError, TypeError, ValueError) as exc:
            raise FormatError(
                path, None, f"instance {instance}: {type(exc).__name__} {exc}", "a RAGChecker human-labelled pair"
            ) from exc
    return AnswerJudgements("RAGChecker", (), tuple(pairs), RAGCHECKER_CRITERIA)


def read_answer_judgements(path: str | Path) -> AnswerJudgements:
    """The judgements in ``path`` (module docstring), whichever of the three formats it is."""
    source = Path(path)
    if not source.is_file():
        raise InputError(f"{source}: no such file; give the human judgements of answers (MTRAG, RAGChecker or JSONL)")
    if source.suffix.lower() == ".jsonl":
        return _read_jsonl(source)
    if source.stat().st_size > MAX_JSON_BYTES:
        raise InputError(f"{source}: a JSON document over {MAX_JSON_BYTES >> 20} MB is read whole; write it as JSONL")
    try:
        data = json.loads(source.read_text(encoding="utf-8"))
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise FormatError(source, getattr(exc, "lineno", None), f"not JSON: {exc}", "a JSON document") from exc
    if isinstance(data, dict) and {"evaluations", "tasks", "documents"} <= data.keys():
        return _read_mtrag(source, data)
    if isinstance(data, list) and data and all(isinstance(r, dict) and "model1" in r and "model2" in r for r in data):
        return _read_ragchecker(source, data)
    raise FormatError(
        source,
        None,
        "neither MTRAG's evaluations nor RAGChecker's pairs",
        "an MTRAG human-evaluation file, RAGChecker's human_labeled_data.json, or JSONL",
    )
