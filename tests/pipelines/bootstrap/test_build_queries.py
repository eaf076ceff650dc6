"""``assay build --queries``: the user's own questions scrubbed, sampled, graded, flagged and given drafted
references, with the offline judge (no key)."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from assay.cli import main
from assay.formats.golden import GoldenSet
from assay.formats.queries import read_queries
from assay.judge import make_judge
from assay.pipelines.bootstrap import BuildSettings, build_golden

ROOT = Path(__file__).resolve().parents[3]
DEMO = ROOT / "datasets" / "demo" / "corpus"
LOG = [
    "How long do refunds take?",
    "how long do refunds take",
    "mail me at bob@example.com about shipping costs",
    "Can I pay by card 4111 1111 1111 1111?",
    "What is the airspeed velocity of an unladen swallow?",
]


@pytest.fixture(scope="module")
def golden(tmp_path_factory: pytest.TempPathFactory) -> GoldenSet:
    tmp = tmp_path_factory.mktemp("q")
    log = tmp / "log.txt"
    log.write_text("\n".join(LOG) + "\n")
    judge = make_judge("offline")
    return build_golden(DEMO, judge=judge, settings=BuildSettings(), output=tmp / "g", queries=read_queries(log))


def test_questions_are_the_users_merged_and_scrubbed(golden: GoldenSet) -> None:
    texts = sorted(q.text for q in golden.questions)
    assert len(texts) == 4  # the two refund wordings are one question, asked twice
    assert "mail me at [EMAIL] about shipping costs" in texts
    assert "Can I pay by card [CARD]?" in texts
    refund = next(q for q in golden.questions if "refunds" in q.text)
    assert refund.metadata["count"] == 2 and refund.type == "real"
    counts = golden.manifest.counts
    assert (counts["masked_email"], counts["masked_card"], counts["scrub_altered"]) == (1, 1, 2)


def test_unanswerable_flagged_answerable_drafted(golden: GoldenSet) -> None:
    grades: dict[str, list[int]] = {}
    for label in golden.qrels:
        grades.setdefault(label.query_id, []).append(label.grade or 0)
    for q in golden.questions:
        answerable = max(grades.get(q.id, [0])) >= 2
        assert q.flags.get("unanswerable_from_corpus", False) is (not answerable)
        assert q.flags.get("drafted", False) is answerable
        if answerable:
            assert q.reference_answer and q.nuggets and q.source_chunk_ids
    assert golden.manifest.counts["unanswerable_from_corpus"] == sum(
        bool(q.flags.get("unanswerable_from_corpus")) for q in golden.questions
    )
    assert any("reference_draft" in ref for ref in golden.manifest.prompts)


def test_cli_bad_query_file_names_file_and_line_and_writes_nothing(tmp_path: Path) -> None:
    log = tmp_path / "log.jsonl"
    log.write_text('{"question": "fine?"}\n{"id": 2}\n')
    out = tmp_path / "g"
    result = CliRunner().invoke(main, ["build", str(DEMO), "-o", str(out), "--judge", "offline", "--queries", str(log)])
    assert result.exit_code == 1
    assert "log.jsonl:2: no question" in result.output
    assert not out.exists()


def test_cli_no_scrub_keeps_the_text(tmp_path: Path) -> None:
    log = tmp_path / "log.txt"
    log.write_text("mail me at bob@example.com about refunds\n")
    out = tmp_path / "g"
    args = ["build", str(DEMO), "-o", str(out), "--judge", "offline", "--queries", str(log), "--no-scrub"]
    result = CliRunner().invoke(main, args)
    assert result.exit_code == 0, result.output
    golden = GoldenSet.load(out)
    assert golden.questions[0].text == "mail me at bob@example.com about refunds"
    assert "masked_email" not in golden.manifest.counts


def test_an_evaluation_says_its_references_are_drafted(golden: GoldenSet) -> None:
    from assay import EvalSettings, evaluate

    drafted = sorted(q.id for q in golden.questions if q.flags.get("drafted"))
    assert drafted
    lines = [{"query_id": q.id, "retrieved": [], "answer": "I do not know."} for q in golden.questions]
    result, _ = evaluate(golden, [("app", lines)], settings=EvalSettings(cluster_by="none"))
    (note,) = [w for w in result.warnings if "drafted" in w]
    assert note.startswith(f"{len(drafted)} of {len(golden.questions)} evaluated questions have reference answers")
    assert note.endswith(".") and drafted[0] in note


def test_the_dry_run_counts_relevance_exactly_and_bounds_drafts_and_support(tmp_path: Path) -> None:
    from assay.pipelines.bootstrap.estimate import estimate_queries

    log = tmp_path / "log.txt"
    log.write_text("\n".join(LOG) + "\n")
    queries = read_queries(log)
    estimate = estimate_queries(DEMO, queries, judge=make_judge("offline"), settings=BuildSettings())
    stages = {s.stage: s for s in estimate.stages}
    golden = build_golden(DEMO, judge=make_judge("offline"), settings=BuildSettings(), output=tmp_path / "g",
                          queries=queries)  # fmt: skip
    spent = golden.manifest.usage
    assert estimate.seeds == len(golden.questions) == 4  # the two refund questions merged
    assert stages["relevance"].exact and stages["relevance"].calls == spent["relevance"].calls
    assert stages["draft"].low == 0 <= spent["draft"].calls <= stages["draft"].calls
    assert stages["support"].low == 0 <= spent["support"].calls <= stages["support"].calls
    result = CliRunner().invoke(main, ["build", str(DEMO), "-o", str(tmp_path / "dry"), "--judge", "offline",
                                       "--queries", str(log), "--dry-run"])  # fmt: skip
    assert result.exit_code == 0, result.output
    assert "4 questions sampled from 5 logged" in " ".join(result.output.split())
    assert not (tmp_path / "dry").exists()
