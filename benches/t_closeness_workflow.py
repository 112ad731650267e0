"""t-closeness in the whole workflow on all complete Adult records: partitioned runs
(``max_part``), missing key values and a mixed key. Writes bench-results/t_closeness_workflow.md.

- Parts: 4 numeric keys (age, fnlwgt, education-num, hours-per-week), income nominal, k = 5,
  t in {0.15, 0.05}, "merge" and "t-first", without parts and with max_part 20 000 and 5 000:
  seconds, IL (SSE/SST of the standardized keys, %), parts cut and parts grouped (after the
  parts farther than t from the file were joined), and the largest class EMD measured on the
  release by ``ma.risk.t_closeness`` (must be <= t).
- Missing: the same keys with 5% of age and hours-per-week missing (MCAR, seed 0),
  ``missing="fill"``, t-first, k = 5, t = 0.05, against the complete keys.
- Mixed: age, hours-per-week with sex, race (nominal) and education (ordinal) through
  ``ma.anonymize``, income and capital-gain confidential, k = 5, t = 0.15: seconds, classes
  over the whole key (smallest >= k) and the largest EMD per confidential attribute.

    MICROAGG_SHARED=/work/shared python benches/t_closeness_workflow.py
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pandas as pd
from bench_common import SHARED, timed, write

import microagg as ma

NUMERIC = ["age", "fnlwgt", "education-num", "hours-per-week"]
EDUCATION = [
    "Preschool", "1st-4th", "5th-6th", "7th-8th", "9th", "10th", "11th", "12th", "HS-grad", "Some-college",
    "Assoc-voc", "Assoc-acdm", "Bachelors", "Masters", "Prof-school", "Doctorate",
]
MIXED = ["age", "hours-per-week", "sex", "race", "education"]
READING = """Reading: every run keeps every class at >= 5 records and within t of the whole file.
"Parts grouped" below "parts cut" are parts farther than t from the file joined to their
nearest before grouping: income follows age and education-num, so cuts along those keys
make parts with too few or too many high incomes, and at t = 0.05 they join into one or
two. Partitioned t-closeness therefore saves time only where the parts stay near the
file's distribution (keys weakly tied to the confidential attribute, or a large t); it
never weakens the bound (docs/workflow.md#t-closeness-of-confidential-attributes).
The mixed-key rows run `auto` (all three algorithms) on the embedding's 10 columns (sex 2
and race 5 one-hot); k-first's scans of the remaining records take most of their time."""


def parts_cut(n: int, max_part: int | None) -> int:
    """Parts of halving cuts until none exceeds max_part."""
    if max_part is None:
        return 1
    return 2 ** max(0, math.ceil(math.log2(n / max_part)))


def section(title: str, *columns: str) -> list[str]:
    """A section's heading and its table's header."""
    return ["", f"### {title}", "", "| " + " | ".join(columns) + " |", "|" + "---|" * len(columns)]


def checked_run(X: np.ndarray, income: np.ndarray, t: float, t_method: str, **options: Any) -> tuple[float, Any, float]:
    """Seconds (best of 2), result and largest class EMD of a t-close run with income nominal,
    k = 5; fails unless every class has 5 records and is within t."""
    seconds, res = timed(lambda: ma.t_close_microaggregate(
        X, 5, sensitive=income, t=t, t_method=t_method, kinds="nominal", **options), repeat=2)
    worst = ma.risk.t_closeness(res.aggregated, income, kinds="nominal")["sensitive"]
    assert res.group_sizes.min() >= 5 and worst <= t + 1e-9
    return seconds, res, worst


def main() -> None:
    df = pd.read_csv(SHARED / "datasets" / "adult.csv", skipinitialspace=True, na_values="?").dropna()
    df = df.reset_index(drop=True)
    X = df[NUMERIC].to_numpy(float)
    income = df["income"].str.rstrip(".").to_numpy(dtype=object)
    n = len(df)
    lines = [
        "# t-closeness with parts, missing key values and a mixed key",
        "",
        f"Made by `benches/t_closeness_workflow.py`: all {n} complete Adult records, k = 5, one thread,",
        "best of 2; IL = SSE/SST of the standardized keys in %. Every largest EMD is measured on the",
        "release by `ma.risk.t_closeness` (classes = equal released keys). Timings on a shared 2-vCPU",
        "VM under load: compare within a table.",
        *section("Partitioned runs: keys " + ", ".join(NUMERIC) + "; income nominal",
                 "t", "t_method", "max_part", "seconds", "IL %", "parts cut", "parts grouped", "largest EMD"),
    ]
    for t in (0.15, 0.05):
        for t_method in ("merge", "t-first"):
            for max_part in (None, 20_000, 5_000):
                seconds, res, worst = checked_run(X, income, t, t_method, max_part=max_part)
                lines.append(
                    f"| {t} | {t_method} | {max_part or '-'} | {seconds:.2f} | {100 * res.information_loss:.2f} | "
                    f"{parts_cut(n, max_part)} | {len(res.chosen)} | {worst:.4f} |"
                )
    gaps = X.copy()
    rng = np.random.default_rng(0)
    for j in (0, 3):
        gaps[rng.random(n) < 0.05, j] = np.nan
    lines += section("Missing key values: 5% of age and hours-per-week missing, t-first, t = 0.05",
                     "keys", "seconds", "IL % (observed cells)", "cells filled", "largest EMD")
    for name, keys, missing in (("complete", X, "error"), ("5% missing, fill", gaps, "fill")):
        seconds, res, worst = checked_run(keys, income, 0.05, "t-first", missing=missing)
        lines.append(f"| {name} | {seconds:.2f} | {100 * res.information_loss:.2f} | {res.n_filled} | {worst:.4f} |")
    frame = df.assign(income=income)
    sensitive = ["income", "capital-gain"]
    lines += section("Mixed key: " + ", ".join(MIXED) + " (education ordinal); income and capital-gain confidential",
                     "t", "seconds", "classes", "smallest class", "largest EMD income", "largest EMD capital-gain")
    for t in (0.25, 0.15):
        seconds, out = timed(lambda: ma.anonymize(
            frame, 5, columns=MIXED, ordinal={"education": EDUCATION}, sensitive=sensitive, t=t), repeat=2)
        sizes = out.groupby(MIXED, sort=False).size()
        emd = ma.risk.t_closeness(pd.DataFrame({
            "key": out.groupby(MIXED, sort=False).ngroup(), **{c: out[c] for c in sensitive}
        }), sensitive, columns=["key"])
        assert sizes.min() >= 5 and max(emd.values()) <= t + 1e-9
        lines.append(f"| {t} | {seconds:.2f} | {len(sizes)} | {sizes.min()} | {emd['income']:.4f} | "
                     f"{emd['capital-gain']:.4f} |")
    lines += ["", *READING.splitlines()]
    write("t_closeness_workflow.md", lines)


if __name__ == "__main__":
    main()
