"""The workflow's arguments together (docs/workflow.md): strata, weights, aggregation and missing
values in one run, through the API, DataFrames and the CLI."""

from __future__ import annotations

import csv
from pathlib import Path

import numpy as np
import pytest

import microagg as ma
from microagg import _core
from microagg.cli import main

from conftest import optional


def _data(n: int = 600, d: int = 4, seed: int = 3) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    X = rng.lognormal(size=(n, d))
    X[rng.random((n, d)) < 0.1] = np.nan
    X[5] = np.nan  # a record with every attribute missing
    strata = rng.choice(["a", "b", "c"], size=n)
    w = rng.uniform(0.5, 3.0, size=n)
    return X, strata, w


def _weighted_median(v: np.ndarray, w: np.ndarray) -> float:
    order = np.argsort(v, kind="stable")
    v, w = v[order], w[order]
    cum = np.cumsum(w)
    half = cum[-1] / 2
    i = int(np.searchsorted(cum, half))
    return float((v[i] + v[i + 1]) / 2) if cum[i] == half and i + 1 < len(v) else float(v[i])


@pytest.mark.parametrize("method", ["mdav", "ona-star", "mondrian-v"])
def test_strata_weights_median_and_missing_together(method: str) -> None:
    X, strata, w = _data()
    res = ma.microaggregate(X, 4, method, by=strata, weights=w, aggregation="median", missing="keep")
    # no group crosses a stratum, every group has k records
    for g in range(res.n_groups):
        members = res.labels == g
        assert len(set(strata[members])) == 1
        assert members.sum() >= 4
    # each group's value is the weighted median of its observed values (of its members'
    # completed values if none observed the attribute)
    completed = _core.complete_missing(X)
    for g in range(res.n_groups):
        members = res.labels == g
        for j in range(X.shape[1]):
            seen = members & ~np.isnan(X[:, j])
            source = (X[seen, j], w[seen]) if seen.any() else (completed[members, j], w[members])
            want = _weighted_median(*source)
            assert res.group_values[g, j] == pytest.approx(want, rel=1e-12), (g, j)
    # keep: missing cells stay missing, observed cells get the group's value
    agg = res.aggregated
    assert np.array_equal(np.isnan(agg), np.isnan(X))
    observed = ~np.isnan(X)
    assert np.array_equal(agg[observed], res.group_values[res.labels][observed])
    # fill: the same groups, no gap, rows of a group identical
    filled = ma.microaggregate(X, 4, method, by=strata, weights=w, aggregation="median", missing="fill")
    assert np.array_equal(filled.labels, res.labels)
    assert not np.isnan(filled.aggregated).any()
    assert ma.is_k_anonymous(filled.aggregated, 4, by=strata)
    # threads change nothing
    par = ma.microaggregate(X, 4, method, by=strata, weights=w, missing="fill", n_jobs=2)
    assert np.array_equal(par.labels, ma.microaggregate(X, 4, method, by=strata, weights=w, missing="fill").labels)


def test_weighted_sse_counts_observed_cells_only() -> None:
    X, strata, w = _data(300, 3)
    res = ma.microaggregate(X, 3, "mdav", by=strata, weights=w, missing="fill", standardize=False)
    observed = ~np.isnan(X)
    resid = np.where(observed, X - res.group_values[res.labels], 0.0)
    unit = w / 2.0 ** np.floor(np.log2(w.max()))  # the largest weight brought into [1, 2)
    assert res.sse == pytest.approx(float((unit[:, None] * resid**2).sum()), rel=1e-10)


def test_merging_small_strata_with_missing_values() -> None:
    X, _, _ = _data(200, 3)
    strata = np.array(["big"] * 198 + ["tiny"] * 2)
    res = ma.microaggregate(X, 5, "mdav", by=strata, small_strata="merge", missing="fill")
    assert [(m.stratum, m.into, m.size) for m in res.merges] == [("tiny", "big", 2)]
    assert res.group_sizes.min() >= 5


def test_polars_anonymize_with_strata_weights_and_missing() -> None:
    pl = optional("polars")
    X, strata, w = _data(240, 2)
    df = pl.DataFrame({"region": strata, "x": X[:, 0], "y": X[:, 1], "w": w, "name": [f"p{i}" for i in range(240)]})
    df = df.with_columns(pl.col("x").fill_nan(None))  # a polars null as well as NaN
    kept = ma.anonymize(df, 3, by="region", weights="w", missing="keep")
    assert kept["x"].is_null().sum() + kept["x"].is_nan().sum() == df["x"].is_null().sum()
    out = ma.anonymize(df, 3, by="region", weights="w", missing="fill")
    assert isinstance(out, pl.DataFrame)
    assert out.columns == df.columns
    assert out["name"].to_list() == df["name"].to_list()
    assert out["w"].to_list() == df["w"].to_list()
    assert out["x"].is_null().sum() + out["x"].is_nan().sum() == 0
    keys = list(zip(out["region"].to_list(), out["x"].to_list(), out["y"].to_list()))
    counts: dict[object, int] = {}
    for key in keys:
        counts[key] = counts.get(key, 0) + 1
    assert min(counts.values()) >= 3


def test_cli_parquet_with_strata_weights_and_kept_missing_cells(tmp_path: Path) -> None:
    pa = optional("pyarrow")
    import pyarrow.parquet as pq

    X, strata, w = _data(120, 2)
    table = pa.table({"region": strata, "x": pa.array(X[:, 0], mask=np.isnan(X[:, 0])), "y": X[:, 1], "w": w})
    src, out = tmp_path / "in.parquet", tmp_path / "out.parquet"
    pq.write_table(table, src)
    args = ["anonymize", str(src), "-k", "3", "--by", "region", "--weights", "w", "--missing", "keep"]
    status = main(args + ["--aggregation", "median", "-o", str(out)])
    assert status == 0
    got = pq.read_table(out)
    assert got.column("x").null_count == table.column("x").null_count
    assert got.column("region").to_pylist() == list(strata)
    assert got.column("w").to_pylist() == list(w)


def test_cli_csv_missing_cells_kept_as_written(tmp_path: Path) -> None:
    src, out = tmp_path / "in.csv", tmp_path / "out.csv"
    rows = [["g", "a", "b"]] + [["s1" if i % 2 else "s2", str(i), "NA" if i % 5 == 0 else str(i * i)] for i in range(40)]
    with open(src, "w", newline="") as f:
        csv.writer(f).writerows(rows)
    assert main(["anonymize", str(src), "-k", "4", "--by", "g", "--missing", "keep", "-o", str(out)]) == 0
    with open(out, newline="") as f:
        got = list(csv.reader(f))
    assert [r[2] == "NA" for r in got[1:]] == [r[2] == "NA" for r in rows[1:]]
    assert [r[0] for r in got] == [r[0] for r in rows]
