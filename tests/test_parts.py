"""Grouping one part with the whole file's scaling (microagg._dask.part,
docs/scaling.md#partitioned-runs)."""

from __future__ import annotations

import numpy as np
import pytest

import microagg as ma
from microagg._dask.part import group_part, workflow_options


def test_a_part_is_grouped_in_the_files_units() -> None:
    rng = np.random.default_rng(0)
    whole = rng.normal(loc=[10.0, -3.0, 0.0], scale=[2.0, 0.5, 7.0], size=(2000, 3))
    part = whole[:700]
    scale = whole.std(axis=0)
    labels, released = group_part(part, 4, "mdav", scale=scale, label_offset=1000)
    expected = ma.microaggregate(part, 4, "mdav", standardize=scale)
    np.testing.assert_array_equal(labels, expected.labels + 1000)
    for g in np.unique(labels):  # every record gets its group's mean of the original values
        rows = labels == g
        np.testing.assert_allclose(released[rows], np.broadcast_to(part[rows].mean(axis=0), released[rows].shape), rtol=1e-13)
    assert ma.is_k_anonymous(released, 4)


def test_the_parts_own_scaling_gives_the_plain_run() -> None:
    x = np.random.default_rng(1).normal(size=(500, 2)) * [1.0, 50.0]
    labels, released = group_part(x, 3, "mdav", scale=x.std(axis=0))
    plain = ma.microaggregate(x, 3, "mdav")
    np.testing.assert_array_equal(labels, plain.labels)
    np.testing.assert_array_equal(released, plain.aggregated)


def test_weights_aggregation_and_missing_values_reach_the_core() -> None:
    rng = np.random.default_rng(2)
    x = rng.normal(size=(300, 2))
    x[rng.random(x.shape) < 0.1] = np.nan
    w = rng.uniform(1, 3, size=300)
    scale = np.nanstd(x, axis=0)
    _, released = group_part(x, 3, "mdav", scale=scale, weights=w, aggregation="median", missing="keep")
    want = ma.microaggregate(x, 3, "mdav", standardize=scale, weights=w, aggregation="median", missing="keep")
    np.testing.assert_array_equal(released, want.aggregated)


def test_unknown_workflow_options_are_refused() -> None:
    with pytest.raises(ValueError, match="aggregation"):
        workflow_options(weights=False, aggregation="mode", missing="error")
    with pytest.raises(ValueError, match="missing"):
        workflow_options(weights=False, aggregation="mean", missing="drop")
    assert workflow_options(weights=False, aggregation="mean", missing="error") == {}
    assert workflow_options(weights=True, aggregation="trim", missing="fill") == {"aggregation": "trim", "missing": "fill"}
