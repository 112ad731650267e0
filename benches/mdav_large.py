"""MDAV (F-MDAV, float32, with microagg's norm pruning, on by default) on n
Gaussian records, d = 15, k = 10, on one thread and on all threads, with the
memory-bandwidth floor of the passes it must make.

Each round forms two groups with two full passes over the unassigned records (the pass for
the farthest-from-centroid record is pruned by the norm order); a pass reads d + 1 float32
per record (attributes and ½‖x‖²). Summed over n/(2k) rounds that is about
2 · n²/(4k) · (d + 1) · 4 bytes. Divided by the streaming bandwidth measured here, this is
the time a perfectly memory-bound implementation would need (data that fits the last-level
cache streams faster, so the floor is conservative for the last rounds).

    python benches/mdav_large.py                 # n = 1 000 000 (about 2-3 minutes per run)
    python benches/mdav_large.py --n 200000
"""

from __future__ import annotations

import argparse
import os
import time

import numpy as np
from bench_common import write

import microagg as ma


def stream_bandwidth() -> float:
    """Bytes per second of a streaming float32 sum over 1 GiB (best of 3)."""
    a = np.ones(1 << 28, dtype=np.float32)
    best = min(_time(lambda: np.add.reduce(a)) for _ in range(3))
    return a.nbytes / best


def _time(fn) -> float:  # type: ignore[no-untyped-def]
    t0 = time.perf_counter()
    fn()
    return time.perf_counter() - t0


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--n", type=int, default=1_000_000)
    args = ap.parse_args()
    n, d, k = args.n, 15, 10
    X = np.random.default_rng(0).normal(size=(n, d)).astype(np.float32)
    bw = stream_bandwidth()
    floor = 2 * n * n / (4 * k) * (d + 1) * 4 / bw
    lines = [f"# MDAV on {n:,} x {d} Gaussian, k = {k}, float32", "",
             f"Streaming read bandwidth (one thread, numpy): {bw / 2**30:.1f} GiB/s; "
             f"memory-bound floor of the passes: {floor:.1f} s.", "",
             "| threads | time (s) | vs floor | IL (%) |", "|---:|---:|---:|---:|"]
    labels = []
    for jobs in (1, -1):
        t0 = time.perf_counter()
        res = ma.microaggregate(X, k, n_jobs=jobs, norm_pruning=True)
        t = time.perf_counter() - t0
        labels.append(res.labels)
        lines.append(f"| {1 if jobs == 1 else os.cpu_count()} | {t:.1f} | {t / floor:.2f}x | {100 * res.information_loss:.3f} |")
        print(lines[-1], flush=True)
    lines.append("")
    lines.append(f"Same labels on 1 and all threads: {bool((labels[0] == labels[1]).all())}")
    write(f"mdav_large_{n}.md", lines)


if __name__ == "__main__":
    main()
