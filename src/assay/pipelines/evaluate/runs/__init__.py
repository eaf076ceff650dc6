"""The runs an evaluation scores, as it reads them. The ground floor of ``evaluate``: it imports nothing else from
it.

Modules, one line each:

- ``given``: the runs a caller gives (a mapping or a list of paths, lines, functions, targets) named by one rule.
- ``read``: reading and checking the runs (JSONL, TREC, RAGAS, in memory) into :class:`~.loaded.LoadedRun`.
- ``sources``: each kind of run read into raw lines, before alignment and ordering.
- ``assemble``: a run's raw lines checked against the golden set, resolved to its units and ordered.
- ``loaded``: the records of a run read and checked (:class:`~.loaded.LoadedRun`, its lines, its system trace).
- ``locate``: every retrieved passage that is not a golden chunk located in the golden documents, given a unit id.
- ``placing``: where a repeated text came from, decided by the rest of its ranking.
- ``carry``: the pool of labelled spans, and the one written rule that grades any span from it.
- ``painting``: which characters are relevant: a question's labels painted onto the documents.
- ``units``: the unit of account of ranking measures: every run projected onto the golden chunks.
"""
