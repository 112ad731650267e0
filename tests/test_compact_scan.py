"""The compact int8 scan of exact MDAV (issue #15, goal 2): the same partition as the exact
scans on every data shape, with ties, and through every entry point that takes method
parameters."""

from __future__ import annotations

import numpy as np
import pytest

import microagg as ma


def _shaped(shape: str, n: int, d: int, seed: int = 0) -> np.ndarray:
    rng = np.random.default_rng(seed)
    g = rng.normal(size=(n, d))
    if shape == "gaussian":
        return g
    if shape == "lognormal":
        return np.exp(2.0 * g)  # heavy right tail: coarse int8 steps
    if shape == "clustered":
        return 25.0 * rng.normal(size=(9, d))[rng.integers(0, 9, n)] + g
    if shape == "integers":
        return rng.integers(0, 6, size=(n, d)).astype(float)  # many exact distance ties
    return np.where(rng.random((n, d)) < 0.999, g, 1e6 * g)  # a few huge outliers


@pytest.mark.parametrize("shape", ["gaussian", "lognormal", "clustered", "integers", "outliers"])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_compact_scan_gives_the_exact_scan_partition(shape: str, dtype: str) -> None:
    for n, d, k in [(30_000, 15, 10), (25_000, 9, 3), (21_000, 20, 5)]:
        X = _shaped(shape, n, d, seed=d)
        on = ma.microaggregate(X, k, dtype=dtype, compact_scan=True)
        off = ma.microaggregate(X, k, dtype=dtype, compact_scan=False)
        assert (on.labels == off.labels).all(), (shape, dtype, n, d, k)
        assert on.information_loss == off.information_loss


def test_compact_scan_is_automatic_only_where_it_applies() -> None:
    X = _shaped("gaussian", 20_000, 12)
    auto = ma.microaggregate(X, 4, dtype="float32")
    assert (auto.labels == ma.microaggregate(X, 4, dtype="float32", compact_scan=False).labels).all()
    # With missing values the completed records take the compact scan too: the same groups.
    Xm = X.copy()
    Xm[::7, 3] = np.nan
    on = ma.microaggregate(Xm, 4, missing="fill", compact_scan=True)
    off = ma.microaggregate(Xm, 4, missing="fill", compact_scan=False)
    assert (on.labels == off.labels).all()


def test_compact_scan_on_small_data_and_parts() -> None:
    X = _shaped("lognormal", 5_000, 6)
    for k in (2, 7):
        on = ma.microaggregate(X, k, compact_scan=True, max_part=1_000)
        off = ma.microaggregate(X, k, compact_scan=False, max_part=1_000)
        assert (on.labels == off.labels).all()
        assert np.bincount(on.labels).min() >= k


def test_compact_scan_rejects_non_booleans() -> None:
    X = _shaped("gaussian", 100, 3)
    with pytest.raises(TypeError, match="compact_scan"):
        ma.microaggregate(X, 3, compact_scan="yes")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="compact_scan"):
        ma.microaggregate(X, 3, "ona-star", compact_scan=True)


def test_progress_counts_the_bytes_the_passes_read() -> None:
    n, d, k = 30_000, 15, 10
    X = _shaped("gaussian", n, d).astype(np.float32)
    scanned = {}
    for compact in (True, False):
        progress = ma.Progress()
        ma.microaggregate(X, k, compact_scan=compact, progress=progress)
        scanned[compact] = progress.bytes_scanned
    # A compact pass reads d + 4 bytes per record, an exact one 4 (d + 1); the passes are
    # the same but for the rare give-ups of the pruned searches.
    assert 0 < scanned[True] < 0.4 * scanned[False]
    # At most about two passes over the n/2 remaining records per round of exact MDAV.
    assert scanned[False] <= 1.1 * (n / (2 * k)) * n * (d + 1) * 4
    index = ma.Progress()
    ma.microaggregate(X[:, :2], k, spatial_index=True, progress=index)
    assert index.bytes_scanned == 0  # the k-d tree answers every query


@pytest.mark.parametrize(
    "flags",
    [{"centroid_by_subtraction": False}, {"partial_sort": False}, {"distance_reuse": False}, {"norm_pruning": False}],
)
def test_compact_scan_with_every_f_mdav_strategy(flags: dict[str, bool]) -> None:
    X = _shaped("clustered", 22_000, 11, seed=3)
    on = ma.microaggregate(X, 6, dtype="float32", compact_scan=True, **flags)
    off = ma.microaggregate(X, 6, dtype="float32", compact_scan=False, **flags)
    assert (on.labels == off.labels).all()


@pytest.mark.parametrize("method", ["mdav-star", "mdav-star-plus"])
def test_mdav_star_compact_scan_gives_the_exact_scan_partition(method: str) -> None:
    X = _shaped("lognormal", 21_000, 12, seed=5)
    on = ma.microaggregate(X, 5, method, dtype="float32", compact_scan=True)
    off = ma.microaggregate(X, 5, method, dtype="float32", compact_scan=False)
    assert (on.labels == off.labels).all()
