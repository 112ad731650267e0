"""t-closeness in the whole workflow: mixed (categorical and ordinal) keys on Adult, missing
key values (``missing="fill"``/``"keep"``) and partitioned runs (``max_part``). Every class
has at least k records over the whole key and, by the loop-written EMD of
test_tcloseness.py, is within t of the whole file for nominal and numerical confidential
attributes."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import _shared
from test_tcloseness import check, emd

import microagg as ma

pd = pytest.importorskip("pandas")

EDUCATION = [
    "Preschool", "1st-4th", "5th-6th", "7th-8th", "9th", "10th", "11th", "12th", "HS-grad", "Some-college",
    "Assoc-voc", "Assoc-acdm", "Bachelors", "Masters", "Prof-school", "Doctorate",
]
KEY = ["age", "hours-per-week", "sex", "race", "education"]
# Confidential attributes and whether their EMD is ordered: income nominal; capital-gain
# (ties: mostly 0) and education-num (16 levels, ordinal) ordered.
SENSITIVE = {"income": False, "capital-gain": True, "education-num": True}


@pytest.fixture(scope="module")
def adult_frame() -> pd.DataFrame:
    """The first 1 500 complete Adult records (text cells stripped)."""
    df = pd.read_csv(_shared("datasets/adult.csv"), skipinitialspace=True, na_values="?").dropna()
    return df.head(1500).reset_index(drop=True)


def released_classes(out: pd.DataFrame, key: list[str]) -> np.ndarray:
    """Each record's class over the whole released key (numbers and categories)."""
    return out.groupby(key, sort=False, dropna=False).ngroup().to_numpy()


def check_release(df: pd.DataFrame, out: pd.DataFrame, k: int, t: float) -> dict[str, float]:
    """Classes >= k over the whole key and every class within t, confidential columns unchanged;
    returns the largest EMD per confidential attribute."""
    classes = released_classes(out, KEY)
    assert np.bincount(classes).min() >= k
    worst = {}
    for name, ordered in SENSITIVE.items():
        assert out[name].tolist() == df[name].tolist()
        values = df[name].to_numpy()
        worst[name] = max(emd(values, classes == c, ordered) for c in np.unique(classes))
        assert worst[name] <= t + 1e-9, name
    return worst


@pytest.mark.parametrize("release", ["mode", "medoid"])
def test_mixed_key_is_k_anonymous_and_t_close(adult_frame: pd.DataFrame, release: str) -> None:
    df = adult_frame
    k, t = 5, 0.15
    options = dict(columns=KEY, ordinal={"education": EDUCATION}, categorical_release=release)
    out = ma.anonymize(df, k, sensitive=list(SENSITIVE), t=t, **options)
    worst = check_release(df, out, k, t)
    assert ma.is_k_anonymous(out, k, columns=KEY)
    for c in ("sex", "race", "education"):
        assert set(out[c]) <= set(df[c])  # categories are released, never invented
    if release == "medoid":  # every released combination exists in the original
        original = set(map(tuple, df[["sex", "race", "education"]].to_numpy()))
        assert set(map(tuple, out[["sex", "race", "education"]].to_numpy())) <= original
    plain = ma.anonymize(df, k, **options)
    plain_classes = released_classes(plain, KEY)
    income = df["income"].to_numpy()
    plain_worst = max(emd(income, plain_classes == c, False) for c in np.unique(plain_classes))
    assert plain_worst > t >= worst["income"]  # the t-close run did something
    # risk.t_closeness counts classes over the whole key, categories included
    kinds = {name: "numerical" if ordered else "nominal" for name, ordered in SENSITIVE.items()}
    measured = ma.risk.t_closeness(out, list(SENSITIVE), columns=KEY, kinds=kinds)
    assert measured == pytest.approx(worst, abs=1e-12)
    assert ma.risk.t_closeness(plain, "income", columns=KEY, kinds={"income": "nominal"})["income"] == pytest.approx(plain_worst)


def test_mixed_key_with_strata_weights_and_nominal_integer_codes(adult_frame: pd.DataFrame) -> None:
    df = adult_frame.assign(urban=np.random.default_rng(0).integers(1, 4, len(adult_frame)))
    key = ["age", "urban", "race"]
    out = ma.anonymize(df, 4, columns=key, categorical=["urban"], by="sex", weights="fnlwgt",
                       sensitive="income", t=0.2, kinds="nominal")
    classes = out.groupby(["sex", *key], sort=False).ngroup().to_numpy()
    assert np.bincount(classes).min() >= 4
    w = df["fnlwgt"].to_numpy(float)
    income = df["income"].to_numpy()
    assert max(emd(income, classes == c, False, w) for c in np.unique(classes)) <= 0.2 + 1e-9
    assert set(out["urban"]) <= {1, 2, 3}


def test_mixed_key_with_missing_categories(adult_frame: pd.DataFrame) -> None:
    df = adult_frame.copy()
    rng = np.random.default_rng(1)
    df.loc[rng.random(len(df)) < 0.05, "race"] = None
    df.loc[rng.random(len(df)) < 0.05, "age"] = np.nan
    options = dict(columns=KEY, ordinal={"education": EDUCATION}, sensitive=list(SENSITIVE), t=0.2)
    filled = ma.anonymize(df, 5, missing="fill", **options)
    assert not filled[KEY].isna().any().any()
    check_release(df, filled, 5, 0.2)
    kept = ma.anonymize(df, 5, missing="keep", **options)
    assert kept["race"].isna().tolist() == df["race"].isna().tolist()
    assert kept["age"].isna().tolist() == df["age"].isna().tolist()
    assert ma.is_k_anonymous(kept, 5, columns=KEY)
    with pytest.raises(ValueError, match="missing"):
        ma.anonymize(df, 5, **options)


def with_gaps(n: int, seed: int, share: float = 0.08) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Keys with missing cells, the complete keys, and a confidential attribute tied to them."""
    rng = np.random.default_rng(seed)
    full = rng.normal(size=(n, 3)) @ np.array([[1.0, 0.6, 0.2], [0.0, 1.0, 0.5], [0.0, 0.0, 1.0]])
    X = full.copy()
    X[rng.random(X.shape) < share] = np.nan
    X[0] = np.nan  # a record with nothing observed
    s = np.round(full[:, 0] * 2 + rng.normal(size=n) * 0.5).astype(int)
    return X, full, s


@pytest.mark.parametrize("t_method", ["merge", "k-first", "t-first", "auto"])
def test_missing_keys_are_grouped_on_their_completion(t_method: str) -> None:
    X, _, s = with_gaps(300, 0)
    res = ma.t_close_microaggregate(X, 4, sensitive=s, t=0.1, t_method=t_method, missing="fill")
    check(res, s, 4, 0.1, True)
    # The grouping is the t-close grouping of the EM-completed keys in the observed units.
    completed = ma._core.complete_missing(X)
    same = ma.t_close_microaggregate(completed, 4, sensitive=s, t=0.1, t_method=t_method,
                                     standardize=np.nanstd(X, axis=0))
    assert res.labels.tolist() == same.labels.tolist()
    # Released from the observed cells, as plain microaggregation releases them.
    assert not np.isnan(res.aggregated).any() and res.n_filled == int(np.isnan(X).sum())
    for g in range(res.n_groups):
        member = X[res.labels == g]
        seen = ~np.isnan(member).all(axis=0)
        np.testing.assert_allclose(res.group_values[g, seen], np.nanmean(member[:, seen], axis=0), rtol=1e-12)
    assert res.information_loss == pytest.approx(ma.information_loss(X, res.labels, missing="fill"), rel=1e-12)


def test_missing_keep_leaves_cells_missing_and_is_k_anonymous() -> None:
    X, _, s = with_gaps(240, 1)
    fill = ma.t_close_microaggregate(X, 3, sensitive=s, t=0.15, kinds="nominal", missing="fill")
    keep = ma.t_close_microaggregate(X, 3, sensitive=s, t=0.15, kinds="nominal", missing="keep")
    assert keep.labels.tolist() == fill.labels.tolist()  # "fill" and "keep" group alike
    assert np.array_equal(np.isnan(keep.aggregated), np.isnan(X)) and keep.missing == "keep"
    assert ma.is_k_anonymous(keep.aggregated, 3)
    check(keep, s, 3, 0.15, False)


def test_missing_values_are_refused_by_default_and_in_the_confidential_attribute() -> None:
    X, _, s = with_gaps(60, 2)
    with pytest.raises(ValueError, match="missing"):
        ma.t_close_microaggregate(X, 3, sensitive=s, t=0.3)
    full = np.nan_to_num(X)
    gap = s.astype(float)
    gap[5] = np.nan
    for missing in ("error", "fill", "keep"):
        with pytest.raises(ValueError, match="sensitive 'sensitive' has 1 missing"):
            ma.t_close_microaggregate(full, 3, sensitive=gap, t=0.3, missing=missing)
    with pytest.raises(ValueError, match="missing"):
        ma.t_close_microaggregate(full, 3, sensitive=s, t=0.3, missing="drop")


def test_parts_that_are_close_enough_stay_parts() -> None:
    rng = np.random.default_rng(6)
    X = rng.normal(size=(800, 2))
    s = rng.integers(0, 2, size=800)  # independent of the keys: every part is near the file
    res = ma.t_close_microaggregate(X, 4, sensitive=s, t=0.3, kinds="nominal", max_part=100, t_method="merge")
    check(res, s, 4, 0.3, False)
    assert len(res.chosen) == 8  # 800 records cut into 8 parts of 100, none joined
    plain = ma.microaggregate(X, 4, max_part=100)
    # "merge" starts from the method on each part: the same parts give the same groups, merged.
    for g in range(plain.n_groups):
        assert len(set(res.labels[plain.labels == g])) == 1


def test_parts_far_from_the_file_are_joined() -> None:
    X = np.random.default_rng(7).normal(size=(400, 1))
    s = (X[:, 0] > 0).astype(int)  # the key decides it: each quarter cut along it is 0.5 from the file
    res = ma.t_close_microaggregate(X, 4, sensitive=s, t=0.2, kinds="nominal", max_part=100, t_method="t-first")
    check(res, s, 4, 0.2, False)
    assert len(res.chosen) < 4


def test_parts_with_strata_weights_and_missing_values() -> None:
    X, _, s = with_gaps(500, 3)
    region = np.where(np.arange(500) % 3 == 0, "north", "south")
    w = np.random.default_rng(3).uniform(0.5, 2.0, size=500)
    res = ma.t_close_microaggregate(X, 3, sensitive=s, t=0.15, by=region, weights=w, missing="keep", max_part=80)
    check(res, s, 3, 0.15, True, w)
    assert all(len(set(region[res.labels == g])) == 1 for g in range(res.n_groups))
    skewed = np.where(region == "north", s.min(), s)  # north holds the lowest value only
    with pytest.raises(ValueError, match="stratum 'north'"):
        ma.t_close_microaggregate(np.nan_to_num(X), 3, sensitive=skewed, t=0.15, by=region, max_part=40)
    with pytest.raises(ValueError, match="max_part"):
        ma.t_close_microaggregate(np.nan_to_num(X), 3, sensitive=s, t=0.15, max_part=5)


def test_anonymize_takes_max_part_and_missing_with_t_closeness(adult_frame: pd.DataFrame) -> None:
    df = adult_frame.copy()
    df.loc[np.random.default_rng(4).random(len(df)) < 0.05, "hours-per-week"] = np.nan
    out = ma.anonymize(df, 5, columns=KEY, ordinal={"education": EDUCATION}, sensitive=list(SENSITIVE),
                       t=0.2, missing="fill", max_part=300)
    check_release(df, out, 5, 0.2)


def test_the_dask_engine_refuses_t_closeness() -> None:
    dd = pytest.importorskip("dask.dataframe")
    import microagg.dask

    frame = pd.DataFrame({"a": np.arange(40.0), "b": np.arange(40.0) % 7, "s": np.arange(40) % 2})
    with pytest.raises(ValueError, match="not available with the Dask engine"):
        microagg.dask.anonymize(dd.from_pandas(frame, npartitions=2), 3, columns=["a", "b"], sensitive="s", t=0.2)
