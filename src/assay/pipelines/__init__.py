"""The jobs of assay as pipelines, one subpackage each.

- :mod:`assay.pipelines.bootstrap`: a corpus (files or records) in, a golden-set folder out
  (documents, chunks, questions, qrels, nuggets, manifest).
- :mod:`assay.pipelines.evaluate`: a golden set and RAG runs in, an ``EvalResult``
  out (per-query metrics, intervals, comparisons, agreement), plus the new judge labels added to the golden set.
- :mod:`assay.pipelines.transfer`: golden sets to and from BEIR, TREC, RAGAS and CSV.
- :mod:`assay.pipelines.traces`: production traces (OTLP) in, a run out, once or following a growing export.
- :mod:`assay.pipelines.judgecheck`: a judge measured before it is trusted (the judge card).
- :mod:`assay.pipelines.agreement`: judge-versus-human agreement as records, shared by `assay agreement` and `eval`.

Stages take records, explicit settings and a judge, and return records; no stage reads the environment or keeps global
state. Only :mod:`assay.cli` and :mod:`assay.audit` sit above this package; :mod:`assay.report` renders what
``evaluate`` returns.
"""
