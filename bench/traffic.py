"""Benchmark of real traffic in (issue 32): figures printed, nothing asserted.

Parts (``--part``, all of them by default):

- ``sample``: ``query_sampling.sample_queries`` picks 500 of a synthetic log of 100,000 questions (``query_log``):
  about 3,000 common intents with Zipf-like frequencies, 20 rare intents (their own words) asked 3 to 10 times each,
  and a third of the lines varied by case, punctuation or one typo. Run in a fresh subprocess; printed: wall
  seconds, peak traced memory while sampling and peak resident memory of the process, how many rare intents the
  sample holds, how many intents with typo variants ended in one group, and how many groups mix planted intents
  (the lexical merge cannot tell "reset my password on the app" from "... on the tv"). Target: under 60 s, 2 GB.
- ``scrub``: ``scrub.scrub`` over N questions each holding one planted piece of personal data (e-mail; phone in ten
  national and international formats; Luhn-valid Visa, Mastercard, Amex, Discover numbers plain, spaced or dashed;
  mod-97-valid IBANs of six countries, compact or grouped; API tokens of nine kinds) and N clean questions whose
  numbers are not personal data (dates, prices, quantities, model, order and version numbers). Printed: recall on
  the planted data (the value gone from the text), by kind, and the share of clean questions altered, with the
  first misses and alterations. Targets: recall >= 0.99, under 1% of clean questions altered.

- ``traces``: ``assay import traces`` of synthetic production traces. N traces (10,000 by default) are written as
  the OpenTelemetry collector's file exporter writes them: OTLP JSON lines, each line a batch of 256 spans (so the
  spans of one trace can straddle two lines), hex ids, integer enums, 64-bit integers as strings. Each trace has
  5 spans, as OpenInference's LangChain instrumentation records a RAG chain: a CHAIN root (the question in
  ``input.value``, the answer in ``output.value``), an EMBEDDING span, a RETRIEVER with 10 documents (id, score,
  metadata and about 400 characters of content each), a PROMPT span and an LLM span (input and output messages,
  token counts, cost). The import runs in a fresh subprocess (the reading, the trace rules and the atomic write of
  the run, as the command does them), so its peak resident memory (``ru_maxrss``) is its own; the wall and CPU
  seconds, traces per second and the sizes of the files are printed. Target: 10,000 traces in under 20 s.

    python bench/traffic.py                        # every part
    python bench/traffic.py --part traces --traces 10000
    python bench/traffic.py --part sample --log-lines 100000 --sample 500
    python bench/traffic.py --part scrub --pii 5000
"""

from __future__ import annotations

import argparse
import json
import random
import resource
import subprocess
import sys
import tempfile
import time
import tracemalloc
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

SPANS_PER_LINE = 256
DOCUMENTS = 10
T0 = 1_735_689_600_000_000_000  # 2025-01-01T00:00:00Z in nanoseconds
MS = 1_000_000
WORDS = (
    "warranty refund shipping order invoice account password plan tier storage backup device battery firmware screen "
    "charger cable return policy days weeks support ticket agent manual setup install"
).split()


def _attr(key: str, value: Any) -> dict[str, Any]:
    if isinstance(value, bool):
        return {"key": key, "value": {"boolValue": value}}
    if isinstance(value, int):
        return {"key": key, "value": {"intValue": str(value)}}
    if isinstance(value, float):
        return {"key": key, "value": {"doubleValue": value}}
    return {"key": key, "value": {"stringValue": str(value)}}


def _span(
    trace: str, sid: int, parent: int | None, name: str, start: int, end: int, attrs: dict[str, Any]
) -> dict[str, Any]:
    return {"traceId": trace, "spanId": f"{sid:016x}", "parentSpanId": f"{parent:016x}" if parent else "",
            "name": name, "kind": 1, "startTimeUnixNano": str(start), "endTimeUnixNano": str(end),
            "attributes": [_attr(k, v) for k, v in attrs.items()], "status": {"code": 1}}  # fmt: skip


def _sentence(rng: random.Random, words: int) -> str:
    return " ".join(rng.choice(WORDS) for _ in range(words)).capitalize() + "."


def trace_spans(rng: random.Random, n: int) -> list[dict[str, Any]]:
    """The five spans of trace ``n``."""
    trace = f"{rng.getrandbits(128):032x}"
    base, start = n * 8 + 1, T0 + n * 50 * MS
    question = _sentence(rng, 9).rstrip(".") + "?"
    answer = _sentence(rng, 25)
    docs: dict[str, Any] = {}
    for i in range(DOCUMENTS):
        prefix = f"retrieval.documents.{i}.document"
        docs |= {f"{prefix}.id": f"doc-{rng.randrange(100_000)}#{rng.randrange(20)}",
                 f"{prefix}.score": round(1.0 - i * 0.05 - rng.random() * 0.01, 4),
                 f"{prefix}.content": " ".join(_sentence(rng, 12) for _ in range(5)),
                 f"{prefix}.metadata": json.dumps({"source": f"kb/{rng.randrange(500)}.md"})}  # fmt: skip
    llm = {"openinference.span.kind": "LLM", "llm.model_name": "gpt-4o-mini", "llm.token_count.prompt": 1800,
           "llm.token_count.completion": 60, "llm.token_count.total": 1860, "llm.cost.total": 0.0003,
           "llm.input_messages.0.message.role": "user", "llm.input_messages.0.message.content": question,
           "llm.output_messages.0.message.role": "assistant",
           "llm.output_messages.0.message.content": answer}  # fmt: skip
    return [
        _span(trace, base, None, "RunnableSequence", start, start + 900 * MS, {
            "openinference.span.kind": "CHAIN", "input.value": question, "output.value": answer,
            "metadata": json.dumps({"user": f"u{rng.randrange(1000)}"})}),
        _span(trace, base + 1, base, "OpenAIEmbeddings", start + MS, start + 40 * MS,
              {"openinference.span.kind": "EMBEDDING", "embedding.model_name": "text-embedding-3-small"}),
        _span(trace, base + 2, base, "VectorStoreRetriever", start + 41 * MS, start + 90 * MS,
              {"openinference.span.kind": "RETRIEVER", "input.value": question, **docs}),
        _span(trace, base + 3, base, "ChatPromptTemplate", start + 91 * MS, start + 92 * MS,
              {"openinference.span.kind": "PROMPT", "input.value": question}),
        _span(trace, base + 4, base, "ChatOpenAI", start + 93 * MS, start + 890 * MS, llm),
    ]  # fmt: skip


def _lines(traces: int, seed: int) -> Iterator[str]:
    rng = random.Random(seed)
    batch: list[dict[str, Any]] = []
    for n in range(traces):
        batch += trace_spans(rng, n)
        while len(batch) >= SPANS_PER_LINE:
            yield _request(batch[:SPANS_PER_LINE])
            batch = batch[SPANS_PER_LINE:]
    if batch:
        yield _request(batch)


def _request(spans: list[dict[str, Any]]) -> str:
    scope = {"scope": {"name": "openinference.instrumentation.langchain", "version": "0.1.80"}, "spans": spans}
    resource_ = {"attributes": [_attr("service.name", "support-bot")]}
    return json.dumps({"resourceSpans": [{"resource": resource_, "scopeSpans": [scope]}]})


def write_traces(path: Path, traces: int, seed: int) -> None:
    with path.open("w", encoding="utf-8") as out:
        for line in _lines(traces, seed):
            out.write(line + "\n")


def _child_import(source: str, out: str) -> None:
    """Import in this (fresh) process and print the figures as JSON."""
    from assay.pipelines.traces.imports import import_traces, write_traces_run

    wall, cpu = time.perf_counter(), time.process_time()
    result = import_traces(source)
    written = write_traces_run(result, out)
    figures = {"wall": time.perf_counter() - wall, "cpu": time.process_time() - cpu, "lines": written,
               "spans": result.spans, "peak_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}  # fmt: skip
    print(json.dumps(figures))


def bench_traces(args: argparse.Namespace) -> None:
    with tempfile.TemporaryDirectory(prefix="assay-traffic-") as tmp:
        source, out = Path(tmp) / "traces.jsonl", Path(tmp) / "run.jsonl"
        began = time.perf_counter()
        write_traces(source, args.traces, args.seed)
        made = time.perf_counter() - began
        child = subprocess.run([sys.executable, __file__, "--child-import", str(source), str(out)],
                               capture_output=True, text=True, check=True)  # fmt: skip
        got = json.loads(child.stdout.strip().splitlines()[-1])
        size, run_size = source.stat().st_size / 2**20, out.stat().st_size / 2**20
    print(f"traces: {args.traces:,} traces, {got['spans']:,} spans, {DOCUMENTS} documents each "
          f"({size:.1f} MB of OTLP JSON lines, written in {made:.1f} s)")  # fmt: skip
    print(f"  import: {got['wall']:.2f} s wall, {got['cpu']:.2f} s CPU, {args.traces / got['wall']:,.0f} traces/s; "
          f"{got['lines']:,} run lines ({run_size:.1f} MB); peak resident memory {got['peak_mb']:.0f} MB")  # fmt: skip
    print(f"  target: under 20 s for 10,000 traces ({'met' if got['wall'] < 20 * args.traces / 10_000 else 'MISSED'}"
          " at this size, scaled linearly)")  # fmt: skip


# --- sample: 100,000 logged questions into 500 -----------------------------------------------------------------------

ACTIONS = "reset change cancel update export delete transfer renew upgrade download connect pair share restore".split()
THINGS = (
    "password invoice subscription plan order account profile address backup device battery firmware screen "
    "warranty refund payment card receipt licence report calendar contact photo folder printer router"
).split()
PLACES = "app website dashboard phone tablet laptop watch tv desktop portal".split()
FORMS = ("how do i {a} my {t} on the {p}", "can i {a} the {t} from my {p}", "why can't i {a} my {t} in the {p}",
         "where do i {a} my {t} using the {p}", "is it possible to {a} a {t} via the {p}")  # fmt: skip
RARE = ("can i pay in bitcoin or other cryptocurrency", "do you ship parcels to antarctica research stations",
        "is the manual available in braille for blind users", "does the device work underwater while scuba diving",
        "can my guide dog come into the flagship showroom", "is there a discount for veterans of the coast guard",
        "do you accept cheques drawn on a swiss bank", "can the firmware be audited under hipaa compliance",
        "will the charger survive a lightning strike outdoors", "is a sign language interpreter available for setup",
        "can i donate my old unit to a school in kenya", "does the warranty cover damage from a volcano eruption",
        "can a notary witness the contract signature remotely", "is the packaging compostable in a home garden bin",
        "can i register the product for a deceased relative", "do you sponsor robotics clubs for teenagers",
        "can the speaker play morse code for amateur radio", "is there a kosher certified version of the snack bundle",
        "does the invoice show vat for northern ireland traders", "can the tablet mount on a wheelchair armrest",
)  # fmt: skip
NOISE = ("case", "punctuation", "typo")


def _typo(rng: random.Random, text: str) -> str:
    words = text.split()
    j = rng.randrange(len(words))
    w = words[j]
    if len(w) >= 4:
        i = rng.randrange(1, len(w) - 1)
        w = rng.choice([w[:i] + w[i + 1 :], w[:i] + w[i + 1] + w[i] + w[i + 2 :], w[:i] + w[i] + w[i:]])
    words[j] = w
    return " ".join(words)


def _noisy(rng: random.Random, text: str) -> tuple[str, str | None]:
    """The wording of one log line: the intent's text, or a variant of it (and which kind of variant)."""
    if rng.random() >= 0.35:
        return text.capitalize() + "?", None
    kind = rng.choice(NOISE)
    if kind == "case":
        return rng.choice([text.upper(), text.title(), text]) + "?", kind
    if kind == "punctuation":
        return rng.choice(["", "...", "!!", " ??", ","]).join([text.capitalize(), ""]) + rng.choice(["", "?!"]), kind
    return _typo(rng, text).capitalize() + "?", kind


def query_log(lines: int, seed: int) -> tuple[list[str], list[str]]:
    """``lines`` questions and the planted intent of each (``rare:N`` for the planted rare intents).

    Common intents are the FORMS filled from ACTIONS x THINGS x PLACES (a few thousand), asked with Zipf-like
    frequencies; 20 rare intents (their own vocabulary) are asked 3 to 10 times each. About a third of the lines are
    variants of their intent's wording: case, punctuation, or one typo (a dropped, swapped or doubled letter)."""
    rng = random.Random(seed)
    rare = [(f"rare:{i}", text) for i, text in enumerate(RARE)]
    rare_lines = [pair for pair in rare for _ in range(rng.randint(3, 10))]
    intents = sorted({(f.format(a=a, t=t, p=p)) for f in FORMS for a in ACTIONS for t in THINGS for p in PLACES})
    rng.shuffle(intents)
    intents = intents[:3000]
    weights = [1 / (rank + 1) ** 0.9 for rank in range(len(intents))]
    common = rng.choices(range(len(intents)), weights=weights, k=lines - len(rare_lines))
    planted = [(f"common:{i}", intents[i]) for i in common] + rare_lines
    rng.shuffle(planted)
    texts = [_noisy(rng, text)[0] for _, text in planted]
    return texts, [label for label, _ in planted]


def _child_sample(lines: int, n: int, seed: int) -> None:
    from assay.pipelines.bootstrap import query_sampling as qs

    texts, labels = query_log(lines, seed)
    counts = [1] * len(texts)
    began = time.perf_counter()
    tracemalloc.start()
    result = qs.sample_queries(texts, counts, n, seed)
    peak = tracemalloc.get_traced_memory()[1] / 2**20
    tracemalloc.stop()
    wall = time.perf_counter() - began
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    rare_in = {labels[m] for g in result.chosen for m in g.members if labels[m].startswith("rare:")}
    exact = qs._exact_groups(texts)  # the merge again, outside the timing, to score it against the planted intents
    groups = qs._merge(exact, texts, counts, seed)
    by_norm = {key: {labels[i] for i in members} for key, members in exact}
    variants = {label: 0 for label in set(labels)}
    for intents in by_norm.values():
        for label in intents:
            variants[label] += 1
    intent_groups: dict[str, set[int]] = {}
    mixed = 0
    for gi, g in enumerate(groups):
        held = {labels[m] for m in g.members}
        mixed += len(held) > 1
        for label in held:
            intent_groups.setdefault(label, set()).add(gi)
    spread = [label for label, v in variants.items() if v > 1]
    whole = sum(len(intent_groups[label]) == 1 for label in spread)
    print(json.dumps({"wall": wall, "tracemalloc_mb": peak, "rss_mb": rss, "chosen": len(result.chosen),
                      "counts": result.counts, "rare_in": len(rare_in), "rare": len(RARE),
                      "spread": len(spread), "whole": whole, "exact_groups": len(exact), "groups": len(groups),
                      "mixed": mixed, "intents": len(set(labels))}))  # fmt: skip


def bench_sample(args: argparse.Namespace) -> None:
    got = _child(["--child-sample", str(args.log_lines), str(args.sample), str(args.seed)])
    c = got["counts"]
    print(f"sample: {args.log_lines:,} logged questions ({got['intents']:,} planted intents, {got['rare']} of them "
          f"rare, 3-10 lines each) into {got['chosen']}")  # fmt: skip
    print(f"  {got['wall']:.1f} s wall; peak traced memory {got['tracemalloc_mb']:.0f} MB during sampling, peak "
          f"resident {got['rss_mb']:.0f} MB for the whole process (log included)")  # fmt: skip
    print(f"  {c['log_groups']:,} groups after merging ({got['exact_groups']:,} distinct normalised wordings, "
          f"{c['log_clusters']} clusters); rare intents represented: {got['rare_in']} of {got['rare']}")  # fmt: skip
    print(f"  near-duplicates: of {got['spread']:,} intents with typo variants, {got['whole']:,} had all their "
          f"wordings merged into one group; {got['mixed']:,} groups hold more than one planted intent")  # fmt: skip
    ok = got["wall"] < 60 and got["rss_mb"] < 2048
    print(f"  target: under 60 s and 2 GB ({'met' if ok else 'MISSED'})")


def _child(argv: list[str]) -> dict[str, Any]:
    child = subprocess.run([sys.executable, __file__, *argv], capture_output=True, text=True, check=True)
    return dict(json.loads(child.stdout.strip().splitlines()[-1]))


# --- scrub: recall on planted personal data, clean questions left alone ---------------------------------------------

PII_FORMS = ("my {x} doesn't get the reset email", "please call me back on {x} about the refund",
             "charge on {x} appeared twice", "why was {x} rejected for the transfer",
             "I pasted {x} in the config and it fails", "contact {x} regarding order 4411")  # fmt: skip
CLEAN = ("I ordered {q} units on {d}, when do they ship?", "the {m} costs {p}, is there a discount?",
         "my invoice from {d} shows {p} instead of {p2}", "does the {m} support firmware {v}?",
         "order #{o} of {q} items arrived on {d}", "can I return the {m} bought on {d} for {p}?",
         "the {m} and the {m2} both crash after {h} hours", "is the {m} compatible with ISO {iso}?")  # fmt: skip


def _luhn_complete(rng: random.Random, prefix: str, length: int) -> str:
    from assay.pipelines.bootstrap.scrub import luhn_ok

    body = prefix + "".join(str(rng.randrange(10)) for _ in range(length - len(prefix) - 1))
    return next(body + str(d) for d in range(10) if luhn_ok(body + str(d)))


def _group(digits: str, sizes: list[int], sep: str) -> str:
    out, i = [], 0
    for size in sizes:
        out.append(digits[i : i + size])
        i += size
    return sep.join(out)


def _iban(rng: random.Random) -> str:
    country, length = rng.choice([("DE", 18), ("GB", 18), ("FR", 23), ("NL", 14), ("ES", 20), ("IT", 23)])
    if country in {"GB", "NL"}:
        bban = "".join(rng.choice("ABCDEFGHIJKLMNOPQRSTUVWXYZ") for _ in range(4))
        bban += "".join(str(rng.randrange(10)) for _ in range(length - 4))
    else:
        bban = "".join(str(rng.randrange(10)) for _ in range(length))
    moved = bban + country + "00"
    check = 98 - int("".join(str(int(ch, 36)) for ch in moved)) % 97
    iban = f"{country}{check:02d}{bban}"
    return " ".join(iban[i : i + 4] for i in range(0, len(iban), 4)) if rng.random() < 0.5 else iban


def _phone(rng: random.Random) -> str:
    d = "".join(str(rng.randrange(10)) for _ in range(12))
    return rng.choice([f"+1 {d[:3]} {d[3:6]} {d[6:10]}", f"({d[:3]}) {d[3:6]}-{d[6:10]}", f"{d[:3]}-{d[3:6]}-{d[6:10]}",
                       f"{d[:3]}.{d[3:6]}.{d[6:10]}", f"+44 20 {d[:4]} {d[4:8]}", f"020 {d[:4]} {d[4:8]}",
                       f"+33 6 {d[:2]} {d[2:4]} {d[4:6]} {d[6:8]}", f"06 {d[:2]} {d[2:4]} {d[4:6]} {d[6:8]}",
                       f"+49 30 {d[:7]}", f"+{d[:11]}"])  # fmt: skip


def _token(rng: random.Random) -> str:
    def run(n: int, alphabet: str = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789") -> str:
        return "".join(rng.choice(alphabet) for _ in range(n))

    return rng.choice([f"sk-{run(48)}", f"sk_live_{run(24)}", f"ghp_{run(36)}", f"xoxb-{run(12)}-{run(24)}",
                       f"AKIA{run(16, 'ABCDEFGHIJKLMNOPQRSTUVWXYZ234567')}", f"AIza{run(35)}", f"glpat-{run(20)}",
                       f"eyJ{run(20)}.eyJ{run(30)}.{run(43)}", run(40, "0123456789abcdef")])  # fmt: skip


def planted_pii(rng: random.Random) -> tuple[str, str]:
    """One kind of personal data and a value of it."""
    kind = rng.choice(["email", "phone", "card", "iban", "token"])
    if kind == "email":
        name = rng.choice(["jane.doe", "j_smith", "m.rossi+shop", "kevin1984", "anna-lee"])
        return kind, f"{name}{rng.randrange(100)}@{rng.choice(['gmail.com', 'example.co.uk', 'mail.acme.io'])}"
    if kind == "phone":
        return kind, _phone(rng)
    if kind == "card":
        prefix, length, sizes = rng.choice([("4", 16, [4, 4, 4, 4]), ("51", 16, [4, 4, 4, 4]),
                                            ("37", 15, [4, 6, 5]), ("6011", 16, [4, 4, 4, 4])])  # fmt: skip
        return kind, _group(_luhn_complete(rng, prefix, length), sizes, rng.choice(["", " ", "-"]))
    if kind == "iban":
        return kind, _iban(rng)
    return kind, _token(rng)


def clean_question(rng: random.Random) -> str:
    """A question with numbers that are not personal data: dates, prices, quantities, model and order numbers."""
    day, month, year = rng.randint(1, 28), rng.randint(1, 12), rng.randint(2019, 2026)
    dates = [f"{year}-{month:02d}-{day:02d}", f"{day:02d}/{month:02d}/{year}", f"March {day}, {year}",
             f"{day}.{month}.{year}"]  # fmt: skip
    prices = [f"${rng.randint(5, 3000):,}.{rng.randrange(100):02d}", f"€{rng.randint(5, 900)}",
              f"{rng.randint(1, 20) * 1000:,} EUR", f"£{rng.randint(10, 99)}.99"]  # fmt: skip
    models = ["XR-5000", "RTX 4090", "iPhone 15 Pro", f"SM-G{rng.randint(900, 999)}B", f"WH-1000XM{rng.randint(3, 5)}",
              f"model {rng.randint(100, 9999)}", f"B0{rng.randint(10**7, 10**8 - 1)}"]  # fmt: skip
    form = rng.choice(CLEAN)
    return form.format(q=rng.choice([12, 250, 1_000, 4500]), d=rng.choice(dates), p=rng.choice(prices),
                       p2=rng.choice(prices), m=rng.choice(models), m2=rng.choice(models),
                       v=f"{rng.randint(1, 9)}.{rng.randint(0, 20)}.{rng.randint(0, 99)}",
                       o=rng.randint(10**5, 10**8), h=rng.randint(2, 72), iso=rng.choice([9001, 27001, 14001]),
    )  # fmt: skip


def bench_scrub(args: argparse.Namespace) -> None:
    from assay.pipelines.bootstrap.scrub import scrub

    rng = random.Random(args.seed)
    planted = [planted_pii(rng) for _ in range(args.pii)]
    dirty = [rng.choice(PII_FORMS).format(x=value) for _, value in planted]
    clean = [clean_question(rng) for _ in range(args.pii)]
    began = time.perf_counter()
    out = scrub(dirty + clean)
    wall = time.perf_counter() - began
    found: dict[str, list[int]] = {}
    missed: list[str] = []
    for (kind, value), text in zip(planted, out.texts[: len(dirty)], strict=True):
        hit = value not in text and "[" in text
        found.setdefault(kind, []).append(hit)
        if not hit:
            missed.append(value)
    altered = [(a, b) for a, b in zip(clean, out.texts[len(dirty) :], strict=True) if a != b]
    recall = sum(sum(v) for v in found.values()) / len(planted)
    share = len(altered) / len(clean)
    by_kind = ", ".join(f"{k} {sum(v) / len(v):.3f}" for k, v in sorted(found.items()))
    print(f"scrub: {len(planted):,} questions with planted personal data, {len(clean):,} clean ones "
          f"({wall:.2f} s)")  # fmt: skip
    print(f"  recall on planted data {recall:.4f} ({by_kind}); target >= 0.99 "
          f"({'met' if recall >= 0.99 else 'MISSED'})")  # fmt: skip
    print(f"  clean questions altered {share:.2%} ({len(altered)}); target < 1% "
          f"({'met' if share < 0.01 else 'MISSED'})")  # fmt: skip
    for value in missed[:5]:
        print(f"    missed: {value}")
    for before, after in altered[:5]:
        print(f"    altered: {before!r} -> {after!r}")


PARTS: dict[str, Callable[[argparse.Namespace], None]] = {
    "sample": bench_sample,
    "scrub": bench_scrub,
    "traces": bench_traces,
}


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--part", choices=sorted(PARTS), action="append", help="Part to run (repeatable; default all).")
    parser.add_argument("--traces", type=int, default=10_000, help="Traces to import (traces part).")
    parser.add_argument("--log-lines", type=int, default=100_000, help="Logged questions (sample part).")
    parser.add_argument("--sample", type=int, default=500, help="Questions to pick (sample part).")
    parser.add_argument("--pii", type=int, default=5_000, help="Questions with planted personal data, and clean ones.")
    parser.add_argument("--seed", type=int, default=0, help="Seed of the synthetic data.")
    parser.add_argument("--child-sample", nargs=3, type=int, metavar=("LINES", "N", "SEED"), help=argparse.SUPPRESS)
    parser.add_argument("--child-import", nargs=2, metavar=("SOURCE", "OUT"), help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child_sample:
        _child_sample(*args.child_sample)
        return
    if args.child_import:
        _child_import(*args.child_import)
        return
    for part in args.part or sorted(PARTS):
        PARTS[part](args)


if __name__ == "__main__":
    main()
