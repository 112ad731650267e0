"""The spatial index beyond exact MDAV (issue #15, goal 4): MDAV*, MD and the incremental
NN fold, each timed with ``spatial_index=True`` (k-d tree) and ``False`` (scans / brute
force over the groups) on Gaussian data, k = 10, one thread, default dtype, end to end from
Python. Both give the same labels (checked here). The load average is recorded with each
table: the machine is shared.

    python benches/index_family.py                       # everything (about 10 minutes)
    python benches/index_family.py --parts fold --fold-bases 100000

Writes bench-results/index_family.md.
"""

from __future__ import annotations

import argparse
import os
import time
from typing import Callable

import numpy as np
from bench_common import write

import microagg as ma

K = 10


def load() -> str:
    return "/".join(f"{v:.1f}" for v in os.getloadavg())


def timed(run: Callable[[bool], np.ndarray]) -> tuple[float, float, bool]:
    """Seconds with the index, without it, and whether the labels agree."""
    out = []
    for index in (True, False):
        t0 = time.perf_counter()
        labels = run(index)
        out.append((time.perf_counter() - t0, labels))
    (t_on, on), (t_off, off) = out
    return t_on, t_off, bool((on == off).all())


def methods_table(method: str, ns: list[int], ds: list[int]) -> list[str]:
    lines = [f"## `{method}`", "", f"Load average (1/5/15 min) at start: {load()}.", "",
             "| d | n | index (s) | scan (s) | speed-up | same labels |", "|---:|---:|---:|---:|---:|:---|"]
    for d in ds:
        for n in ns:
            X = np.random.default_rng(d).normal(size=(n, d))
            t_on, t_off, same = timed(
                lambda index: ma.microaggregate(X, K, method, n_jobs=1, spatial_index=index).labels)
            lines.append(f"| {d} | {n:,} | {t_on:.2f} | {t_off:.2f} | {t_off / t_on:.1f}x | {same} |")
            print(lines[-1], flush=True)
    return lines + ["", f"Load average at end: {load()}.", ""]


def fold_table(bases: list[int], new: int, ds: list[int], big_max_d: int) -> list[str]:
    lines = ["## Incremental NN fold", "",
             f"`IncrementalMicroaggregator(k={K}, strategy=..., spatial_index=...)`: `fit` on the base, "
             f"then one `extend` with {new:,} new records (timed). Load average at start: {load()}.", "",
             "| d | base | strategy | groups | tree (s) | brute force (s) | speed-up | same labels |",
             "|---:|---:|:---|---:|---:|---:|---:|:---|"]
    for d in ds:
        for base in bases:
            if base > 100_000 and d > big_max_d:
                continue  # the base MDAV alone is minutes
            X = np.random.default_rng(d).normal(size=(base + new, d))
            for strategy, inertial in (("nn", False), ("nn", True), ("nn-split-mid", False)):
                times, labels, groups = [], [], 0
                for index in (True, False):
                    est = ma.IncrementalMicroaggregator(K, strategy=strategy, inertial=inertial, spatial_index=index)
                    est.fit(X[:base])
                    groups = est.n_groups_
                    t0 = time.perf_counter()
                    est.extend(X[base:])
                    times.append(time.perf_counter() - t0)
                    labels.append(est.labels_)
                name = strategy + (" inertial" if inertial else "")
                same = bool((labels[0] == labels[1]).all())
                lines.append(f"| {d} | {base:,} | {name} | {groups:,} | {times[0]:.2f} | {times[1]:.2f} | "
                             f"{times[1] / times[0]:.1f}x | {same} |")
                print(lines[-1], flush=True)
    return lines + ["", f"Load average at end: {load()}.", ""]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--parts", nargs="+", default=["mdav-star", "md", "fold"], choices=["mdav-star", "md", "fold"])
    ap.add_argument("--ns", type=int, nargs="+", default=[20_000, 100_000], help="MDAV* and MD sizes")
    ap.add_argument("--ds", type=int, nargs="+", default=[2, 3, 5, 8], help="MDAV* and MD dimensions")
    ap.add_argument("--fold-bases", type=int, nargs="+", default=[100_000, 1_000_000])
    ap.add_argument("--fold-new", type=int, default=100_000)
    ap.add_argument("--fold-ds", type=int, nargs="+", default=[3, 15])
    ap.add_argument("--fold-big-max-d", type=int, default=3, help="largest d folded into bases above 10^5")
    args = ap.parse_args()
    lines = ["# The spatial index for MDAV*, MD and the incremental fold", "",
             f"`python benches/index_family.py` on {os.cpu_count()} shared cores; Gaussian data, k = {K}, "
             "`n_jobs=1`. \"index\"/\"tree\" is `spatial_index=True`, the other column `False`.", ""]
    for part in args.parts:
        if part == "fold":
            lines += fold_table(args.fold_bases, args.fold_new, args.fold_ds, args.fold_big_max_d)
        else:
            lines += methods_table(part, args.ns, args.ds)
    write("index_family.md", lines)


if __name__ == "__main__":
    main()
