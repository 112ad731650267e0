"""Reproduce the F-MDAV paper's experiment (papers/f-mdav-fast-mdav.txt §4, Figs. 6-8 and 11).

Speedup of each single strategy, and of all of them together, over the traditional MDAV
(full sort, direct distances, centroid recomputed, float64), on Census-like data and on
Gaussian data with d = 15, k = 10; plus float32 vs float64 and 1 thread vs all threads.
It checks that every variant gives the same groups as the traditional MDAV (on float32 it
reports the fraction of identical labels), measures and prints; it asserts nothing about time.

    python benches/fmdav_speedups.py                 # n = 10 000 and 70 000 (a few minutes)
    python benches/fmdav_speedups.py --full          # adds n = 150 000
    python benches/fmdav_speedups.py --sizes 30000 --name fmdav_speedups_30k   # the 10x target

Writes bench-results/<name>.md and .png (name: fmdav_speedups unless --name).
"""

from __future__ import annotations

import argparse
import os
import platform
from typing import Any

import numpy as np
from bench_common import OUT, pyplot, timed, write

import microagg as ma

OFF = dict(algebraic_distance=False, distance_reuse=False, partial_sort=False,
           centroid_by_subtraction=False, norm_pruning=False)
PAPER = dict(algebraic_distance=True, distance_reuse=True, partial_sort=True,
             centroid_by_subtraction=True, norm_pruning=False)
VARIANTS: list[tuple[str, dict[str, Any], str]] = [
    ("traditional", OFF, "float64"),
    ("algebraic distance (3.1)", {**OFF, "algebraic_distance": True}, "float64"),
    ("distance reuse (3.2)", {**OFF, "distance_reuse": True}, "float64"),
    ("partial sort (3.3)", {**OFF, "partial_sort": True}, "float64"),
    ("centroid by subtraction (3.4)", {**OFF, "centroid_by_subtraction": True}, "float64"),
    ("single precision (3.5)", OFF, "float32"),
    ("F-MDAV: all five", PAPER, "float32"),
    ("F-MDAV + norm pruning (default)", {**PAPER, "norm_pruning": True}, "float32"),
]
K = 10


def census_like(n: int, seed: int = 0) -> np.ndarray:
    """Standardized Census records resampled to n, with a little noise to break duplicates."""
    base = ma.datasets.load_census()
    base = (base - base.mean(axis=0)) / base.std(axis=0)
    rng = np.random.default_rng(seed)
    return base[rng.integers(0, len(base), n)] + rng.normal(scale=0.05, size=(n, base.shape[1]))


def gaussian(n: int, seed: int = 0) -> np.ndarray:
    return np.random.default_rng(seed).normal(size=(n, 15))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sizes", type=int, nargs="+", default=[10_000, 70_000])
    ap.add_argument("--full", action="store_true", help="also n = 150 000")
    ap.add_argument("--threads-n", type=int, default=200_000, help="n for the 1-vs-all-threads row")
    ap.add_argument("--name", default="fmdav_speedups", help="output file stem in bench-results/")
    args = ap.parse_args()
    sizes = sorted(set(args.sizes + ([150_000] if args.full else [])))
    out = OUT

    lines = [
        "# F-MDAV strategies: speedup over the traditional MDAV",
        "",
        f"k = {K}, one thread unless stated; machine: {platform.processor() or platform.machine()}, "
        f"{os.cpu_count()} cores. Time = best of runs (3 runs for n <= 10 000, else 1).",
        "",
        "| data | n | variant | time (s) | speedup | same labels as traditional |",
        "|---|---|---|---:|---:|---:|",
    ]
    speedups: dict[tuple[str, int], list[float]] = {}
    for data_name, make in (("census-like d=13", census_like), ("gaussian d=15", gaussian)):
        for n in sizes:
            X = make(n)
            repeat = 3 if n <= 10_000 else 1
            base_t, base = timed(lambda: ma.microaggregate(X, K, dtype="float64", **OFF), repeat)
            row = []
            for name, params, dtype in VARIANTS:
                t, res = (base_t, base) if name == "traditional" else timed(
                    lambda: ma.microaggregate(X, K, dtype=dtype, **params), repeat)
                same = float((res.labels == base.labels).mean())
                row.append(base_t / t)
                lines.append(f"| {data_name} | {n:,} | {name} | {t:.3f} | {base_t / t:.2f}x | {100 * same:.1f}% |")
                print(lines[-1], flush=True)
            speedups[(data_name, n)] = row

    X = gaussian(args.threads_n)
    lines += ["", f"## Threads and precision (gaussian d=15, n = {args.threads_n:,}, k = {K}, microagg default)", "",
              "| dtype | threads | time (s) | speedup vs 1 thread | same labels |", "|---|---:|---:|---:|---:|"]
    for dtype in ("float64", "float32"):
        t1, r1 = timed(lambda: ma.microaggregate(X, K, dtype=dtype, n_jobs=1), 1)
        tn, rn = timed(lambda: ma.microaggregate(X, K, dtype=dtype, n_jobs=-1), 1)
        same = bool((r1.labels == rn.labels).all())
        lines.append(f"| {dtype} | 1 | {t1:.3f} | 1.00x | |")
        lines.append(f"| {dtype} | {os.cpu_count()} | {tn:.3f} | {t1 / tn:.2f}x | {same} |")
        print("\n".join(lines[-2:]), flush=True)

    write(f"{args.name}.md", lines)
    plt = pyplot()
    if plt is None:
        return
    names = [v[0] for v in VARIANTS]
    fig, ax = plt.subplots(figsize=(11, 5))
    keys = list(speedups)
    width = 0.8 / len(keys)
    for i, key in enumerate(keys):
        xs = np.arange(len(names)) + i * width
        ax.bar(xs, speedups[key], width, label=f"{key[0]}, n={key[1]:,}")
    ax.set_xticks(np.arange(len(names)) + 0.4 - width / 2)
    ax.set_xticklabels(names, rotation=25, ha="right", fontsize=8)
    ax.set_yscale("log")
    ax.set_ylabel("speedup over traditional MDAV (log)")
    ax.set_title(f"F-MDAV strategies, k={K}, one thread")
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(out / f"{args.name}.png", dpi=120)
    print(f"wrote {out / f'{args.name}.png'}")


if __name__ == "__main__":
    main()
