"""Missing values: quality and cost of grouping on EM-completed coordinates (``missing="fill"``).

(a) Census, EIA and Tarragona with 5% of the cells missing completely at random, k = 5: IL over
    all cells against the true values (sum over every cell of the squared standardized gap
    between the release and the hidden truth, over the truth's SST) of ``missing="fill"``,
    against the regression-completion recipe: complete each missing cell by chained linear
    regressions on the other columns (numpy, 20 sweeps from the column means), run the same
    method on the completed data, release its group means. Goal: within 5% of the recipe.
(b) Adult (age, education-num, hours-per-week) with 3% of age and of hours-per-week missing,
    k = 5, MDAV: the filled cells' mean error in sd of the true column (goal within +-0.1) and
    each released column's variance over the original's (goal within +-10%).
(c) Time: MDAV on complete data against the same data with missing cells (``fill``), the EM
    completion alone (``microagg._core.complete_missing``) and MDAV on the completed matrix as
    complete data: Adult (3% of two columns) and Gaussian n x 15 with 5% missing (default
    n = 100 000). Goal: the difference is the EM.

Prints and writes ``bench-results/missing.md``; asserts nothing.

    MICROAGG_SHARED=/work/shared python benches/missing.py [--n 100000] [--repeat 3]
"""

from __future__ import annotations

import argparse
import os
import platform

import numpy as np
from bench_common import load, timed, write

import microagg as ma
from microagg import _core

METHODS = ("mdav", "mdav-star", "ona-star", "mondrian-v", "mona")


def mcar(X: np.ndarray, share: float, seed: int, columns: list[int] | None = None) -> np.ndarray:
    """X with `share` of its cells (of `columns`: all by default) set to NaN, at random."""
    Y = np.array(X, dtype=np.float64)
    rng = np.random.default_rng(seed)
    for j in range(Y.shape[1]) if columns is None else columns:
        Y[rng.random(len(Y)) < share, j] = np.nan
    return Y


def regression_completion(X: np.ndarray, sweeps: int = 20) -> np.ndarray:
    """Each missing cell predicted by least squares on the other columns, sweep after sweep
    (chained regressions), starting from the column means."""
    hole = np.isnan(X)
    C = np.where(hole, np.nanmean(X, axis=0), X)
    for _ in range(sweeps):
        for j in np.flatnonzero(hole.any(axis=0)):
            design = np.column_stack([np.ones(len(C)), np.delete(C, j, axis=1)])
            seen = ~hole[:, j]
            beta = np.linalg.lstsq(design[seen], C[seen, j], rcond=None)[0]
            C[hole[:, j], j] = design[hole[:, j]] @ beta
    return C


def il_against_truth(released: np.ndarray, truth: np.ndarray) -> float:
    sd = truth.std(axis=0)
    sd[sd == 0] = 1.0
    return float((((released - truth) / sd) ** 2).sum() / (((truth - truth.mean(axis=0)) / sd) ** 2).sum())


def quality_table() -> list[str]:
    lines = [
        "| data | method | IL % vs truth, fill | IL % vs truth, regression recipe | fill / recipe |",
        "|---|---|---|---|---|",
    ]
    for name in ("census", "eia", "tarragona"):
        truth = load(name).astype(np.float64)
        X = mcar(truth, 0.05, seed=1)
        completed = regression_completion(X)
        for method in METHODS:
            fill = ma.microaggregate(X, 5, method, missing="fill").aggregated
            recipe = ma.microaggregate(completed, 5, method).aggregated
            a, b = il_against_truth(fill, truth), il_against_truth(recipe, truth)
            lines.append(f"| {name} | {method} | {100 * a:.3f} | {100 * b:.3f} | {a / b:.3f} |")
            print(lines[-1], flush=True)
    return lines


def adult_table() -> list[str]:
    truth = load("adult")
    X = mcar(truth, 0.03, seed=2, columns=[0, 2])
    names = ("age", "education-num", "hours-per-week")
    lines = [
        "| release | column | filled cells | mean filled | mean true | bias (sd) | variance released / original |",
        "|---|---|---|---|---|---|---|",
    ]
    releases = {
        "fill (EM completion)": ma.microaggregate(X, 5, "mdav", missing="fill").aggregated,
        "regression recipe": ma.microaggregate(regression_completion(X), 5, "mdav").aggregated,
    }
    for label, released in releases.items():
        for j, name in enumerate(names):
            hole = np.isnan(X[:, j])
            ratio = released[:, j].var() / truth[:, j].var()
            if hole.any():
                bias = (released[hole, j] - truth[hole, j]).mean() / truth[:, j].std()
                cells = f"{hole.sum()} | {released[hole, j].mean():.2f} | {truth[hole, j].mean():.2f} | {bias:+.3f}"
            else:
                cells = "0 | - | - | -"
            lines.append(f"| {label} | {name} | {cells} | {ratio:.3f} |")
            print(lines[-1], flush=True)
    return lines


def timing_table(n: int, repeat: int) -> list[str]:
    adult = load("adult")
    gauss = np.random.default_rng(3).normal(size=(n, 15))
    cases = [
        ("Adult 48842 x 3, 3% of 2 columns", adult, mcar(adult, 0.03, seed=2, columns=[0, 2])),
        (f"Gaussian {n} x 15, 5% of cells", gauss, mcar(gauss, 0.05, seed=4)),
    ]
    lines = [
        "| data | complete (s) | fill (s) | EM alone (s) | MDAV on the completed matrix (s) | fill - complete - EM (s) |",
        "|---|---|---|---|---|---|",
    ]
    for label, full, holes in cases:
        completed = _core.complete_missing(holes)
        t_c = t_f = t_em = t_on = float("inf")
        for _ in range(repeat):  # interleaved, so that load changes hit every column alike
            t_c = min(t_c, timed(lambda: ma.microaggregate(full, 5, "mdav"))[0])
            t_f = min(t_f, timed(lambda: ma.microaggregate(holes, 5, "mdav", missing="fill"))[0])
            t_em = min(t_em, timed(lambda: _core.complete_missing(holes))[0])
            t_on = min(t_on, timed(lambda: ma.microaggregate(completed, 5, "mdav"))[0])
        lines.append(f"| {label} | {t_c:.3f} | {t_f:.3f} | {t_em:.3f} | {t_on:.3f} | {t_f - t_c - t_em:+.3f} |")
        print(lines[-1], flush=True)
    return lines


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--n", type=int, default=100_000)
    p.add_argument("--repeat", type=int, default=3)
    args = p.parse_args()
    load_before = os.getloadavg()
    lines = [
        "# Missing values: grouping on EM-completed coordinates",
        "",
        "Written by `MICROAGG_SHARED=/work/shared python benches/missing.py` (seeds fixed). Machine: "
        f"{platform.processor() or platform.machine()}, {os.cpu_count()} cores (shared); load average before "
        f"{load_before[0]:.2f}; one thread, timings best of {args.repeat}.",
        "",
        "## (a) 5% of the cells missing at random, k = 5: IL over all cells against the truth",
        "",
        "IL % = 100 * sum over every cell of ((release - truth) / sd)^2 / SST of the truth. The recipe:",
        "chained least-squares regressions complete the missing cells, the method groups the",
        "completed data, the release is its group means. Goal: fill within 5% of the recipe.",
        "",
    ]
    print("\n".join(lines), flush=True)
    lines += quality_table()
    lines += [
        "",
        "## (b) Adult, 3% of age and of hours-per-week missing, k = 5, MDAV",
        "",
        "Bias: mean of (released - true) over the filled cells, in sd of the true column. Goal:",
        "within +-0.1 sd, and each column's released variance within +-10% of the original's.",
        "",
    ]
    lines += adult_table()
    lines += ["", "## (c) Time, MDAV, k = 5: complete data, the same data with missing cells, the EM alone", ""]
    lines += timing_table(args.n, args.repeat)
    lines += ["", f"Load average after: {' / '.join(f'{v:.2f}' for v in os.getloadavg())}."]
    write("missing.md", lines)


if __name__ == "__main__":
    main()
