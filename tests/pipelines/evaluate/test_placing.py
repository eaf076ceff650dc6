"""placing.py's rule for a repeated text, a step at a time, on small hand-made pages: each case is built so that the
step under test is the one that decides (every earlier step ties). test_same_text.py checks the rule through whole
evaluations; the mutation habit (scripts/mutation.sh) found these steps undecided by it: where a golden chunk starts
or ends (3), unlabelled text below a grade 0 (4), the nearest sure passage's document (5), the neighbour after (2), a
repeated text giving way in a later pass, and a passage restricted to one document."""

from __future__ import annotations

from datetime import UTC, datetime

from passages_fixture import paragraph_chunks

from assay.formats.golden import GoldenSet
from assay.pipelines.evaluate.runs.locate import Located, Resolver
from assay.pipelines.evaluate.runs.read import load_runs, specs_of
from assay.types import Document, Manifest, Provenance, Question, RelevanceLabel

TIME = datetime(2025, 1, 1, tzinfo=UTC)
T = "Set the cache folder before the first run."  # the repeated text
V = "Name the model in the settings file."
ALPHA = "Alpha text here. " + T + " More alpha words."  # T inside a chunk: no edge, no neighbour


def _golden(pages: dict[str, str], grades: dict[str, int] | None = None) -> GoldenSet:
    """Pages cut into chunks at blank lines (ids ``doc#ordinal``); one question, q1, with ``grades`` as its labels."""
    docs = [Document(id=d, source=f"{d}.md", text=t, content_hash=d) for d, t in sorted(pages.items())]
    chunks = paragraph_chunks(pages)
    provenance = Provenance(source="judge", model="fixture", time=TIME)
    qrels = [RelevanceLabel(query_id="q1", chunk_id=c, grade=g, provenance=provenance)
             for c, g in (grades or {}).items()]  # fmt: skip
    questions = [Question(id="q1", text="Where is the cache folder set?", source_doc_ids=sorted(pages))]
    return GoldenSet(Manifest(assay_version="test"), docs, chunks, questions, qrels, [])


def _line(golden: GoldenSet, items: list[dict[str, object]]) -> list[Located]:
    run = [{"query_id": "q1", "retrieved": items}]
    line = next(iter(load_runs(specs_of({"r": run}), golden, Resolver(golden))[0].lines.values()))
    return [line.located[unit] for unit in line.ranked]


def _where(found: Located) -> tuple[str, int]:
    assert found.span is not None
    return found.span.doc_id, found.span.start


def test_step_3_a_place_that_starts_where_a_golden_chunk_does_comes_first() -> None:
    """T stands inside a's chunk and at the start of b's (after markup only): b, though a sorts first; the unit
    keeps the passage's text."""
    at_start = {"a": ALPHA, "b": "## " + T + " More beta words."}
    (found,) = _line(_golden(at_start), [{"text": T}])
    assert _where(found) == ("b", 3) and found.text == T
    after_a_chunk = {"a": ALPHA, "b": "Beta intro words.\n\n## " + T + " More beta words."}
    (found,) = _line(_golden(after_a_chunk), [{"text": T}])
    assert _where(found) == ("b", after_a_chunk["b"].index(T))


def test_step_4_unlabelled_text_counts_below_a_grade_0() -> None:
    pages = {"a": ALPHA, "b": "Beta words here. " + T + " More beta words."}
    (found,) = _line(_golden(pages, {"b#0": 0}), [{"text": T}])
    assert _where(found) == ("b", pages["b"].index(T))


def test_step_4_a_grade_counts_in_its_own_document_only() -> None:
    """c's chunk graded 3 covers offsets [0, 24) of c; T stands at offset 6 of b: b's T is not graded."""
    pages = {
        "a": "Alpha text here with a long preamble that runs on and on. " + T + " More alpha words.",
        "b": "Beta. " + T + " More beta words.",
        "c": "Gamma words here and so.",
    }
    (found,) = _line(_golden(pages, {"c#0": 3}), [{"text": T}])
    assert _where(found) == ("a", pages["a"].index(T))


def test_step_5_the_document_of_the_nearest_sure_passage() -> None:
    pages = {"a": ALPHA, "b": "Beta words here.\n\nBeta two. " + T + " More beta words.", "c": "Gamma words only."}
    *_, found = _line(_golden(pages), [{"id": "c#0"}, {"id": "b#0"}, {"text": T}])
    assert _where(found) == ("b", pages["b"].index(T))


def test_step_2_the_neighbour_after_counts_as_the_one_before() -> None:
    """T between a sure passage of a (not touching it) and a sure passage of b that starts right after b's T."""
    u = "Unique beta sentence stands once."
    pages = {"a": "Alpha start words.\n\n" + ALPHA, "b": "Beta intro. " + T + " " + u + " Beta end."}
    _, found, _ = _line(_golden(pages), [{"id": "a#0"}, {"text": T}, {"text": u}])
    assert _where(found) == ("b", pages["b"].index(T))


def test_a_repeated_text_gives_way_to_a_later_passage_that_needs_its_place() -> None:
    """T stands in a, b and c; T + V in a and b, and b is given whole by id. The first pass puts T in a (beside T + V's
    places) and then T + V in a too (its other place is b, taken); the second pass moves T to c, the copy no other
    passage holds, and T + V stays in a."""
    pages = {
        "a": "Alpha text here. " + T + " " + V + " More alpha words.",
        "b": "Beta words here. " + T + " " + V + " Beta end words.",
        "c": "Gamma words here. " + T + " Gamma end words.",
    }
    alone, joined, _ = _line(_golden(pages), [{"text": T}, {"text": T + " " + V}, {"id": "b#0"}])
    assert _where(alone) == ("c", pages["c"].index(T))
    assert _where(joined) == ("a", pages["a"].index(T))


def test_a_passage_given_with_its_document_stands_there() -> None:
    pages = {"a": ALPHA, "b": "Beta words here. " + T + " More beta words."}
    (found,) = _line(_golden(pages), [{"doc_id": "b", "text": T}])
    assert _where(found) == ("b", pages["b"].index(T))
