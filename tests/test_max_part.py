"""Partitioned runs, ``max_part`` (docs/scaling.md#partitioned-runs): Mondrian-V cuts into parts of
at most ``max_part`` records, the method on each part, identical results for every ``n_jobs``."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import microagg as ma
from microagg._scale import shared_scale
from microagg.cli import main

from conftest import reference_parts


@pytest.mark.parametrize("method", ["mdav", "ona-star", "md", "mondrian-v", "cbfs"])
def test_each_part_is_grouped_on_its_own_in_the_files_units(method: str) -> None:
    rng = np.random.default_rng(7)
    X = np.round(rng.normal(size=(1500, 3)) * 4) / 4  # ties, broken by the row index
    k, max_part = 3, 200
    res = ma.microaggregate(X, k, method, max_part=max_part)
    parts = reference_parts(X, max_part)
    assert all(len(p) <= max_part for p in parts)
    sd = shared_scale(X.std(axis=0))  # the scale every part is grouped in
    offset = 0
    for ids in parts:
        alone = ma.microaggregate(X[ids], k, method, standardize=sd)
        assert np.array_equal(res.labels[ids], alone.labels + offset)
        offset += alone.n_groups
    assert res.n_groups == offset
    assert res.group_sizes.min() >= k


def test_threads_give_the_same_labels_and_parts_respect_strata() -> None:
    rng = np.random.default_rng(1)
    X = rng.lognormal(size=(40_000, 4))
    strata = rng.choice(["x", "y"], size=len(X))
    one = ma.microaggregate(X, 5, "mdav", max_part=2_000, by=strata)
    two = ma.microaggregate(X, 5, "mdav", max_part=2_000, by=strata, n_jobs=2)
    assert np.array_equal(one.labels, two.labels)
    parts = reference_parts(X, 2_000, strata)
    part_of = np.empty(len(X), dtype=np.int64)
    for p, ids in enumerate(parts):
        part_of[ids] = p
    for g in range(one.n_groups):
        members = one.labels == g
        assert len(set(part_of[members])) == 1 and len(set(strata[members])) == 1


def test_missing_values_and_a_bound_above_n() -> None:
    rng = np.random.default_rng(2)
    X = rng.normal(size=(3_000, 3))
    X[rng.random(X.shape) < 0.05] = np.nan
    res = ma.microaggregate(X, 4, "mdav", max_part=500, missing="fill")
    assert res.group_sizes.min() >= 4
    assert not np.isnan(res.aggregated).any()
    plain = ma.microaggregate(X, 4, "mdav", missing="fill")
    assert np.array_equal(ma.microaggregate(X, 4, "mdav", max_part=10**9, missing="fill").labels, plain.labels)


def test_partitioning_costs_little_information() -> None:
    X = ma.datasets.load_eia()
    whole = ma.microaggregate(X, 5, "mdav").information_loss
    parted = ma.microaggregate(X, 5, "mdav", max_part=1_000).information_loss
    assert whole <= parted < 1.5 * whole


def test_bad_max_part() -> None:
    X = np.random.default_rng(0).normal(size=(100, 2))
    with pytest.raises(ValueError, match="max_part.*at least 2k = 10"):
        ma.microaggregate(X, 5, max_part=9)
    with pytest.raises(TypeError, match="max_part"):
        ma.microaggregate(X, 5, max_part=50.0)
    with pytest.raises(ValueError, match="standardize"):
        ma.microaggregate(X, 5, standardize=[1.0, -1.0])
    with pytest.raises(ValueError, match="standardize"):
        ma.microaggregate(X, 5, standardize=[1.0])


def test_anonymize_and_estimator_take_max_part() -> None:
    pd = pytest.importorskip("pandas")
    X = np.random.default_rng(3).normal(size=(600, 2))
    df = pd.DataFrame({"a": X[:, 0], "b": X[:, 1], "id": np.arange(600)})
    out = ma.anonymize(df, 3, columns=["a", "b"], max_part=100)
    want = ma.microaggregate(X, 3, max_part=100).aggregated
    assert np.array_equal(out[["a", "b"]].to_numpy(), want)
    est = ma.MicroAggregator(k=3, max_part=100).fit(X)
    assert np.array_equal(est.labels_, ma.microaggregate(X, 3, max_part=100).labels)


def test_estimator_takes_strata_weights_and_missing_values() -> None:
    rng = np.random.default_rng(4)
    X = rng.normal(size=(300, 3))
    X[rng.random(X.shape) < 0.05] = np.nan
    strata = rng.choice(["a", "b"], size=300)
    w = rng.uniform(1, 2, size=300)
    est = ma.MicroAggregator(k=3, aggregation="median", missing="keep")
    out = est.fit_transform(X, by=strata, sample_weight=w)
    res = ma.microaggregate(X, 3, by=strata, weights=w, aggregation="median", missing="keep")
    assert np.array_equal(out, res.aggregated, equal_nan=True)
    assert np.array_equal(est.transform(X), out, equal_nan=True)
    assert np.array_equal(est.group_values_, res.group_values)


def test_cli_max_part(tmp_path: Path) -> None:
    import csv

    X = np.random.default_rng(5).normal(size=(400, 2))
    src, out = tmp_path / "in.csv", tmp_path / "out.csv"
    with open(src, "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["a", "b"])
        w.writerows(X.tolist())
    assert main(["anonymize", str(src), "-k", "3", "--max-part", "50", "-o", str(out)]) == 0
    got = np.loadtxt(out, delimiter=",", skiprows=1)
    assert np.array_equal(got, ma.microaggregate(np.loadtxt(src, delimiter=",", skiprows=1), 3, max_part=50).aggregated)
    assert main(["anonymize", str(src), "-k", "3", "--max-part", "5", "-o", str(out)]) == 2
    assert main(["anonymize", str(src), "-k", "3", "--scheduler", "tcp://x:1", "-o", str(out)]) == 2
