"""Merged small strata are published under the label of the stratum they joined
(``relabel=True``); ``relabel=False`` keeps their labels and warns."""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np
import pandas as pd
import pytest
from conftest import optional

import microagg as ma


def survey(n: int = 80, seed: int = 1) -> pd.DataFrame:
    """Two large regions; 'isle' (1 record) and 'cape' (2 records) are below k = 3; the
    second label column ``sex`` splits nothing further."""
    rng = np.random.default_rng(seed)
    region = np.array(["north"] * (n // 2) + ["south"] * (n - n // 2 - 3) + ["isle", "cape", "cape"], dtype=object)
    age = np.where(region == "north", 30.0, 60.0) + rng.normal(0, 3, n)
    return pd.DataFrame({"id": np.arange(n), "region": region, "sex": "f", "age": age, "income": rng.normal(50, 9, n)})


def test_relabel_strata_follows_chains_missing_labels_and_several_columns() -> None:
    M = ma.StratumMerge
    np.testing.assert_array_equal(ma.relabel_strata(np.array([1, 1, 2, 3]), [M(2, 3, 1), M(3, 1, 2)]), [1, 1, 1, 1])
    out = ma.relabel_strata(np.array([1.0, 1.0, np.nan, 3.0]), [M(float("nan"), 3.0, 1)])
    assert out.dtype == np.float64 and out.tolist() == [1.0, 1.0, 3.0, 3.0]
    assert ma.relabel_strata(pd.Series(["x", "y", None]), [M(None, "x", 1)]).tolist() == ["x", "y", "x"]
    two = pd.DataFrame({"r": [1, 1, 2], "s": ["a", "a", "b"]})
    assert ma.relabel_strata(two, [M((2, "b"), (1, "a"), 1)]).tolist() == [[1, "a"]] * 3
    assert ma.relabel_strata(["a", "b"], []).tolist() == ["a", "b"]
    with pytest.raises(ValueError, match="merges: stratum 2 or 'z' is not a label of by"):
        ma.relabel_strata([1, 2], [M(2, "z", 1)])


def test_the_merges_of_microaggregate_relabel_its_strata() -> None:
    df = survey()
    res = ma.microaggregate(df[["age", "income"]], 3, by=df["region"], small_strata="merge")
    assert {m.stratum for m in res.merges} == {"isle", "cape"}
    assert not ma.is_k_anonymous(res.aggregated, 3, by=df["region"])
    relabelled = ma.relabel_strata(df["region"], res.merges)
    assert set(relabelled) == {"north", "south"}
    assert ma.is_k_anonymous(res.aggregated, 3, by=relabelled)


@pytest.mark.parametrize("library", ["pandas", "polars", "pyarrow"])
def test_anonymize_publishes_merged_records_under_the_label_they_joined(library: str) -> None:
    nw = optional("narwhals")
    df = survey()
    converters = {
        "pandas": lambda d: d,
        "polars": lambda d: optional("polars").from_pandas(d),
        "pyarrow": lambda d: optional("pyarrow").Table.from_pandas(d, preserve_index=False),
    }
    native: Any = converters[library](df)
    out = ma.anonymize(native, 3, ["age", "income"], by=["region", "sex"], small_strata="merge")
    back = out if library == "pandas" else out.to_pandas()
    res = ma.microaggregate(df[["age", "income"]], 3, by=df[["region", "sex"]], small_strata="merge")
    joined = {m.stratum[0]: m.into[0] for m in res.merges}
    want = df["region"].map(lambda r: joined.get(r, r))
    assert (back["region"] != df["region"]).sum() == 3
    assert back["region"].tolist() == want.tolist() and set(want) == {"north", "south"}
    assert back["sex"].tolist() == df["sex"].tolist() and back["id"].tolist() == df["id"].tolist()
    assert nw.from_native(out).schema == nw.from_native(native).schema  # labels keep their type
    assert ma.is_k_anonymous(back[["age", "income"]], 3, by=back[["region", "sex"]])


def test_relabel_false_keeps_the_labels_and_warns() -> None:
    df = survey()
    with pytest.warns(UserWarning, match=r"relabel=False publishes 3 records of merged strata .*'isle'.*single them out"):
        out = ma.anonymize(df, 3, ["age", "income"], by="region", small_strata="merge", relabel=False)
    assert out["region"].tolist() == df["region"].tolist()
    assert not ma.is_k_anonymous(out[["age", "income"]], 3, by=out["region"])
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no merge, no warning, labels untouched
        plain = ma.anonymize(df.iloc[:77], 3, ["age", "income"], by="region", relabel=False)
    assert plain["region"].tolist() == df["region"].iloc[:77].tolist()
    with pytest.raises(TypeError, match="relabel must be True or False"):
        ma.anonymize(df, 3, ["age", "income"], by="region", relabel="yes")


def test_integer_and_missing_labels_keep_their_dtype() -> None:
    df = survey().assign(zone=lambda d: d["region"].map({"north": 1, "south": 2, "isle": 3, "cape": 4}))
    out = ma.anonymize(df, 3, ["age", "income"], by="zone", small_strata="merge")
    assert out["zone"].dtype == df["zone"].dtype and set(out["zone"]) == {1, 2}
    df["region"] = df["region"].where(df["region"] != "isle", None)
    out = ma.anonymize(df, 3, ["age", "income"], by="region", small_strata="merge")
    assert out["region"].notna().all() and set(out["region"]) == {"north", "south"}
