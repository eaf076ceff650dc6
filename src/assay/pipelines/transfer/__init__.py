"""Golden sets to and from other tools' formats.

:mod:`.export`: a golden set in, a BEIR, TREC, RAGAS or CSV folder out (built aside, swapped in whole).
:mod:`.imports`: BEIR folders, TREC qrels with topics and a corpus, or a RAGAS test set in, a golden set out (labels
carry the source the user names: human, imported or judge).
:mod:`.conversations`: conversations to RAGAS multi-turn samples, DeepEval conversational test cases and TREC CAsT;
:mod:`.conversations_import`: and back from the first two.
:mod:`.assembly`: what every importer shares: the parts a reader produced checked against each other and assembled
into a golden set with its manifest.
:mod:`.spans`: the pooled spans of a golden set (judged passages with their text, offsets and grades) as an
export writes them.
"""

from assay.pipelines.transfer.assembly import ImportSummary, documents_from_chunks
from assay.pipelines.transfer.export import EXPORT_FORMATS, ExportFormat, ExportSummary, export_golden, graded_pairs
from assay.pipelines.transfer.imports import (
    import_beir,
    import_conversations,
    import_ragas,
    import_trec,
)

__all__ = [
    "EXPORT_FORMATS",
    "ExportFormat",
    "ExportSummary",
    "ImportSummary",
    "documents_from_chunks",
    "export_golden",
    "graded_pairs",
    "import_beir",
    "import_conversations",
    "import_ragas",
    "import_trec",
]
