"""What a result holds: ``centroids`` are the plain group means, ``group_values`` what each
group releases, and every released cell that was observed or filled is its group's value."""

from __future__ import annotations

from typing import Optional

import numpy as np
import pytest

import microagg as ma

AGGREGATIONS = ["mean", "median", "trim", "onestep"]


def observed_group_means(X: np.ndarray, labels: np.ndarray, n_groups: int) -> np.ndarray:
    """Per group and attribute, the mean of the observed values (NaN where none is)."""
    observed = ~np.isnan(X)
    sums = np.stack([np.bincount(labels, np.where(observed[:, j], X[:, j], 0.0), n_groups) for j in range(X.shape[1])], 1)
    counts = np.stack([np.bincount(labels, observed[:, j], n_groups) for j in range(X.shape[1])], 1)
    with np.errstate(invalid="ignore", divide="ignore"):
        return sums / counts


@pytest.mark.parametrize("missing", ["error", "fill", "keep"])
@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("how", AGGREGATIONS)
def test_released_cells_are_the_group_values_and_centroids_the_plain_means(
    how: str, weighted: bool, missing: str
) -> None:
    rng = np.random.default_rng(21)
    X = rng.standard_t(3, size=(240, 3)) * [1.0, 50.0, 0.1]
    if missing != "error":
        X[rng.random(X.shape) < 0.15] = np.nan
    w: Optional[np.ndarray] = rng.uniform(0.2, 4.0, size=240) if weighted else None
    res = ma.microaggregate(X, 6, "mdav", weights=w, aggregation=how, trim=0.2 if how == "trim" else None, missing=missing)
    released, values = res.aggregated, res.group_values[res.labels]
    published = ~np.isnan(X) if missing == "keep" else np.ones(X.shape, dtype=bool)
    assert np.array_equal(np.isnan(released), ~published)
    assert np.array_equal(released[published], values[published])  # exactly, cell by cell
    means = observed_group_means(X, res.labels, res.n_groups)
    seen = ~np.isnan(means)
    np.testing.assert_allclose(res.centroids[seen], means[seen], rtol=1e-12, atol=1e-12)
    same = how == "mean" and not weighted
    assert (res.released_values is None) == same
    if same:
        assert res.group_values is res.centroids
    else:
        assert not np.allclose(res.group_values[seen], res.centroids[seen])
