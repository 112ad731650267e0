"""The mhm paper's Table 6 experiment: 100 random data sets of 11 records x 3 attributes
drawn from N(0, 5000), k = 2, 3, 5. For each method: how many times it finds the optimum
(SSE within 1e-9 relative of the exact solver's), and the maximum and mean SSE/SSE_opt.

    python benches/optimum_hits.py

Writes bench-results/optimum_hits.md. Measures and prints.
"""

from __future__ import annotations

import numpy as np
from bench_common import write

import microagg as ma

METHODS = ["mdav", "md", "cbfs", "npn-mhm", "md-mhm", "mdav-mhm", "cbfs-mhm", "mdav-star", "ona-star", "mona"]


def main() -> None:
    rng = np.random.default_rng(0)
    sets = [rng.normal(0, 5000, size=(11, 3)) for _ in range(100)]
    lines = ["# Optimum hits on 100 random 11 x 3 data sets (mhm paper, Table 6 experiment)", "",
             "| method | k | optimum found | max SSE/SSE_opt | mean SSE/SSE_opt |", "|---|---:|---:|---:|---:|"]
    for k in (2, 3, 5):
        opt = [ma.microaggregate(X, k, "optimal").sse for X in sets]
        for m in METHODS:
            ratios = np.array([ma.microaggregate(X, k, m).sse / o for X, o in zip(sets, opt)])
            hits = int((ratios <= 1 + 1e-9).sum())
            lines.append(f"| {m} | {k} | {hits} | {ratios.max():.4f} | {ratios.mean():.4f} |")
            print(lines[-1], flush=True)
    write("optimum_hits.md", lines)


if __name__ == "__main__":
    main()
