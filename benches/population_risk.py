"""Time of ``ma.risk.individual_risk`` (sdcMicro's measure_risk, docs/assessment.md#population-risk)
on n x d categorical keys with sampling weights, complete and with missing cells. Prints a
Markdown table and writes it to bench-results/population_risk.md.

The key is synthetic: each of the d columns draws from `levels` categories (codes), so a
record's class is small (about n / levels^d records), the survey case; weights are uniform in
[1, 200]. With missing cells, column p - 1 is blanked for the records drawn for pattern p.

    python benches/population_risk.py                    # n = 10^6, d = 10, 8 levels
    python benches/population_risk.py --ns 100000 1000000 --patterns 1 3
"""

from __future__ import annotations

import argparse

import numpy as np
from bench_common import timed, write

import microagg as ma


def key(n: int, d: int, levels: int, patterns: int, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """An n x d key of `levels` categories per column with P missingness patterns, and weights."""
    rng = np.random.default_rng(seed)
    x = rng.integers(0, levels, size=(n, d)).astype(np.float64)
    pattern = rng.integers(0, patterns, n)
    for p in range(1, patterns):
        x[pattern == p, p - 1] = np.nan
    return x, rng.uniform(1.0, 200.0, n)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--ns", type=int, nargs="+", default=[1_000_000])
    parser.add_argument("--d", type=int, default=10)
    parser.add_argument("--levels", type=int, default=8)
    parser.add_argument("--patterns", type=int, nargs="+", default=[1, 3])
    args = parser.parse_args()
    lines = ["| n | d | levels | patterns | records with fk = 1 (share) | global risk | seconds |",
             "|---:|---:|---:|---:|---:|---:|---:|"]
    for n in args.ns:
        for p in args.patterns:
            x, w = key(n, args.d, args.levels, p)
            seconds, r = timed(lambda: ma.risk.individual_risk(x, weights=w))
            lines.append(f"| {n} | {args.d} | {args.levels} | {p} | {np.mean(r.fk == 1):.3f} | "
                         f"{r.global_risk:.4g} | {seconds:.2f} |")
            print(lines[-1], flush=True)
    write("population_risk.md", lines)


if __name__ == "__main__":
    main()
