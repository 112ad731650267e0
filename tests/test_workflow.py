"""The disclosure-control workflow (docs/workflow.md): strata, weights, aggregation, and the
result."""

from __future__ import annotations

import csv
import math
import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import microagg as ma
from microagg import MicroaggregationResult

AGGREGATIONS = ["mean", "median", "trim", "onestep"]


def data(n: int, d: int = 3, seed: int = 0) -> np.ndarray:
    return np.random.default_rng(seed).normal(size=(n, d))


# --- independent references (numpy, written from the documented definitions) -------------


def ref_weighted_median(v: np.ndarray, w: np.ndarray) -> float:
    if w.sum() == 0:
        return float(np.median(v))
    keep = w > 0
    v, w = v[keep], w[keep]
    order = np.argsort(v, kind="stable")
    v, w = v[order], w[order]
    cum = np.cumsum(w)
    half = cum[-1] / 2
    i = int(np.searchsorted(cum, half, side="left"))
    if cum[i] == half and i + 1 < len(v):
        return float((v[i] + v[i + 1]) / 2)
    return float(v[i])


def ref_weighted_mean(v: np.ndarray, w: np.ndarray) -> float:
    return float(np.average(v, weights=w)) if w.sum() > 0 else float(v.mean())


def ref_trim(v: np.ndarray, w: np.ndarray, t: float) -> float:
    if t >= 0.5:
        return ref_weighted_median(v, w)
    if w.sum() == 0:
        w = np.ones_like(w)
    keep = w > 0
    v, w = v[keep], w[keep]
    order = np.argsort(v, kind="stable")
    v, w = v[order], w[order]
    cut = t * w.sum()
    low = int(np.sum(np.cumsum(w) <= cut))
    high = int(np.sum(np.cumsum(w[::-1]) <= cut))
    return float(np.average(v[low : len(v) - high], weights=w[low : len(v) - high]))


def ref_onestep(v: np.ndarray, w: np.ndarray) -> float:
    if w.sum() == 0:
        w = np.ones_like(w)
    med = ref_weighted_median(v, w)
    mad = 1.4826 * ref_weighted_median(np.abs(v - med), w)
    limit = 3 / 1.486 * mad
    return ref_weighted_mean(np.clip(v, med - limit, med + limit), w)


def reference(v: np.ndarray, w: np.ndarray, how: str, trim: float = 0.1) -> float:
    if how == "mean":
        return ref_weighted_mean(v, w)
    if how == "median":
        return ref_weighted_median(v, w)
    if how == "trim":
        return ref_trim(v, w, trim)
    return ref_onestep(v, w)


def groups_of(labels: np.ndarray) -> list[np.ndarray]:
    return [np.flatnonzero(labels == g) for g in range(labels.max() + 1)]


# --- strata -------------------------------------------------------------------------------


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    n=st.integers(20, 160),
    k=st.integers(2, 6),
    n_strata=st.integers(1, 6),
    method=st.sampled_from(["mdav", "md", "cbfs", "mondrian-v", "mdav-star", "ona-star", "vmdav"]),
    seed=st.integers(0, 2**16),
)
def test_no_group_crosses_a_stratum(n: int, k: int, n_strata: int, method: str, seed: int) -> None:
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 2))
    by = rng.integers(0, n_strata, size=n)
    sizes = np.bincount(by)
    if sizes[sizes > 0].min() < k:
        with pytest.raises(ValueError, match="fewer than k"):
            ma.microaggregate(X, k, method, by=by)
        res = ma.microaggregate(X, k, method, by=by, small_strata="merge")
        assert res.merges, "undersized strata must be reported as merged"
        final = {s: s for s in np.unique(by).tolist()}
        for m in res.merges:
            final = {s: (m.into if t == m.stratum else t) for s, t in final.items()}
        strata = np.array([final[s] for s in by.tolist()])
    else:
        res = ma.microaggregate(X, k, method, by=by)
        assert res.merges == ()
        strata = by
    assert res.group_sizes.min() >= k
    assert np.array_equal(np.unique(res.labels), np.arange(res.n_groups))
    for members in groups_of(res.labels):
        assert len(np.unique(strata[members])) == 1, "a group mixes strata"
    for s in np.unique(strata):
        assert np.bincount(strata)[s] >= k


@pytest.mark.parametrize("method", ["mdav", "mondrian-v2d", "ona-star", "md-mhm", "mona"])
def test_strata_in_parallel_give_the_same_labels(method: str) -> None:
    X = data(3000, 3, seed=1)
    by = np.random.default_rng(2).choice(["north", "south", "east", "west", "centre"], size=3000)
    one = ma.microaggregate(X, 4, method, by=by, n_jobs=1)
    two = ma.microaggregate(X, 4, method, by=by, n_jobs=2)
    assert np.array_equal(one.labels, two.labels)
    assert one.sse == two.sse


def test_strata_standardize_on_the_whole_file_and_label_in_sorted_order() -> None:
    X = data(400, 2, seed=3)
    X[200:] *= 10.0  # the second stratum is much wider: a per-stratum scale would hide it
    by = np.repeat(["b", "a"], 200)
    res = ma.microaggregate(X, 5, by=by)
    # stratum 'a' (records 200..399) is grouped first
    assert res.labels[200:].max() < res.labels[:200].min()
    z = (X - X.mean(0)) / X.std(0)
    part_a = ma.microaggregate(z[200:], 5, standardize=False)
    part_b = ma.microaggregate(z[:200], 5, standardize=False)
    assert np.array_equal(res.labels[200:], part_a.labels)
    assert np.array_equal(res.labels[:200], part_b.labels + part_a.n_groups)
    assert res.sse == pytest.approx(part_a.sse + part_b.sse, rel=1e-9)
    # grouping each stratum on its own scale would give other groups
    assert not np.array_equal(res.labels[:200], ma.microaggregate(X[:200], 5).labels + part_a.n_groups)
    assert res.sst == pytest.approx(float(((z - z.mean(0)) ** 2).sum()), rel=1e-9)


def test_a_single_stratum_is_plain_microaggregation() -> None:
    X = data(500, 4, seed=4)
    plain = ma.microaggregate(X, 3)
    res = ma.microaggregate(X, 3, by=np.zeros(500))
    assert np.array_equal(plain.labels, res.labels)
    assert plain.sse == res.sse


def test_stratum_labels_of_every_kind() -> None:
    X = data(12, 2)
    by: list[Any] = ["x", None, "x", float("nan"), "y", "y", None, "x", "y", float("nan"), "y", "x"]
    res = ma.microaggregate(X, 2, by=np.array(by, dtype=object))
    missing = np.array([v is None or v != v for v in by])
    for members in groups_of(res.labels):
        labels = {("missing" if missing[i] else by[i]) for i in members}
        assert len(labels) == 1
    pd = pytest.importorskip("pandas")
    series = pd.Series(by, dtype="string")
    assert np.array_equal(ma.microaggregate(X, 2, by=series).labels, res.labels)
    # several columns: every distinct row is a stratum
    two = np.column_stack([np.repeat([1, 2], 6), np.tile([0, 0, 1], 4)])
    res2 = ma.microaggregate(X, 2, by=two)
    keys = [tuple(r) for r in two.tolist()]
    for members in groups_of(res2.labels):
        assert len({keys[i] for i in members}) == 1
    frame = pd.DataFrame({"a": ["p", "p", "q"] * 4, "b": [1.0, np.nan, 1.0] * 4})
    res3 = ma.microaggregate(X, 2, by=frame)
    assert res3.n_groups == 6 and res3.group_sizes.min() == 2


def test_undersized_strata_are_named_with_their_sizes() -> None:
    X = data(20, 2)
    by = np.array(["big"] * 16 + ["tiny"] * 2 + [None, None], dtype=object)
    with pytest.raises(ValueError, match=r"2 strata have fewer than k=3 records: 'tiny' \(2 records\), None \(2 records\); merge"):
        ma.microaggregate(X, 3, by=by)
    by_num = np.array([1.5] * 19 + [np.nan])
    with pytest.raises(ValueError, match=r"1 stratum has fewer than k=2 records: nan \(1 record\)"):
        ma.microaggregate(X, 2, by=by_num)
    multi = np.empty((20, 2), dtype=object)
    multi[:, 0], multi[:, 1] = ["a"] * 19 + ["b"], 0
    with pytest.raises(ValueError, match=r"\('b', 0\) \(1 record\)"):
        ma.microaggregate(X, 2, by=multi)


def test_merge_joins_the_nearest_stratum_and_reports_it() -> None:
    rng = np.random.default_rng(5)
    X = np.vstack([rng.normal(0, 1, (30, 2)), rng.normal(10, 1, (30, 2)), [[9.5, 9.8]], [[0.2, 0.1]]])
    by = np.array(["low"] * 30 + ["high"] * 30 + ["odd-high", "odd-low"], dtype=object)
    res = ma.microaggregate(X, 3, by=by, small_strata="merge")
    assert set(res.merges) == {
        ma.StratumMerge("odd-high", "high", 1),
        ma.StratumMerge("odd-low", "low", 1),
    }
    assert res.labels[60] in set(res.labels[30:60])
    assert res.labels[61] in set(res.labels[:30])
    # the merged records' stratum labels would identify them if published: recode them
    assert not ma.is_k_anonymous(res.aggregated, 3, by=by)
    recoded = by.copy()
    recoded[60], recoded[61] = "high", "low"
    assert ma.is_k_anonymous(res.aggregated, 3, by=recoded)


def test_is_k_anonymous_counts_rows_within_strata() -> None:
    released = np.array([[1.0], [1.0], [1.0], [1.0]])
    assert ma.is_k_anonymous(released, 4)
    assert ma.is_k_anonymous(released, 2, by=["a", "a", "b", "b"])
    assert not ma.is_k_anonymous(released, 3, by=["a", "a", "b", "b"])
    with pytest.raises(ValueError, match="by must have one label per record"):
        ma.is_k_anonymous(released, 2, by=["a"])


# --- weights and aggregation --------------------------------------------------------------


@pytest.mark.parametrize("how", AGGREGATIONS)
@pytest.mark.parametrize("weighted", [False, True])
def test_every_group_value_matches_numpy(how: str, weighted: bool) -> None:
    rng = np.random.default_rng(6)
    X = rng.standard_t(2, size=(600, 3)) * [1.0, 100.0, 0.01]  # heavy tails: clipping happens
    w = rng.choice([0.0, 0.5, 1.0, 3.0, 10.0], size=600) if weighted else None
    if weighted:
        w[:7] = 0.0  # the first group is likely all zero: unweighted fallback
    res = ma.microaggregate(X, 7, weights=w, aggregation=how)
    ww = np.ones(600) if w is None else w
    for g, members in enumerate(groups_of(res.labels)):
        for j in range(3):
            v, wg = X[members, j], ww[members]
            want = reference(v, wg, how)
            assert res.group_values[g, j] == pytest.approx(want, rel=1e-12, abs=1e-12)
            assert res.centroids[g, j] == pytest.approx(v.mean(), rel=1e-12, abs=1e-12)  # weights never group
    assert np.array_equal(res.aggregated, res.group_values[res.labels])
    assert res.aggregation == how


def test_unweighted_measures_are_the_ordinary_ones() -> None:
    X = data(300, 2, seed=7)
    med = ma.microaggregate(X, 6, aggregation="median")
    trim = ma.microaggregate(X, 6, aggregation="trim", trim=0.2)
    for g, members in enumerate(groups_of(med.labels)):
        assert np.allclose(med.group_values[g], np.median(X[members], axis=0), rtol=1e-12)
        s = np.sort(X[members], axis=0)
        cut = math.floor(len(members) * 0.2)
        assert np.allclose(trim.group_values[g], s[cut : len(members) - cut].mean(0), rtol=1e-12)


@pytest.mark.parametrize("trim", [0.0, 0.25, 0.5])
def test_trim_fraction(trim: float) -> None:
    X = data(200, 2, seed=8)
    w = np.random.default_rng(9).uniform(0.1, 5, size=200)
    res = ma.microaggregate(X, 9, weights=w, aggregation="trim", trim=trim)
    for g, members in enumerate(groups_of(res.labels)):
        for j in range(2):
            want = reference(X[members, j], w[members], "trim", trim)
            assert res.group_values[g, j] == pytest.approx(want, rel=1e-12)
    if trim == 0.0:  # the weighted mean
        assert np.allclose(res.group_values, ma.microaggregate(X, 9, weights=w).group_values, rtol=1e-12)


@pytest.mark.parametrize("method", ["mdav", "mondrian-v", "ona-star"])
def test_aggregation_and_weights_never_change_the_groups(method: str) -> None:
    X = data(500, 3, seed=10)
    w = np.random.default_rng(11).exponential(size=500)
    plain = ma.microaggregate(X, 5, method)
    for how in AGGREGATIONS:
        for weights in (None, w):
            res = ma.microaggregate(X, 5, method, weights=weights, aggregation=how)
            assert np.array_equal(res.labels, plain.labels), (how, weights is None)
            assert ma.is_k_anonymous(res.aggregated, 5)


@pytest.mark.parametrize("how", AGGREGATIONS)
def test_weighted_sse_and_sst(how: str) -> None:
    X = data(400, 3, seed=12) * [1, 5, 0.1]
    w = np.random.default_rng(13).uniform(0, 3, size=400)
    res = ma.microaggregate(X, 5, weights=w, aggregation=how)
    scale = X.std(0)
    z = X / scale
    mean = np.average(z, axis=0, weights=w)
    released = res.aggregated / scale
    unit = w[:, None] / 2.0 ** np.floor(np.log2(w.max()))  # the largest weight brought into [1, 2)
    assert res.sse == pytest.approx(float((unit * (z - released) ** 2).sum()), rel=1e-9)
    assert res.sst == pytest.approx(float((unit * (z - mean) ** 2).sum()), rel=1e-9)
    assert 0 < res.information_loss < 1
    unweighted = ma.microaggregate(X, 5)
    assert unweighted.sse == pytest.approx(ma.sse(X, unweighted.labels), rel=1e-12)


def test_weights_count_like_repeated_records() -> None:
    X = data(100, 2, seed=14)
    w = np.random.default_rng(15).integers(1, 4, size=100).astype(float)
    res = ma.microaggregate(X, 5, weights=w)
    for g, members in enumerate(groups_of(res.labels)):
        repeated = np.repeat(X[members], w[members].astype(int), axis=0)
        assert np.allclose(res.group_values[g], repeated.mean(0), rtol=1e-12)


def test_result_stays_backward_compatible() -> None:
    res = MicroaggregationResult(np.array([0, 0]), 1, np.array([[1.0]]), 0.0, 1.0, 2, "mdav")
    assert res.aggregation == "mean" and res.merges == () and res.released_values is None
    assert np.array_equal(res.aggregated, [[1.0], [1.0]])
    assert "released_values" not in repr(res)


# --- bad arguments ------------------------------------------------------------------------

X_BAD = data(30, 2, seed=16)


@pytest.mark.parametrize(
    "weights, error, message",
    [
        (-np.ones(30), ValueError, "invalid weights: weights must be non-negative, got -1 at record 0"),
        (np.r_[np.ones(29), np.nan], ValueError, "invalid weights: weights must be finite, got NaN at record 29"),
        (np.r_[np.inf, np.ones(29)], ValueError, "invalid weights: weights must be finite, got inf at record 0"),
        (np.ones(29), ValueError, r"weights must be 1-D with one weight per record \(30\), got shape \(29,\)"),
        (np.ones((30, 1)), ValueError, r"weights must be 1-D with one weight per record \(30\), got shape \(30, 1\)"),
        (np.zeros(30), ValueError, "invalid weights: every weight is zero"),
        (np.array(["1"] * 30), TypeError, "weights must be real numbers"),
        (np.ones(30, dtype=bool), TypeError, "weights must be real numbers"),
    ],
)
def test_bad_weights(weights: Any, error: type, message: str) -> None:
    with pytest.raises(error, match=message):
        ma.microaggregate(X_BAD, 3, weights=weights)


@pytest.mark.parametrize(
    "kwargs, error, message",
    [
        ({"aggregation": "average"}, ValueError, "invalid aggregation: unknown aggregation 'average'; choose one of: mean, median, trim, onestep"),
        ({"aggregation": 1}, TypeError, "aggregation must be a string"),
        ({"aggregation": "trim", "trim": 0.6}, ValueError, r"invalid trim: the share cut from each end must be in \[0, 0.5\], got 0.6"),
        ({"aggregation": "trim", "trim": -0.1}, ValueError, "invalid trim"),
        ({"aggregation": "trim", "trim": float("nan")}, ValueError, "invalid trim"),
        ({"aggregation": "trim", "trim": "0.1"}, TypeError, "trim must be a number"),
        ({"aggregation": "trim", "trim": True}, TypeError, "trim must be a number"),
        ({"trim": 0.2}, ValueError, "trim applies to aggregation='trim' only, not 'mean'"),
        ({"by": np.zeros(30), "small_strata": "drop"}, ValueError, "invalid small_strata: must be 'error' or 'merge', got 'drop'"),
        ({"small_strata": None}, TypeError, "small_strata must be a string"),
        ({"by": np.zeros(29)}, ValueError, r"by must have one label per record \(30\), got 29"),
        ({"by": "region"}, TypeError, "column names are accepted by microagg.anonymize"),
        ({"by": np.zeros((30, 2, 2))}, ValueError, "by must be 1-D"),
    ],
)
def test_bad_workflow_arguments(kwargs: dict[str, Any], error: type, message: str) -> None:
    with pytest.raises(error, match=message):
        ma.microaggregate(X_BAD, 3, **kwargs)


def test_bad_small_strata_is_refused_even_without_small_strata() -> None:
    with pytest.raises(ValueError, match="small_strata"):
        ma.microaggregate(X_BAD, 3, small_strata="merged")


# --- anonymize ----------------------------------------------------------------------------


def test_anonymize_with_strata_and_weight_columns() -> None:
    pd = pytest.importorskip("pandas")
    rng = np.random.default_rng(17)
    df = pd.DataFrame(
        {
            "region": rng.choice(["n", "s"], size=200),
            "sex": rng.choice(["f", "m"], size=200),
            "age": rng.integers(18, 90, size=200),
            "income": rng.lognormal(10, 1, size=200),
            "w": rng.uniform(1, 50, size=200),
        }
    )
    out = ma.anonymize(df, 5, by=["region", "sex"], weights="w", aggregation="median")
    assert list(out.columns) == list(df.columns)
    for c in ("region", "sex", "w"):
        assert out[c].equals(df[c])  # strata and weights are not quasi-identifiers
    keys = df["region"] + df["sex"]
    released = out[["age", "income"]].to_numpy()
    assert ma.is_k_anonymous(released, 5, by=keys.to_numpy())
    direct = ma.microaggregate(
        df[["age", "income"]], 5, by=df[["region", "sex"]], weights=df["w"], aggregation="median"
    )
    assert np.array_equal(released, direct.aggregated)
    single = ma.anonymize(df, 5, columns=["income"], by="region")
    assert ma.is_k_anonymous(single[["income"]].to_numpy(), 5, by=df["region"])


def test_anonymize_rejects_bad_column_names() -> None:
    pd = pytest.importorskip("pandas")
    df = pd.DataFrame({"a": np.arange(10.0), "b": np.arange(10.0), "g": ["x"] * 10, "w": ["1"] * 10})
    with pytest.raises(ValueError, match="by: unknown column"):
        ma.anonymize(df, 2, by="region")
    with pytest.raises(ValueError, match="weights: unknown column"):
        ma.anonymize(df, 2, by="g", weights="weight")
    with pytest.raises(ValueError, match="column 'a' is both a quasi-identifier and in by"):
        ma.anonymize(df, 2, columns=["a", "b"], by="a")
    with pytest.raises(TypeError, match="weights: column 'w' is not numeric"):
        ma.anonymize(df, 2, columns=["a"], weights="w")


# --- command line -------------------------------------------------------------------------


def _cli(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "microagg", *args], cwd=cwd, capture_output=True, text=True, timeout=300
    )


def _write_survey(path: Path, n: int = 120) -> None:
    rng = np.random.default_rng(18)
    with open(path, "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["id", "region", "sex", "age", "income", "weight"])
        for i in range(n):
            region = "Île-de-France, nord" if i % 3 == 0 else "sud"
            w.writerow([f"r{i}", region, "fm"[i % 2], int(rng.integers(18, 90)), round(float(rng.lognormal(10, 1)), 2), round(float(rng.uniform(1, 9)), 3)])
        w.writerow(["lone", "ouest", "f", 40, 1000.0, 2.0])


def test_cli_strata_weights_and_aggregation_end_to_end(tmp_path: Path) -> None:
    src = tmp_path / "survey.csv"
    _write_survey(src)
    args = ["anonymize", "survey.csv", "-k", "4", "--by", "region,sex", "--weights", "weight"]
    r = _cli(*args, "-o", "out.csv", cwd=tmp_path)
    assert r.returncode == 2 and not (tmp_path / "out.csv").exists()
    assert "('ouest', 'f') (1 record)" in r.stderr and r.stderr.count("\n") == 1
    r = _cli(*args, "--small-strata", "merge", "--aggregation", "trim", "--trim", "0.25", "-o", "out.csv", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert "columns age, income" in r.stdout  # strata and weights are not quasi-identifiers
    assert "merged stratum ('ouest', 'f') (1 records) into stratum" in r.stdout
    with open(src, newline="") as f:
        rows_in = list(csv.reader(f))
    with open(tmp_path / "out.csv", newline="") as f:
        rows_out = list(csv.reader(f))
    # the merged record is published under the stratum it joined (its own would single it out)
    (lone,) = [i for i, r in enumerate(rows_in) if r[0] == "lone"]
    assert rows_out[lone][1:3] != rows_in[lone][1:3]
    relabeled = [r[:3] + r[5:] for r in rows_in]
    relabeled[lone][1:3] = rows_out[lone][1:3]
    assert [r[:3] + r[5:] for r in rows_out] == relabeled
    body = rows_in[1:]
    X = np.array([[float(r[3]), float(r[4])] for r in body])
    strata = np.array([[r[1], r[2]] for r in body])
    weights = np.array([float(r[5]) for r in body])
    want = ma.microaggregate(X, 4, by=strata, small_strata="merge", weights=weights, aggregation="trim", trim=0.25)
    released = np.array([[float(r[3]), float(r[4])] for r in rows_out[1:]])
    np.testing.assert_array_equal(released, want.aggregated)
    (merge,) = want.merges
    assert merge.stratum == ("ouest", "f")
    keys = [tuple(s) for s in strata.tolist()]
    assert not ma.is_k_anonymous(released, 4, by=np.array(keys, dtype=object))
    recoded = [merge.into if key == merge.stratum else key for key in keys]
    assert ma.is_k_anonymous(released, 4, by=[a + "|" + b for a, b in recoded])
    assert [merge.into] == [tuple(rows_out[lone][1:3])]
    assert ma.is_k_anonymous(released, 4, by=[r[1] + "|" + r[2] for r in rows_out[1:]])


def test_cli_workflow_errors(tmp_path: Path) -> None:
    src = tmp_path / "survey.csv"
    _write_survey(src)
    for extra, message in [
        (["--by", "county"], "--by: unknown column 'county'"),
        (["--weights", "region"], "--weights: column 'region' is not numeric"),
        (["--by", "sex", "--columns", "age,sex"], "column 'sex' is both a quasi-identifier (--columns) and in --by"),
        (["--by", "sex", "--aggregation", "trim", "--trim", "0.7"], "invalid trim"),
        (["--by", "sex", "--trim", "0.2"], "trim applies to --aggregation trim only"),
    ]:
        r = _cli("anonymize", "survey.csv", "-k", "3", *extra, cwd=tmp_path)
        assert r.returncode == 2, extra
        assert message in r.stderr, (extra, r.stderr)


def test_methods_see_each_stratum_on_its_own() -> None:
    # "optimal" takes at most 20 records: per stratum, with strata
    X = data(45, 2, seed=19)
    by = np.repeat([0, 1, 2], 15)
    res = ma.microaggregate(X, 3, "optimal", by=by)
    z = (X - X.mean(0)) / X.std(0)  # strata are grouped in the whole file's units
    for s in range(3):
        part = ma.microaggregate(z[by == s], 3, "optimal", standardize=False)
        mine = res.labels[by == s] - res.labels[by == s].min()
        assert ma.sse(z[by == s], mine, standardize=False) == pytest.approx(part.sse, rel=1e-9)
    with pytest.raises(ValueError, match="at most 20 records, got 30 in the largest stratum"):
        ma.microaggregate(X, 3, "optimal", by=np.repeat([0, 1], [30, 15]))
    # errors inside a stratum name the record by its index in the whole file: stratum 1 holds
    # records 1, 3, 5, 7, 9; centered on its mean, all overflow float32, first record 1 (the
    # stratum's position 0; record 0 is in stratum 0, which is fine)
    Y = np.zeros((10, 1))
    Y[7] = 1e25
    with pytest.raises(ValueError, match="squared norm of record 1 overflows"):
        ma.microaggregate(Y, 2, by=[0, 1] * 5, standardize=False, dtype="float32")
