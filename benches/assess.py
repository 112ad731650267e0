"""Assessment benchmark (docs/assessment.md#risk): record-linkage time next to the MDAV run it
assesses. Gaussian n x d (d = 3 and 15), released by MDAV (k = 10, float64, one thread): the
time of MDAV, then of nearest-record linkage of the original to the release (exact, with
ties), on one thread and on all; same rates on both. The R-U maps are benches/ru_maps.py.

    python benches/assess.py                       # n = 10^4, 10^5 (+ 10^6 for d = 3)
    python benches/assess.py --ns 10000
"""

from __future__ import annotations

import argparse
import os
import time

import numpy as np
from bench_common import write

import microagg as ma


def linkage_vs_mdav(ns: list[int], dims: list[int], max_n_d15: int) -> list[str]:
    lines = ["## Record linkage vs the MDAV run it assesses", "",
             "Gaussian data, MDAV k = 10 (float64, one thread); nearest-record linkage of every original "
             "record to the release, exact ties (`ma.risk.record_linkage`).", "",
             "Wall seconds, and CPU seconds of the one-thread runs (steadier than wall time when "
             "other jobs share the cores).", "",
             "| n | d | groups | MDAV (s) | linkage 1 thread (s) | linkage all threads (s) | MDAV CPU (s) "
             "| linkage CPU (s) | linkage / MDAV (CPU) | rate |",
             "|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for d in dims:
        for n in ns:
            if d > 3 and n > max_n_d15:
                continue
            X = np.random.default_rng(n + d).normal(size=(n, d))
            t0, c0 = time.perf_counter(), time.process_time()
            res = ma.microaggregate(X, 10, "mdav")
            t_mdav, c_mdav = time.perf_counter() - t0, time.process_time() - c0
            xm = res.aggregated
            times, rates, c_link = [], [], 0.0
            for jobs in (1, -1):
                t0, c0 = time.perf_counter(), time.process_time()
                link = ma.risk.record_linkage(X, xm, n_jobs=jobs)
                times.append(time.perf_counter() - t0)
                if jobs == 1:
                    c_link = time.process_time() - c0
                rates.append(link.rate)
            assert rates[0] == rates[1]
            lines.append(f"| {n:,} | {d} | {res.n_groups:,} | {t_mdav:.2f} | {times[0]:.2f} | {times[1]:.2f} | "
                         f"{c_mdav:.2f} | {c_link:.2f} | {c_link / c_mdav:.2f} | {100 * rates[0]:.2f}% |")
            print(lines[-1], flush=True)
    return lines


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--ns", type=int, nargs="+", default=[10_000, 100_000, 1_000_000])
    ap.add_argument("--max-n-d15", type=int, default=100_000, help="largest n for d = 15 (MDAV is O(n^2/k))")
    ap.add_argument("--dims", type=int, nargs="+", default=[3, 15])
    ap.add_argument("--out", default="assess.md", help="name of the Markdown file in bench-results/")
    args = ap.parse_args()
    load_avg = os.getloadavg()
    lines = ["# Assessment benchmark", "",
             f"Load average before the run: {load_avg[0]:.2f} (1 min), {load_avg[1]:.2f} (5 min); "
             f"{os.cpu_count()} cores.", ""]
    lines += linkage_vs_mdav(args.ns, args.dims, args.max_n_d15)
    write(args.out, lines)


if __name__ == "__main__":
    main()
