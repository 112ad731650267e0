"""The Python API contract of docs/api.md."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import gaussian
from hypothesis import given, settings
from hypothesis import strategies as st

import microagg as ma


def test_result_fields_are_consistent() -> None:
    X = gaussian(503, 4, seed=1) * [1, 10, 100, 1000] + [0, 5, -3, 7]
    res = ma.microaggregate(X, k=7)
    assert res.k == 7 and res.method == "mdav"
    assert res.labels.dtype == np.int64 and res.labels.shape == (503,)
    assert set(np.unique(res.labels)) == set(range(res.n_groups))
    assert res.group_sizes.sum() == 503 and res.group_sizes.min() >= 7 and res.group_sizes.max() <= 13
    assert res.centroids.shape == (res.n_groups, 4)
    for g in (0, res.n_groups // 2, res.n_groups - 1):
        np.testing.assert_allclose(res.centroids[g], X[res.labels == g].mean(axis=0), rtol=1e-12)
    np.testing.assert_array_equal(res.aggregated, res.centroids[res.labels])
    assert 0 < res.information_loss < 1
    assert res.information_loss == pytest.approx(res.sse / res.sst)
    assert res.sst == pytest.approx(503 * 4)  # standardized data: SST = n * d


def test_released_data_is_k_anonymous_and_original_is_not() -> None:
    X = gaussian(200, 3, seed=2)
    res = ma.microaggregate(X, k=4)
    assert ma.is_k_anonymous(res.aggregated, 4)
    assert not ma.is_k_anonymous(res.aggregated, 14)
    assert not ma.is_k_anonymous(X, 2)
    assert ma.is_k_anonymous(X, 1)


def test_quality_functions_match_the_result() -> None:
    X = gaussian(300, 5, seed=3)
    res = ma.microaggregate(X, k=5)
    assert ma.information_loss(X, res.labels) == pytest.approx(res.information_loss, rel=1e-12)
    assert ma.sse(X, res.labels) == pytest.approx(res.sse, rel=1e-12)
    raw = ma.microaggregate(X, k=5, standardize=False)
    manual = sum(((X[raw.labels == g] - c) ** 2).sum() for g, c in enumerate(raw.centroids))
    assert raw.sse == pytest.approx(manual, rel=1e-10)
    assert ma.sse(X, raw.labels, standardize=False) == pytest.approx(manual, rel=1e-10)


def test_methods_catalogue() -> None:
    assert "mdav" in ma.METHODS
    assert isinstance(ma.METHODS, tuple)
    assert isinstance(ma.__version__, str)


def test_constant_columns_and_identical_records() -> None:
    X = np.column_stack([np.arange(20.0), np.full(20, 3.0)])
    res = ma.microaggregate(X, k=4)
    assert res.group_sizes.min() >= 4
    same = np.ones((10, 2))
    res = ma.microaggregate(same, k=3)
    assert res.information_loss == 0.0 and res.group_sizes.min() >= 3


def test_k_equal_n_and_k_one() -> None:
    X = gaussian(9, 2)
    assert ma.microaggregate(X, 9).n_groups == 1
    with pytest.raises(ValueError, match="k must be at least 2 \\(k = 1 is no protection"):
        ma.microaggregate(X, 1)


@pytest.mark.parametrize("method", ma.METHODS)
def test_progress_ends_with_every_record_assigned(method: str) -> None:
    X = gaussian(18, 1 if method == "univariate" else 3)
    p = ma.Progress()
    ma.microaggregate(X, 3, method, progress=p)
    assert p.assigned == 18
    assert (p.rounds > 0) == (method in ("ona", "ona-star")), "only ONA and ONA* run rounds"
    rounds = p.rounds
    ma.microaggregate(X, 3, method, progress=p)  # a new run starts from zero
    assert (p.assigned, p.rounds) == (18, rounds)


def test_float32_input_uses_single_precision_and_stays_close() -> None:
    X = gaussian(3000, 15, seed=4)
    il64 = ma.microaggregate(X, 10).information_loss
    il32 = ma.microaggregate(X.astype(np.float32), 10).information_loss
    il32b = ma.microaggregate(X, 10, dtype="float32").information_loss
    assert abs(il32 - il64) <= 0.005 * il64
    assert abs(il32b - il64) <= 0.005 * il64


@settings(max_examples=60, deadline=None)
@given(
    n=st.integers(2, 120),
    d=st.integers(1, 5),
    k=st.integers(2, 15),
    seed=st.integers(0, 2**32 - 1),
    integer=st.booleans(),
)
def test_partition_invariants_hold_on_any_shape(n: int, d: int, k: int, seed: int, integer: bool) -> None:
    k = min(k, n)
    X = np.random.default_rng(seed).normal(size=(n, d))
    if integer:  # many ties and duplicate records
        X = np.round(X)
    res = ma.microaggregate(X, k)
    sizes = res.group_sizes
    assert sizes.sum() == n and sizes.min() >= k and sizes.max() <= max(2 * k - 1, k)
    assert ma.is_k_anonymous(res.aggregated, k)
