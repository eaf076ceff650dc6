"""Answer measures against people: how far assay's answer measures follow human judgements of RAG answers.

Each set is read by :mod:`assay.formats.answer_judgements` and measured by
:func:`assay.pipelines.judgecheck.answers.measure_answers`, what ``assay judge-check --answers`` does: the questions
and references become a golden set (as ``assay import ragas``), each system's answers a run with the passages people
saw, evaluated by ``assay eval``'s pipeline with each judge named (the offline judge by default; ``--judge MODEL
--api-base URL`` for a local or hosted model). Beside assay's answer measures, the same card rows for the lexical
baselines: token F1 of the answer against the reference (SQuAD's,
:func:`assay.pipelines.evaluate.scoring.conversations.token_f1`) and the answer's length in characters, and for the
published evaluators the sets ship, per answer.

Sets (each read from the path given; nothing is downloaded):

- ``--mtrag FILE``: MTRAG's human evaluation subset (IBM/mt-rag-benchmark,
  ``mtrag-human/evaluations/reference_subset_with_human_evaluations.json``): 318 answers by two systems (Llama 3.1
  405B, GPT-4o) to the last user turn of 159 conversations, with the turn's reference passages, rated 1-4 by three
  annotators (completeness, faithfulness, appropriateness, naturalness); it ships RougeL, Bert-Rec, Bert-KPrec,
  RB-ALG, RB-LLM (an LLM judge) and RL-F (RAGAS faithfulness by an LLM).
- ``--ragchecker FILE``: RAGChecker's meta-evaluation set (amazon-science/RAGChecker,
  ``data/meta_evaluation/human_labeled_data.json``): 280 pairs of answers by 8 systems with a reference answer and no
  passages, each labelled -2..2 by two annotators (correctness, completeness, overall); ``--ragchecker-baseline
  FILE`` (``baseline_ragchecker.json``) adds RAGChecker's own per-answer labels. Kept aside while the offline judge's
  answer rules were set (on MTRAG), to check them.

Printed per set: Pearson's r x 100 with its 95% interval over questions, Spearman's rho x 100, the share of the
pairs people ordered that the measure orders alike, and the share unscored; "people" is each person against the
others' mean. Figures are printed, not asserted.

    python bench/answers.py --mtrag path/to/reference_subset_with_human_evaluations.json
    python bench/answers.py --ragchecker path/to/human_labeled_data.json \\
        --ragchecker-baseline path/to/baseline_ragchecker.json
    python bench/answers.py --mtrag FILE --judge offline --judge hosted_vllm/smollm2-135m \\
        --api-base http://127.0.0.1:PORT/v1 --limit 30    # python -m assay.testing.local_model serve: PORT
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from dataclasses import replace
from pathlib import Path

from assay.formats.answer_judgements import AnswerJudgements, read_answer_judgements
from assay.judge.factory import make_judge
from assay.pipelines.evaluate.scoring.conversations import token_f1
from assay.pipelines.judgecheck.answers import (
    PEOPLE,
    AnswerRow,
    card_rows,
    format_agreement,
    format_interval,
    measure_answers,
)
from assay.results import QueryResult

MTRAG_PUBLISHED = {"RougeL": "system", "Bert-Rec": "system", "Bert-KPrec": "system", "rb_agg": "composite",
                   "rb_llm": "composite", "rl_f": "composite"}  # fmt: skip
RAGCHECKER_PUBLISHED = ("correctness_label", "completeness_label", "overall_label")
TITLES = {
    "pearson": "Pearson r x 100 [95% interval]",
    "spearman": "Spearman rho x 100 [95% interval]",
    "agreement": "pairs people ordered that the measure orders alike (ties of the measure apart)",
}


def published_mtrag(path: Path) -> dict[tuple[str, str], dict[str, float]]:
    """``{(system, task id): {evaluator: value}}`` of the evaluators MTRAG ships beside its ratings."""
    data = json.loads(path.read_text(encoding="utf-8"))
    out = {}
    for ev in data["evaluations"]:
        notes = ev["annotations"]
        out[(ev["model_id"], ev["task_id"])] = {name: float(notes[name][key]["value"])
                                                for name, key in MTRAG_PUBLISHED.items() if name in notes}  # fmt: skip
    return out


def published_ragchecker(path: Path) -> dict[tuple[str, str], dict[str, float]]:
    """``{(system, question id): {"RAGChecker <label>": value}}`` from ``baseline_ragchecker.json``."""
    out = {}
    for row in json.loads(path.read_text(encoding="utf-8")):
        qid = f"{row['dataset']}-{row['query_id']}"
        for side in ("model1", "model2"):
            labels = row[side]["ragchecker"]
            out[(row[side]["model_name"], qid)] = {f"RAGChecker {k.removesuffix('_label')}": float(labels[k])
                                                    for k in RAGCHECKER_PUBLISHED}  # fmt: skip
    return out


def baseline_rows(judgements: AnswerJudgements, published: dict[tuple[str, str], dict[str, float]]) -> list[AnswerRow]:
    """Card rows of token F1 against the reference, length, and the published evaluators, per answer."""
    values: dict[tuple[str, str], dict[str, float | None]] = {}
    for a in judgements.answers:
        values[(a.system, a.question_id)] = {"token_f1": token_f1(a.answer, a.reference), "length": len(a.answer)}
    for p in judgements.pairs:
        for system, answer in (p.first, p.second):
            values[(system, p.question_id)] = {"token_f1": token_f1(answer, p.reference), "length": len(answer)}
    names = ["token_f1", "length"]
    for key, extra in published.items():
        if key in values:
            values[key].update(extra)
            names += [n for n in extra if n not in names]
    rows = [QueryResult(run=system, query_id=qid, metrics=m) for (system, qid), m in values.items()]
    return card_rows(judgements, rows, names)


def print_table(title: str, judgements: AnswerJudgements, rows: list[tuple[str, AnswerRow]]) -> None:
    criteria = judgements.criteria
    print(f"\n## {title}\n")
    for kind in ("pearson", "spearman", "agreement"):
        print(TITLES[kind])
        print("\n| measure | " + " | ".join(criteria) + " | unscored |\n|---|" + "---|" * (len(criteria) + 1))
        names = list(dict.fromkeys(name for name, _ in rows))
        for name in names:
            by = {r.criterion: r for n, r in rows if n == name}
            if kind == "agreement":
                cells = [format_agreement(by[c].agreement, by[c].pairs) if c in by else "-" for c in criteria]
            else:
                cells = [format_interval(getattr(by[c], kind)) if c in by else "-" for c in criteria]
            unscored = max((r.unscored for r in by.values()), default=0.0)
            print(f"| {name} | " + " | ".join(cells) + f" | {unscored:.0%} |")
        print()


def first_questions(judgements: AnswerJudgements, limit: int | None) -> AnswerJudgements:
    """The judgements of the first ``limit`` questions (in the file's order), or all of them."""
    if limit is None:
        return judgements
    kept = list(dict.fromkeys([a.question_id for a in judgements.answers] + [p.question_id for p in judgements.pairs]))
    chosen = set(kept[:limit])
    return replace(judgements, answers=tuple(a for a in judgements.answers if a.question_id in chosen),
                   pairs=tuple(p for p in judgements.pairs if p.question_id in chosen))  # fmt: skip


def run_set(title: str, judgements: AnswerJudgements, published: dict[tuple[str, str], dict[str, float]],
            judges: list[str], args: argparse.Namespace) -> list[tuple[str, AnswerRow]]:  # fmt: skip
    rows = [(PEOPLE if r.measure == PEOPLE else r.measure, r) for r in baseline_rows(judgements, published)]
    metrics = [m.strip() for m in (args.metrics or "").split(",") if m.strip()]
    for spec in judges:
        model = spec != "offline"
        judge = make_judge(spec, api_base=args.api_base if model else None, cache_dir=args.cache_dir,
                           max_tokens=args.max_tokens if model else None, concurrency=args.concurrency)  # fmt: skip
        started = time.perf_counter()
        card = measure_answers(judgements, judge, spec, metrics=metrics)
        print(f"{title}: --judge {spec} in {time.perf_counter() - started:.1f} s", file=sys.stderr)
        rows += [(f"assay {r.measure} ({spec})", r) for r in card.rows if r.measure != PEOPLE]
    print_table(title, judgements, rows)
    return rows


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--mtrag", type=Path, help="MTRAG's reference_subset_with_human_evaluations.json")
    parser.add_argument("--ragchecker", type=Path, help="RAGChecker's human_labeled_data.json")
    parser.add_argument("--ragchecker-baseline", type=Path, help="RAGChecker's baseline_ragchecker.json")
    parser.add_argument("--judge", action="append", help="judge for the answer measures (repeatable; default offline)")
    parser.add_argument("--api-base", help="OpenAI-compatible endpoint for model judges")
    parser.add_argument("--cache-dir", type=Path, help="judge cache (default: none, every call asked)")
    parser.add_argument("--limit", type=int, help="only the first N questions of each set (for a slow model)")
    parser.add_argument("--json", type=Path, help="also write every row as JSON here")
    parser.add_argument("--metrics", help="only these answer measures, comma-separated (fewer calls for a slow model)")
    parser.add_argument(
        "--max-tokens", type=int, help="model judges: cap replies at N tokens (a cut reply is unscored)"
    )
    parser.add_argument("--concurrency", type=int, default=4, help="model judges: calls at once (default 4)")
    args = parser.parse_args(argv)
    if not (args.mtrag or args.ragchecker):
        parser.error("give at least one set: --mtrag FILE and/or --ragchecker FILE")
    judges = args.judge or ["offline"]
    dump = {}
    if args.mtrag:
        title = "MTRAG human evaluation subset (ratings of answers)"
        judged = first_questions(read_answer_judgements(args.mtrag), args.limit)
        rows = run_set(title, judged, published_mtrag(args.mtrag), judges, args)
        dump[title] = [{"measure": name, **r.model_dump()} for name, r in rows]
    if args.ragchecker:
        title = "RAGChecker meta-evaluation (preferences between two answers; kept aside)"
        published = published_ragchecker(args.ragchecker_baseline) if args.ragchecker_baseline else {}
        judged = first_questions(read_answer_judgements(args.ragchecker), args.limit)
        rows = run_set(title, judged, published, judges, args)
        dump[title] = [{"measure": name, **r.model_dump()} for name, r in rows]
    if args.json:
        args.json.write_text(json.dumps(dump, indent=1), encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
