"""Production traces in: a run from an OTLP export, once or as it grows.

:mod:`.imports`: ``assay import traces``: every trace of an export read by :mod:`assay.formats.traces`, matched to
the golden questions and written as one run line per question.
:mod:`.matching`: which golden question a trace asked: query id, same words, or a typo or two away.
:mod:`.watch`: ``assay traces watch``: a growing export followed pass by pass, a sample of its traces kept in a
rolling run, evaluated by a callback the caller passes in.
"""
