"""Incremental (two-step) microaggregation and its planner (thesis §3-4)."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import gaussian

import microagg as ma
from microagg.incremental import CRITICAL_HEAD_START, STRATEGIES, plan


def test_planner_reproduces_the_thesis() -> None:
    p = plan(5)
    assert p.critical_ratio == pytest.approx(0.146, abs=5e-4)  # the thesis' 14.6%
    assert p.optimal_ratio == p.critical_ratio
    assert p.base_time == pytest.approx((1 - p.optimal_ratio) ** 2)
    assert p.incremental_time == pytest.approx(p.optimal_ratio**2)
    # Deadline: the thesis prints 7.2%, its own timings fit 0.0730.
    assert plan(5, deadline=0.5).deadline_ratio == pytest.approx(0.0730, abs=1e-4)
    assert CRITICAL_HEAD_START == pytest.approx(2 * (2 / np.sqrt(3) - 1))
    below, above = plan(CRITICAL_HEAD_START - 1e-9), plan(CRITICAL_HEAD_START + 1e-9)
    assert below.optimal_ratio == pytest.approx(above.optimal_ratio, abs=1e-6)
    assert plan(0.1).optimal_ratio == pytest.approx((2 + 0.1) / 4)  # below the critical head start


def test_planner_validates_its_arguments() -> None:
    with pytest.raises(ValueError, match="head_start: must be a finite number >= 0"):
        plan(-1)
    with pytest.raises(ValueError, match=r"deadline: must be in \(0, 1\]"):
        plan(5, deadline=1.5)
    with pytest.raises(ValueError, match="below the earliest finish"):
        plan(0.1, deadline=0.2)
    with pytest.raises(TypeError, match="head_start must be a number"):
        plan("5")  # type: ignore[arg-type]


@pytest.mark.parametrize("strategy", STRATEGIES)
@pytest.mark.parametrize("inertial", [False, True])
def test_every_strategy_yields_a_k_partition_of_all_records(strategy: str, inertial: bool) -> None:
    rng = np.random.default_rng(1)
    for n_base, extensions in [(50, [3]), (40, [100]), (30, [2, 1, 40]), (500, [60, 7])]:
        X = rng.normal(size=(n_base + sum(extensions), 3))
        est = ma.IncrementalMicroaggregator(k=5, strategy=strategy, inertial=inertial).fit(X[:n_base])
        start = n_base
        for e in extensions:
            est.extend(X[start : start + e])
            start += e
        assert est.labels_.shape == (len(X),)
        assert est.group_sizes_.min() >= 5
        if strategy in ("nn-split-mid", "nn-split-end"):
            assert est.group_sizes_.max() <= 9
        assert ma.is_k_anonymous(est.aggregated_, 5)
        # IL is measured on the base part's scale (the documented default)
        z = (X - X[:n_base].mean(axis=0)) / X[:n_base].std(axis=0)
        sse = sum(((z[est.labels_ == g] - z[est.labels_ == g].mean(axis=0)) ** 2).sum() for g in range(est.n_groups_))
        sst = ((z - z.mean(axis=0)) ** 2).sum()
        assert est.information_loss_ == pytest.approx(sse / sst, rel=1e-9)


@pytest.mark.parametrize("strategy", ["nn", "nn-split-mid", "nn-split-end"])
@pytest.mark.parametrize("inertial", [False, True])
def test_spatial_index_chooses_the_brute_force_groups(strategy: str, inertial: bool) -> None:
    # Rounded values: exact ties between centroids, broken toward the lower group id.
    X = np.round(gaussian(6000, 3, seed=2), 1)
    labels = []
    for index in (True, False):
        est = ma.IncrementalMicroaggregator(3, strategy=strategy, inertial=inertial, spatial_index=index)
        est.fit(X[:2000]).extend(X[2000:4000]).extend(X[4000:])
        labels.append(est.labels_)
    assert (labels[0] == labels[1]).all()


def test_nn_extend_equals_the_rule_applied_by_hand() -> None:
    X = gaussian(60, 2, seed=3)
    new = gaussian(4, 2, seed=4)
    est = ma.IncrementalMicroaggregator(k=3, strategy="nn").fit(X)
    labels = est.labels_.copy()
    mean, std = X.mean(axis=0), X.std(axis=0)
    z = (np.vstack([X, new]) - mean) / std  # the base part's statistics
    for i in range(len(new)):
        groups = [z[: len(X) + i][labels == g] for g in range(est.n_groups_)]
        y = z[len(X) + i]
        labels = np.append(labels, int(np.argmin([((y - g.mean(axis=0)) ** 2).sum() for g in groups])))
    est.extend(new)
    assert (est.labels_ == labels).all()


def test_inertial_rule_applied_by_hand() -> None:
    X = gaussian(40, 2, seed=5)
    y = gaussian(1, 2, seed=6)
    est = ma.IncrementalMicroaggregator(k=4, strategy="nn", inertial=True).fit(X)
    z = (np.vstack([X, y]) - X.mean(axis=0)) / X.std(axis=0)
    cost = [
        (est.labels_ == g).sum() / ((est.labels_ == g).sum() + 1) * ((z[-1] - z[:-1][est.labels_ == g].mean(axis=0)) ** 2).sum()
        for g in range(est.n_groups_)
    ]
    est.extend(y)
    assert est.labels_[-1] == int(np.argmin(cost))


def test_two_step_runs_the_base_method_on_the_new_records() -> None:
    X = gaussian(100, 3, seed=7)
    est = ma.IncrementalMicroaggregator(k=4, strategy="two-step").fit(X[:60]).extend(X[60:])
    base = ma.microaggregate(X[:60], 4)
    assert (est.labels_[:60] == base.labels).all()
    # the new part is grouped among itself: no new record shares a group with a base record
    assert set(est.labels_[60:]).isdisjoint(set(est.labels_[:60]))


def test_refit_scaling_changes_only_the_scale_used() -> None:
    X = gaussian(200, 2, seed=8)
    late = gaussian(50, 2, seed=9) * [10, 1] + [30, 0]  # shifted, stretched arrivals
    a = ma.IncrementalMicroaggregator(k=5, strategy="nn").fit(X).extend(late)
    b = ma.IncrementalMicroaggregator(k=5, strategy="nn", refit_scaling=True).fit(X).extend(late)
    assert (a.labels_[:200] == b.labels_[:200]).all()
    assert b.group_sizes_.min() >= 5


def test_bad_arguments() -> None:
    X = gaussian(20, 2)
    with pytest.raises(ValueError, match="strategy must be one of"):
        ma.IncrementalMicroaggregator(k=2, strategy="nope").fit(X)
    with pytest.raises(ValueError, match="unknown base_method"):
        ma.IncrementalMicroaggregator(k=2, base_method="nope").fit(X)
    with pytest.raises(ValueError, match="call fit"):
        ma.IncrementalMicroaggregator(k=2).extend(X)
    est = ma.IncrementalMicroaggregator(k=2).fit(X)
    with pytest.raises(ValueError, match="3 attributes"):
        est.extend(np.zeros((2, 3)))
    with pytest.raises(ValueError, match="NaN"):
        est.extend(np.array([[np.nan, 1.0]]))
    with pytest.raises(ValueError, match="k must be between"):
        ma.IncrementalMicroaggregator(k=30).fit(X)
    with pytest.raises(TypeError, match="inertial"):
        ma.IncrementalMicroaggregator(k=2, inertial="yes").fit(X)  # type: ignore[arg-type]
