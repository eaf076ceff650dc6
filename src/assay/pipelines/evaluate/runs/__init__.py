"""The runs an evaluation scores, as it reads them: :mod:`.given` names the runs a caller gives (a mapping or a list
of paths, lines, functions and targets) by one rule, for every caller; :mod:`.read` reads and checks JSONL, TREC and
RAGAS runs (and runs given in memory) into :class:`~.read.LoadedRun`; :mod:`.locate` locates each retrieved passage
that is not a golden chunk in the golden documents and gives it a unit id; :mod:`.carry` carries the golden labels
over to those passages by span, by one written rule, and keeps the pool of labelled spans. The ground floor of
``evaluate``: it imports nothing else from it.
"""
