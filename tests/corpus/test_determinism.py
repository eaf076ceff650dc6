"""The same alignments and near-duplicates in every process and on every machine: nothing depends on Python's salted
``hash()`` (PYTHONHASHSEED) or on the order documents are given in. Each check runs the code in fresh interpreters
under several hash seeds and compares what they print."""

from __future__ import annotations

import json
import os
import random
import subprocess
import sys

from assay.corpus.align import Aligner
from assay.types import Document

SEEDS = ("0", "1", "2", "3")

ALIGN = """
import dataclasses, json, sys
from assay.corpus.align import Aligner
from assay.types import Document
data = json.load(sys.stdin)
aligner = Aligner(Document(id=i, source=i, text=t, content_hash=i) for i, t in data["docs"])
spans = [aligner.locate(p) for p in data["passages"]]
print(json.dumps([s and dataclasses.astuple(s) for s in spans]))
"""

POOL = """
import json, sys
from assay.corpus import Bm25Index
from assay.corpus.pooling import shingle_hashes
from assay.types import Chunk
texts = json.load(sys.stdin)
index = Bm25Index.build([Chunk(id=f"c{i}", doc_id=f"d{i}", ordinal=0, text=t) for i, t in enumerate(texts)])
near = {cid: index.near_duplicates_of(cid, 0.5) for cid in index.ids}
print(json.dumps([near, [shingle_hashes(t).tolist() for t in texts]]))
"""


def under_seeds(script: str, data: object) -> dict[str, str]:
    """What ``script`` prints, fed ``data`` as JSON, in a fresh interpreter per hash seed (run side by side)."""
    runs = {
        seed: subprocess.Popen(
            [sys.executable, "-c", script],
            env={**os.environ, "PYTHONHASHSEED": seed},
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for seed in SEEDS
    }
    out = {}
    for seed, run in runs.items():
        stdout, stderr = run.communicate(json.dumps(data), timeout=120)
        assert run.returncode == 0, stderr
        out[seed] = stdout
    return out


def near_copies(rng: random.Random) -> tuple[list[tuple[str, str]], list[str]]:
    """One page copied eight times with a few words changed in each (ids in no particular order), two unrelated
    pages, and passages cut from the copies: exact windows (held by several copies) and windows with about one word
    in eight dropped and a title prepended (approximate)."""
    vocabulary = [f"w{i}" for i in range(400)]
    page = [rng.choice(vocabulary) for _ in range(300)]
    docs: list[tuple[str, str]] = []
    for n in rng.sample(range(8), 8):
        copy = list(page)
        for at in rng.sample(range(len(copy)), 4):
            copy[at] = f"changed{n}x{at}"
        docs.append((f"copy-{n}", " ".join(copy)))
    docs += [(f"other-{n}", " ".join(rng.choice(vocabulary) for _ in range(300))) for n in range(2)]
    passages = []
    for _ in range(60):
        words = rng.choice(docs[:8])[1].split()
        a = rng.randrange(len(words) - 60)
        passages.append(" ".join(words[a : a + 12]))
        passages.append("Title " + " ".join(w for w in words[a : a + 60] if rng.random() > 0.125))
    return docs, passages


def test_alignments_are_the_same_under_every_hash_seed() -> None:
    docs, passages = near_copies(random.Random(11))
    printed = under_seeds(ALIGN, {"docs": docs, "passages": passages})
    spans = json.loads(printed["0"])
    assert sum(s is not None and s[3] == "approximate" for s in spans) >= 50  # the approximate path is exercised
    assert {s[0] for s in spans if s} >= {"copy-0", "copy-1"}
    assert all(out == printed["0"] for out in printed.values())


def test_alignments_do_not_depend_on_the_order_documents_are_given_in() -> None:
    docs, passages = near_copies(random.Random(12))
    expected = _spans(docs, passages)
    rng = random.Random(0)
    for _ in range(3):
        shuffled = rng.sample(docs, len(docs))
        assert _spans(shuffled, passages) == expected


def test_near_duplicates_and_shingle_hashes_are_the_same_under_every_hash_seed() -> None:
    rng = random.Random(5)
    texts = [" ".join(f"w{rng.randrange(50)}" for _ in range(30)) for _ in range(20)]
    texts += [t.replace("w1 ", "edited ", 1) for t in texts[:10]]  # planted near-duplicates
    printed = under_seeds(POOL, texts)
    near, _ = json.loads(printed["0"])
    assert sum(map(len, near.values())) >= 10
    assert all(out == printed["0"] for out in printed.values())


def _spans(docs: list[tuple[str, str]], passages: list[str]) -> list[object]:
    aligner = Aligner(Document(id=i, source=i, text=t, content_hash=i) for i, t in docs)
    return [aligner.locate(p) for p in passages]
