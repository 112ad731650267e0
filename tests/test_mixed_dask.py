"""Mixed keys on the Dask engine: the same release as microagg.anonymize with the same
max_part, k-anonymous over the whole key, with strata, weights and missing categories."""

from __future__ import annotations

from typing import Any, Iterator

import numpy as np
import pytest
from conftest import optional

import microagg as ma

pd = optional("pandas")
dd = optional("dask.dataframe")
distributed = optional("distributed")
mdask = pytest.importorskip("microagg.dask")

EDU = ["HS", "BSc", "MSc", "PhD"]
KEY = ["age", "income", "sex", "region", "edu", "code"]


@pytest.fixture(scope="module")
def client() -> Iterator[Any]:
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None) as cluster:
        with distributed.Client(cluster) as c:
            yield c


def frame(n: int, seed: int = 0) -> Any:
    rng = np.random.default_rng(seed)
    return pd.DataFrame(
        {
            "age": rng.normal(45, 12, n),
            "income": rng.lognormal(10, 1, n),
            "sex": rng.choice(["F", "M"], n),
            "region": rng.choice(["north", "south", "east"], n, p=[0.5, 0.3, 0.2]),
            "edu": pd.Categorical(rng.choice(EDU, n), categories=EDU, ordered=True),
            "code": rng.integers(1, 4, n),
            "w": rng.uniform(1, 5, n),
            "stratum": rng.choice(["a", "b"], n),
        },
        index=pd.Index(np.arange(n) * 2 + 5),
    )


@pytest.mark.parametrize("release", ["mode", "medoid"])
def test_dask_release_equals_the_local_one(client: Any, release: str) -> None:
    df = frame(900, seed=1)
    options = dict(columns=KEY, categorical=["code"], categorical_release=release, by="stratum", weights="w",
                   max_part=200, attribute_weights={"sex": 2.0})
    local = ma.anonymize(df, 4, **options)
    out = mdask.anonymize(dd.from_pandas(df, npartitions=3), 4, **options).compute().loc[df.index]
    np.testing.assert_allclose(out[["age", "income"]].to_numpy(), local[["age", "income"]].to_numpy(), rtol=1e-9)
    for c in ["sex", "region", "edu", "code"]:
        assert (out[c].to_numpy() == local[c].to_numpy()).all(), c
    assert out["edu"].dtype == df["edu"].dtype and out["code"].dtype == df["code"].dtype
    assert out.groupby(["stratum", *KEY], observed=True).size().min() >= 4


def test_dask_missing_categories_keep_and_fill(client: Any) -> None:
    df = frame(600, seed=2)
    df.loc[df.index[::9], "region"] = None
    ddf = dd.from_pandas(df, npartitions=2)
    filled = mdask.anonymize(ddf, 3, columns=KEY, categorical=["code"], missing="fill", max_part=150).compute()
    assert filled["region"].notna().all()
    assert filled.groupby(KEY, observed=True).size().min() >= 3
    kept = mdask.anonymize(ddf, 3, columns=KEY, categorical=["code"], missing="keep", max_part=150).compute().loc[df.index]
    np.testing.assert_array_equal(kept["region"].isna().to_numpy(), df["region"].isna().to_numpy())
    # Each part completes its own missing cells (EM per part), so the groups need not be the
    # local engine's; the release is k-anonymous with a missing value matching any value.
    assert ma.is_k_anonymous(kept, 3, columns=KEY)
    assert not ma.is_k_anonymous(df, 3, columns=KEY)


def test_dask_mixed_arguments_fail_before_any_pass() -> None:
    ddf = dd.from_pandas(frame(60), npartitions=2)
    with pytest.raises(ValueError, match="method"):
        mdask.anonymize(ddf, 3, KEY, method="nope")
    with pytest.raises(ValueError, match="standardize cannot be False with a mixed key"):
        mdask.anonymize(ddf, 3, KEY, standardize=False)
    with pytest.raises(ValueError, match="cannot be both anonymized and by/weights"):
        mdask.anonymize(ddf, 3, KEY, by="sex")
    with pytest.raises(ValueError, match="ordinal: column\\(s\\) not in the key: stratum"):
        mdask.anonymize(ddf, 3, KEY, ordinal={"stratum": ["a", "b"]})


def zipf_frame(n: int, levels: int, seed: int) -> Any:
    """Numbers beside a many-level region code drawn from a Zipf law (a few frequent codes,
    a long tail) and a small nominal column."""
    rng = np.random.default_rng(seed)
    ranks = np.arange(1, levels + 1, dtype=np.float64)
    p = 1.0 / ranks / np.sum(1.0 / ranks)
    return pd.DataFrame(
        {
            "age": rng.normal(45, 12, n).round(),
            "income": rng.lognormal(10, 1, n),
            "region": np.array([f"r{i:03d}" for i in range(levels)], dtype=object)[rng.choice(levels, n, p=p)],
            "sex": rng.choice(["F", "M"], n),
            "stratum": rng.choice(["a", "b"], n, p=[0.7, 0.3]),
        }
    )


@pytest.mark.parametrize("weight", [1.0, 3.0])
def test_dask_native_release_with_a_many_level_column_equals_the_local_one(monkeypatch: Any, weight: float) -> None:
    # Weight 3 makes the frequent regions spread more than any number: the cuts go
    # through levels. The native path builds no one-hot column: the embedding may not run.
    import dask

    import microagg._dask.mixed as dask_mixed

    def refuse(*args: Any, **kwargs: Any) -> Any:
        raise AssertionError("the native Dask path built the one-hot embedding")

    monkeypatch.setattr(dask_mixed, "embed", refuse)
    df = zipf_frame(3000, 300, seed=int(weight))
    key = ["age", "income", "region", "sex"]
    options = dict(columns=key, by="stratum", max_part=150, attribute_weights={"region": weight})
    local = ma.anonymize(df, 3, **options)
    with dask.config.set({"scheduler": "synchronous", "dataframe.shuffle.method": "tasks"}):
        out = mdask.anonymize(dd.from_pandas(df, npartitions=4), 3, **options).compute().loc[df.index]
    np.testing.assert_allclose(out[["age", "income"]].to_numpy(), local[["age", "income"]].to_numpy(), rtol=1e-9)
    for c in ["region", "sex"]:
        assert (out[c].to_numpy() == local[c].to_numpy()).all(), c
    assert out.groupby(["stratum", *key]).size().min() >= 3


def test_dask_native_partitions_hold_a_column_per_attribute_not_per_level(monkeypatch: Any) -> None:
    import dask

    import microagg._dask.mixed as dask_mixed

    seen: list[int] = []
    keyed = dask_mixed.with_native_key

    def counting(frame: Any, spec: Any) -> Any:
        out = keyed(frame, spec)
        seen.append(out.shape[1] - frame.shape[1])
        return out

    monkeypatch.setattr(dask_mixed, "with_native_key", counting)
    df = zipf_frame(1200, 300, seed=5)
    with dask.config.set({"scheduler": "synchronous", "dataframe.shuffle.method": "tasks"}):
        out = mdask.anonymize(dd.from_pandas(df, npartitions=3), 3, columns=["age", "income", "region", "sex"],
                              max_part=200).compute()
    assert seen and set(seen) == {4}  # one column per key attribute, never 300 for the region
    assert list(out.columns) == list(df.columns)
    assert ma.is_k_anonymous(out, 3, columns=["age", "income", "region", "sex"])


def test_dask_native_merges_small_strata_as_the_local_run() -> None:
    import dask

    df = zipf_frame(1500, 120, seed=7)
    df.loc[df.index[:2], "stratum"] = "tiny"
    key = ["age", "income", "region", "sex"]
    options = dict(columns=key, by="stratum", small_strata="merge", max_part=100)
    local = ma.anonymize(df, 3, **options)
    with dask.config.set({"scheduler": "synchronous", "dataframe.shuffle.method": "tasks"}):
        out = mdask.anonymize(dd.from_pandas(df, npartitions=3), 3, **options).compute().loc[df.index]
    np.testing.assert_allclose(out[["age", "income"]].to_numpy(), local[["age", "income"]].to_numpy(), rtol=1e-9)
    for c in ["region", "sex", "stratum"]:
        assert (out[c].to_numpy() == local[c].to_numpy()).all(), c
    assert (out["stratum"] != "tiny").all()


@pytest.mark.parametrize("seed", [0, 1])
def test_dask_native_release_equals_the_local_one_on_tie_heavy_data(seed: int) -> None:
    # Whole-number columns of few values: distances tie, so both engines must group every
    # part in bit-identical units (the sd cut as for max_part, docs/scaling.md).
    import dask

    df = zipf_frame(2000, 50, seed=seed)
    df["income"] = np.random.default_rng(seed).integers(1, 6, len(df)).astype(float)
    key = ["age", "income", "region", "sex"]
    local = ma.anonymize(df, 3, columns=key, max_part=150)
    with dask.config.set({"scheduler": "synchronous", "dataframe.shuffle.method": "tasks"}):
        out = mdask.anonymize(dd.from_pandas(df, npartitions=3), 3, columns=key, max_part=150).compute().loc[df.index]
    for c in key:
        assert (out[c].to_numpy() == local[c].to_numpy()).all(), c


def test_dask_native_missing_cells_are_named_by_their_column() -> None:
    import dask

    df = zipf_frame(300, 20, seed=1)
    df.loc[df.index[:5], "region"] = None
    with dask.config.set({"scheduler": "synchronous", "dataframe.shuffle.method": "tasks"}):
        with pytest.raises(ValueError, match=r"column\(s\) region contain missing values"):
            mdask.anonymize(dd.from_pandas(df, npartitions=3), 3, columns=["age", "income", "region", "sex"],
                            max_part=100).compute()
