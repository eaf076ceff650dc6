"""The files assay reads and writes: the golden-set folder, runs, other tools' formats and traces; every reader
checks its input line by line and every writer is atomic.

Modules, one line each:

- ``_columns``: whitespace-separated columns of large text files, parsed with numpy a block at a time.
- ``answer_judgements``: people's ratings of answers and preferences between two (MTRAG, RAGChecker, JSONL).
- ``atomic``: atomic file writes (temporary file, fsync, rename), one file or a folder of them.
- ``beir``: BEIR folders, read and written.
- ``criteria_import``: peers' custom metrics (DeepEval G-Eval and DAG, RAGAS aspect critics and rubrics) as
  criteria files.
- ``csv_rows``: CSV rows with their line numbers; a quote left open is an error at the line where it opened.
- ``golden``: the golden-set folder and :class:`~assay.formats.golden.GoldenSet`.
- ``golden_checks``: the rules between the files of a golden set.
- ``golden_files``: the golden folder's file names, and reading each file checked line by line.
- ``golden_labels``: which label stands for a pair, and where a set's labels came from.
- ``jsonl``: versioned JSONL (a header line, then one record a line).
- ``messages``: an agent's chat messages (OpenAI or RAGAS shape) turned into a run line's steps.
- ``otlp``: spans from OTLP JSON files.
- ``peer_source``: a Python file of peers' metric definitions, read with ``ast`` and never run.
- ``pairs``: the (question, chunk) pairs ``assay grade`` reads.
- ``progress``: progress of long reads and writes, for a caller that shows it.
- ``queries``: a user's own questions for ``assay build --queries FILE``.
- ``ragas``: RAGAS test sets as JSONL and CSV.
- ``runs``: JSONL runs, and a reader that tells TREC runs from JSONL runs by their content.
- ``smart``: SMART-format test collections (CISI, CACM).
- ``tabular``: a golden set as two CSV files for spreadsheets.
- ``topics``: query (topic) files.
- ``traces``: traces of a RAG system read from OTLP spans with the OpenInference conventions.
- ``trace_values``: values read from trace attributes, and the tally of values of the wrong type.
- ``trec``: TREC qrels and runs, fast readers and writers.
"""
