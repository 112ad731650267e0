"""MDAV reproduces the information-loss figures printed in the papers (docs/algorithms.md)."""

from __future__ import annotations

import pytest

import microagg as ma

LOADERS = {
    "census": ma.datasets.load_census,
    "tarragona": ma.datasets.load_tarragona,
    "eia": ma.datasets.load_eia,
}

# docs/algorithms.md#mdav: the mhm paper's Table 5 MDAV figures for Census k=10 and for EIA are not
# reproducible by any MDAV variant; every other printed MDAV figure is a target.
NOT_TARGETS = {("Table 5", "census", 10), ("Table 5", "eia", 3), ("Table 5", "eia", 5), ("Table 5", "eia", 10)}


def _cases(published: list[dict[str, str]]) -> list[tuple[str, str, int, str]]:
    return [
        (r["table"], r["dataset"], int(r["k"]), r["il_percent"])
        for r in published
        if r["method"] == "mdav" and (r["table"], r["dataset"], int(r["k"])) not in NOT_TARGETS
    ]


def test_every_mdav_figure_is_covered(published: list[dict[str, str]]) -> None:
    cases = _cases(published)
    assert len([c for c in cases if c[0] == "Table 1"]) == 18
    assert len([c for c in cases if c[0] == "Table 5"]) == 5


@pytest.mark.parametrize("accelerator", [{}, {"spatial_index": True}, {"compact_scan": True}])
@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_mdav_reproduces_published_figures(published: list[dict[str, str]], dtype: str, accelerator: dict[str, bool]) -> None:
    # The spatial index and the compact copy forced on where auto would not pick them (d =
    # 11-13, n < 20 000): exactness tests.
    mismatches = []
    for table, dataset, k, printed in _cases(published):
        X = LOADERS[dataset]()
        il = 100 * ma.microaggregate(X, k, "mdav", dtype=dtype, **accelerator).information_loss
        decimals = len(printed.split(".")[1]) if "." in printed else 0
        if round(il, decimals) != round(float(printed), decimals):
            mismatches.append(f"{table} {dataset} k={k}: printed {printed}, got {il:.6f}")
    assert not mismatches, "\n".join(mismatches)


def test_traditional_mdav_gives_the_same_partition_on_the_benchmarks() -> None:
    flags = dict(algebraic_distance=False, distance_reuse=False, partial_sort=False, centroid_by_subtraction=False)
    for load in LOADERS.values():
        X = load()
        fast = ma.microaggregate(X, 5)
        slow = ma.microaggregate(X, 5, dtype="float64", **flags)
        assert (fast.labels == slow.labels).all()


@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_spatial_index_gives_the_scan_partition_on_the_benchmarks(dtype: str) -> None:
    traditional = dict(algebraic_distance=False, distance_reuse=False, partial_sort=False, centroid_by_subtraction=False)
    for load in LOADERS.values():
        X = load()
        for flags in ({}, traditional):
            for k in (2, 3, 5, 10):
                on = ma.microaggregate(X, k, dtype=dtype, spatial_index=True, **flags)
                off = ma.microaggregate(X, k, dtype=dtype, spatial_index=False, **flags)
                assert (on.labels == off.labels).all(), (load.__name__, flags, k)
        for k in (2, 3, 5, 10):
            on = ma.microaggregate(X, k, dtype=dtype, compact_scan=True)
            off = ma.microaggregate(X, k, dtype=dtype, compact_scan=False)
            assert (on.labels == off.labels).all(), (load.__name__, "compact", k)


@pytest.mark.parametrize("method", ["mdav-star", "mdav-star-plus", "md"])
@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_spatial_index_gives_the_scan_partition_for_other_methods(method: str, dtype: str) -> None:
    # Forced on in d = 11-13 (auto would not pick it): an exactness test on real data.
    for load in LOADERS.values():
        X = load()
        for k in (3, 10):
            on = ma.microaggregate(X, k, method, dtype=dtype, spatial_index=True)
            off = ma.microaggregate(X, k, method, dtype=dtype, spatial_index=False)
            assert (on.labels == off.labels).all(), (load.__name__, k)
