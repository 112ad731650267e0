"""k-anonymity of a release with missing cells: a missing value matches any value (sdcMicro's
convention), counted by is_k_anonymous, risk.min_group_size and assess."""

from __future__ import annotations

from typing import Optional

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import microagg as ma
from microagg._kanonymity import class_sizes


def brute_force_class_sizes(x: np.ndarray, strata: Optional[np.ndarray] = None) -> np.ndarray:
    """O(n^2) reference: record j counts for record i when, on every attribute, the two are
    equal or one of them is missing (and the strata are equal)."""
    n = x.shape[0]
    sizes = np.zeros(n, dtype=np.int64)
    for i in range(n):
        for j in range(n):
            same_stratum = strata is None or strata[i] == strata[j]
            compatible = all(np.isnan(a) or np.isnan(b) or a == b for a, b in zip(x[i], x[j]))
            sizes[i] += same_stratum and compatible
    return sizes


@st.composite
def releases(draw: st.DrawFn) -> tuple[np.ndarray, Optional[np.ndarray]]:
    """Small releases with many ties, NaN, and -0.0 beside 0.0; strata half of the time."""
    n = draw(st.integers(1, 25))
    d = draw(st.integers(1, 4))
    cells = st.sampled_from([np.nan, -0.0, 0.0, 1.0, 2.5])
    x = np.array(draw(st.lists(st.lists(cells, min_size=d, max_size=d), min_size=n, max_size=n)))
    strata = draw(st.none() | st.lists(st.integers(0, 2), min_size=n, max_size=n).map(np.array))
    return x, strata


@settings(max_examples=200, deadline=None)
@given(releases())
def test_class_sizes_match_the_brute_force_reference(release: tuple[np.ndarray, Optional[np.ndarray]]) -> None:
    x, strata = release
    want = brute_force_class_sizes(x, strata)
    np.testing.assert_array_equal(class_sizes(x, strata), want)
    assert ma.risk.min_group_size(x, by=strata) == want.min()
    for k in (want.min(), want.min() + 1):
        assert ma.is_k_anonymous(x, k, by=strata) == (want.min() >= k)


def test_many_patterns_match_the_reference() -> None:
    rng = np.random.default_rng(3)
    x = rng.integers(0, 3, size=(300, 5)).astype(np.float64)
    x[rng.random(x.shape) < 0.35] = np.nan  # up to 32 patterns
    np.testing.assert_array_equal(class_sizes(x), brute_force_class_sizes(x))


def test_the_relation_is_not_transitive() -> None:
    # (1, NaN) matches (1, 2) and (1, 3), which do not match each other.
    x = np.array([[1.0, np.nan], [1.0, 2.0], [1.0, 3.0]])
    np.testing.assert_array_equal(class_sizes(x), [3, 2, 2])
    assert ma.risk.min_group_size(x) == 2


@pytest.mark.parametrize("method", ["mdav", "mondrian-v"])
def test_a_keep_release_of_groups_of_k_passes_and_a_unique_row_fails(method: str) -> None:
    rng = np.random.default_rng(7)
    X = rng.normal(size=(200, 3))
    X[rng.random(X.shape) < 0.2] = np.nan
    res = ma.microaggregate(X, 4, method, missing="keep")
    released = res.aggregated
    assert np.isnan(released).any()
    assert ma.is_k_anonymous(released, 4)
    assert ma.risk.min_group_size(released) >= 4
    assert ma.assess(X, released).min_group_size >= 4
    tampered = released.copy()
    # observed everywhere, equal to nothing (a modest value: an information loss above 100 %
    # is refused as misaligned rows)
    tampered[0] = [0.123, -0.456, 0.789]
    assert not ma.is_k_anonymous(tampered, 2)
    assert ma.risk.min_group_size(tampered) == 1
    assert ma.assess(X, tampered).min_group_size == 1


def test_strata_separate_otherwise_compatible_records() -> None:
    x = np.array([[1.0, np.nan], [1.0, 2.0], [np.nan, 2.0], [1.0, 2.0]])
    assert ma.is_k_anonymous(x, 4)
    assert ma.is_k_anonymous(x, 2, by=["a", "a", "b", "b"])
    assert not ma.is_k_anonymous(x, 3, by=["a", "a", "b", "b"])
    assert ma.risk.min_group_size(x, by=["a", "a", "a", "b"]) == 1
    assert ma.assess(np.zeros((4, 2)), x, by=["a", "a", "b", "b"]).min_group_size == 2


def test_infinity_is_refused_and_k_may_be_one_in_a_check() -> None:
    with pytest.raises(ValueError, match="X_released contains infinity"):
        ma.is_k_anonymous(np.array([[np.inf], [1.0]]), 1)
    with pytest.raises(ValueError, match="Xm contains infinity"):
        ma.risk.min_group_size(np.array([[-np.inf], [1.0]]))
    assert ma.is_k_anonymous(np.array([[np.nan], [1.0]]), 1)
    with pytest.raises(ValueError, match="k must be at least 1"):
        ma.is_k_anonymous(np.zeros((2, 1)), 0)
