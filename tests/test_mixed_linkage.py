"""Record linkage over a mixed key (docs/assessment.md#risk): numbers and ordinal ranks scaled
by the original, a nominal mismatch costing 1, the one-hot embedding's geometry searched from
level codes. Checked against a brute force written here from the definition, against the
dense embedding searched as numbers, and through assess, the report's figures and the CLI."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from conftest import optional

import microagg as ma
from microagg import _core
from microagg._linkage_key import linkage_tables

pd = optional("pandas")

EDU = ["none", "HS", "BSc", "MSc", "PhD"]
KEY = ["age", "hours", "edu", "sex", "region"]


def frame(n: int, seed: int, regions: int = 40) -> Any:
    rng = np.random.default_rng(seed)
    return pd.DataFrame(
        {
            "age": rng.integers(18, 80, n),
            "hours": rng.integers(10, 60, n).astype(float),
            "edu": pd.Categorical(rng.choice(EDU, n), categories=EDU, ordered=True),
            "sex": rng.choice(["F", "M"], n),
            "region": [f"r{v}" for v in rng.zipf(1.6, n) % regions],
            "income": rng.lognormal(10, 1, n),
        }
    )


def brute_force(X: Any, Xm: Any) -> tuple[Any, Any]:
    """(tie counts, own among ties) from the definition: numbers and ordinal ranks centred and
    scaled by the original's population sd, a nominal mismatch adding 1, summed in the
    core's order (the numeric terms in column order, then the mismatches)."""
    graded = [X["age"], X["hours"], X["edu"].cat.codes], [Xm["age"], Xm["hours"], Xm["edu"].cat.codes]
    x = np.column_stack([np.asarray(v, dtype=float) for v in graded[0]])
    xm = np.column_stack([np.asarray(v, dtype=float) for v in graded[1]])
    sd = x.std(axis=0)
    z, zm = (x - x.mean(axis=0)) / sd, (xm - x.mean(axis=0)) / sd
    numeric = np.zeros((len(X), len(Xm)))
    for j in range(z.shape[1]):
        t = z[:, j, None] - zm[None, :, j]
        numeric = numeric + t * t
    mismatch = np.zeros_like(numeric)
    for c in ["sex", "region"]:
        mismatch = mismatch + (X[c].to_numpy()[:, None] != Xm[c].to_numpy()[None, :])
    d = numeric + mismatch
    ties = d == d.min(axis=1, keepdims=True)
    return ties.sum(axis=1), ties[np.arange(len(X)), np.arange(len(X))]


def test_mixed_linkage_is_its_definition_with_exact_ties() -> None:
    df = frame(600, seed=1)
    out = ma.anonymize(df, 4, columns=KEY)
    want_ties, want_own = brute_force(df, out)
    for jobs in (1, 2):
        res = ma.risk.record_linkage(df, out, columns=KEY, sensitive="income", n_jobs=jobs)
        np.testing.assert_array_equal(res.tie_counts, want_ties)
        np.testing.assert_array_equal(res.own_among_ties, want_own)
    assert (want_ties > 1).any(), "the test wants ties"
    assert res.rate == pytest.approx(np.mean(want_own / want_ties), rel=1e-12)
    numeric_only = ma.risk.record_linkage(df[["age", "hours"]].to_numpy(float), out[["age", "hours"]].to_numpy(float))
    assert res.rate > numeric_only.rate


def test_mixed_linkage_equals_the_dense_embedding_searched_as_numbers() -> None:
    # Codes against one-hot columns of value 1 (a mismatch then costs 1 + 1 = 2 exactly),
    # on a 300-level column, through the core's numeric search of the dense table; numbers
    # on a grid of 1/16, so that both orders of summation are exact.
    df = frame(1500, seed=2, regions=300)
    out = ma.anonymize(df, 3, columns=KEY)
    z, zm, costs = linkage_tables(df, out, columns=KEY)
    assert costs == [1.0, 1.0] and z.shape == (1500, 5)
    p = z.shape[1] - len(costs)
    z[:, :p], zm[:, :p] = np.round(z[:, :p] * 16) / 16, np.round(zm[:, :p] * 16) / 16
    levels = [int(max(np.nanmax(z[:, j]), np.nanmax(zm[:, j]))) + 1 for j in range(p, z.shape[1])]
    assert levels[1] > 100

    def dense(t: Any) -> Any:
        return np.column_stack([t[:, :p], *(np.eye(L)[t[:, p + j].astype(int)] for j, L in enumerate(levels))])

    want = _core.link_nearest_arrays(dense(z), dense(zm), n_jobs=1)
    got = _core.link_nearest_arrays(z, zm, n_jobs=1, mismatch_costs=[2.0, 2.0])
    np.testing.assert_array_equal(got[0], want[0])
    np.testing.assert_array_equal(got[1], want[1])


def test_missing_categories_and_global_linkage_on_a_mixed_key() -> None:
    pytest.importorskip("scipy")
    from scipy.optimize import linear_sum_assignment

    df = frame(300, seed=3)
    df.loc[df.index[::17], "region"] = None
    df.loc[df.index[5::23], "age"] = np.nan
    out = ma.anonymize(df, 3, columns=KEY, missing="keep")
    assert out["region"].isna().sum() == df["region"].isna().sum()
    z, zm, costs = linkage_tables(df, out, columns=KEY)
    d = z.shape[1]
    acc, seen = np.zeros((300, 300)), np.zeros((300, 300))
    for j in range(d):
        t = z[:, j, None] - zm[None, :, j]
        ok = ~np.isnan(t)
        acc += np.where(ok, t * t if j < d - len(costs) else (t != 0) * 1.0, 0.0)
        seen += ok
    partial = acc * d / seen
    nearest = ma.risk.record_linkage(df, out, columns=KEY)
    ties = partial == partial.min(axis=1, keepdims=True)
    np.testing.assert_array_equal(nearest.tie_counts, ties.sum(axis=1))
    # the matching is one of minimum total distance (several may tie)
    rows, cols = linear_sum_assignment(np.sqrt(partial))
    glob = ma.risk.record_linkage(df, out, "global", columns=KEY)
    assert glob.matches is not None and sorted(glob.matches) == list(range(300))
    total = np.sqrt(partial)[np.arange(300), glob.matches].sum()
    assert total == pytest.approx(np.sqrt(partial)[rows, cols].sum(), rel=1e-12)
    assert glob.expected_correct == np.count_nonzero(glob.matches == np.arange(300))


def test_assess_the_report_and_the_cli_link_over_the_whole_key(tmp_path: Any) -> None:
    from microagg.cli import main

    df = frame(800, seed=4)
    out = ma.anonymize(df, 5, columns=KEY)
    whole = ma.risk.record_linkage(df, out, columns=KEY).rate
    a = ma.assess(df, out, columns=KEY, k=5)
    assert a.record_linkage.rate == whole and a.to_dict()["record_linkage_rate"] == whole
    # assess's array form: the categories given as (original, released) pairs, read as nominal
    key = ["age", "hours", "sex", "region"]
    out = ma.anonymize(df, 5, columns=key)
    arrays = ma.assess(df[["age", "hours"]].to_numpy(float), out[["age", "hours"]].to_numpy(float),
                       categorical={c: (df[c], out[c]) for c in ["sex", "region"]})
    nominal = ma.risk.record_linkage(df, out, columns=key)
    assert arrays.record_linkage.rate == nominal.rate
    df.to_csv(tmp_path / "o.csv", index=False)
    out.to_csv(tmp_path / "r.csv", index=False)
    assert main(["assess", str(tmp_path / "o.csv"), str(tmp_path / "r.csv"), "--columns", ",".join(key),
                 "-o", str(tmp_path / "m.csv")]) == 0
    row = pd.read_csv(tmp_path / "m.csv").iloc[0]
    assert row["record_linkage_rate"] == pytest.approx(nominal.rate, rel=1e-12)


def test_bad_linkage_inputs_are_clear_errors() -> None:
    df = frame(50, seed=5)
    out = ma.anonymize(df, 3, columns=KEY)
    with pytest.raises(TypeError, match="columns= names the key columns of DataFrames"):
        ma.risk.record_linkage(df[["age"]].to_numpy(float), out[["age"]].to_numpy(float), columns=["age"])
    with pytest.raises(ValueError, match="Xm lacks the column"):
        ma.risk.record_linkage(df, out.drop(columns="region"), columns=KEY)
    with pytest.raises(ValueError, match="Xm"):
        ma.risk.record_linkage(df, out.iloc[:10], columns=KEY)
    with pytest.raises(ValueError, match="method must be"):
        ma.risk.record_linkage(df, out, "fuzzy", columns=KEY)
    with pytest.raises(ValueError, match="level codes"):
        _core.link_nearest_arrays(np.zeros((2, 2)), np.full((2, 2), 0.5), n_jobs=1, mismatch_costs=[1.0])
