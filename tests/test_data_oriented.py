"""MHM, MDAV-MHM and the univariate optimum (mhm paper §4; the first part of the
data-oriented family)."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from conftest import gaussian

import microagg as ma

LOADERS = {"census": ma.datasets.load_census, "tarragona": ma.datasets.load_tarragona, "eia": ma.datasets.load_eia}


@pytest.mark.parametrize("dataset", LOADERS)
@pytest.mark.parametrize("base", ["mdav", "md", "cbfs"])
def test_x_mhm_never_worse_than_x(dataset: str, base: str) -> None:
    X = LOADERS[dataset]()
    for k in (3, 5, 10):
        combined = ma.microaggregate(X, k, f"{base}-mhm")
        assert combined.sse <= ma.microaggregate(X, k, base).sse * (1 + 1e-12)
        assert combined.group_sizes.min() >= k and combined.group_sizes.max() <= 2 * k - 1


@pytest.mark.parametrize("method", ["cbfs", "npn-mhm", "md-mhm", "cbfs-mhm", "mdav-mhm", "mhm"])
def test_invariants_on_many_shapes(method: str) -> None:
    rng = np.random.default_rng(4)
    for n, d, k in [(2, 1, 2), (7, 2, 3), (50, 3, 4), (101, 1, 10), (64, 5, 2)]:
        X = np.round(rng.normal(size=(n, d)) * 3)  # ties and duplicates
        res = ma.microaggregate(X, k, method)
        assert res.group_sizes.min() >= k and res.group_sizes.max() <= max(2 * k - 1, k)


def test_mhm_groups_are_runs_of_the_given_order() -> None:
    X = gaussian(200, 3, seed=1)
    res = ma.microaggregate(X, 4, "mhm")
    assert (np.diff(res.labels) >= 0).all()  # runs in record order, labelled in path order
    assert res.group_sizes.min() >= 4 and res.group_sizes.max() <= 7


def _brute_force(values: np.ndarray, k: int) -> float:
    """Minimum SSE over every partition into groups of k..2k-1 (small n)."""
    n = len(values)
    best = np.inf

    def rec(rest: tuple[int, ...], acc: float) -> None:
        nonlocal best
        if not rest:
            best = min(best, acc)
            return
        first, others = rest[0], rest[1:]
        for size in range(k - 1, min(2 * k - 1, len(rest))):
            for mates in itertools.combinations(others, size):
                left = tuple(i for i in others if i not in mates)
                if left and len(left) < k:
                    continue
                g = values[[first, *mates]]
                rec(left, acc + float(((g - g.mean()) ** 2).sum()))

    rec(tuple(range(n)), 0.0)
    return best


def test_univariate_is_optimal_on_small_sets() -> None:
    rng = np.random.default_rng(2)
    for n, k in [(7, 2), (9, 3), (10, 2), (8, 4)]:
        v = rng.normal(size=n)
        res = ma.microaggregate(v.reshape(-1, 1), k, "univariate", standardize=False)
        assert res.sse == pytest.approx(_brute_force(v, k), rel=1e-9, abs=1e-12)


def test_univariate_needs_one_attribute() -> None:
    with pytest.raises(ValueError, match="'univariate' needs exactly one attribute, got 2"):
        ma.microaggregate(gaussian(10, 2), 2, "univariate")


def test_univariate_handles_large_inputs_and_ties() -> None:
    v = np.round(gaussian(100_000, 1, seed=3), 1)  # heavy ties
    res = ma.microaggregate(v, 5, "univariate")
    assert res.group_sizes.min() >= 5 and res.group_sizes.max() <= 9
    assert res.information_loss <= ma.microaggregate(v, 5, "mdav").information_loss


@pytest.mark.parametrize("dataset", LOADERS)
def test_md_reproduces_table_5(dataset: str, published: list[dict[str, str]]) -> None:
    figures = {int(r["k"]): r["il_percent"] for r in published
               if r["table"] == "Table 5" and r["dataset"] == dataset and r["method"] == "md"}
    assert sorted(figures) == [3, 5, 10]
    X = LOADERS[dataset]()
    for k, printed in figures.items():
        il = 100 * ma.microaggregate(X, k, "md").information_loss
        decimals = len(printed.split(".")[1])
        assert round(il, decimals) == pytest.approx(float(printed), abs=10.0**-decimals / 2), (k, il, printed)


def test_md_groups_and_leftovers() -> None:
    for n, k in [(23, 4), (40, 3), (9, 5), (100, 2)]:
        res = ma.microaggregate(gaussian(n, 3, seed=n), k, "md")
        assert res.group_sizes.min() >= k and res.group_sizes.sum() == n


SME = np.array([[790, 55], [710, 44], [730, 32], [810, 17], [950, 3], [510, 25],
                [400, 45], [330, 50], [510, 5], [760, 52], [50, 12]], dtype=float)


def test_optimal_on_the_sme_example_of_the_mhm_paper() -> None:
    res = ma.microaggregate(SME, 3, "optimal")
    assert res.sse == pytest.approx(7.4848, abs=1e-4)
    assert res.sst == pytest.approx(22.0)
    groups = {frozenset(np.flatnonzero(res.labels == g)) for g in range(res.n_groups)}
    assert groups == {frozenset({0, 1, 2, 9}), frozenset({3, 4, 8}), frozenset({5, 6, 7, 10})}


def test_optimal_matches_brute_force_and_beats_every_heuristic() -> None:
    rng = np.random.default_rng(6)
    for n, k in [(8, 2), (9, 3), (10, 2)]:
        v = rng.normal(size=n)
        assert ma.microaggregate(v.reshape(-1, 1), k, "optimal", standardize=False).sse == pytest.approx(
            _brute_force(v, k), rel=1e-9, abs=1e-12)
        X = rng.normal(size=(n, 3))
        best = ma.microaggregate(X, k, "optimal").sse
        for m in ("mdav", "mdav-mhm", "md", "cbfs", "ona-star", "mondrian-v"):
            assert best <= ma.microaggregate(X, k, m).sse * (1 + 1e-12)


def test_optimal_refuses_large_inputs() -> None:
    with pytest.raises(ValueError, match="'optimal' is exact and exponential: at most 20 records, got 21"):
        ma.microaggregate(gaussian(21, 2), 3, "optimal")


def test_vmdav_gamma_controls_group_growth() -> None:
    X = ma.datasets.load_tarragona()
    tight = ma.microaggregate(X, 3, "vmdav", gamma=0.0)
    assert (tight.group_sizes[:-1] == 3).all()  # no extension at gamma 0 (last group takes the rest)
    loose = ma.microaggregate(X, 3, "vmdav", gamma=1.5)
    assert loose.group_sizes.min() >= 3 and loose.group_sizes.max() > 3
    with pytest.raises(ValueError, match="gamma: must be a finite number of at least 0"):
        ma.microaggregate(X, 3, "vmdav", gamma=-1.0)
