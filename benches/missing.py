"""Missing values (docs/workflow.md#missing-values): quality of ``missing="fill"`` and the cost of
the masked kernels.

(a) Census and EIA with 5% of the cells missing at random: IL on the observed cells of MDAV
    with ``missing="fill"`` (partial distances) against the naive route (column-mean
    imputation, then MDAV on complete data), both measured by
    ``information_loss(X_with_nan, labels, missing="fill")``, for k = 3, 5, 10.
(b) MDAV on n Gaussian records (default 100 000), d = 15, k = 5: complete data against the
    same data with 5% of the cells missing (float64 and float32).
(c) Complete data before and after the missing-value change (``--before DIR``: a directory
    holding the old ``microagg`` package, e.g. ``pip install --no-deps --target DIR old.whl``):
    each timing runs in its own process, old and new alternating; must be unchanged.

Prints and writes ``bench-results/missing.md``; asserts nothing.

    python benches/missing.py --before /tmp/before [--n 100000] [--repeat 3]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys

import numpy as np
from bench_common import timed, write

import microagg as ma

# (method, n, d) of the complete-data timings of (c): every family whose code the change touched.
COMPLETE_CASES = [("mdav", 100_000, 15), ("mdav-star", 20_000, 5), ("ona-star", 20_000, 5), ("md", 5_000, 5), ("mondrian-v", 1_000_000, 3)]


def with_missing(X: np.ndarray, share: float, seed: int) -> np.ndarray:
    """X with `share` of its cells set to NaN, at random."""
    Y = np.array(X, dtype=np.float64)
    Y[np.random.default_rng(seed).random(Y.shape) < share] = np.nan
    return Y


def gaussian(n: int, d: int, seed: int = 0) -> np.ndarray:
    return np.random.default_rng(seed).normal(size=(n, d))


def quality_table() -> list[str]:
    lines = [
        "| data | k | IL % fill (partial distances) | IL % mean imputation + MDAV | fill lower by |",
        "|---|---|---|---|---|",
    ]
    for name in ("census", "eia"):
        X = with_missing(getattr(ma.datasets, f"load_{name}")(), 0.05, seed=1)
        imputed = np.where(np.isnan(X), np.nanmean(X, axis=0), X)
        for k in (3, 5, 10):
            fill = ma.microaggregate(X, k, "mdav", missing="fill")
            naive = ma.microaggregate(imputed, k, "mdav")
            il_fill = ma.information_loss(X, fill.labels, missing="fill")
            il_naive = ma.information_loss(X, naive.labels, missing="fill")
            lines.append(f"| {name} | {k} | {100 * il_fill:.3f} | {100 * il_naive:.3f} | {100 * (1 - il_fill / il_naive):.1f}% |")
            print(lines[-1], flush=True)
    return lines


def other_methods_table() -> list[str]:
    """The same comparison for every other method that takes missing values, k = 5."""
    lines = ["| method | Census fill | Census naive | EIA fill | EIA naive |", "|---|---|---|---|---|"]
    data = {}
    for name in ("census", "eia"):
        X = with_missing(getattr(ma.datasets, f"load_{name}")(), 0.05, seed=1)
        data[name] = (X, np.where(np.isnan(X), np.nanmean(X, axis=0), X))
    for method in ("md", "mdav-star", "ona-star", "mondrian", "mondrian-v", "mondrian-v2d", "mona", "mona-2d"):
        cells = []
        for X, imputed in data.values():
            fill = ma.microaggregate(X, 5, method, missing="fill")
            naive = ma.microaggregate(imputed, 5, method)
            cells += [f"{100 * fill.information_loss:.3f}", f"{100 * ma.information_loss(X, naive.labels, missing='fill'):.3f}"]
        lines.append(f"| {method} | {' | '.join(cells)} |")
        print(lines[-1], flush=True)
    return lines


def missing_timings(n: int, repeat: int) -> list[str]:
    X = gaussian(n, 15)
    Xm = with_missing(X, 0.05, seed=2)
    lines = ["| dtype | complete (s) | 5% missing, fill (s) | ratio |", "|---|---|---|---|"]
    for dtype in ("float64", "float32"):
        t_c, _ = timed(lambda: ma.microaggregate(X, 5, "mdav", dtype=dtype), repeat)
        t_m, _ = timed(lambda: ma.microaggregate(Xm, 5, "mdav", dtype=dtype, missing="fill"), repeat)
        lines.append(f"| {dtype} | {t_c:.2f} | {t_m:.2f} | {t_m / t_c:.2f}x |")
        print(lines[-1], flush=True)
    return lines


def worker(method: str, n: int, d: int) -> None:
    """Times one complete-data run in this process and prints {seconds, sse} as JSON."""
    X = gaussian(n, d, seed=3)
    seconds, res = timed(lambda: ma.microaggregate(X, 5, method), 1)
    print(json.dumps({"seconds": seconds, "sse": res.sse}))


def in_process(path: str | None, method: str, n: int, d: int) -> dict[str, float]:
    env = dict(os.environ)
    if path is not None:
        env["PYTHONPATH"] = path
    cmd = [sys.executable, __file__, "--worker", method, str(n), str(d)]
    out = subprocess.run(cmd, env=env, capture_output=True, text=True, check=True).stdout
    result: dict[str, float] = json.loads(out.strip().splitlines()[-1])
    return result


def before_after(before: str, repeat: int) -> list[str]:
    after = os.environ.get("PYTHONPATH")
    lines = ["| method | n x d | before (s) | after (s) | after / before | same SSE |", "|---|---|---|---|---|---|"]
    for method, n, d in COMPLETE_CASES:
        old, new = [], []
        for _ in range(repeat):  # alternate, so that load changes hit both alike
            old.append(in_process(before, method, n, d))
            new.append(in_process(after, method, n, d))
        t_old, t_new = min(r["seconds"] for r in old), min(r["seconds"] for r in new)
        same = old[0]["sse"] == new[0]["sse"]
        lines.append(f"| {method} | {n} x {d} | {t_old:.3f} | {t_new:.3f} | {t_new / t_old:.3f} | {same} |")
        print(lines[-1], flush=True)
    return lines


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--n", type=int, default=100_000)
    p.add_argument("--repeat", type=int, default=3)
    p.add_argument("--before", help="directory with the old microagg package for (c)")
    p.add_argument("--worker", nargs=3, metavar=("METHOD", "N", "D"), help=argparse.SUPPRESS)
    args = p.parse_args()
    if args.worker:
        worker(args.worker[0], int(args.worker[1]), int(args.worker[2]))
        return
    load = os.getloadavg()
    header = [
        "# Missing values: quality and cost",
        "",
        f"Machine: {platform.processor() or platform.machine()}, {os.cpu_count()} cores; load average before "
        f"timing {load[0]:.2f} / {load[1]:.2f} / {load[2]:.2f}; one thread, best of {args.repeat}.",
        "",
        "## (a) IL on the observed cells, 5% of the cells missing at random (MDAV)",
        "",
    ]
    print("\n".join(header), flush=True)
    lines = header + quality_table()
    lines += ["", "IL % on the observed cells at k = 5 for the other methods that take missing values:", ""]
    lines += other_methods_table()
    lines += ["", f"## (b) MDAV, n = {args.n}, d = 15, k = 5: complete vs 5% missing", ""]
    lines += missing_timings(args.n, args.repeat)
    if args.before:
        lines += ["", "## (c) Complete data before / after the change (Gaussian, k = 5, float64)", ""]
        lines += before_after(args.before, args.repeat)
    lines += ["", f"Load average after: {' / '.join(f'{v:.2f}' for v in os.getloadavg())}."]
    write("missing.md", lines)


if __name__ == "__main__":
    main()
