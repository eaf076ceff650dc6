"""bench/agreement.py on a tiny synthetic collection: model judges over the fake server, offline, the cache."""

from __future__ import annotations

import json
import math
import sys
from pathlib import Path
from typing import Any

import pytest
from scipy.stats import kendalltau

from assay.judge.offline_lexical import relevance
from assay.testing import FakeOpenAIServer
from assay.types import Chunk

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "bench"))

import agreement
from agreement_data import Collection, read_cisi, read_smart

# Two topics that share no word; the documents people judged relevant are exactly those that mention a zebra.
DOCS = {
    "a1": ("Glacier melt", "Glacier melt rates in alpine valleys; a zebra grazed nearby."),
    "a2": ("Glacier tourism", "Alpine glacier tourism and valleys with hotels."),
    "a3": ("Valleys", "Alpine valleys hold glacier lakes and a zebra crossing."),
    "b1": ("Compiler passes", "Compiler optimisation passes for loops, written by a zebra fan."),
    "b2": ("Loop unrolling", "Loop unrolling in an optimising compiler; zebra stripes in the logo."),
    "b3": ("Linkers", "Linkers resolve symbols after the compiler runs over loops."),
    "b4": ("Compiler history", "A history of the compiler and of loop optimisation."),
}
QUERIES = {"1": "How fast do alpine glacier valleys melt?", "2": "Which compiler passes optimise loops?"}
QRELS = {"1": {"a1": 1, "a3": 1}, "2": {"b1": 1, "b2": 1}}


def _collection() -> Collection:
    chunks = [Chunk(id=d, doc_id=d, ordinal=0, text=f"{t}\n{b}") for d, (t, b) in DOCS.items()]
    return Collection(
        "tiny", chunks, dict(QUERIES), {q: dict(v) for q, v in QRELS.items()}, {d: t for d, (t, _) in DOCS.items()}
    )


def _answer(body: dict[str, Any]) -> str:
    """A judge that finds the zebra (model ``.../exact``) or calls everything relevant (``.../lenient``)."""
    passage = body["messages"][-1]["content"]
    grade = 3 if body["model"].endswith("lenient") or "zebra" in passage else 0
    return json.dumps({"reason": "scripted", "grade": grade})


def _kappa(judge: list[int], human: list[int]) -> float:
    """Cohen's kappa of two 0/1 lists, by its definition (p_o - p_e) / (1 - p_e)."""
    n = len(judge)
    p_o = sum(a == b for a, b in zip(judge, human, strict=True)) / n
    p_yes = (sum(judge) / n) * (sum(human) / n)
    p_no = (1 - sum(judge) / n) * (1 - sum(human) / n)
    return (p_o - p_yes - p_no) / (1 - p_yes - p_no) if p_yes + p_no < 1 else 1.0


def test_a_judge_that_agrees_with_people_and_one_that_calls_everything_relevant(tmp_path: Path) -> None:
    with FakeOpenAIServer(_answer) as server:
        result = agreement.run_collection(
            _collection(),
            ["hosted_vllm/exact", "hosted_vllm/lenient", "offline"],
            api_base=server.url,
            cache_dir=tmp_path,
        )
        calls = server.calls
        again = agreement.run_collection(_collection(), ["hosted_vllm/exact"], api_base=server.url, cache_dir=tmp_path)
        assert server.calls == calls  # the second run reads every label from the on-disk cache
    rows = {row.judge: row for row in result.rows}
    pool = agreement.build_pool(_collection())
    human = [int(pool.collection.relevant(q, d)) for q, d, _ in pool.pairs]
    assert {q for q, _, _ in pool.pairs} == {"1", "2"} and all(
        d[0] == {"1": "a", "2": "b"}[q] for q, d, _ in pool.pairs
    )
    exact, lenient = rows["hosted_vllm/exact"], rows["hosted_vllm/lenient"]
    assert exact.pairs == lenient.pairs == len(human)
    assert exact.human_rate == pytest.approx(sum(human) / len(human))
    assert exact.histogram == [len(human) - sum(human), 0, 0, sum(human)] and exact.unscored == 0
    assert (exact.kappa1, exact.kappa2, exact.leniency, exact.tau) == (1.0, 1.0, 0.0, 1.0)
    assert lenient.histogram == [0, 0, 0, len(human)] and lenient.rate1 == 1.0
    assert lenient.leniency == pytest.approx(1 - sum(human) / len(human))
    assert lenient.kappa1 == pytest.approx(_kappa([1] * len(human), human))
    assert "offline" in rows and rows["offline"].pairs == len(human)
    assert again.rows[-1].histogram == exact.histogram
    assert set(result.human_p10) == set(agreement.SYSTEMS)


def test_the_bm25_cut_is_set_to_the_human_rate(tmp_path: Path) -> None:
    pool = agreement.build_pool(_collection())
    human = [int(pool.collection.relevant(q, d)) for q, d, _ in pool.pairs]
    global_cut, per_query = agreement.bm25_rows(pool)
    assert sum(global_cut.histogram[1:]) == round(sum(human) / len(human) * len(human))
    ranked = sorted(range(len(pool.pairs)), key=lambda i: -pool.pairs[i][2])[: sum(global_cut.histogram[1:])]
    assert global_cut.kappa1 == pytest.approx(_kappa([int(i in ranked) for i in range(len(human))], human))
    assert per_query.rate1 == pytest.approx(per_query.histogram[1] / len(human))


@pytest.mark.parametrize(
    ("a", "b"),
    [([0.3, 0.2, 0.25, 0.1, 0.05], [0.5, 0.1, 0.4, 0.2, 0.0]), ([0.3, 0.3, 0.2, 0.1], [0.2, 0.3, 0.3, 0.1])],
)
def test_kendall_tau_is_tau_b(a: list[float], b: list[float]) -> None:
    assert agreement.kendall_tau(a, b) == pytest.approx(kendalltau(a, b).statistic)


def test_smart_records_and_cisi_files(tmp_path: Path) -> None:
    (tmp_path / "CISI.ALL").write_text(
        ".I 1\n.T\nA title\n.A\nAuthor\n.W\nSome text\non two lines.\n.X\n1 5 1\n.I 2\n.W\nMore.\n"
    )
    (tmp_path / "CISI.QRY").write_text(".I 1\n.W\nWhat about titles?\n.I 2\n.W\nUnjudged.\n")
    (tmp_path / "CISI.REL").write_text("     1     1\t0\t0.000000\n")
    assert read_smart(tmp_path / "CISI.ALL")["1"] == {
        "T": "A title",
        "A": "Author",
        "W": "Some text on two lines.",
        "X": "1 5 1",
    }
    cisi = read_cisi(tmp_path)
    assert [c.text for c in cisi.chunks] == ["A title\nSome text on two lines.", "More."]
    assert cisi.judged_queries() == ["1"] and cisi.relevant("1", "1") and not cisi.relevant("1", "2")


def test_without_cisi_or_folders_it_says_so_and_fails(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert agreement.main(["--cisi", str(tmp_path / "absent")]) == 1
    err = capsys.readouterr().err
    assert "CISI skipped" in err and "--cisi" in err and "nothing to measure" in err


def test_a_beir_folder_is_measured_and_written_as_json(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    folder = tmp_path / "tiny"
    (folder / "qrels").mkdir(parents=True)
    corpus = [{"_id": d, "title": t, "text": b} for d, (t, b) in DOCS.items()]
    (folder / "corpus.jsonl").write_text("".join(json.dumps(o) + "\n" for o in corpus))
    (folder / "queries.jsonl").write_text("".join(json.dumps({"_id": q, "text": t}) + "\n" for q, t in QUERIES.items()))
    lines = [f"{q}\t{d}\t{g}" for q, docs in QRELS.items() for d, g in docs.items()]
    (folder / "qrels" / "test.tsv").write_text("query-id\tcorpus-id\tscore\n" + "\n".join(lines) + "\n")
    out = tmp_path / "rows.json"
    assert agreement.main(["--no-cisi", str(folder), "--json", str(out)]) == 0
    table = capsys.readouterr().out
    assert "bm25 cut, global" in table and "offline" in table and "P@10 on tiny" in table
    saved = json.loads(out.read_text())
    assert saved[0]["collection"] == "tiny" and saved[0]["rows"][0]["kappa2"] is None


def test_an_answer_that_never_parses_is_unscored_and_its_cause_counted(tmp_path: Path) -> None:
    def answer(body: dict[str, Any]) -> str:
        said = " ".join(m["content"] for m in body["messages"])  # the repair retry repeats the conversation
        return "not json" if "Linkers resolve" in said else _answer(body)

    with FakeOpenAIServer(answer) as server:
        result = agreement.run_collection(
            _collection(), ["hosted_vllm/exact"], api_base=server.url, cache_dir=tmp_path, systems=False
        )
    row = result.rows[-1]
    assert row.unscored == 1 and sum(row.unscored_causes.values()) == 1 and sum(row.histogram) == row.pairs - 1
    assert f"unscored by hosted_vllm/exact on tiny: {next(iter(row.unscored_causes))} 1" in agreement.format_table(
        [result]
    )


def test_a_trec_folder_is_found_by_file_names(tmp_path: Path) -> None:
    folder = tmp_path / "trec"
    folder.mkdir()
    docs = [{"id": d, "title": t, "text": b} for d, (t, b) in DOCS.items()]
    (folder / "corpus.jsonl").write_text("".join(json.dumps(o) + "\n" for o in docs))
    (folder / "topics.tsv").write_text("".join(f"{q}\t{t}\n" for q, t in QUERIES.items()))
    (folder / "qrels.txt").write_text("".join(f"{q} 0 {d} {g}\n" for q, docs in QRELS.items() for d, g in docs.items()))
    collection = agreement.load_folder(folder)
    assert collection.queries == QUERIES and collection.qrels == QRELS
    assert sorted(c.id for c in collection.chunks) == sorted(DOCS)
    assert agreement.run_collection(collection, ["offline"], api_base=None, cache_dir=tmp_path / "c").rows[-1].pairs > 0


def test_cranfield_qrels_number_queries_by_position_and_run_their_codes_backwards(tmp_path: Path) -> None:
    # cran.qry's .I numbers skip (001, 004); cranqrel calls them 1 and 2. Code 1 is "a complete answer", 4 "minimum
    # interest", -1 "no interest"; lines may end in a space and a carriage return, as in the distributed file.
    (tmp_path / "cran.all.1400").write_text(
        ".I 1\n.T\nwing flutter .\n.A\nsmith\n.B\nj. ae. 1958\n.W\nwing flutter .\n  flutter of a wing.\n"
        ".I 2\n.T\nheat flux\n.W\nheat flux in a slab.\n.I 3\n.T\nslab\n.W\nslabs.\n"
    )
    (tmp_path / "cran.qry").write_text(".I 001\n.W\nwhat is wing flutter .\n.I 004\n.W\nheat in slabs .\n")
    (tmp_path / "cranqrel").write_text("1 1 1 \r\n1 3 4 \r\n2 2 2\n2 3 -1\n")
    cran = agreement.load_folder(tmp_path)
    assert cran.name == "cranfield"
    assert cran.queries == {"1": "what is wing flutter .", "2": "heat in slabs ."}
    assert cran.qrels == {"1": {"1": 3, "3": 1}, "2": {"2": 2, "3": 0}}
    assert cran.graded and cran.strict("1", "1") and not cran.strict("1", "3") and cran.relevant("1", "3")
    assert not cran.relevant("2", "3")  # "no interest" is judged not relevant
    assert cran.chunks[0].text == "wing flutter .\nwing flutter . flutter of a wing."


def test_a_cranfield_qrel_for_a_query_the_file_lacks_names_file_and_line(tmp_path: Path) -> None:
    (tmp_path / "cran.all.1400").write_text(".I 1\n.W\ntext\n")
    (tmp_path / "cran.qry").write_text(".I 001\n.W\nquery\n")
    (tmp_path / "cranqrel").write_text("1 1 2\n2 1 2\n")
    with pytest.raises(ValueError, match=r"cranqrel:2: query 2, but cran.qry holds 1 queries"):
        agreement.load_folder(tmp_path)


def test_a_smart_folder_like_cacm_matches_zero_padded_query_ids(tmp_path: Path) -> None:
    (tmp_path / "cacm.all").write_text(".I 1\n.T\nCompilers\n.W\nA compiler.\n.I 2\n.T\nSorting\n")
    (tmp_path / "query.text").write_text(".I 1\n.W\n compilers for loops\n.N\n 1. someone\n")
    (tmp_path / "qrels.text").write_text("01 1  0 0\n")
    cacm = agreement.load_folder(tmp_path)
    assert cacm.name == tmp_path.name.casefold() and cacm.queries == {"1": "compilers for loops"}
    assert cacm.qrels == {"1": {"1": 1}} and not cacm.graded
    assert [c.text for c in cacm.chunks] == ["Compilers\nA compiler.", "Sorting"]


def test_on_a_graded_collection_the_judge_grade_two_is_measured_against_human_grade_two(tmp_path: Path) -> None:
    collection = _collection()
    collection.qrels = {"1": {"a1": 3, "a3": 1}, "2": {"b1": 2, "b2": 1}}  # a1 and b1 strictly relevant
    result = agreement.run_collection(collection, ["offline"], api_base=None, cache_dir=tmp_path, systems=False)
    pool = agreement.build_pool(collection, systems=False)
    strict = [int(collection.strict(q, d)) for q, d, _ in pool.pairs]
    texts = {c.id: c.text for c in collection.chunks}
    judged_two = [int(relevance(QUERIES[q], texts[d])[0] >= 2) for q, d, _ in pool.pairs]
    judge = result.rows[-1]
    assert judge.human_rate2 == pytest.approx(sum(strict) / len(strict))
    assert judge.kappa_strict == pytest.approx(_kappa(judged_two, strict))
    assert all(math.isnan(row.kappa_strict) for row in result.rows[:2])  # the BM25 cuts have no grade 2
    assert " k2:2 " in agreement.format_table([result])


def test_a_cranfield_code_that_is_not_one_names_file_and_line(tmp_path: Path) -> None:
    (tmp_path / "cran.all.1400").write_text(".I 1\n.W\ntext\n")
    (tmp_path / "cran.qry").write_text(".I 001\n.W\nquery\n")
    (tmp_path / "cranqrel").write_text("1 1 2\n\n1 1 high\n")
    with pytest.raises(ValueError, match=r"cranqrel:3: expected 'query_number doc_id code', code 1-4 or -1"):
        agreement.load_folder(tmp_path)
