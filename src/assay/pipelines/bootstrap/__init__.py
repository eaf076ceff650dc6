"""``assay build``: a corpus in, a golden-set folder out.

Flow: ``corpus.ingest`` and ``corpus.chunking`` make documents and chunks (:mod:`.sampling` prepares them and draws
seeds), one generation call per seed gives questions (:mod:`.judging`), :mod:`.filters` drops the ones that fail a
check, :mod:`.judging` pools candidate chunks and grades them, :mod:`.support` maps nuggets and claims to chunks, and
:mod:`.pipeline` ties the stages together and writes the folder (``GoldenSet.save``, atomic). :mod:`.bookkeeping`
adds up the stages' counts and warnings, :mod:`.checks` stops a build that produced nothing, :mod:`.written` makes
the manifest and the folder of a build stopped after its questions. :mod:`.estimate` prices a build before it is run;
:mod:`.settings` holds the settings and the record every stage returns.

Modules, one line each:

- ``bookkeeping``: the book-keeping of one build.
- ``checks``: the checks that a build produced something.
- ``conversations``: conversations of ``--conversations N``, planned, written, checked and cut like questions.
- ``estimate``: ``assay build --dry-run``.
- ``filters``: the model-free stages of a build.
- ``judging``: the judge stages of a build.
- ``pipeline``: ``assay build`` as a function (:func:`build_golden`).
- ``pool_runs``: pools from the user's own retrievers, as TREC pools are made.
- ``query_sampling``: N representative questions from a query log.
- ``real_questions``: a golden set from the user's own questions (``--queries FILE``).
- ``references``: claims and nuggets drafted from reference answers a golden set already has (``assay import``).
- ``sampling``: seed sampling.
- ``scrub``: personal data masked in a user's questions before any judge sees them.
- ``settings``: the settings of a build and the shape every stage returns.
- ``strata``: which documents a build draws its seeds from when there are fewer questions than documents.
- ``support``: the support stage (which chunks support each nugget).
- ``tool_calls``: reference tool calls drafted for each answerable question (``--tools FILE``).
- ``written``: what a build writes.
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
