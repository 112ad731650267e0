"""MDAV*, MDAV*+ (and ONA, ONA* below): the quality-first family (ona-mona §3,
docs/algorithms.md#mdav-star)."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import gaussian, published_figures

import microagg as ma

LOADERS = {"census": ma.datasets.load_census, "tarragona": ma.datasets.load_tarragona, "eia": ma.datasets.load_eia}


def _data(name: str, adult: np.ndarray) -> np.ndarray:
    return adult if name == "adult" else LOADERS[name]()


@pytest.mark.parametrize("dataset", ["census", "tarragona", "eia", "adult"])
def test_mdav_star_reproduces_the_published_figures(dataset: str, adult: np.ndarray, published: list[dict[str, str]]) -> None:
    table = "Table 6" if dataset == "adult" else "Table 1"
    figures = published_figures(published, table, dataset, "mdav-star")
    assert len(figures) == 6
    X = _data(dataset, adult)
    for k, printed in figures.items():
        il = 100 * ma.microaggregate(X, k, "mdav-star").information_loss
        if dataset in ("eia", "adult"):
            assert round(il, 2) == float(printed), (k, il, printed)
        else:  # a few are printed 0.002-0.017 higher than this reading gives (docs/algorithms.md)
            assert round(il, 2) == float(printed) or float(printed) - 0.02 <= il < float(printed), (k, il, printed)


def test_mdav_star_mostly_exact_on_census_and_tarragona(published: list[dict[str, str]]) -> None:
    exact = 0
    for name in ("census", "tarragona"):
        X = LOADERS[name]()
        for k, printed in published_figures(published, "Table 1", name, "mdav-star").items():
            exact += round(100 * ma.microaggregate(X, k, "mdav-star").information_loss, 2) == float(printed)
    assert exact >= 8


@pytest.mark.parametrize("method", ["mdav-star", "mdav-star-plus"])
def test_invariants_and_plus_bound(method: str) -> None:
    rng = np.random.default_rng(5)
    for n, d, k in [(200, 2, 3), (333, 4, 7), (50, 1, 10), (97, 3, 2)]:
        X = np.round(rng.normal(size=(n, d)) * 2)  # ties and duplicates
        res = ma.microaggregate(X, k, method)
        assert res.group_sizes.min() >= k
        if method == "mdav-star-plus":
            assert res.group_sizes.max() <= max(2 * k - 1, k)


def test_mdav_star_plus_caps_groups_where_mdav_star_does_not() -> None:
    # A dense blob plus far singles: MDAV* lets the blob's clusters absorb outliers.
    found = False
    for seed in range(20):
        X = gaussian(120, 2, seed=seed)
        star = ma.microaggregate(X, 3, "mdav-star").group_sizes.max()
        plus = ma.microaggregate(X, 3, "mdav-star-plus").group_sizes.max()
        assert plus <= 5
        found |= star >= 6
    assert found, "expected MDAV* to build a group of >= 2k somewhere"


def test_threads_give_identical_labels() -> None:
    X = gaussian(70_000, 2, seed=9)
    a = ma.microaggregate(X, 400, "mdav-star")
    b = ma.microaggregate(X, 400, "mdav-star", n_jobs=2)
    assert (a.labels == b.labels).all()


@pytest.mark.parametrize("dataset", ["census", "tarragona", "eia"])
def test_ona_star_reproduces_table_1(dataset: str, published: list[dict[str, str]]) -> None:
    X = LOADERS[dataset]()
    for k, printed in published_figures(published, "Table 1", dataset, "ona-star").items():
        il = 100 * ma.microaggregate(X, k, "ona-star").information_loss
        # The one figure this reading misses (docs/algorithms.md#ona-and-ona-star).
        if (dataset, k) == ("census", 10):
            assert abs(il - float(printed)) <= 0.01, (k, il, printed)
        else:
            assert round(il, 2) == float(printed), (k, il, printed)


def test_ona_star_reproduces_table_6_on_adult(adult: np.ndarray, published: list[dict[str, str]]) -> None:
    for k, printed in published_figures(published, "Table 6", "adult", "ona-star").items():
        il = 100 * ma.microaggregate(adult, k, "ona-star").information_loss
        assert round(il, 2) == float(printed), (k, il, printed)


@pytest.mark.parametrize("dataset", ["census", "tarragona", "eia"])
def test_ona_star_never_worse_than_its_mdav_star_start(dataset: str) -> None:
    X = LOADERS[dataset]()
    for k in (2, 3, 5, 10):
        star = ma.microaggregate(X, k, "mdav-star")
        ona_star = ma.microaggregate(X, k, "ona-star")
        assert ona_star.sse <= star.sse * (1 + 1e-12)
        assert ona_star.group_sizes.min() >= k and ona_star.group_sizes.max() <= 2 * k - 1


def test_ona_is_reproducible_and_thread_independent() -> None:
    X = gaussian(300, 3, seed=11)
    a = ma.microaggregate(X, 4, "ona", seed=7, n_init=4)
    b = ma.microaggregate(X, 4, "ona", seed=7, n_init=4, n_jobs=2)
    c = ma.microaggregate(X, 4, "ona", seed=8, n_init=4)
    assert (a.labels == b.labels).all()
    assert a.group_sizes.min() >= 4
    assert not (a.labels == c.labels).all()
    # More runs can only keep or improve the best (runs 0..3 are among runs 0..9).
    assert ma.microaggregate(X, 4, "ona", seed=7, n_init=10).sse <= a.sse


def test_ona_best_of_100_lies_in_the_range_of_table_2() -> None:
    # Table 2 (1000 ONA runs on Census): lowest and highest IL; our best of 100 lies inside.
    ranges = {2: (3.43, 3.90), 5: (8.12, 9.10), 10: (12.36, 13.66)}
    X = ma.datasets.load_census()
    for k, (lo, hi) in ranges.items():
        il = 100 * ma.microaggregate(X, k, "ona", n_init=100, n_jobs=-1).information_loss
        assert lo <= il <= hi, (k, il)


def test_ona_parameters_are_validated() -> None:
    X = gaussian(20, 2)
    with pytest.raises(ValueError, match="n_init: must be an integer >= 1, got 0"):
        ma.microaggregate(X, 2, "ona", n_init=0)
    with pytest.raises(TypeError, match="'max_rounds' must be of type int, got float"):
        ma.microaggregate(X, 2, "ona-star", max_rounds=1.5)
    with pytest.raises(ValueError, match="unknown parameter 'n_init' for method 'ona-star'"):
        ma.microaggregate(X, 2, "ona-star", n_init=3)
