"""Open a golden folder's label store with its judge labels imported, and read the audited pairs from it."""

from __future__ import annotations

from pathlib import Path

from assay.audit._golden import GoldenView, load_golden
from assay.audit.pool import join_pool
from assay.audit.records import AuditedPair
from assay.audit.rewrites import join_rewrites
from assay.audit.store import STORE_NAME, LabelStore

__all__ = ["audited_pairs", "open_store", "write_pending_rewrites"]


def open_store(golden_dir: str | Path, *, timeout: float = 30.0) -> tuple[LabelStore, GoldenView]:
    """The label store of ``golden_dir`` and the golden set itself.

    On every open the golden set's judge labels (of chunks in the qrels, of spans in passages.jsonl) are imported as
    judge events; labels imported before are skipped, so the first open imports everything and later opens only
    what a rebuild or an evaluation added. Then people's grades of spans are written into passages.jsonl where it
    lacks them (:func:`assay.audit.pool.join_pool`), and people's corrections of conversation rewrites into
    questions.jsonl and conversations.jsonl (:func:`assay.audit.rewrites.join_rewrites`).
    """
    golden = load_golden(golden_dir)
    store = LabelStore.in_folder(golden_dir, timeout=timeout)
    if join_rewrites(store, golden_dir):
        golden = load_golden(golden_dir)
    store.import_judge_labels(golden.qrels)
    store.import_judge_labels(golden.span_labels)
    if golden.passages:
        join_pool(store, golden_dir)
    return store, golden


def audited_pairs(
    golden_dir: str | Path,
    *,
    annotator: str | None = None,
    judge_prompt: str | None = None,
    one_per_item: bool = False,
) -> list[AuditedPair]:
    """The (judge grade, human grade) pairs of a golden folder, with strata from its questions.

    See :meth:`LabelStore.audited_pairs`; for prediction-powered inference pass ``one_per_item=True`` to get one
    human grade per item. Pairs whose ``judge_grade`` is None are items the judge left unscored.
    """
    store, golden = open_store(golden_dir)
    return store.audited_pairs(
        golden.questions, annotator=annotator, judge_prompt=judge_prompt, one_per_item=one_per_item
    )


def write_pending_rewrites(golden_dir: str | Path) -> int:
    """People's corrections of conversation rewrites that an interrupted audit committed to the store but did not
    write into questions.jsonl and conversations.jsonl, written now (:func:`assay.audit.rewrites.join_rewrites`):
    called before a system is asked the golden questions, so it is asked the corrected rewrites. The number
    written; 0 without a store."""
    if not (Path(golden_dir) / STORE_NAME).is_file():
        return 0
    return join_rewrites(LabelStore.in_folder(golden_dir), golden_dir)
