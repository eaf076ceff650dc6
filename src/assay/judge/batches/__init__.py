"""Judging through the providers' batch APIs (half the price, their own rate limits), resumable across processes.

:func:`use_batches` (:mod:`.setup`, with :func:`can_batch`) gives a judge a :class:`BatchRunner`: from then on its
``ajudge_many`` sends the calls the cache does not answer as batches (:mod:`.runner` describes the flow), records
them in a ledger beside the cache (:mod:`.ledger`) and writes their answers into the same cache as direct calls.
:mod:`.api` is the OpenAI-compatible batch protocol (OpenAI, Azure OpenAI, compatible servers), :mod:`.lines` reads
and writes batch files, :mod:`.status` makes the progress line, :mod:`.manage` checks and cancels recorded batches
(``assay batches``).
"""

from __future__ import annotations

from assay.judge.batches.api import BatchAPI
from assay.judge.batches.ledger import BatchRecord, Ledger
from assay.judge.batches.runner import RETRY_POLICIES, BatchRunner, BatchTotals
from assay.judge.batches.setup import use_batches

__all__ = ["RETRY_POLICIES", "BatchAPI", "BatchRecord", "BatchRunner", "BatchTotals", "Ledger", "use_batches"]
