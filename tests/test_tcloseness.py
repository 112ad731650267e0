"""t-closeness through microaggregation: every class has at least k records and, by an EMD
written here from its definition (loops over values, not the library's), is within t;
errors for bad t, kinds and missing confidential values; strata keep the file as reference;
distributions count records whatever the weights; anonymize and risk.t_closeness on frames."""

from __future__ import annotations

import numpy as np
import pytest

import microagg as ma


def emd(values: np.ndarray, member: np.ndarray, ordered: bool) -> float:
    """EMD between the distribution of values[member] and of all values (counting records)."""
    distinct = sorted(set(values.tolist()))

    def share(mask: np.ndarray) -> list[float]:
        total = mask.sum()
        return [(mask & (values == v)).sum() / total for v in distinct]

    p, q = share(member), share(np.ones(len(values), dtype=bool))
    if not ordered:
        return 0.5 * sum(abs(a - b) for a, b in zip(p, q))
    if len(distinct) == 1:
        return 0.0
    acc, total = 0.0, 0.0
    for a, b in zip(p[:-1], q[:-1]):
        acc += a - b
        total += abs(acc)
    return total / (len(distinct) - 1)


def check(res: ma.TCloseResult, values: np.ndarray, k: int, t: float, ordered: bool) -> float:
    assert res.group_sizes.min() >= k
    worst = max(emd(values, res.labels == g, ordered) for g in range(res.n_groups))
    assert worst <= t + 1e-9
    return worst


@pytest.mark.parametrize("t_method", ["merge", "k-first", "t-first", "auto"])
@pytest.mark.parametrize("ordered", [True, False])
@pytest.mark.parametrize("max_part", [None, 60])
def test_classes_are_k_anonymous_and_t_close(t_method: str, ordered: bool, max_part: int | None) -> None:
    rng = np.random.default_rng(3)
    X = rng.normal(size=(300, 3))
    # Correlated with the first key, with ties: the hard case for a plain partition (and for
    # parts cut along that key, which stray from the file and must be joined).
    s = np.round(X[:, 0] * 2 + rng.normal(size=300) * 0.3).astype(int)
    kinds = "numerical" if ordered else "nominal"
    for k, t in [(3, 0.1), (5, 0.25)]:
        res = ma.t_close_microaggregate(X, k, sensitive=s, t=t, t_method=t_method, kinds=kinds, max_part=max_part)
        worst = check(res, s, k, t, ordered)
        assert res.max_emd["sensitive"] == pytest.approx(worst, abs=1e-9)
        assert set(res.chosen) <= {"merge", "k-first", "t-first"}
        if t_method != "auto":
            assert set(res.chosen) == {t_method}


def test_auto_keeps_the_least_sse() -> None:
    rng = np.random.default_rng(0)
    X = rng.normal(size=(200, 2))
    s = (X[:, 1] > 0.5).astype(int)
    il = {m: ma.t_close_microaggregate(X, 4, sensitive=s, t=0.1, t_method=m).information_loss for m in ma.T_METHODS}
    assert il["auto"] == pytest.approx(min(il["merge"], il["k-first"], il["t-first"]))


def test_t_like_k_counts_records_whatever_the_weights() -> None:
    # An attacker sees released records: P and Q count them, weights change released values
    # only (docs/workflow.md). Weighted distributions were the old, wrong, reading.
    rng = np.random.default_rng(1)
    X = rng.normal(size=(120, 2))
    s = rng.integers(0, 3, size=120)
    w = rng.uniform(0.0, 3.0, size=120)
    res = ma.t_close_microaggregate(X, 3, sensitive=s, t=0.15, weights=w, kinds="nominal")
    worst = check(res, s, 3, 0.15, False)
    assert res.max_emd["sensitive"] == pytest.approx(worst, abs=1e-9)
    measured = ma.risk.t_closeness(res.aggregated, s, weights=w, kinds="nominal")["sensitive"]
    assert measured == pytest.approx(worst, abs=1e-9)
    assert measured == ma.risk.t_closeness(res.aggregated, s, kinds="nominal")["sensitive"]
    unweighted = ma.t_close_microaggregate(X, 3, sensitive=s, t=0.15, kinds="nominal")
    assert not np.allclose(res.aggregated, unweighted.aggregated)  # the weights weighted the release


def test_strata_use_the_whole_file_and_an_infeasible_stratum_is_named() -> None:
    rng = np.random.default_rng(2)
    X = rng.normal(size=(200, 2))
    region = np.where(np.arange(200) < 100, "north", "south")
    s = rng.integers(0, 2, size=200)
    res = ma.t_close_microaggregate(X, 3, sensitive=s, t=0.2, by=region, kinds="nominal")
    check(res, s, 3, 0.2, False)
    assert len(res.chosen) == 2
    assert all(len(set(region[res.labels == g])) == 1 for g in range(res.n_groups))
    skewed = np.where(region == "north", 0, s)  # north only holds value 0
    with pytest.raises(ValueError, match="stratum 'north'"):
        ma.t_close_microaggregate(X, 3, sensitive=skewed, t=0.2, by=region, kinds="nominal")


def test_several_sensitive_attributes_are_each_t_close() -> None:
    rng = np.random.default_rng(4)
    X = rng.normal(size=(150, 2))
    a, b = np.round(X[:, 0] * 3).astype(int), (X[:, 1] > 0).astype(int)
    res = ma.t_close_microaggregate(X, 3, sensitive={"a": a, "b": b}, t=0.15, kinds={"b": "nominal"})
    check(res, a, 3, 0.15, True)
    check(res, b, 3, 0.15, False)
    assert set(res.max_emd) == {"a", "b"}


@pytest.mark.parametrize("t", [0, -0.5, 1.01, float("nan")])
def test_t_outside_the_unit_interval_is_a_value_error(t: float) -> None:
    with pytest.raises(ValueError, match="t must be in"):
        ma.t_close_microaggregate(np.eye(4), 2, sensitive=[0, 1, 0, 1], t=t)


def test_bad_inputs_are_clear_errors() -> None:
    X = np.arange(12.0).reshape(6, 2)
    with pytest.raises(ValueError, match="missing"):
        ma.t_close_microaggregate(X, 2, sensitive=[1.0, np.nan, 2, 3, 4, 5], t=0.5)
    with pytest.raises(ValueError, match="missing"):
        ma.t_close_microaggregate(X, 2, sensitive=np.array(["a", None, "b", "a", "b", "a"], dtype=object), t=0.5)
    with pytest.raises(ValueError, match="t_method"):
        ma.t_close_microaggregate(X, 2, sensitive=[0, 1, 0, 1, 0, 1], t=0.5, t_method="fast")
    with pytest.raises(ValueError, match="kinds"):
        ma.t_close_microaggregate(X, 2, sensitive=[0, 1, 0, 1, 0, 1], t=0.5, kinds="ordinal")
    with pytest.raises(ValueError, match="3 values for 6"):
        ma.t_close_microaggregate(X, 2, sensitive=[0, 1, 0], t=0.5)
    with pytest.raises(TypeError, match="dtype does not apply"):
        ma.t_close_microaggregate(X, 2, sensitive=[0, 1, 0, 1, 0, 1], t=0.5, dtype="float32")
    with pytest.raises(TypeError, match="t must be"):
        ma.t_close_microaggregate(X, 2, sensitive=[0, 1, 0, 1, 0, 1], t="0.5")


def test_anonymize_keeps_the_sensitive_column_and_is_t_close() -> None:
    pd = pytest.importorskip("pandas")
    rng = np.random.default_rng(5)
    df = pd.DataFrame(rng.normal(size=(200, 2)), columns=["age", "hours"])
    df["income"] = np.where(df["age"] + rng.normal(size=200) * 0.5 > 0.8, ">50K", "<=50K")
    out = ma.anonymize(df, 4, sensitive="income", t=0.1)
    assert out["income"].tolist() == df["income"].tolist()
    assert ma.risk.t_closeness(out, "income") == pytest.approx(
        {"income": max(emd(df["income"].to_numpy(), (out[["age", "hours"]] == row).all(axis=1).to_numpy(), False)
                       for row in out[["age", "hours"]].drop_duplicates().to_numpy())}
    )
    assert ma.risk.t_closeness(out, "income")["income"] <= 0.1 + 1e-9
    assert ma.risk.min_group_size(out[["age", "hours"]].to_numpy()) >= 4
    with pytest.raises(ValueError, match="both sensitive"):
        ma.anonymize(df, 4, sensitive="income")
    # the confidential columns' role follows the rules of every other role (microagg._columns)
    df["w"] = 1.0
    for kwargs, message in [
        (dict(sensitive="nope"), r"sensitive: unknown column\(s\): nope; the columns of df are: age, hours, income, w"),
        (dict(sensitive=["income", "income"]), "sensitive must not repeat a column"),
        (dict(sensitive="w", weights="w"), "column 'w' is both confidential and in weights"),
        (dict(sensitive="income", columns=["age", "income"]), "column 'income' is both a quasi-identifier"),
    ]:
        with pytest.raises(ValueError, match=message):
            ma.anonymize(df, 4, t=0.2, **kwargs)


def test_assess_and_the_report_show_the_largest_emd() -> None:
    pd = pytest.importorskip("pandas")
    from report_checks import check_cell, parse, resolve

    census = ma.datasets.load_census()
    df = pd.DataFrame(census[:, :4], columns=["a", "b", "c", "s"])
    out = ma.anonymize(df, 5, columns=["a", "b", "c"], sensitive="s", t=0.2)
    a = ma.assess(df, out, k=5, sensitive="s")
    assert a.attributes == ("a", "b", "c")
    assert a.max_emd == pytest.approx(ma.risk.t_closeness(out, "s", columns=["a", "b", "c"]))
    assert a.max_emd["s"] <= 0.2 + 1e-9
    d = a.to_dict()
    cells = {key: (value, shown) for key, value, shown in parse(a.to_html()).cells}
    assert "max_emd.s" in cells
    check_cell("max_emd.s", *cells["max_emd.s"], resolve("max_emd.s", d))
    assert ma.assess(df[["a", "b", "c"]], out[["a", "b", "c"]]).max_emd is None
