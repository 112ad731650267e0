"""Time of the k-anonymity check of a release with missing cells (a missing value matches
any value): ``ma.risk.min_group_size`` on n x d releases of groups of k, complete and with
missing cells in P distinct patterns. Prints a Markdown table; no file is written.

The release is synthetic (n / k Gaussian group values, each repeated k times, rows
shuffled); pattern p > 0 blanks attribute p - 1 of the records it is drawn for, so P
patterns.

    python benches/kanonymity.py                     # n = 10^5, 10^6; d = 15; P = 1, 2, 4, 8
    python benches/kanonymity.py --ns 100000 --patterns 1 4
"""

from __future__ import annotations

import argparse
import time

import numpy as np

import microagg as ma


def release(n: int, d: int, k: int, patterns: int, seed: int = 0) -> np.ndarray:
    """n records in groups of k, with P missingness patterns drawn at random per record."""
    rng = np.random.default_rng(seed)
    x = np.repeat(rng.normal(size=(n // k, d)), k, axis=0)[rng.permutation(n // k * k)]
    pattern = rng.integers(0, patterns, x.shape[0])
    for p in range(1, patterns):
        x[pattern == p, p - 1] = np.nan
    return x


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--ns", type=int, nargs="+", default=[100_000, 1_000_000])
    parser.add_argument("--d", type=int, default=15)
    parser.add_argument("-k", type=int, default=5)
    parser.add_argument("--patterns", type=int, nargs="+", default=[1, 2, 4, 8])
    args = parser.parse_args()
    print("| n | d | k | patterns | min group size | seconds |")
    print("|---:|---:|---:|---:|---:|---:|")
    for n in args.ns:
        for p in args.patterns:
            x = release(n, args.d, args.k, p)
            start = time.perf_counter()
            size = ma.risk.min_group_size(x)
            print(f"| {n} | {args.d} | {args.k} | {p} | {size} | {time.perf_counter() - start:.2f} |")


if __name__ == "__main__":
    main()
