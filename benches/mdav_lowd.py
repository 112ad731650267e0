"""Exact MDAV in low dimension: the k-d tree of the remaining records (``spatial_index``)
against the streaming scans, on n Gaussian records of d = 2, 3, 5, 8 attributes, k = 10,
one thread, default dtype. Both give the same partition (checked here where both run).

    python benches/mdav_lowd.py                          # n = 1e5, 1e6 (scan up to 1e5... see --scan-max)
    python benches/mdav_lowd.py --ns 100000 1000000 10000000 --scan-max 1000000
"""

from __future__ import annotations

import argparse
import os
import time

import numpy as np
from bench_common import write

import microagg as ma


def run(X: np.ndarray, k: int, index: bool) -> tuple[float, np.ndarray]:
    t0 = time.perf_counter()
    res = ma.microaggregate(X, k, n_jobs=1, spatial_index=index)
    return time.perf_counter() - t0, res.labels


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--ns", type=int, nargs="+", default=[100_000, 1_000_000])
    ap.add_argument("--ds", type=int, nargs="+", default=[2, 3, 5, 8])
    ap.add_argument("--scan-max", type=int, default=100_000, help="largest n timed with the scans")
    ap.add_argument("--k", type=int, default=10)
    args = ap.parse_args()
    load = os.getloadavg()[0]
    lines = [f"# Exact MDAV, k-d tree vs scans (k = {args.k}, one thread, Gaussian data)", "",
             f"Load average (1 min) at start: {load:.1f} on {os.cpu_count()} cores.", "",
             "| d | n | index (s) | scan (s) | speed-up | same labels |", "|---:|---:|---:|---:|---:|:---|"]
    for d in args.ds:
        for n in args.ns:
            X = np.random.default_rng(d).normal(size=(n, d))
            t_index, labels = run(X, args.k, True)
            scan, same = "", ""
            if n <= args.scan_max:
                t_scan, ref = run(X, args.k, False)
                scan, same = f"{t_scan:.2f} | {t_scan / t_index:.1f}x", str(bool((ref == labels).all()))
            else:
                scan = "- | -"
            lines.append(f"| {d} | {n:,} | {t_index:.2f} | {scan} | {same} |")
            print(lines[-1], flush=True)
    lines += ["", f"Load average (1 min) at end: {os.getloadavg()[0]:.1f}."]
    write("mdav_lowd.md", lines)


if __name__ == "__main__":
    main()
