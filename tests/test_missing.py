"""Missing values: ``missing="error" | "fill" | "keep"``, from Python and the CLI.

Grouping uses completed coordinates (each missing cell at its conditional expectation under a
normal fitted by EM); the release and the information loss use the observed cells.
"""

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
from microagg import _core


def with_missing(n: int, d: int, share: float, seed: int, empty_rows: tuple[int, ...] = ()) -> np.ndarray:
    """Correlated Gaussian columns on different scales, `share` of the cells missing at random."""
    rng = np.random.default_rng(seed)
    mix = np.eye(d) + 0.6 * np.tril(np.ones((d, d)), -1)
    X = rng.normal(size=(n, d)) @ mix.T * [1.0, 10.0, 0.1, 3.0, 1.0, 2.0][:d] + 5.0
    X[rng.random(X.shape) < share] = np.nan
    X[list(empty_rows)] = np.nan
    return X


def assert_k_partition(labels: np.ndarray, n: int, k: int) -> None:
    assert labels.shape == (n,)
    sizes = np.bincount(labels)
    assert sizes.min() >= k, sizes
    assert (sizes > 0).all()  # labels are 0..g-1, every record once


def reference_em(X: np.ndarray, iterations: int = 2000) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """A plain per-record EM for the multivariate normal (Little & Rubin §11.2) on the data
    standardized by the observed means and sds: (mean, covariance, completed X)."""
    mu0, sd = np.nanmean(X, axis=0), np.nanstd(X, axis=0)
    sd[~(sd > 0)] = 1.0
    Z = (X - mu0) / sd
    seen = ~np.isnan(Z)
    rows = seen.any(axis=1)
    mean = np.nanmean(Z, axis=0)
    cov = np.diag(np.nanvar(Z, axis=0))
    completed = Z.copy()
    for _ in range(iterations):
        t1, t2 = np.zeros(Z.shape[1]), np.zeros((Z.shape[1], Z.shape[1]))
        for i in np.flatnonzero(rows):
            o, m = seen[i], ~seen[i]
            x = Z[i].copy()
            extra = np.zeros_like(t2)
            if m.any():
                coef = np.linalg.solve(cov[np.ix_(o, o)], cov[np.ix_(o, m)]).T
                x[m] = mean[m] + coef @ (Z[i, o] - mean[o])
                extra[np.ix_(m, m)] = cov[np.ix_(m, m)] - coef @ cov[np.ix_(o, m)]
            completed[i] = x
            t1 += x
            t2 += np.outer(x, x) + extra
        count = rows.sum()
        new_mean, new_cov = t1 / count, t2 / count - np.outer(t1 / count, t1 / count)
        done = max(np.abs(new_mean - mean).max(), np.abs(new_cov - cov).max()) < 1e-12
        mean, cov = new_mean, new_cov
        if done:
            break
    completed[~rows] = mean
    return mean, cov, mu0 + sd * completed


def release_rules(X: np.ndarray, res: ma.MicroaggregationResult) -> np.ndarray:
    """The group means the contract promises: over the group's observed values of each
    attribute, or over its members' completed values where none observed it."""
    C = _core.complete_missing(X)
    out = np.empty((res.n_groups, X.shape[1]))
    for g in range(res.n_groups):
        members = X[res.labels == g]
        for j in range(X.shape[1]):
            seen = members[~np.isnan(members[:, j]), j]
            out[g, j] = seen.mean() if seen.size else C[res.labels == g, j].mean()
    return out


def test_the_completion_is_the_conditional_expectation_of_the_em_fit() -> None:
    X = with_missing(150, 3, 0.2, seed=1, empty_rows=(4,))
    _, _, want = reference_em(X)
    got = _core.complete_missing(X)
    observed = ~np.isnan(X)
    np.testing.assert_array_equal(got[observed], X[observed])
    np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-6 * np.nanstd(X, axis=0).max())
    # Complete data: the completion is the identity.
    full = np.nan_to_num(X, nan=1.5)
    np.testing.assert_array_equal(_core.complete_missing(full), full)


def test_a_column_with_no_observed_value_is_named() -> None:
    X = with_missing(20, 3, 0.1, seed=2)
    X[:, 1] = np.nan
    for missing in ("fill", "keep"):
        with pytest.raises(ValueError, match="column 1 of X has no observed value"):
            ma.microaggregate(X, 3, missing=missing)
    with pytest.raises(ValueError, match="column 0 of X has no observed value"):
        ma.microaggregate(np.full((10, 2), np.nan), 2, missing="fill")
    df = pd.DataFrame({"age": X[:, 0], "income": X[:, 1]})
    with pytest.raises(ValueError, match="no observed value.*: income"):
        ma.anonymize(df, 3, missing="fill")


@pytest.mark.parametrize("method", ma.METHODS)
def test_every_method_takes_missing_values(method: str) -> None:
    n, d = (14, 2) if method == "optimal" else (230, 4)
    X = with_missing(n, 1 if method == "univariate" else d, 0.1, seed=3, empty_rows=(7,))
    for k, dtype in [(3, None), (4, "float32")]:
        res = ma.microaggregate(X, k, method, missing="fill", dtype=dtype)
        assert_k_partition(res.labels, n, k)
        np.testing.assert_allclose(res.centroids, release_rules(X, res), rtol=1e-9, atol=1e-12)
        observed = ~np.isnan(X)
        Z = X / np.nanstd(X, axis=0)
        sse = float(np.sum(((Z - res.centroids[res.labels] / np.nanstd(X, axis=0)) ** 2)[observed]))
        assert res.sse == pytest.approx(sse, rel=1e-9)
        assert 0.0 < res.information_loss < 1.0
        assert res.n_filled == int(np.isnan(X).sum())


def test_grouping_is_the_complete_data_grouping_of_the_completed_matrix() -> None:
    X = with_missing(300, 3, 0.1, seed=4)
    sd = np.nanstd(X, axis=0)
    C = _core.complete_missing(X)
    for method in ("mdav", "mondrian-v", "ona-star"):
        got = ma.microaggregate(X, 4, method, missing="keep", standardize=sd)
        want = ma.microaggregate(C, 4, method, standardize=sd)
        np.testing.assert_array_equal(got.labels, want.labels, err_msg=method)


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
        assert got.n_filled == 0


def test_fill_releases_identical_rows_and_keep_keeps_the_nan_pattern() -> None:
    # 40% missing: some groups observe nothing in a column; they release their members'
    # completed values' mean.
    X = with_missing(120, 3, 0.4, seed=5, empty_rows=(0, 50))
    fill = ma.microaggregate(X, 4, "mdav", missing="fill")
    C = _core.complete_missing(X)
    unobserved = [(g, j) for g in range(fill.n_groups) for j in range(3) if np.isnan(X[fill.labels == g, j]).all()]
    assert unobserved
    for g, j in unobserved:
        assert fill.centroids[g, j] == pytest.approx(C[fill.labels == g, j].mean(), rel=1e-12)
    keep = ma.microaggregate(X, 4, "mdav", missing="keep")
    np.testing.assert_array_equal(fill.labels, keep.labels)
    assert fill.missing == "fill" and keep.missing == "keep"
    assert fill.n_filled == int(np.isnan(X).sum()) and keep.n_filled == 0
    assert not np.isnan(fill.aggregated).any()
    for g in range(fill.n_groups):
        rows = fill.aggregated[fill.labels == g]
        assert (rows == rows[0]).all()
    assert ma.is_k_anonymous(fill.aggregated, 4)
    np.testing.assert_array_equal(np.isnan(keep.aggregated), np.isnan(X))
    observed = ~np.isnan(X)
    np.testing.assert_array_equal(keep.aggregated[observed], fill.aggregated[observed])
    # Records with nothing observed are grouped at the fitted means, like any record.
    assert (fill.aggregated[0] == fill.group_values[fill.labels[0]]).all()
    # The default result (no missing values) has nothing to keep.
    assert ma.microaggregate(np.nan_to_num(X), 4).missing_cells is None


def test_median_release_of_observed_values() -> None:
    X = with_missing(200, 3, 0.15, seed=6)
    res = ma.microaggregate(X, 5, "mdav", missing="fill", aggregation="median")
    for g in range(res.n_groups):
        members = X[res.labels == g]
        for j in range(3):
            seen = members[~np.isnan(members[:, j]), j]
            if seen.size:
                assert res.group_values[g, j] == pytest.approx(np.median(seen), rel=1e-12)


def test_filled_values_are_not_pulled_toward_the_extremes() -> None:
    """The Adult finding that retired the partial distance: a skewed age-like column and a
    correlated hours-like one, 3% missing in each; a filled cell must sit near the truth on
    average, and the release must keep each column's variance. (The mean error of ~900
    filled cells has a standard error near 0.03 sd: the bound is three of them.)"""
    rng = np.random.default_rng(7)
    n = 30_000
    age = 17 + rng.gamma(3.0, 7.0, n)
    edu = np.clip(np.round(10 + 0.05 * (age - 38) + rng.normal(0, 2.5, n)), 1, 16)
    hours = np.clip(40 + 0.15 * (age - 38) + 0.8 * (edu - 10) + rng.normal(0, 11, n), 1, 99)
    truth = np.column_stack([age, edu, hours])
    X = truth.copy()
    for j in (0, 2):
        X[rng.random(n) < 0.03, j] = np.nan
    res = ma.microaggregate(X, 5, "mdav", missing="fill")
    released = res.aggregated
    for j in (0, 2):
        hole = np.isnan(X[:, j])
        bias = (released[hole, j] - truth[hole, j]).mean() / truth[:, j].std()
        assert abs(bias) < 0.1, (j, bias)
    for j in range(3):
        ratio = released[:, j].var() / truth[:, j].var()
        assert 0.9 < ratio < 1.1, (j, ratio)


def test_determinism_and_thread_count_independence() -> None:
    X = with_missing(20_000, 3, 0.05, seed=8, empty_rows=(5,))
    for method in ("mdav", "mondrian-v", "mona"):
        one = ma.microaggregate(X, 20, method, missing="fill")
        two = ma.microaggregate(X, 20, method, missing="fill", n_jobs=2)
        np.testing.assert_array_equal(one.labels, two.labels, err_msg=method)
        np.testing.assert_array_equal(one.aggregated, two.aggregated)
    np.testing.assert_array_equal(_core.complete_missing(X), _core.complete_missing(X.copy()))


def test_bad_arguments_and_infinity() -> None:
    X = with_missing(30, 2, 0.1, seed=9)
    with pytest.raises(ValueError, match="NaN or infinity"):
        ma.microaggregate(X, 3)  # missing="error" is the default
    with pytest.raises(ValueError, match="missing.*'error', 'fill', 'keep'"):
        ma.microaggregate(X, 3, missing="drop")
    with pytest.raises(TypeError, match="missing"):
        ma.microaggregate(X, 3, missing=None)  # type: ignore[arg-type]
    X[2, 1] = np.inf
    with pytest.raises(ValueError, match="infinity"):
        ma.microaggregate(X, 3, missing="fill")
    with pytest.raises(ValueError, match="infinity"):
        _core.complete_missing(X)
    with pytest.raises(ValueError, match="NaN or infinity"):
        ma.information_loss(with_missing(30, 2, 0.1, seed=9), np.arange(30) // 3)


def run_cli(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "microagg", *args], cwd=cwd, capture_output=True, text=True, timeout=300)


def test_cli_missing_end_to_end(tmp_path: Path) -> None:
    rng = np.random.default_rng(10)
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
        holes = sum(c.strip().lower() in ("", "na", "nan") for row in original for c in row[1:])
        assert (f"; {holes} missing cells filled" in r.stdout) == (mode == "fill"), r.stdout
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


def test_cli_names_a_column_with_no_observed_value(tmp_path: Path) -> None:
    src = tmp_path / "in.csv"
    src.write_text("age,income\n" + "".join(f"{20 + i},\n" for i in range(10)))
    r = run_cli("anonymize", str(src), "-k", "3", "--columns", "age,income", "--missing", "fill", cwd=tmp_path)
    assert r.returncode == 2 and "no observed value" in r.stderr and "'income'" in r.stderr, r.stderr


def test_anonymize_passes_missing_through() -> None:
    X = with_missing(40, 2, 0.1, seed=11)
    df = pd.DataFrame({"a": X[:, 0], "b": pd.array([None if np.isnan(v) else round(v) for v in X[:, 1]], dtype="Int64"), "s": ["x"] * 40})
    out = ma.anonymize(df, 4, missing="keep")
    np.testing.assert_array_equal(out[["a", "b"]].isna().to_numpy(), df[["a", "b"]].isna().to_numpy())
    assert (out["s"] == "x").all()
    assert not ma.anonymize(df, 4, missing="fill")[["a", "b"]].isna().any().any()


@settings(max_examples=60, deadline=None)
@given(
    n=st.integers(2, 60),
    d=st.integers(1, 4),
    k=st.integers(2, 7),
    share=st.floats(0.0, 0.9),
    seed=st.integers(0, 2**16),
    method=st.sampled_from([m for m in ma.METHODS if m not in ("optimal", "univariate")]),
)
def test_any_missing_pattern_gives_a_k_partition(n: int, d: int, k: int, share: float, seed: int, method: str) -> None:
    k = min(k, n)
    X = np.round(with_missing(n, d, share, seed), 1)  # rounding: many ties
    empty = [j for j in range(d) if np.isnan(X[:, j]).all()]
    if empty:
        with pytest.raises(ValueError, match=f"column {empty[0]} of X has no observed value"):
            ma.microaggregate(X, k, method, missing="fill")
        return
    res = ma.microaggregate(X, k, method, missing="fill")
    assert_k_partition(res.labels, n, k)
    assert np.isfinite(res.sse) and 0.0 <= res.information_loss <= 1.0
    assert not np.isnan(res.aggregated).any()
