"""Benchmark: the two speeds a user feels first, the offline judge's relevance grading and ``assay demo`` end to end.

    python bench/speed.py                 # 2,000 offline relevance grades, then one demo run
    python bench/speed.py --calls 10000 --skip-demo

Prints wall and CPU seconds beside the targets (2,000 offline relevance grades in under 3 s; the demo in under
60 s). These were timed asserts in the tests, where a loaded machine made them fail without saying anything about
correctness; the figures belong here. Nothing here fails on a slow machine: it reports.
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

from click.testing import CliRunner

from assay.cli import main as assay_main
from assay.judge.offline import offline_answer

QUESTION = "How many days do customers have to return an unopened Acme blender?"
EXACT = "Customers may return an unopened Acme blender within 30 days of delivery for a full refund."
RELATED = "Our blenders are designed in Oslo and tested for a year before launch."
JUDGE_TARGET_S = 3.0  # for 2,000 grades
DEMO_TARGET_S = 60.0


def time_offline_judge(calls: int) -> tuple[float, float]:
    """Wall and CPU seconds of ``calls`` offline relevance grades (distinct passages, so nothing is memoized)."""
    passages = [f"{EXACT} Item {i} ships from warehouse {i % 7}. {RELATED}" for i in range(calls)]
    wall, cpu = time.perf_counter(), time.process_time()
    for passage in passages:
        offline_answer("relevance", {"question": QUESTION, "passage": passage})
    return time.perf_counter() - wall, time.process_time() - cpu


def time_demo() -> tuple[float, float]:
    """Wall and CPU seconds of one ``assay demo`` into a fresh folder (in this process, as a user's shell would)."""
    with tempfile.TemporaryDirectory() as tmp:
        wall, cpu = time.perf_counter(), time.process_time()
        result = CliRunner().invoke(assay_main, ["demo", "-o", str(Path(tmp) / "demo")])
        elapsed = time.perf_counter() - wall, time.process_time() - cpu
    if result.exit_code != 0:
        raise SystemExit(f"assay demo failed (exit {result.exit_code}):\n{result.output}")
    return elapsed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--calls", type=int, default=2000, help="offline relevance grades to time (default 2000)")
    parser.add_argument("--skip-demo", action="store_true", help="time only the offline judge")
    args = parser.parse_args()
    wall, cpu = time_offline_judge(args.calls)
    target = JUDGE_TARGET_S * args.calls / 2000
    print(f"offline judge: {args.calls} relevance grades in {wall:.2f} s wall, {cpu:.2f} s CPU "
          f"({1000 * wall / args.calls:.2f} ms per grade; target under {target:.1f} s)")  # fmt: skip
    if not args.skip_demo:
        wall, cpu = time_demo()
        print(f"assay demo: {wall:.1f} s wall, {cpu:.1f} s CPU (target under {DEMO_TARGET_S:.0f} s)")


if __name__ == "__main__":
    main()
