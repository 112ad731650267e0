"""The univariate optimum: microagg's `univariate` (sort + MHM, O(n log n + n·k)) against
microagg1d (PyPI; O(n) solvers after sorting, compiled with numba) on 10^6 Gaussian values.
Both are exact, so the SSEs must agree; the script prints both and the times.

    pip install microagg1d && python benches/univariate.py

Writes bench-results/univariate.md. Measures and prints.
"""

from __future__ import annotations

import numpy as np
from bench_common import timed, write

import microagg as ma


def sse(x: np.ndarray, labels: np.ndarray) -> float:
    return float(sum(((x[labels == g] - x[labels == g].mean()) ** 2).sum() for g in np.unique(labels)))


def main() -> None:
    try:
        from microagg1d import univariate_microaggregation
    except ImportError:
        raise SystemExit("pip install microagg1d to compare") from None
    x = np.random.default_rng(0).normal(size=1_000_000)
    lines = ["# Univariate optimum on 10^6 Gaussian values", "",
             "| k | microagg (s) | microagg1d (s) | SSE microagg | SSE microagg1d |", "|---:|---:|---:|---:|---:|"]
    univariate_microaggregation(x[:1000], 3)  # numba compilation outside the timing
    for k in (3, 10, 100):
        t1, res = timed(lambda: ma.microaggregate(x.reshape(-1, 1), k, "univariate", standardize=False))
        t2, lab = timed(lambda: univariate_microaggregation(x, k))
        lines.append(f"| {k} | {t1:.2f} | {t2:.2f} | {res.sse:.6f} | {sse(x, np.asarray(lab)):.6f} |")
        print(lines[-1], flush=True)
    write("univariate.md", lines)


if __name__ == "__main__":
    main()
