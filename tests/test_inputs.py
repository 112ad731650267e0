"""Every bad input gets a clear exception; every good layout gives the same answer
(docs/api.md#errors)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from conftest import gaussian

import microagg as ma


@pytest.mark.parametrize(
    "X,match",
    [
        (np.array([[1.0, np.nan], [2.0, 3.0]]), "NaN or infinity"),
        (np.array([[1.0, np.inf], [2.0, 3.0]]), "NaN or infinity"),
        (np.array([[1.0, 2.0], [-np.inf, 3.0]]), "record 1, attribute 0"),
        (np.zeros((0, 3)), "empty"),
        (np.zeros((3, 0)), "empty"),
        (np.arange(5.0), "2-D.*reshape"),
        (np.zeros((2, 2, 2)), "2-D"),
        (np.float64(3.0), "2-D"),
    ],
)
def test_bad_data_raises_value_error(X: np.ndarray, match: str) -> None:
    with pytest.raises(ValueError, match=match):
        ma.microaggregate(X, 2)


@pytest.mark.parametrize(
    "X",
    [
        np.array([["a", "b"], ["c", "d"]]),
        [[1.0, "x"], [2.0, 3.0]],
        np.array([[1 + 2j, 3j]]),
        pd.DataFrame({"a": [1.0, 2.0], "b": ["x", "y"]}),
        np.array(["2020-01-01", "2020-01-02"], dtype="datetime64[D]").reshape(2, 1),
    ],
)
def test_non_numeric_data_raises_type_error(X: object) -> None:
    with pytest.raises(TypeError, match="numeric|real numbers"):
        ma.microaggregate(X, 2)


def test_ragged_lists_are_rejected() -> None:
    with pytest.raises((TypeError, ValueError)):
        ma.microaggregate([[1.0, 2.0], [3.0]], 2)


def test_k_is_checked() -> None:
    X = gaussian(10, 2)
    for small in (0, 1, -3):
        with pytest.raises(ValueError, match=f"k must be at least 2 \\(k = 1 is no protection.*got k={small}"):
            ma.microaggregate(X, small)
    with pytest.raises(ValueError, match="k must be between 2 and the number of records \\(10\\), got k=11"):
        ma.microaggregate(X, 11)
    for bad in (2.5, "3", True, None):
        with pytest.raises(TypeError, match="k must be an integer"):
            ma.microaggregate(X, bad)  # type: ignore[arg-type]
    assert ma.microaggregate(X, np.int32(2)).k == 2
    with pytest.raises(ValueError, match="k must be at least 2"):
        ma.incremental.IncrementalMicroaggregator(k=1).fit(X)


def test_method_and_parameters_are_checked() -> None:
    X = gaussian(10, 2)
    with pytest.raises(ValueError, match="unknown method 'nope'.*mdav"):
        ma.microaggregate(X, 2, "nope")
    with pytest.raises(TypeError, match="method must be a string"):
        ma.microaggregate(X, 2, 3)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="unknown parameter 'gamma' for method 'mdav'.*partial_sort"):
        ma.microaggregate(X, 2, gamma=0.2)
    with pytest.raises(TypeError, match="'partial_sort' must be of type bool, got int"):
        ma.microaggregate(X, 2, partial_sort=1)
    with pytest.raises(TypeError, match="must be a bool, int or float"):
        ma.microaggregate(X, 2, partial_sort="yes")
    assert ma.microaggregate(X, 2, partial_sort=np.bool_(False)).n_groups == 5


def test_other_arguments_are_checked() -> None:
    X = gaussian(10, 2)
    with pytest.raises(ValueError, match="n_jobs"):
        ma.microaggregate(X, 2, n_jobs=0)
    with pytest.raises(TypeError, match="n_jobs must be an integer"):
        ma.microaggregate(X, 2, n_jobs=1.5)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="dtype"):
        ma.microaggregate(X, 2, dtype="int8")
    with pytest.raises(TypeError, match="dtype"):
        ma.microaggregate(X, 2, dtype=object())
    with pytest.raises(TypeError, match="standardize"):
        ma.microaggregate(X, 2, standardize="yes")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="seed"):
        ma.microaggregate(X, 2, seed=-1)


def test_overflow_in_single_precision_is_reported() -> None:
    X = np.array([[0.0], [1e30], [2e30]])
    with pytest.raises(ValueError, match="too large"):
        ma.microaggregate(X, 2, standardize=False, dtype="float32")
    assert ma.microaggregate(X, 2, standardize=True, dtype="float32").n_groups == 1


@pytest.mark.parametrize("method", ["mdav", "md", "ona-star", "mondrian-v", "mona"])
def test_values_near_the_largest_float(method: str) -> None:
    X = gaussian(120, 3)
    huge = X * 1e200
    small = ma.microaggregate(X, 3, method)
    scaled = ma.microaggregate(huge, 3, method)  # standardization brings them back to z-scores
    assert ma.is_k_anonymous(scaled.aggregated, 3)
    assert scaled.information_loss == pytest.approx(small.information_loss, rel=1e-9)
    np.testing.assert_allclose(scaled.centroids[scaled.labels] / 1e200, small.centroids[small.labels], rtol=1e-6, atol=1e-9)
    with pytest.raises(ValueError, match="too large"):
        ma.microaggregate(huge, 3, method, standardize=False)
    with pytest.raises(ValueError, match="too large"):
        ma.information_loss(huge, small.labels, standardize=False)
    assert ma.information_loss(huge, small.labels) == pytest.approx(small.information_loss, rel=1e-9)


def test_labels_are_checked() -> None:
    X = gaussian(6, 2)
    with pytest.raises(ValueError, match="one label per record"):
        ma.information_loss(X, [0, 1])
    with pytest.raises(ValueError, match="non-negative"):
        ma.sse(X, [0, 0, 0, -1, 1, 1])
    with pytest.raises(ValueError, match="empty"):
        ma.sse(X, [0, 0, 0, 2, 2, 2])
    with pytest.raises(TypeError, match="integers"):
        ma.sse(X, np.zeros(6))
    with pytest.raises(ValueError, match="infinity"):
        ma.is_k_anonymous(np.array([[np.inf]]), 1)


def test_memory_layouts_and_dtypes_give_the_same_partition() -> None:
    base = np.round(gaussian(301, 4, seed=5) * 100)
    ref = ma.microaggregate(base, 5).labels
    ro = base.copy()
    ro.flags.writeable = False
    big = np.zeros((602, 8))
    big[::2, ::2] = base
    variants = {
        "fortran": np.asfortranarray(base),
        "read-only": ro,
        "strided": big[::2, ::2],
        "int64": base.astype(np.int64),
        "int16": base.astype(np.int16),
        "list": base.tolist(),
        "big-endian": base.astype(">f8"),
        "dataframe": pd.DataFrame(base, columns=list("abcd")),
    }
    for name, X in variants.items():
        assert (ma.microaggregate(X, 5).labels == ref).all(), name


@pytest.mark.parametrize(
    "name,options",
    [
        ("k", {"k": 2**70}),
        ("k", {"k": 2**63}),
        ("max_part", {"max_part": 2**70}),
        ("n_jobs", {"n_jobs": 2**70}),
        ("n_jobs", {"n_jobs": -(2**70)}),
        ("seed", {"seed": 2**64}),
        ("n_init", {"method": "ona", "n_init": 2**70}),
        ("max_rounds", {"method": "ona-star", "max_rounds": -(2**70)}),
    ],
)
def test_huge_integer_parameters_are_value_errors_naming_them(name: str, options: dict) -> None:
    X = gaussian(30, 2)
    options = {"k": 3, **options}
    with pytest.raises(ValueError, match=name) as err:
        ma.microaggregate(X, **options)
    assert len(str(err.value)) < 200  # the bound and the value read as numbers, not 300 digits
    with pytest.raises(ValueError, match=name):
        ma.anonymize(pd.DataFrame(X, columns=["a", "b"]), **options)


@pytest.mark.parametrize("n_jobs", [2**70, -(2**70)])
def test_huge_n_jobs_is_a_value_error_in_every_entry_point(n_jobs: int) -> None:
    X = gaussian(30, 2)
    released = ma.microaggregate(X, 3).aggregated
    calls = {
        "record_linkage": lambda: ma.risk.record_linkage(X, released, n_jobs=n_jobs),
        "assess": lambda: ma.assess(X, released, k=3, n_jobs=n_jobs),
        "incremental": lambda: ma.IncrementalMicroaggregator(3, n_jobs=n_jobs).fit(X),
        "t_close": lambda: ma.t_close_microaggregate(X, 3, sensitive=np.arange(30) % 3, t=0.5, n_jobs=n_jobs),
    }
    for name, call in calls.items():
        with pytest.raises(ValueError, match="n_jobs") as err:
            call()
        assert len(str(err.value)) < 200, name


def test_huge_values_print_readably() -> None:
    with pytest.raises(ValueError, match=r"k must be at most 2\*\*63 - 1, got 1\.000e\+300"):
        ma.microaggregate(gaussian(30, 2), 10**300)
    with pytest.raises(ValueError, match=r"seed must be at most 2\*\*64 - 1, got 1\.180e\+21"):
        ma.microaggregate(gaussian(30, 2), 3, "ona", seed=2**70)
    with pytest.raises(ValueError, match="gamma.*at least 0, got -1e300"):
        ma.microaggregate(gaussian(30, 2), 3, "vmdav", gamma=-1e300)


@pytest.mark.parametrize("n_jobs", [100_000, 2**32, 2**63 - 1])
def test_n_jobs_above_the_cores_is_capped(n_jobs: int) -> None:
    X = gaussian(2000, 3)
    one = ma.microaggregate(X, 5, n_jobs=1, max_part=400)
    many = ma.microaggregate(X, 5, n_jobs=n_jobs, max_part=400)  # starts no 10^5 threads
    np.testing.assert_array_equal(many.labels, one.labels)
