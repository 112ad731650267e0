"""Risk and utility measures (docs/assessment.md) against independent implementations of their
formulas, on the bundled Census data: a microaggregated release, a release with ties and
missing values, and a release equal to the original (risk 1, loss 0)."""

from __future__ import annotations

import math
from typing import Any
import statistics

import numpy as np
import pytest

import microagg as ma


@pytest.fixture(scope="module")
def census() -> np.ndarray:
    return ma.datasets.load_census()


@pytest.fixture(scope="module")
def release(census: np.ndarray) -> np.ndarray:
    return ma.microaggregate(census, 5, "mdav").aggregated


def with_missing(x: np.ndarray, seed: int = 3) -> np.ndarray:
    out = x.copy()
    rng = np.random.default_rng(seed)
    out[rng.random(out.shape) < 0.05] = np.nan
    return out


def sd_sample(values: list[float]) -> float:
    obs = [v for v in values if not math.isnan(v)]
    return statistics.stdev(obs) if len(obs) > 1 else math.nan


# --- independent implementations of the formulas (plain Python / different NumPy paths) ---


def ref_interval(x: np.ndarray, xm: np.ndarray, p: float) -> float:
    n, d = x.shape
    sds = [sd_sample(list(xm[:, j])) for j in range(d)]
    risky = 0
    for i in range(n):
        out = 0
        for j in range(d):
            lo, hi = xm[i, j] - p * sds[j], xm[i, j] + p * sds[j]
            if not any(math.isnan(v) for v in (x[i, j], lo, hi)) and (x[i, j] < lo or x[i, j] > hi):
                out += 1
        risky += out == 0
    return risky / n


def ref_il1s(x: np.ndarray, xm: np.ndarray) -> float:
    n, d = x.shape
    total = 0.0
    for j in range(d):
        s = sd_sample(list(x[:, j]))
        total += sum(abs(a - b) / (math.sqrt(2) * s) for a, b in zip(x[:, j], xm[:, j]) if not (math.isnan(a) or math.isnan(b)))
    return total


def ref_eigen(x: np.ndarray, xm: np.ndarray) -> float:
    def corr_eigs(a: np.ndarray) -> np.ndarray:
        if not np.isnan(a).any():
            return np.sort(np.linalg.eigvals(np.corrcoef(a, rowvar=False)).real)[::-1]
        z = (a - np.nanmean(a, axis=0)) / np.array([sd_sample(list(c)) for c in a.T])
        d = a.shape[1]
        cov = np.empty((d, d))
        for i in range(d):
            for j in range(d):
                ok = ~np.isnan(z[:, i]) & ~np.isnan(z[:, j])
                cov[i, j] = np.cov(z[ok, i], z[ok, j])[0, 1]
        return np.sort(np.linalg.eigvals(cov).real)[::-1]

    e1, e2 = corr_eigs(x), corr_eigs(xm)
    real = e1 > x.shape[1] * 2.0**-52 * e1[0]  # Census has one exactly collinear column
    assert real.sum() == x.shape[1] - 1
    return float(np.sum(np.abs(e1[real] - e2[real]) / e1[real]))


def ref_il(x: np.ndarray, xm: np.ndarray, w: np.ndarray) -> float:
    mu, sd = np.nanmean(x, axis=0), np.nanstd(x, axis=0)
    sse = sst = 0.0
    for j in range(x.shape[1]):
        ok = ~np.isnan(x[:, j])
        centre = np.average(x[ok, j], weights=w[ok])
        both = ok & ~np.isnan(xm[:, j])
        sse += float(np.sum(w[both] * ((x[both, j] - xm[both, j]) / sd[j]) ** 2))
        sst += float(np.sum(w[ok] * ((x[ok, j] - centre) / sd[j]) ** 2))
        assert mu[j] == mu[j]
    return sse / sst


# --- the tests ---


@pytest.mark.parametrize("missing", [False, True])
def test_interval_disclosure_is_sdcmicros_drisk(census: np.ndarray, release: np.ndarray, missing: bool) -> None:
    xm = with_missing(release) if missing else release
    for p in (0.05, 0.5, 2.0):
        assert ma.risk.interval_disclosure(census, xm, p) == ref_interval(census, xm, p)
    # The coarse release has nobody at risk at 5%, most at 200%: the test can fail.
    assert ma.risk.interval_disclosure(census, xm, 0.05) < ma.risk.interval_disclosure(census, xm, 2.0)


def test_interval_disclosure_every_value_inside(census: np.ndarray, release: np.ndarray) -> None:
    strict = ma.risk.interval_disclosure(census, release, 2.0)
    sd = release.std(axis=0, ddof=1)
    inside = np.all(np.abs(census - release) <= 2.0 * sd + 1e-12, axis=1)
    assert strict == pytest.approx(inside.mean())
    old = ma.risk.interval_disclosure(census, release, 2.0, max_outside=1)  # sdcMicro before 5.6.0
    at_most_one_out = (np.abs(census - release) > 2.0 * sd + 1e-12).sum(axis=1) <= 1
    assert old == pytest.approx(at_most_one_out.mean()) and strict < old


@pytest.mark.parametrize("k", [3, 10])
def test_defaults_give_sdcmicros_numbers(sdcmicro_measures: list[dict[str, str]], k: int) -> None:
    x = ma.datasets.load_tarragona()
    xm = ma.microaggregate(x, k, "mdav").aggregated
    want = {r["measure"]: float(r["value"]) for r in sdcmicro_measures if r["dataset"] == "tarragona" and int(r["k"]) == k}
    assert ma.risk.interval_disclosure(x, xm) == pytest.approx(want["dRisk"], rel=1e-9)
    assert ma.utility.il1s(x, xm) == pytest.approx(want["dUtility_IL1"], rel=1e-9)
    assert ma.utility.eigen(x, xm) == pytest.approx(want["dUtility_eigen"], rel=1e-9)
    a = ma.assess(x, xm)
    assert (a.interval_disclosure, a.il1s, a.eigen) == (
        ma.risk.interval_disclosure(x, xm), ma.utility.il1s(x, xm), ma.utility.eigen(x, xm))
    # the reading of sdcMicro's "IL1old" (and of its versions before 5.6.0): per cell
    assert ma.utility.il1s(x, xm, average=True) == pytest.approx(want["dUtility_IL1"] / x.size, rel=1e-12)


def test_census_il1s_is_sdcmicros(census: np.ndarray, sdcmicro_measures: list[dict[str, str]]) -> None:
    (want,) = [float(r["value"]) for r in sdcmicro_measures if r["dataset"] == "census" and r["measure"] == "dUtility_IL1"]
    xm = ma.microaggregate(census, 5, "mdav").aggregated
    assert ma.utility.il1s(census, xm) == pytest.approx(want, rel=1e-9)
    assert ma.risk.interval_disclosure(census, xm) == 0.0


@pytest.mark.parametrize("missing", [False, True])
def test_il1s_and_eigen_are_sdcmicros_dutility(census: np.ndarray, release: np.ndarray, missing: bool) -> None:
    xm = with_missing(release) if missing else release
    assert ma.utility.il1s(census, xm) == pytest.approx(ref_il1s(census, xm), rel=1e-12)
    assert ma.utility.eigen(census, xm) == pytest.approx(ref_eigen(census, xm), rel=1e-9)
    assert ma.utility.il1s(census, xm) > 0.1 * census.size


def test_information_loss_matches_the_partition_and_weights(census: np.ndarray) -> None:
    res = ma.microaggregate(census, 4, "mdav")
    assert ma.utility.information_loss(census, res.aggregated) == pytest.approx(res.information_loss, rel=1e-12)
    w = np.random.default_rng(1).uniform(0.5, 3.0, census.shape[0])
    got = ma.utility.information_loss(census, res.aggregated, weights=w)
    assert got == pytest.approx(ref_il(census, res.aggregated, w), rel=1e-12)
    assert got != pytest.approx(res.information_loss, rel=1e-6)
    xm = with_missing(res.aggregated)
    x = np.where(np.isnan(xm), np.nan, census)  # missing="keep": missing in both
    assert ma.utility.information_loss(x, xm) == pytest.approx(ref_il(x, xm, np.ones(len(x))), rel=1e-12)


def test_attribute_changes(census: np.ndarray, release: np.ndarray) -> None:
    c = ma.utility.attribute_changes(census, release)
    assert np.allclose(c.mean_change, 0.0, atol=1e-8)  # group means keep the column means
    assert np.allclose(c.variance_ratio, release.var(axis=0) / census.var(axis=0))
    assert (c.variance_ratio < 1).all()
    assert np.allclose(c.correlation_change, np.corrcoef(release, rowvar=False) - np.corrcoef(census, rowvar=False))
    w = np.arange(1, census.shape[0] + 1, dtype=float)
    cw = ma.utility.attribute_changes(census, release, weights=w)
    assert np.allclose(cw.mean_original, np.average(census, axis=0, weights=w))
    m = np.average(release, axis=0, weights=w)
    assert np.allclose(cw.variance_released, np.average((release - m) ** 2, axis=0, weights=w))
    cov = np.cov(census, rowvar=False, aweights=w, ddof=0)
    assert np.allclose(cw.correlation_original, cov / np.sqrt(np.outer(np.diag(cov), np.diag(cov))))


def test_min_group_size_with_strata(census: np.ndarray) -> None:
    res = ma.microaggregate(census, 5, "mdav")
    xm = res.aggregated
    assert ma.risk.min_group_size(xm) == res.group_sizes.min() == 5
    by = np.arange(census.shape[0]) % 2
    want = min(np.unique(np.column_stack([by, res.labels]), axis=0, return_counts=True)[1])
    assert ma.risk.min_group_size(xm, by=by) == want < 5
    labels = np.array(["a", None, float("nan")], dtype=object)[np.arange(census.shape[0]) % 3]
    assert ma.risk.min_group_size(xm, by=labels) == min(
        np.unique(np.column_stack([np.arange(census.shape[0]) % 3, res.labels]), axis=0, return_counts=True)[1]
    )
    nan_rows = np.array([[np.nan, 1.0], [np.nan, 1.0], [-0.0, 2.0], [0.0, 2.0]])
    assert ma.risk.min_group_size(nan_rows) == 2


def test_identical_release_has_risk_one_and_no_loss(census: np.ndarray) -> None:
    a = ma.assess(census, census)
    assert a.information_loss == 0.0 and a.il1s == 0.0 and a.eigen == 0.0
    assert a.interval_disclosure == 1.0
    # Census has duplicate records: a linked duplicate is right with probability 1/t.
    _, inverse, counts = np.unique(census, axis=0, return_inverse=True, return_counts=True)
    assert a.record_linkage.expected_correct == pytest.approx(np.sum(1.0 / counts[inverse.ravel()]))
    x = census + np.arange(census.shape[0])[:, None] * 1e-3  # no duplicates
    assert ma.risk.record_linkage(x, x).rate == 1.0
    assert ma.risk.record_linkage(x, x, "global").rate == 1.0


def test_assess_collects_everything(census: np.ndarray, release: np.ndarray) -> None:
    pd = pytest.importorskip("pandas")
    frame = pd.DataFrame(census, columns=[f"c{j}" for j in range(census.shape[1])])
    a = ma.assess(frame, release, by=np.arange(len(census)) % 2, n_jobs=2)
    assert a.il1s == ma.utility.il1s(census, release)
    assert a.record_linkage.rate == ma.risk.record_linkage(census, release).rate
    assert a.min_group_size == ma.risk.min_group_size(release, np.arange(len(census)) % 2)
    d = a.to_dict()
    assert d["interval_disclosure"] == ma.risk.interval_disclosure(census, release)
    assert d["attributes"][0] == "c0" and len(d["variance_ratio"]) == 13
    t = a.to_frame()
    assert list(t.index) == d["attributes"] and np.allclose(t["variance_ratio"], d["variance_ratio"])
    text = repr(a)
    assert "record linkage" in text and "information loss" in text and "1080 records" in text


def test_assess_with_missing_values_kept(census: np.ndarray, release: np.ndarray) -> None:
    xm = with_missing(release)
    x = np.where(np.isnan(xm), np.nan, census)
    a = ma.assess(x, xm)
    for v in (a.information_loss, a.il1s, a.eigen, a.interval_disclosure, a.record_linkage.rate):
        assert np.isfinite(v)
    assert 0 < a.record_linkage.rate < 1


def test_bad_input_gets_clear_errors(census: np.ndarray, release: np.ndarray) -> None:
    with pytest.raises(ValueError, match="same shape"):
        ma.assess(census, release[:-1])
    with pytest.raises(TypeError, match="real numbers"):
        ma.risk.record_linkage(census, np.full(census.shape, "a"))
    for p in (0, -1.0, float("nan"), float("inf")):
        with pytest.raises(ValueError, match="p must be a positive"):
            ma.risk.interval_disclosure(census, release, p)
    with pytest.raises(TypeError, match="p must be a number"):
        ma.risk.interval_disclosure(census, release, "0.1")
    with pytest.raises(ValueError, match="infinity"):
        ma.utility.il1s(census, np.where(release > 1e9, 0, np.inf))
    with pytest.raises(ValueError, match="weights"):
        ma.assess(census, release, weights=-np.ones(len(census)))
    with pytest.raises(ValueError, match="by must hold"):
        ma.assess(census, release, by=[1, 2])
    with pytest.raises(ValueError, match="'nearest' or 'global'"):
        ma.risk.record_linkage(census, release, "fuzzy")
    with pytest.raises(ValueError, match="empty"):
        ma.utility.eigen(np.zeros((0, 2)), np.zeros((0, 2)))


# --- the measures take what anonymize makes (frames, column roles) ---------------------------

pd = pytest.importorskip("pandas")

ADULT_KEY = ["age", "hours-per-week", "sex", "race", "education"]


@pytest.fixture(scope="module")
def adult_frame() -> pd.DataFrame:
    from conftest import _shared

    return pd.read_csv(_shared("datasets/adult.csv"), skipinitialspace=True, na_values="?").head(4000)


@pytest.fixture(scope="module")
def adult_release(adult_frame: pd.DataFrame) -> pd.DataFrame:
    return ma.anonymize(adult_frame, 5, columns=ADULT_KEY, by="marital-status", small_strata="merge")


def test_a_shuffled_release_is_refused_naming_the_column_and_row(adult_frame: pd.DataFrame,
                                                                  adult_release: pd.DataFrame) -> None:
    # Scoring pairs row i with row i: shuffled rows were scored without complaint (IL 194.98 %,
    # record linkage 0.126 % instead of 2.47 %), understating the risk.
    key = ["age", "education-num", "hours-per-week"]
    out = ma.anonymize(adult_frame, 5, columns=key)
    aligned = ma.assess(adult_frame, out, columns=key)
    assert aligned.information_loss < 0.05
    shuffled = out.sample(frac=1, random_state=0).reset_index(drop=True)
    first = int(np.flatnonzero(shuffled["workclass"].to_numpy() != adult_frame["workclass"].to_numpy())[0])
    with pytest.raises(ValueError, match=rf"column 'workclass' differs .* at row {first} "):
        ma.assess(adult_frame, shuffled, columns=key)
    # a shifted copied column alone is caught too, wherever it is
    moved = out.copy()
    moved.loc[17, "fnlwgt"] += 1
    with pytest.raises(ValueError, match="column 'fnlwgt' differs .* at row 17 "):
        ma.assess(adult_frame, moved, columns=key)
    # with no copied column (arrays), an information loss above 100 % says the rows look misaligned
    x, xs = adult_frame[key].to_numpy(float), shuffled[key].to_numpy(float)
    assert ma.utility.information_loss(x, xs) > 1
    with pytest.raises(ValueError, match=r"information loss \d{3}\.\d\d% is above 100%.*misaligned"):
        ma.assess(x, xs)
    assert ma.assess(x, out[key].to_numpy(float)).information_loss == pytest.approx(aligned.information_loss)


def test_the_cli_refuses_a_shuffled_release(adult_frame: pd.DataFrame, tmp_path: Any) -> None:
    from microagg.cli import main

    key = ["age", "education-num", "hours-per-week"]
    out = ma.anonymize(adult_frame, 5, columns=key).sample(frac=1, random_state=1).reset_index(drop=True)
    adult_frame.to_csv(tmp_path / "o.csv", index=False)
    out.to_csv(tmp_path / "r.csv", index=False)
    assert main(["assess", str(tmp_path / "o.csv"), str(tmp_path / "r.csv"), "--columns", ",".join(key)]) != 0
    adult_frame[key].to_csv(tmp_path / "o2.csv", index=False)
    out[key].to_csv(tmp_path / "r2.csv", index=False)
    assert main(["report", str(tmp_path / "o2.csv"), str(tmp_path / "r2.csv"), "-o", str(tmp_path / "x.html")]) != 0
    assert not (tmp_path / "x.html").exists()


def test_assess_takes_anonymizes_column_roles_on_a_mixed_key(adult_frame: pd.DataFrame,
                                                             adult_release: pd.DataFrame) -> None:
    # A mixed key was a TypeError pointing to anonymize; categorical= wanted (original,
    # released) pairs; sensitive= did not take a column name.
    a = ma.assess(adult_frame, adult_release, columns=ADULT_KEY, by="marital-status", k=5,
                  sensitive="capital-gain", weights="fnlwgt")
    assert a.attributes == ("age", "hours-per-week") and a.weighted
    assert [name for name, _ in a.categorical] == ["sex", "race", "education"]
    assert a.min_group_size >= 5 and a.meets_k
    whole = adult_release.groupby(["marital-status", *ADULT_KEY]).size()
    assert a.min_group_size == whole.min()
    assert a.n_strata == adult_release["marital-status"].nunique()
    expected = ma.risk.t_closeness(adult_release, "capital-gain", columns=ADULT_KEY, by="marital-status")
    assert a.max_emd == expected
    numeric = ma.assess(adult_frame[["age", "hours-per-week"]].to_numpy(float),
                        adult_release[["age", "hours-per-week"]].to_numpy(float),
                        weights=adult_frame["fnlwgt"].to_numpy(float))
    assert a.information_loss == pytest.approx(numeric.information_loss, rel=1e-12)
    # linkage runs over the whole key: the categories narrow the match
    linkage = ma.risk.record_linkage(adult_frame, adult_release, columns=ADULT_KEY, by="marital-status",
                                     sensitive="capital-gain", weights="fnlwgt")
    assert a.record_linkage.rate == linkage.rate > 2 * numeric.record_linkage.rate
    # the default key is anonymize's: numeric columns without a role, plus declared categories
    coded = adult_frame.assign(urban=np.arange(len(adult_frame)) % 3)
    out = ma.anonymize(coded, 5, columns=["age", "urban"], categorical=["urban"])
    b = ma.assess(coded[["age", "urban"]], out[["age", "urban"]], categorical=["urban"], k=5)
    assert b.attributes == ("age",) and [n for n, _ in b.categorical] == ["urban"] and b.meets_k
    with pytest.raises(ValueError, match="unknown column.*nope"):
        ma.assess(adult_frame, adult_release, columns=ADULT_KEY, sensitive="nope")
    with pytest.raises(ValueError, match="capital-gain.*both"):
        ma.assess(adult_frame, adult_release, columns=["age", "capital-gain"], sensitive="capital-gain")


def test_class_measures_take_a_frame_with_anonymizes_roles(adult_release: pd.DataFrame) -> None:
    # risk.class_sizes and risk.min_group_size had no columns= and refused a mixed frame;
    # risk.t_closeness keyed on every numeric column without columns= ...
    whole = adult_release.groupby(["marital-status", *ADULT_KEY])[ADULT_KEY[0]].transform("size").to_numpy()
    sizes = ma.risk.class_sizes(adult_release, by="marital-status", columns=ADULT_KEY)
    assert sizes.tolist() == whole.tolist()
    assert ma.risk.min_group_size(adult_release, by="marital-status", columns=ADULT_KEY) == whole.min() >= 5
    assert ma.is_k_anonymous(adult_release, 5, by="marital-status", columns=ADULT_KEY)
    labels = adult_release["marital-status"].to_numpy()
    assert ma.risk.class_sizes(adult_release, by=labels, columns=ADULT_KEY).tolist() == whole.tolist()
    # ... the default key is anonymize's: the numeric columns without a role (by, weights,
    # sensitive are never keys), so naming the roles is what makes it the key
    numeric = adult_release[["age", "hours-per-week", "fnlwgt", "capital-gain", "marital-status"]]
    by_hand = numeric.groupby(["marital-status", "age", "hours-per-week"])["age"].transform("size").to_numpy()
    assert ma.risk.class_sizes(numeric, by="marital-status", weights="fnlwgt", sensitive="capital-gain").tolist() \
        == by_hand.tolist()
    t_key = ma.risk.t_closeness(numeric, "capital-gain", by="marital-status", weights="fnlwgt")
    assert t_key == ma.risk.t_closeness(adult_release, "capital-gain", columns=["age", "hours-per-week"],
                                        by="marital-status")
    with pytest.raises(TypeError, match="categorical= names the key columns of a DataFrame"):
        ma.risk.class_sizes(np.zeros((4, 2)), categorical=["a"])
    with pytest.raises(ValueError, match="unknown column.*nope"):
        ma.risk.min_group_size(adult_release, columns=["age", "nope"])
