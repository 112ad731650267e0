"""Missing values (docs/workflow.md#missing-values): ``missing="error" | "fill" | "keep"``, from
Python and the CLI."""

from __future__ import annotations

import csv
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import microagg as ma

MISSING_METHODS = ["mdav", "md", "mdav-star", "ona-star", "mondrian", "mondrian-v", "mondrian-v2d", "mona", "mona-2d"]


def with_missing(n: int, d: int, share: float, seed: int, empty_rows: tuple[int, ...] = ()) -> np.ndarray:
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d)) * [1.0, 10.0, 0.1, 3.0, 1.0, 2.0][:d] + 5.0
    X[rng.random(X.shape) < share] = np.nan
    X[list(empty_rows)] = np.nan
    return X


def assert_k_partition(labels: np.ndarray, n: int, k: int) -> None:
    assert labels.shape == (n,)
    sizes = np.bincount(labels)
    assert sizes.min() >= k, sizes
    assert (sizes > 0).all()  # labels are 0..g-1, every record once


def observed_stats(X: np.ndarray, labels: np.ndarray) -> tuple[np.ndarray, float, float]:
    """Centroids (nanmean per group), SSE and SST on the observed cells, standardized by the
    observed values of each column (what the library promises)."""
    sd = np.nanstd(X, axis=0)
    sd[~(sd > 0)] = 1.0
    Z = X / sd
    observed = ~np.isnan(X)
    sums = np.array([np.where(observed, X, 0.0)[labels == g].sum(axis=0) for g in range(labels.max() + 1)])
    counts = np.array([observed[labels == g].sum(axis=0) for g in range(labels.max() + 1)])
    # An attribute no member observes gets the column's observed mean.
    cents = np.where(counts > 0, sums / np.maximum(counts, 1), np.nanmean(X, axis=0))
    sse = float(np.nansum((Z - cents[labels] / sd) ** 2))
    sst = float(np.nansum((Z - np.nanmean(Z, axis=0)) ** 2))
    return cents, sse, sst


@pytest.mark.parametrize("method", MISSING_METHODS)
@pytest.mark.parametrize("share", [0.05, 0.2])
def test_every_listed_method_gives_a_k_partition_with_missing_values(method: str, share: float) -> None:
    X = with_missing(230, 4, share, seed=int(share * 100), empty_rows=(7, 100))
    for k, dtype in [(3, None), (5, "float32")]:
        with np.errstate(all="ignore"):
            res = ma.microaggregate(X, k, method, missing="fill", dtype=dtype)
        assert_k_partition(res.labels, len(X), k)
        cents, sse, sst = observed_stats(X, res.labels)
        np.testing.assert_allclose(res.centroids, cents, rtol=1e-9, atol=1e-12)
        assert res.sse == pytest.approx(sse, rel=1e-9)
        assert res.sst == pytest.approx(sst, rel=1e-9)
        assert 0.0 < res.information_loss < 1.0
        assert ma.information_loss(X, res.labels, missing="keep") == pytest.approx(res.information_loss, rel=1e-12)
        assert ma.sse(X, res.labels, missing="fill") == pytest.approx(res.sse, rel=1e-12)


@pytest.mark.parametrize("method", ma.METHODS)
def test_the_fill_path_on_complete_data_changes_nothing(method: str) -> None:
    rng = np.random.default_rng(3)
    X = rng.normal(size=(14 if method == "optimal" else 90, 1 if method == "univariate" else 3))
    k = 3
    want = ma.microaggregate(X, k, method)
    for missing in ("fill", "keep"):
        got = ma.microaggregate(X, k, method, missing=missing)
        np.testing.assert_array_equal(got.labels, want.labels)
        assert got.sse == want.sse and got.sst == want.sst
        np.testing.assert_array_equal(got.aggregated, want.aggregated)


def test_fill_releases_identical_rows_and_keep_keeps_the_nan_pattern() -> None:
    # 40% missing: some groups observe nothing in a column; fill gives them the column mean.
    X = with_missing(120, 3, 0.4, seed=4, empty_rows=(0, 50))
    fill = ma.microaggregate(X, 4, "mdav", missing="fill")
    unobserved = [(g, j) for g in range(fill.n_groups) for j in range(3) if np.isnan(X[fill.labels == g, j]).all()]
    assert unobserved
    for g, j in unobserved:
        assert fill.centroids[g, j] == pytest.approx(np.nanmean(X[:, j]), rel=1e-12)
    keep = ma.microaggregate(X, 4, "mdav", missing="keep")
    np.testing.assert_array_equal(fill.labels, keep.labels)
    assert fill.missing == "fill" and keep.missing == "keep"
    assert not np.isnan(fill.aggregated).any()
    for g in range(fill.n_groups):
        rows = fill.aggregated[fill.labels == g]
        assert (rows == rows[0]).all()
    assert ma.is_k_anonymous(fill.aggregated, 4)
    np.testing.assert_array_equal(np.isnan(keep.aggregated), np.isnan(X))
    observed = ~np.isnan(X)
    np.testing.assert_array_equal(keep.aggregated[observed], fill.aggregated[observed])
    # The default result (no missing values) has nothing to keep.
    assert ma.microaggregate(np.nan_to_num(X), 4).missing_cells is None


def test_records_with_every_attribute_missing_join_the_last_group_without_moving_it() -> None:
    X = with_missing(60, 3, 0.1, seed=5)
    Y = X.copy()
    Y[[3, 17, 41]] = np.nan
    res = ma.microaggregate(Y, 5, "mdav", missing="fill")
    assert_k_partition(res.labels, len(Y), 5)
    last = res.n_groups - 1
    assert (res.labels[[3, 17, 41]] == last).all()
    others = res.labels[res.labels == last].size - 3
    assert others >= 5
    np.testing.assert_allclose(res.centroids[last], np.nanmean(Y[res.labels == last], axis=0))
    assert (res.aggregated[3] == res.centroids[last]).all()
    # Fewer than k records with a value: one group.
    Z = np.full((6, 2), np.nan)
    Z[0] = [1.0, 2.0]
    res = ma.microaggregate(Z, 2, "mondrian", missing="keep")
    np.testing.assert_array_equal(res.labels, np.zeros(6))
    assert np.isnan(res.aggregated[1:]).all() and (res.aggregated[0] == [1.0, 2.0]).all()


@pytest.mark.parametrize("method", sorted(set(ma.METHODS) - set(MISSING_METHODS)))
def test_other_methods_refuse_missing_values_naming_those_that_can(method: str) -> None:
    X = with_missing(16, 1 if method == "univariate" else 2, 0.2, seed=6)
    with pytest.raises(ValueError) as err:
        ma.microaggregate(X, 3, method, missing="fill")
    assert f"method '{method}' cannot take missing values" in str(err.value)
    assert ", ".join(MISSING_METHODS) in str(err.value)


def test_bad_arguments_and_infinity() -> None:
    X = with_missing(30, 2, 0.1, seed=7)
    with pytest.raises(ValueError, match="NaN or infinity"):
        ma.microaggregate(X, 3)  # missing="error" is the default
    with pytest.raises(ValueError, match="missing.*'error', 'fill', 'keep'"):
        ma.microaggregate(X, 3, missing="drop")
    with pytest.raises(TypeError, match="missing"):
        ma.microaggregate(X, 3, missing=None)  # type: ignore[arg-type]
    X[2, 1] = np.inf
    with pytest.raises(ValueError, match="infinity"):
        ma.microaggregate(X, 3, missing="fill")
    with pytest.raises(ValueError, match="NaN or infinity"):
        ma.information_loss(with_missing(30, 2, 0.1, seed=7), np.arange(30) // 3)


def run_cli(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "microagg", *args], cwd=cwd, capture_output=True, text=True, timeout=300)


def test_cli_missing_end_to_end(tmp_path: Path) -> None:
    rng = np.random.default_rng(8)
    src = tmp_path / "in.csv"
    tokens = ["", "NA", "nan", " NaN "]
    with open(src, "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["id", "age", "income"])
        for i in range(50):
            age = tokens[i % 4] if i % 5 == 0 else str(int(rng.integers(18, 90)))
            income = tokens[i % 3] if i % 7 == 1 else f"{rng.normal(3e4, 1e4):.2f}"
            w.writerow([f"r{i}", age, income])
    with open(src, newline="") as f:
        original = list(csv.reader(f))[1:]
    for columns in (["--columns", "age,income"], []):  # gaps never drop a column silently
        r = run_cli("anonymize", str(src), "-k", "4", *columns, cwd=tmp_path)
        assert r.returncode == 2 and "column 'age' has missing values (line 2: '')" in r.stderr, r.stderr
        assert "--missing fill" in r.stderr
    for mode in ("fill", "keep"):
        out = tmp_path / f"{mode}.csv"
        r = run_cli("anonymize", str(src), "-k", "4", "--missing", mode, "-o", str(out), cwd=tmp_path)
        assert r.returncode == 0, r.stderr
        with open(out, newline="") as f:
            rows = list(csv.reader(f))[1:]
        assert [row[0] for row in rows] == [row[0] for row in original]
        missing_in = [[c.strip().lower() in ("", "na", "nan") for c in row[1:]] for row in original]
        if mode == "fill":
            released = [tuple(row[1:]) for row in rows]
            assert all(released.count(t) >= 4 for t in released)
            assert all(c not in ("", "NA", "nan") for row in rows for c in row[1:])
        else:
            for row, before, miss in zip(rows, original, missing_in):
                for c, b, m in zip(row[1:], before[1:], miss):
                    assert (c == b) if m else (c.strip().lower() not in ("", "na", "nan"))


def test_anonymize_passes_missing_through() -> None:
    X = with_missing(40, 2, 0.1, seed=9)
    df = pd.DataFrame({"a": X[:, 0], "b": pd.array([None if np.isnan(v) else round(v) for v in X[:, 1]], dtype="Int64"), "s": ["x"] * 40})
    out = ma.anonymize(df, 4, missing="keep")
    np.testing.assert_array_equal(out[["a", "b"]].isna().to_numpy(), df[["a", "b"]].isna().to_numpy())
    assert (out["s"] == "x").all()
    assert not ma.anonymize(df, 4, missing="fill")[["a", "b"]].isna().any().any()


@pytest.mark.parametrize("method", ["mdav", "mondrian-v", "mona"])
def test_threads_give_the_same_groups_with_missing_values(method: str) -> None:
    X = with_missing(40_000, 3, 0.05, seed=10, empty_rows=(5,))
    one = ma.microaggregate(X, 50, method, missing="fill")
    two = ma.microaggregate(X, 50, method, missing="fill", n_jobs=2)
    np.testing.assert_array_equal(one.labels, two.labels)


@settings(max_examples=60, deadline=None)
@given(
    n=st.integers(2, 60),
    d=st.integers(1, 4),
    k=st.integers(2, 7),
    share=st.floats(0.0, 0.9),
    seed=st.integers(0, 2**16),
    method=st.sampled_from(MISSING_METHODS),
)
def test_any_missing_pattern_gives_a_k_partition(n: int, d: int, k: int, share: float, seed: int, method: str) -> None:
    k = min(k, n)
    X = np.round(with_missing(n, d, share, seed), 1)  # rounding: many ties
    res = ma.microaggregate(X, k, method, missing="fill")
    assert_k_partition(res.labels, n, k)
    assert np.isfinite(res.sse) and 0.0 <= res.information_loss <= 1.0
