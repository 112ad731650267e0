"""scikit-learn conventions of MicroAggregator and the pandas helper anonymize()."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from conftest import gaussian

import microagg as ma


def test_estimator_follows_sklearn_conventions() -> None:
    X = gaussian(120, 3, seed=9)
    est = ma.MicroAggregator(k=6, method_params={"partial_sort": False})
    params = est.get_params()
    assert params["k"] == 6 and params["method"] == "mdav" and params["n_jobs"] == 1
    clone = type(est)(**params)  # what sklearn.base.clone does
    assert clone.get_params() == params
    assert not hasattr(est, "labels_")
    Xt = est.fit_transform(X)
    res = ma.microaggregate(X, 6)
    assert (est.labels_ == res.labels).all()
    np.testing.assert_array_equal(Xt, res.aggregated)
    np.testing.assert_array_equal(est.transform(X), Xt)
    assert est.n_groups_ == res.n_groups and est.n_features_in_ == 3
    assert est.information_loss_ == pytest.approx(res.information_loss)
    assert (est.group_sizes_ >= 6).all()
    assert est.set_params(k=10) is est and est.k == 10
    with pytest.raises(ValueError, match="invalid parameter 'kk'"):
        est.set_params(kk=3)
    with pytest.raises(ValueError, match="transductive"):
        est.transform(X + 1)
    with pytest.raises(ValueError, match="not fitted"):
        ma.MicroAggregator().transform(X)
    assert "MicroAggregator(k=10" in repr(est)


def test_estimator_on_dataframe_records_feature_names() -> None:
    df = pd.DataFrame(gaussian(30, 2), columns=["age", "income"])
    est = ma.MicroAggregator(k=3).fit(df)
    assert list(est.feature_names_in_) == ["age", "income"]


def test_anonymize_replaces_chosen_columns_and_keeps_the_rest() -> None:
    rng = np.random.default_rng(10)
    df = pd.DataFrame(
        {
            "name": [f"p{i}" for i in range(50)],
            "age": rng.integers(18, 90, 50),
            "income": rng.normal(3e4, 1e4, 50),
            "flag": rng.integers(0, 2, 50).astype(bool),
        }
    )
    out = ma.anonymize(df, k=5, columns=["age", "income"])
    assert list(out.columns) == list(df.columns)
    pd.testing.assert_series_equal(out["name"], df["name"])
    pd.testing.assert_series_equal(out["flag"], df["flag"])
    assert ma.is_k_anonymous(out[["age", "income"]], 5)
    assert df["age"].dtype.kind == "i"  # the input is not modified
    res = ma.microaggregate(df[["age", "income"]], 5)
    np.testing.assert_allclose(out[["age", "income"]].to_numpy(), res.aggregated)
    auto = ma.anonymize(df, k=5)  # all numeric, non-boolean columns
    pd.testing.assert_frame_equal(auto, out)


def test_anonymize_errors() -> None:
    df = pd.DataFrame({"a": [1.0, 2.0, 3.0], "s": ["x", "y", "x"]})
    with pytest.raises(ValueError, match="unknown column\\(s\\): zz"):
        ma.anonymize(df, k=2, columns=["a", "zz"])
    assert (ma.anonymize(df, k=2, columns=["s"])["s"] == "x").all()  # text: nominal, one group's mode
    with pytest.raises(TypeError, match="non-numeric columns: s.*microagg.anonymize"):
        ma.MicroAggregator(k=2).fit(df)  # the transformer stays numeric
    with pytest.raises(ValueError, match="no numeric column"):
        ma.anonymize(df[["s"]], k=2)
    with pytest.raises(TypeError, match="DataFrame"):
        ma.anonymize(df.to_numpy(), k=2)
    with pytest.raises(ValueError, match="k must be between"):
        ma.anonymize(df, k=4, columns="a")


def test_datasets_have_the_documented_shapes() -> None:
    assert ma.datasets.load_census().shape == (1080, 13)
    assert ma.datasets.load_tarragona().shape == (834, 13)
    assert ma.datasets.load_eia().shape == (4092, 11)
    assert ma.datasets.load_eia(benchmark_attributes=False).shape == (4092, 13)
    frame = ma.datasets.load_eia(as_frame=True, benchmark_attributes=False)
    assert frame.shape == (4092, 15) and frame["STATE"].dtype.kind not in "biuf"
    assert list(ma.datasets.load_eia(as_frame=True).columns) == list(ma.datasets.EIA_BENCHMARK_ATTRIBUTES)
