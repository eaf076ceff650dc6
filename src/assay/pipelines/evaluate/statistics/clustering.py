"""Which questions move together (``--cluster-by``), and what that costs the evaluation in evidence.

Questions generated from one document share its vocabulary, its difficulty and the chunks that answer them: when a
system handles that document well it scores well on all of its questions at once. Treating them as independent
counts one document's evidence several times, and the paired tests then call differences that are not there
(``bench/stats.py`` measures it: at 4 questions per document and a document-level effect, the question-level test
raised false alarms in about a quarter of A/A comparisons). The statistics therefore resample clusters:

* ``doc`` (the default): questions that share a source document are one cluster; a question built from two
  documents links their clusters (connected components over shared documents), and the turns of one conversation
  are one cluster with their documents. A question without source documents
  (imported golden sets) is a cluster of its own. When no two questions share a document this is exactly the
  question-level analysis.
* ``none``: every question its own cluster (the analysis before clustering; use it only when the questions were
  drawn independently, e.g. from a query log).
* any other name: a question field (``metadata`` first, then the question's own attribute), e.g. ``product``; every
  question must have it.

:func:`clustering_summary` records the grouping with the design effect of the primary metric and a plain note when
the clusters are few (under :data:`~assay.metrics.clusters.FEW_CLUSTERS`) or one cluster holds most questions.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from pathlib import Path

from assay.errors import ConfigError
from assay.formats.golden import GoldenSet
from assay.metrics import clusters
from assay.results import Clustering, Comparison, QueryResult, rounded
from assay.types import Question

__all__ = ["CLUSTER_CHOICES", "clustering_summary", "question_clusters"]

CLUSTER_CHOICES = ("doc", "none")  # besides a question field


def _field(question: Question, name: str) -> str | None:
    value = question.metadata.get(name, getattr(question, name, None))
    if isinstance(value, str | int | float | bool) and value != "":
        return str(value)
    return None


def question_clusters(gold: GoldenSet, by: str, folder: Path | None = None) -> dict[str, str | None]:
    """Each question's cluster label (None: its own cluster), by ``by`` (module doc). A field that some questions
    lack is a :class:`ConfigError` naming how many, an example and the file."""
    questions = gold.questions
    if by == "none":
        return dict.fromkeys((q.id for q in questions), None)
    if by == "doc":
        turns = {turn.question_id: c.id for c in gold.conversations for turn in c.turns if turn.judged}
        return _by_document(questions, turns)
    _check_scalar(questions, by, folder)
    values = {q.id: _field(q, by) for q in questions}
    missing = [qid for qid, value in values.items() if value is None]
    if missing:
        where = f" in {folder / 'questions.jsonl'}" if folder is not None else ""
        raise ConfigError(
            f"--cluster-by {by}: {len(missing)} of {len(questions)} questions have no field {by!r} (e.g. "
            f"{missing[0]}{where}); add it to every question's metadata, or use --cluster-by doc (questions of one "
            f"source document together) or --cluster-by none"
        )
    return {qid: f"{by}:{value}" for qid, value in values.items()}


def _check_scalar(questions: Sequence[Question], by: str, folder: Path | None) -> None:
    """A field that holds lists or objects (not missing: the message says what it holds and what to do)."""
    held = [(q.id, v) for q in questions if isinstance(v := q.metadata.get(by, getattr(q, by, None)), list | dict)]
    if not held:
        return
    qid, value = held[0]
    kind = "a list" if isinstance(value, list) else "an object"
    where = f" in {folder / 'questions.jsonl'}" if folder is not None else ""
    raise ConfigError(
        f"--cluster-by {by}: {len(held)} of {len(questions)} questions hold {kind} in {by!r}, not one value (e.g. "
        f"{qid}{where}: {str(value)[:60]}); a cluster needs one value per question: store one {by} per question "
        "(e.g. the first of the list, or the list joined into one label) in its metadata, or use --cluster-by doc "
        "(questions sharing a source document together) or --cluster-by none"
    )


def _by_document(questions: Sequence[Question], conversation: Mapping[str, str]) -> dict[str, str | None]:
    """Connected components of questions over shared source documents (and, for the turns of a conversation, the
    conversation itself), labelled by their smallest document id."""
    parent: dict[str, str] = {}

    def root(doc: str) -> str:
        while parent[doc] != doc:
            parent[doc] = parent[parent[doc]]
            doc = parent[doc]
        return doc

    def nodes(question: Question) -> list[str]:
        linked = {f"doc:{doc}" for doc in question.source_doc_ids}
        if question.id in conversation:
            linked.add(f"conversation:{conversation[question.id]}")
        return sorted(linked)

    for question in questions:
        docs = nodes(question)
        for doc in docs:
            parent.setdefault(doc, doc)
        for doc in docs[1:]:
            a, b = root(docs[0]), root(doc)
            if a != b:
                parent[max(a, b)] = min(a, b)  # the smaller id stays the root: labels do not depend on order
    return {q.id: root(min(found)) if (found := nodes(q)) else None for q in questions}


def clustering_summary(
    by: str,
    per_run: Mapping[str, Mapping[str, QueryResult]],
    comparisons: Sequence[Comparison],
    primary: str | None,
) -> Clustering | None:
    """The grouping of the evaluated questions (every run's), with the design effect of ``primary``: the largest
    over its compared pairs, else over the runs' scores. None when no question was evaluated."""
    labels = {qid: row.unit for rows in per_run.values() for qid, row in rows.items()}
    if not labels:
        return None
    sizes = Counter(labels.values())
    effects = [c.design_effect for c in comparisons if c.primary and c.design_effect is not None]
    if not effects and primary is not None and len(sizes) < len(labels):
        for rows in per_run.values():
            scored = [(value, labels[qid]) for qid, row in rows.items()
                      if (value := row.metrics.get(primary)) is not None]  # fmt: skip
            value = clusters.design_effect([v for v, _ in scored], [c for _, c in scored]) if scored else None
            if value is not None:
                effects.append(value)
    n, k = len(labels), len(sizes)
    deff = rounded(max(effects)) if effects else None
    return Clustering(
        by=by, questions=n, clusters=k, mean_size=round(n / k, 3), max_size=max(sizes.values()), design_effect=deff,
        method=_method(n, k), note=_note(by, n, k, max(sizes.values())),
    )  # fmt: skip


def _method(n: int, k: int) -> str:
    if k == n:
        return "questions resampled as independent (each its own cluster)"
    if k < clusters.BOOTSTRAP_CLUSTERS:
        return "cluster sign flips for tests and every interval (too few clusters for a cluster bootstrap)"
    return "cluster sign flips for tests and their intervals, cluster bootstrap for the means' intervals"


def _note(by: str, n: int, k: int, largest: int) -> str | None:
    unit = "documents" if by == "doc" else f"values of {by}" if by != "none" else "questions"
    if k == n:
        return None
    if k < 6:
        return (
            f"Only {k} {unit} hold the {n} questions: no test can reach 95% confidence, so no difference can be "
            f"called significant; build questions from more documents."
        )
    if k < clusters.FEW_CLUSTERS:
        return (
            f"Only {k} {unit} hold the {n} questions: intervals and tests rest on {k} independent units, so they are "
            f"wide; build questions from more documents to narrow them."
        )
    if largest > n / 2:
        return (
            f"One cluster holds {largest} of the {n} questions: it dominates every mean, and the intervals rest "
            f"mostly on the other {k - 1} clusters."
        )
    return None
