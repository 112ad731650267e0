"""t-closeness in the whole workflow: mixed (categorical and ordinal) keys on Adult, missing
key values (``missing="fill"``/``"keep"``) and partitioned runs (``max_part``). Every class
has at least k records over the whole key and, by the loop-written EMD of
test_tcloseness.py, is within t of the whole file for nominal and numerical confidential
attributes."""

from __future__ import annotations

import warnings

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
    income = df["income"].to_numpy()
    # t, like k, counts records: the distributions are unweighted (weighting them was the bug)
    worst = max(emd(income, classes == c, False) for c in np.unique(classes))
    assert worst <= 0.2 + 1e-9
    measured = ma.risk.t_closeness(out, "income", columns=key, categorical=["urban"], by="sex", weights="fnlwgt",
                                   kinds="nominal")
    assert measured["income"] == pytest.approx(worst, abs=1e-12)
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
    # Missing cells stay missing, except those filled to keep every class of the one class
    # rule t-close (a missing cell matches any value; before, a class at 0.188 passed).
    kept = np.isnan(keep.aggregated)
    assert not (kept & ~np.isnan(X)).any() and keep.missing == "keep"
    assert keep.n_filled == int(np.isnan(X).sum() - kept.sum()) and 0 < keep.n_filled < np.isnan(X).sum()
    assert np.array_equal(keep.aggregated[~kept], fill.aggregated[~kept])
    assert ma.is_k_anonymous(keep.aggregated, 3)
    check(keep, s, 3, 0.15, False)
    worst = max(emd(s, wildcard_class(keep.aggregated, i), False) for i in range(len(s)))
    assert worst <= 0.15 + 1e-9
    assert ma.risk.t_closeness(keep.aggregated, s, kinds="nominal")["sensitive"] == pytest.approx(worst, abs=1e-12)
    assert keep.max_emd["sensitive"] == pytest.approx(worst, abs=1e-12)


def wildcard_class(released: np.ndarray, i: int) -> np.ndarray:
    """The records that agree with record i wherever both are observed (the one class rule)."""
    return np.all(np.isnan(released) | np.isnan(released[i]) | (released == released[i]), axis=1)


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
    check(res, s, 3, 0.15, True)  # unweighted: t, like k, counts records
    assert all(len(set(region[res.labels == g])) == 1 for g in range(res.n_groups))
    skewed = np.where(region == "north", s.min(), s)  # north holds the lowest value only
    with pytest.raises(ValueError, match="stratum 'north'"):
        ma.t_close_microaggregate(np.nan_to_num(X), 3, sensitive=skewed, t=0.15, by=region, max_part=40)
    with pytest.raises(ValueError, match="max_part"):
        ma.t_close_microaggregate(np.nan_to_num(X), 3, sensitive=s, t=0.15, max_part=5)


@pytest.mark.parametrize("t_method", ["k-first", "auto"])
def test_a_stratum_farther_than_t_is_refused_before_any_grouping(t_method: str) -> None:
    X, _, s = with_gaps(600, 3)
    region = np.where(np.arange(600) < 540, "east", "west")  # east is grouped first
    skewed = np.where(region == "west", s.min(), s)  # west holds the lowest value only
    progress = ma._core.Progress()
    with pytest.raises(ValueError, match="stratum 'west'"):
        ma.t_close_microaggregate(X, 3, sensitive=skewed, t=0.15, by=region, missing="fill", t_method=t_method,
                                  progress=progress)
    assert progress.assigned == 0  # refused before east was completed and grouped
    # with small strata to merge the check waits for the merged strata, and still refuses
    tiny = np.where(np.arange(600) < 2, "tiny", region)
    with pytest.raises(ValueError, match="stratum 'west'"):
        ma.t_close_microaggregate(X, 3, sensitive=skewed, t=0.15, by=tiny, missing="fill", small_strata="merge")


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


@pytest.fixture(scope="module")
def adult_4000() -> pd.DataFrame:
    """The first 4 000 Adult records, as read (text cells stripped, '?' missing)."""
    return pd.read_csv(_shared("datasets/adult.csv"), skipinitialspace=True, na_values="?").head(4000)


def test_sampling_weights_change_released_values_only(adult_4000: pd.DataFrame) -> None:
    # t, like k, counts records: with weights=fnlwgt the classes were t-close only on
    # weighted distributions (measured: 0.3285 over the released records at t = 0.1).
    key = ["age", "education-num", "hours-per-week"]
    out = ma.anonymize(adult_4000, 5, columns=key, sensitive="capital-gain", t=0.1, weights="fnlwgt")
    plain = ma.anonymize(adult_4000, 5, columns=key, sensitive="capital-gain", t=0.1)
    classes = released_classes(out, key)
    gain = adult_4000["capital-gain"].to_numpy()
    worst = max(emd(gain, classes == c, True) for c in np.unique(classes))
    assert worst <= 0.1 + 1e-9
    assert ma.risk.t_closeness(out, "capital-gain", columns=key, weights="fnlwgt")["capital-gain"] == pytest.approx(
        worst, abs=1e-12)
    assert released_classes(plain, key).tolist() == classes.tolist()  # same classes ...
    assert not np.allclose(out[key].to_numpy(float), plain[key].to_numpy(float))  # ... weighted values


def test_missing_keep_is_t_close_under_the_one_class_rule(adult_4000: pd.DataFrame) -> None:
    # A record's class is every released record equal to it wherever both are observed
    # (is_k_anonymous's rule); risk.t_closeness used exact equality, so a NaN made a class of
    # its own (0.4933 reported), and anonymize did not hold that rule's classes within t.
    key = ["age", "education-num", "hours-per-week"]
    df = adult_4000.head(1500).copy()
    rng = np.random.default_rng(0)
    for c in key:
        df.loc[rng.random(len(df)) < 0.05, c] = np.nan
    out = ma.anonymize(df, 5, columns=key, sensitive="capital-gain", t=0.15, missing="keep")
    assert out[key].isna().to_numpy().any()  # some cells are still missing
    released, gain = out[key].to_numpy(float), df["capital-gain"].to_numpy()
    worst = max(emd(gain, wildcard_class(released, i), True) for i in range(len(df)))
    assert worst <= 0.15 + 1e-9
    assert ma.risk.t_closeness(out, "capital-gain", columns=key)["capital-gain"] == pytest.approx(worst, abs=1e-12)
    assert ma.is_k_anonymous(out, 5, columns=key)


def test_the_measure_takes_the_one_class_rule_within_strata() -> None:
    released = np.array([[1.0, 2.0], [1.0, np.nan], [1.0, 3.0], [1.0, 3.0], [5.0, 5.0], [5.0, 5.0]])
    s = np.array([0, 1, 0, 1, 0, 1])
    # classes: rows 0,1 | 0,1,2,3 | 1,2,3 | 1,2,3 | 4,5 | 4,5 (row 1 matches rows 0, 2, 3)
    expected = max(emd(s, wildcard_class(released, i), False) for i in range(6))
    assert ma.risk.t_closeness(released, s, kinds="nominal")["sensitive"] == pytest.approx(expected, abs=1e-15)
    assert expected == pytest.approx(1 / 6)
    by = np.array(["a", "a", "b", "b", "b", "b"])  # row 1 now only matches row 0
    within = ma.risk.t_closeness(released, s, by=by, kinds="nominal")["sensitive"]
    assert within == pytest.approx(0.0, abs=1e-15)  # every class holds 0 and 1 equally
    assert ma.risk.class_sizes(released, by).tolist() == [2, 2, 2, 2, 2, 2]


def test_a_t_that_makes_a_stratum_one_class_is_a_warning_naming_it() -> None:
    X = np.random.default_rng(0).normal(size=(200, 2))
    s = np.tile((np.arange(100) >= 61).astype(int), 2)  # 61 % zeros: only 100 records reach it
    by = np.repeat(["north", "south"], 100)
    with pytest.warns(UserWarning, match="stratum '(north|south)' one class of 100 records") as caught:
        res = ma.t_close_microaggregate(X, 3, sensitive=s, t=1e-9, by=by, kinds="nominal")
    assert res.n_groups == 2
    assert ["north" in str(w.message) for w in caught] == [True, False] and "'south'" in str(caught[1].message)
    with pytest.warns(UserWarning, match="the whole file one class of 200 records"):
        ma.t_close_microaggregate(X, 3, sensitive=s, t=1e-9, kinds="nominal")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        ma.t_close_microaggregate(X, 3, sensitive=s, t=0.3, by=by, kinds="nominal")


def test_missing_keep_with_a_mixed_key_is_t_close_under_the_one_class_rule(adult_frame: pd.DataFrame) -> None:
    # The classes are those of the released key (categories by equality), not of the
    # embedding: two groups can release the same categories. Before: 0.1874 at t = 0.1.
    df = adult_frame.copy()
    rng = np.random.default_rng(2)
    for c, missing in (("race", None), ("age", np.nan), ("sex", None)):
        df.loc[rng.random(len(df)) < 0.08, c] = missing
    out = ma.anonymize(df, 5, missing="keep", columns=KEY, sensitive=["income"], t=0.1)
    assert out[KEY].isna().to_numpy().sum() > 0.8 * df[KEY].isna().to_numpy().sum()  # most cells kept missing
    codes = np.column_stack([
        out[c].to_numpy(float) if c in ("age", "hours-per-week") else
        np.where(out[c].isna(), np.nan, pd.factorize(out[c])[0]) for c in KEY
    ])
    income = df["income"].to_numpy()
    worst = max(emd(income, wildcard_class(codes, i), False) for i in range(len(df)))
    assert worst <= 0.1 + 1e-9
    assert ma.risk.t_closeness(out, "income", columns=KEY)["income"] == pytest.approx(worst, abs=1e-12)
    assert ma.is_k_anonymous(out, 5, columns=KEY)
