"""Grouping one part with the whole file's scaling (microagg._parts, DESIGN §10)."""

from __future__ import annotations

import numpy as np
import pytest

import microagg as ma
from microagg._parts import _group_means, group_part, workflow_options


def test_a_part_is_grouped_on_globally_scaled_values() -> None:
    rng = np.random.default_rng(0)
    whole = rng.normal(loc=[10.0, -3.0, 0.0], scale=[2.0, 0.5, 7.0], size=(2000, 3))
    part = whole[:700]
    mean, scale = whole.mean(axis=0), whole.std(axis=0)
    labels, released = group_part(part, 4, "mdav", mean=mean, scale=scale, label_offset=1000)
    expected = ma.microaggregate((part - mean) / scale, 4, "mdav", standardize=False)
    np.testing.assert_array_equal(labels, expected.labels + 1000)
    for g in np.unique(labels):  # every record gets its group's mean of the original values
        rows = labels == g
        np.testing.assert_allclose(released[rows], np.broadcast_to(part[rows].mean(axis=0), released[rows].shape), rtol=1e-13)
    assert ma.is_k_anonymous(released, 4)


def test_the_parts_own_scaling_gives_the_plain_run() -> None:
    x = np.random.default_rng(1).normal(size=(500, 2)) * [1.0, 50.0]
    labels, _ = group_part(x, 3, "mdav", mean=x.mean(axis=0), scale=x.std(axis=0))
    np.testing.assert_array_equal(labels, ma.microaggregate(x, 3, "mdav").labels)


def test_group_means_are_weighted_over_observed_values() -> None:
    x = np.array([[1.0, 10.0], [3.0, np.nan], [5.0, 30.0], [7.0, 40.0]])
    labels = np.array([0, 0, 1, 1])
    w = np.array([1.0, 3.0, 0.0, 0.0])  # group 1 has no weight: its plain mean
    out = _group_means(x, labels, 2, w)
    np.testing.assert_allclose(out[:2], [[2.5, 10.0], [2.5, 10.0]])
    np.testing.assert_allclose(out[2:], [[6.0, 35.0], [6.0, 35.0]])
    np.testing.assert_allclose(_group_means(x, labels, 2, None)[0], [2.0, 10.0])


def test_unknown_workflow_options_are_refused() -> None:
    with pytest.raises(ValueError, match="aggregation"):
        workflow_options(weights=False, aggregation="mode", missing="error")
    with pytest.raises(ValueError, match="missing"):
        workflow_options(weights=False, aggregation="mean", missing="drop")
    assert workflow_options(weights=False, aggregation="mean", missing="error") == {}
