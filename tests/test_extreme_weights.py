"""Sampling weights at the ends of the float range (subnormal, near the largest float, zero,
and mixtures of them) release only values inside each group's range, never NaN, and keep
SSE and SST finite, under every aggregation."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import microagg as ma

AGGREGATIONS = ["mean", "median", "trim", "onestep"]

EXTREMES = [0.0, 5e-324, 1e-310, 2.2e-308, 1e-300, 1.0, 3.5, 1e300, 1.7e308, np.finfo(np.float64).max]
"""Weights the fuzzer found troublesome, and ordinary ones to mix them with."""

weight = st.one_of(st.sampled_from(EXTREMES), st.floats(0, np.finfo(np.float64).max, allow_nan=False))


def assert_within_group_ranges(X: np.ndarray, res: ma.MicroaggregationResult) -> None:
    """Every released cell lies in [min, max] of its group's original values."""
    assert not np.isnan(res.aggregated).any()
    for g in range(res.n_groups):
        rows = X[res.labels == g]
        released = res.aggregated[res.labels == g]
        assert (released >= rows.min(axis=0)).all() and (released <= rows.max(axis=0)).all(), g
    assert np.isfinite(res.sse) and np.isfinite(res.sst)
    # Around a median the SSE may pass the SST (IL above 1), never around the mean.
    assert 0.0 <= res.information_loss <= (1.0 + 1e-9 if res.aggregation == "mean" else np.inf)


@settings(max_examples=150, deadline=None)
@given(
    n=st.integers(6, 40),
    d=st.integers(1, 3),
    seed=st.integers(0, 2**32 - 1),
    k=st.integers(2, 5),
    how=st.sampled_from(AGGREGATIONS),
    data=st.data(),
)
def test_every_aggregate_lies_in_its_group_range(n: int, d: int, seed: int, k: int, how: str, data: st.DataObject) -> None:
    X = np.random.default_rng(seed).normal(size=(n, d)) * 10.0 ** np.arange(d)
    w = np.array(data.draw(st.lists(weight, min_size=n, max_size=n)))
    if not (w > 0).any():
        w[data.draw(st.integers(0, n - 1))] = data.draw(st.sampled_from(EXTREMES[1:]))
    res = ma.microaggregate(X, k, weights=w, aggregation=how)
    assert_within_group_ranges(X, res)


@pytest.mark.parametrize("how", AGGREGATIONS)
@pytest.mark.parametrize("w", [5e-324, 1e-310, 1.7e308, np.finfo(np.float64).max])
def test_equal_extreme_weights_act_as_unit_weights(how: str, w: float) -> None:
    X = np.random.default_rng(3).normal(size=(60, 3))
    plain = ma.microaggregate(X, 4, aggregation=how)
    weighted = ma.microaggregate(X, 4, weights=np.full(60, w), aggregation=how)
    np.testing.assert_array_equal(weighted.labels, plain.labels)
    np.testing.assert_allclose(weighted.aggregated, plain.aggregated, rtol=1e-12, atol=1e-12)
    assert weighted.information_loss == pytest.approx(plain.information_loss, rel=1e-12)


def test_sse_and_sst_take_the_largest_weight_into_one_to_two() -> None:
    X = np.random.default_rng(4).normal(size=(80, 2))
    w = np.random.default_rng(5).uniform(0, 2, size=80)
    base = ma.microaggregate(X, 5, weights=w)
    huge = ma.microaggregate(X, 5, weights=w * 1e307)
    assert np.isfinite(huge.sst) and huge.information_loss == pytest.approx(base.information_loss, rel=1e-12)
    z = (X - np.average(X, axis=0, weights=w)) / X.std(axis=0)
    unit = w / 2.0 ** np.floor(np.log2(w.max()))  # times a power of two: exact
    assert base.sst == pytest.approx(float((unit[:, None] * z**2).sum()), rel=1e-9)
