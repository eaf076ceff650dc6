"""``assay build``: a corpus in, a golden-set folder out.

Flow: ``corpus.ingest`` and ``corpus.chunking`` make documents and chunks (:mod:`.sampling` prepares them and draws
seeds), one generation call per seed gives questions (:mod:`.judging`), :mod:`.filters` drops the ones that fail a
check, :mod:`.judging` pools candidate chunks and grades them, :mod:`.support` maps nuggets and claims to chunks, and
:mod:`.pipeline` ties the stages together and writes the folder (``GoldenSet.save``, atomic). :mod:`.bookkeeping`
adds up the stages' counts and warnings, :mod:`.checks` stops a build that produced nothing, :mod:`.written` makes
the manifest and the folder of a build stopped after its questions. :mod:`.estimate` prices a build before it is run;
:mod:`.settings` holds the settings and the record every stage returns.
"""

from assay.pipelines.bootstrap.pipeline import (
    DEMO_CONVERSATIONS,
    DEMO_SETTINGS,
    DROP_COUNTS,
    BuildEstimate,
    BuildSettings,
    StageEstimate,
    abuild_golden,
    build_golden,
    estimate_build,
    prepare_corpus,
)
from assay.pipelines.bootstrap.written import PROMPTS, corpus_hash

__all__ = [
    "DEMO_CONVERSATIONS",
    "DEMO_SETTINGS",
    "DROP_COUNTS",
    "PROMPTS",
    "BuildEstimate",
    "BuildSettings",
    "StageEstimate",
    "abuild_golden",
    "build_golden",
    "corpus_hash",
    "estimate_build",
    "prepare_corpus",
]
