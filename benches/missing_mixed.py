"""Missing categories on a mixed key: the native completion against the dense embedding's EM.

Adult's complete records, key age, education-num, hours-per-week (numeric), sex, race,
workclass, native-country (nominal); a share of workclass and native-country hidden at random
(and, in one row, 3% of age too); k = 5, MDAV, ``missing="fill"``. Two runs each:

* dense: the one-hot embedding, its missing blocks completed by the EM of the numeric path
  (a nominal column's block as one), MDAV on the embedding (what ``microagg`` did before);
* native: the codes handed to the core, a missing level completed by its most probable
  level under the naive Bayes model of ``src/workflow/level_completion.rs``, exact MDAV on
  the native key.

IL % against the truth, on the embedding and over every cell: 100 * (sum over numeric cells
of ((release - truth) / sd)^2 + sum over nominal cells of [release != truth]) / (the truth's
SST on the embedding: n per numeric column, n/2 * (1 - sum p_l^2) * 2 per nominal one with
w = 1). Also: the share of the hidden nominal cells released with their true level, and the
time (one thread, best of --repeat). Last, the cost of the native completion at scale: a
synthetic key of --n records (3 normal columns, a 5 000-level Zipf code, a 41-level and a
2-level one), complete and with 5% of the two larger codes missing, max_part = 20 000
(the embedding would need n x 5 000 cells).

Writes section (d) of ``bench-results/missing.md`` (``benches/missing.py`` writes the rest;
rerun this after it). Asserts nothing.

    MICROAGG_SHARED=/work/shared python benches/missing_mixed.py [--repeat 1]
"""

from __future__ import annotations

import argparse
import os
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
from bench_common import timed

import microagg as ma
from microagg._mixed.workflow import release

NUMERIC = ["age", "education-num", "hours-per-week"]
NOMINAL = ["sex", "race", "workclass", "native-country"]
HIDDEN = ["workclass", "native-country"]
MARK = "## (d) Mixed key"


def _dense(*args: Any, **kwargs: Any) -> Any:
    """``microaggregate`` under another name: the mixed workflow then takes the embedding."""
    return ma.microaggregate(*args, **kwargs)


def adult() -> pd.DataFrame:
    shared = Path(os.environ.get("MICROAGG_SHARED", Path(__file__).resolve().parents[2] / "shared"))
    df = pd.read_csv(shared / "datasets" / "adult.csv", skipinitialspace=True, na_values="?", keep_default_na=False)
    return df[NUMERIC + NOMINAL].dropna().reset_index(drop=True)


def hide(df: pd.DataFrame, share: float, age_share: float, seed: int) -> dict[str, Any]:
    """The key's columns with `share` of the HIDDEN cells (and `age_share` of age) missing."""
    rng = np.random.default_rng(seed)
    values: dict[str, Any] = {}
    for c in NUMERIC + NOMINAL:
        v = df[c].to_numpy().astype(float if c in NUMERIC else object)
        cut = share if c in HIDDEN else age_share if c == "age" else 0.0
        hole = rng.random(len(v)) < cut
        v[hole] = np.nan if c in NUMERIC else None
        values[c] = v
    return values


def il_vs_truth(out: dict[str, Any], df: pd.DataFrame) -> float:
    n = len(df)
    loss, sst = 0.0, 0.0
    for c in NUMERIC:
        truth = df[c].to_numpy(dtype=float)
        loss += float((((out[c] - truth) / truth.std()) ** 2).sum())
        sst += n
    for c in NOMINAL:
        truth = df[c].to_numpy()
        loss += float((out[c] != truth).sum())
        p = df[c].value_counts(normalize=True).to_numpy()
        sst += n * (1 - float((p**2).sum()))
    return 100 * loss / sst


def row(df: pd.DataFrame, share: float, age_share: float, repeat: int) -> list[str]:
    values = hide(df, share, age_share, seed=int(share * 1000) + int(age_share * 100))
    kinds = {c: "nominal" for c in NOMINAL}
    lines = []
    for name, group in (("dense (EM on the embedding)", _dense), ("native (most probable level)", ma.microaggregate)):
        seconds, (out, res) = timed(lambda: release(values, kinds, k=5, missing="fill", group=group), repeat)
        hits = [
            float((out[c][values[c] == None] == df[c].to_numpy()[values[c] == None]).mean())  # noqa: E711
            for c in HIDDEN
        ]
        lines.append(
            f"| {share:.0%} | {age_share:.0%} | {name} | {il_vs_truth(out, df):.3f} | "
            f"{100 * res.information_loss:.3f} | {hits[0]:.3f} | {hits[1]:.3f} | {seconds:.2f} |"
        )
        print(lines[-1], flush=True)
    return lines


def scale_rows(n: int, repeat: int) -> list[str]:
    """Native run time of the synthetic many-level key, complete and with missing codes."""
    rng = np.random.default_rng(0)
    values: dict[str, Any] = {c: rng.normal(size=n) for c in ("a", "b", "c")}
    values.update(region=(rng.zipf(1.3, n) % 5000).astype(str).astype(object),
                  job=rng.integers(0, 41, n).astype(str).astype(object), sex=rng.integers(0, 2, n).astype(str))
    kinds = {c: "nominal" for c in ("region", "job", "sex")}
    holed = dict(values, **{c: np.where(rng.random(n) < 0.05, None, values[c]) for c in ("region", "job")})
    out = []
    for name, key, missing in (("complete", values, "error"), ("5% of region and job missing", holed, "fill")):
        seconds, _ = timed(lambda: release(key, kinds, k=5, max_part=20_000, missing=missing), repeat)
        out.append(f"| {n} | {name} | {seconds:.2f} |")
        print(out[-1], flush=True)
    return out


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--repeat", type=int, default=1)
    p.add_argument("--n", type=int, default=200_000)
    args = p.parse_args()
    df = adult()
    lines = [
        f"{MARK}: missing workclass and native-country, native completion against the dense EM",
        "",
        f"Written by `MICROAGG_SHARED=/work/shared python benches/missing_mixed.py` (seeds fixed; "
        f"Adult's {len(df)} complete records; key {', '.join(NUMERIC + NOMINAL)}; k = 5, MDAV, "
        f"missing='fill'; one thread, best of {args.repeat}; load average before {os.getloadavg()[0]:.2f}).",
        "IL % vs truth: every cell, on the embedding (a nominal cell counts 1 when released",
        "with another level). IL % observed: the result's SSE/SST on the observed cells. Hits:",
        "the share of the hidden cells released with their true level.",
        "",
        "| hidden workclass, native-country | hidden age | completion | IL % vs truth | IL % observed "
        "| hits workclass | hits native-country | time (s) |",
        "|---:|---:|---|---:|---:|---:|---:|---:|",
    ]
    print("\n".join(lines), flush=True)
    for share, age_share in ((0.05, 0.0), (0.20, 0.0), (0.05, 0.03)):
        lines += row(df, share, age_share, args.repeat)
    lines += ["", "Native runs of a synthetic key with a 5 000-level code (k = 5, max_part = 20 000):", "",
              "| records | key | time (s) |", "|---:|---|---:|"]
    lines += scale_rows(args.n, args.repeat)
    path = Path(__file__).resolve().parents[1] / "bench-results" / "missing.md"
    text = path.read_text()
    text = text[: text.index(MARK)].rstrip() + "\n" if MARK in text else text.rstrip() + "\n"
    path.write_text(text + "\n" + "\n".join(lines) + "\n")
    print(f"wrote {path}")


if __name__ == "__main__":
    main()
