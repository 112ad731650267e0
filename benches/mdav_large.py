"""Exact MDAV at scale (issue #15): time against n for d = 2, 3, 5, 8, 15 (Gaussian, k = 10,
float32 by default), on 1 and 2 threads, with the bytes the passes read and the
memory-bandwidth floor of those bytes.

Defaults choose the path: a k-d tree in low d (``spatial_index``), the compact int8 scans
with exact re-checks and next-round speculation in high d (``compact_scan``). Columns:

* full-data passes per round: bytes read by the streaming passes (``Progress.bytes_scanned``)
  / (n · (d + 1) · 4 bytes) / (n / 2k rounds); exact F-MDAV without speculation reads about
  1.0 (two passes over n/2 records on average), a k-d tree run none;
* floor: those bytes / the one-thread streaming bandwidth measured here (NumPy sum of
  1 GiB): the time a purely memory-bound run would need;
* same labels: 1 and 2 threads give the same partition (the scans only: the k-d tree's
  queries are sequential, so low d runs on one thread).

    python benches/mdav_large.py                                  # the table of the issue
    python benches/mdav_large.py --ds 15 --ns 100000 1000000 --threads 1
    python benches/mdav_large.py --baseline                       # also compact_scan=False
"""

from __future__ import annotations

import argparse
import math
import os
import time

import numpy as np
from bench_common import OUT, pyplot, write

import microagg as ma

# Largest n run per d: quadratic high-d runs stop at 10^6 (10^7 x 15 would take about an hour),
# the k-d tree at d = 5 and 8 grows faster than n log n (10^7 x 5: several minutes).
DEFAULT_NS = {2: 10**7, 3: 10**7, 5: 10**6, 8: 10**6, 15: 10**6}
# Largest d where the default path is the k-d tree (sequential queries: one thread only).
INDEX_MAX_D = 8


def stream_bandwidth() -> float:
    """Bytes per second of a streaming float32 sum over 1 GiB (best of 3)."""
    a = np.ones(1 << 28, dtype=np.float32)
    best = math.inf
    for _ in range(3):
        t0 = time.perf_counter()
        np.add.reduce(a)
        best = min(best, time.perf_counter() - t0)
    return a.nbytes / best


def run(X: np.ndarray, k: int, jobs: int, **params: bool) -> tuple[float, int, float, np.ndarray]:
    progress = ma.Progress()
    t0 = time.perf_counter()
    res = ma.microaggregate(X, k, n_jobs=jobs, progress=progress, **params)
    return time.perf_counter() - t0, progress.bytes_scanned, 100 * res.information_loss, res.labels


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--ds", type=int, nargs="+", default=[2, 3, 5, 8, 15])
    ap.add_argument("--ns", type=int, nargs="+", default=[10**5, 10**6, 10**7])
    ap.add_argument("--threads", type=int, nargs="+", default=[1, 2])
    ap.add_argument("--k", type=int, default=10)
    ap.add_argument("--dtype", default="float32")
    ap.add_argument("--baseline", action="store_true", help="also time compact_scan=False (high d)")
    ap.add_argument("--repeat", type=int, default=1, help="best of this many runs per row")
    ap.add_argument("--name", default="mdav_scale")
    args = ap.parse_args()
    bw = stream_bandwidth()
    lines = [f"# Exact MDAV at scale (Gaussian, k = {args.k}, {args.dtype})", "",
             f"Load average at start: {', '.join(f'{v:.2f}' for v in os.getloadavg())} on "
             f"{os.cpu_count()} cores; one-thread streaming bandwidth {bw / 2**30:.1f} GiB/s; "
             f"best of {args.repeat} run(s) per row.", "",
             "| d | n | path | threads | time (s) | full-data passes / round | floor (s) | IL (%) | same labels |",
             "|---:|---:|---|---:|---:|---:|---:|---:|:---|"]
    points: dict[int, list[tuple[int, float]]] = {}
    for d in args.ds:
        for n in (n for n in args.ns if n <= DEFAULT_NS.get(d, max(args.ns))):
            X = np.random.default_rng(d).normal(size=(n, d)).astype(args.dtype)
            full = n * (d + 1) * X.itemsize * n / (2 * args.k)
            variants = [("default", {})]
            if args.baseline and d > 8:
                variants.append(("exact scans", {"compact_scan": False}))
            for path, params in variants:
                first = None
                for jobs in args.threads if d > INDEX_MAX_D else args.threads[:1]:
                    runs = [run(X, args.k, jobs, **params) for _ in range(args.repeat)]
                    t, scanned, il, labels = min(runs, key=lambda r: r[0])
                    same = "" if first is None else str(bool((labels == first).all()))
                    first = labels if first is None else first
                    if jobs == 1 and path == "default":
                        points.setdefault(d, []).append((n, t))
                    lines.append(f"| {d} | {n:,} | {path} | {jobs} | {t:.2f} | {scanned / full:.3f} | "
                                 f"{scanned / bw:.2f} | {il:.3f} | {same} |")
                    print(lines[-1], flush=True)
    lines += ["", f"Load average at the end: {', '.join(f'{v:.2f}' for v in os.getloadavg())}."]
    write(f"{args.name}.md", lines)
    plot(points, args, OUT / f"{args.name}.png")


def plot(points: dict[int, list[tuple[int, float]]], args: argparse.Namespace, path: os.PathLike[str]) -> None:
    """Log-log time against n per d (one thread), with an n log n guide through d = 2."""
    plt = pyplot()
    if plt is None:
        return
    fig, ax = plt.subplots(figsize=(6.4, 4.4))
    for d, pts in sorted(points.items()):
        ns, ts = zip(*pts)
        ax.loglog(ns, ts, marker="o", label=f"d = {d}")
    if 2 in points and len(points[2]) > 1:
        n0, t0 = points[2][0]
        ns = np.array([n for n, _ in points[2]], dtype=float)
        ax.loglog(ns, t0 * ns * np.log(ns) / (n0 * math.log(n0)), "k:", label="n log n")
    ax.set_xlabel("records n")
    ax.set_ylabel("seconds (one thread)")
    ax.set_title(f"Exact MDAV, Gaussian, k = {args.k}, {args.dtype}")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend()
    fig.tight_layout()
    fig.savefig(path, dpi=120)


if __name__ == "__main__":
    main()
