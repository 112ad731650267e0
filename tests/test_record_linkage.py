"""Record linkage (docs/assessment.md#risk): the Rust index against a NumPy brute force over every
released record, with exact ties, and the global matching against scipy."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import microagg as ma


def scaled(x: np.ndarray, xm: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The documented scaling: the original's column mean and population sd (1 if 0)."""
    mean, sd = np.nanmean(x, axis=0), np.nanstd(x, axis=0)
    sd = np.where(sd == 0, 1.0, sd)
    return (x - mean) / sd, (xm - mean) / sd


def squared_distances(x: np.ndarray, xm: np.ndarray) -> np.ndarray:
    """All scaled squared distances, summed in attribute order; partial (docs/assessment.md#risk)
    with NaN."""
    z, zm = scaled(x, xm)
    d = z.shape[1]
    acc = np.zeros((len(z), len(zm)))
    seen = np.zeros_like(acc)
    for j in range(d):
        t = z[:, j, None] - zm[None, :, j]
        ok = ~np.isnan(t)
        acc = acc + np.where(ok, t * t, 0.0)
        seen += ok
    if np.isnan(z).any() or np.isnan(zm).any():
        with np.errstate(divide="ignore", invalid="ignore"):
            acc = np.where(seen > 0, acc * (d / seen), np.inf)
    return acc


def brute_force(x: np.ndarray, xm: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Tie counts and own-among-ties by the definition."""
    acc = squared_distances(x, xm)
    tied = acc == acc.min(axis=1, keepdims=True)
    return tied.sum(axis=1), tied[np.arange(len(x)), np.arange(len(x))]


def release(x: np.ndarray, k: int, method: str = "mdav") -> np.ndarray:
    return ma.microaggregate(x, k, method).aggregated


def check(x: np.ndarray, xm: np.ndarray) -> ma.risk.RecordLinkageResult:
    res = ma.risk.record_linkage(x, xm)
    counts, own = brute_force(x, xm)
    assert res.tie_counts is not None and res.own_among_ties is not None
    np.testing.assert_array_equal(res.tie_counts, counts)
    np.testing.assert_array_equal(res.own_among_ties, own)
    assert res.expected_correct == pytest.approx(float(np.sum(own / counts)), rel=1e-12)
    for jobs in (2, -1):
        other = ma.risk.record_linkage(x, xm, n_jobs=jobs)
        np.testing.assert_array_equal(other.tie_counts, res.tie_counts)
        np.testing.assert_array_equal(other.own_among_ties, res.own_among_ties)
    return res


@settings(max_examples=25, deadline=None)
@given(
    d=st.sampled_from([1, 2, 3, 8, 15]),
    n=st.integers(5, 400),
    k=st.integers(2, 6),
    integer=st.booleans(),
    seed=st.integers(0, 2**31),
)
def test_nearest_equals_brute_force(d: int, n: int, k: int, integer: bool, seed: int) -> None:
    rng = np.random.default_rng(seed)
    x = rng.integers(-2, 3, size=(n, d)).astype(float) if integer else rng.normal(size=(n, d))
    check(x, release(x, min(k, n)))


@pytest.mark.parametrize("d", [1, 2, 3, 8, 15])
def test_many_exact_ties_on_integer_grids(d: int) -> None:
    rng = np.random.default_rng(d)
    x = rng.integers(0, 3 if d < 8 else 2, size=(3000, d)).astype(float)
    grid = 2 if d < 8 else 1
    xm = np.round(release(x, 4) * grid) / grid  # rounded group means: many equal distances
    res = check(x, xm)
    assert res.tie_counts is not None and (res.tie_counts >= 8).any()  # two groups tie


def test_nearest_with_missing_values() -> None:
    rng = np.random.default_rng(7)
    x = rng.integers(0, 4, size=(500, 5)).astype(float)
    xm = release(x, 3)
    mask = rng.random(x.shape) < 0.1
    x[mask], xm[mask] = np.nan, np.nan
    xm[3] = np.nan  # a record released with nothing
    check(x, xm)


def test_global_matches_scipy() -> None:
    scipy = pytest.importorskip("scipy.optimize")
    rng = np.random.default_rng(0)
    x = rng.normal(size=(120, 4))
    xm = release(x, 3) + rng.normal(scale=0.05, size=x.shape)
    res = ma.risk.record_linkage(x, xm, "global")
    z, zm = scaled(x, xm)
    cost = np.sqrt(((z[:, None, :] - zm[None, :, :]) ** 2).sum(axis=2))
    rows, cols = scipy.linear_sum_assignment(cost)
    assert res.matches is not None
    assert cost[np.arange(120), res.matches].sum() == pytest.approx(cost[rows, cols].sum(), rel=1e-12)
    assert sorted(res.matches) == list(range(120))
    assert res.rate == np.mean(res.matches == np.arange(120)) > 0.2


def test_global_with_missing_values_uses_the_partial_distance() -> None:
    scipy = pytest.importorskip("scipy.optimize")
    rng = np.random.default_rng(2)
    x = rng.normal(size=(80, 3))
    xm = release(x, 2)
    x[rng.random(x.shape) < 0.1] = np.nan
    res = ma.risk.record_linkage(x, xm, "global")
    cost = np.sqrt(squared_distances(x, xm))
    rows, cols = scipy.linear_sum_assignment(cost)
    assert res.matches is not None
    assert cost[np.arange(80), res.matches].sum() == pytest.approx(cost[rows, cols].sum(), rel=1e-12)


def test_global_refuses_large_inputs() -> None:
    n = ma.risk.GLOBAL_MAX_RECORDS + 1
    x = np.zeros((n, 1))
    with pytest.raises(ValueError, match="at most 5000 records"):
        ma.risk.record_linkage(x, x, "global")
