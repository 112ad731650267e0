"""Partitioned runs, ``max_part`` (docs/scaling.md#partitioned-runs): the information-loss price of
cutting into parts, and what parts buy in time and threads. Prints and writes
bench-results/max_part_il.md and max_part_threads.md; asserts nothing.

    python benches/max_part.py                # IL table + timings (several minutes)
    python benches/max_part.py --il-only      # bench-results/max_part_il.md
    python benches/max_part.py --timing-only  # bench-results/max_part_threads.md (run it on a quiet machine)
"""

from __future__ import annotations

import argparse
import os

import numpy as np

from bench_common import load, timed, write

import microagg as ma


def il_table(k: int) -> list[str]:
    sets = {"EIA": load("eia"), "Adult": load("adult"), "Gaussian": np.random.default_rng(0).normal(size=(100_000, 10))}
    data = {f"{name} ({X.shape[0]:,} x {X.shape[1]})": X for name, X in sets.items()}
    bounds = (1_000, 5_000, 20_000, None)
    lines = [
        f"### IL (%) by max_part, k = {k}",
        "",
        "| data | method | " + " | ".join("inf" if b is None else f"{b:,}" for b in bounds) + " |",
        "|---|---|" + "---|" * len(bounds),
    ]
    for name, X in data.items():
        for method in ("mdav", "ona-star"):
            cells = []
            for b in bounds:
                if method == "ona-star" and X.shape[0] > 50_000 and (b is None or b > 20_000):
                    cells.append("(not run: ONA* on 10^5 in one part takes too long here)")
                    continue
                seconds, res = timed(lambda: ma.microaggregate(X, k, method, max_part=b, n_jobs=2))
                cells.append(f"{100 * res.information_loss:.3f} ({seconds:.1f} s)")
                print(name, method, b, cells[-1], flush=True)
            lines.append(f"| {name} | {method} | " + " | ".join(cells) + " |")
    lines += ["", "Times in parentheses: 2 threads, wall clock.", ""]
    return lines


def thread_table(k: int) -> list[str]:
    rng = np.random.default_rng(1)
    cases = [("10^6 x 15", rng.normal(size=(1_000_000, 15))), ("10^7 x 3", rng.normal(size=(10_000_000, 3)))]
    lines = [
        f"### Time (s) of mdav with max_part = 50 000, k = {k}, 1 vs 2 threads",
        "",
        "| data | 1 thread | 2 threads | speedup | IL (%) | same labels |",
        "|---|---|---|---|---|---|",
    ]
    for name, X in cases:
        t1, r1 = timed(lambda: ma.microaggregate(X, k, "mdav", max_part=50_000, n_jobs=1))
        t2, r2 = timed(lambda: ma.microaggregate(X, k, "mdav", max_part=50_000, n_jobs=2))
        same = bool(np.array_equal(r1.labels, r2.labels))
        lines.append(f"| {name} | {t1:.1f} | {t2:.1f} | {t1 / t2:.2f}x | {100 * r1.information_loss:.3f} | {same} |")
        print(lines[-1], flush=True)
        del r1, r2
    return lines + [""]


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--il-only", action="store_true", help="the IL table only")
    p.add_argument("--timing-only", action="store_true", help="the thread timings only")
    p.add_argument("-k", type=int, default=5)
    args = p.parse_args()
    head = ["# max_part: partitioned runs", "", f"Load average at start: {os.getloadavg()[0]:.1f} (2 cores).", ""]
    if not args.timing_only:
        write("max_part_il.md", head + il_table(args.k))
    if not args.il_only:
        write("max_part_threads.md", head + thread_table(args.k))


if __name__ == "__main__":
    main()
