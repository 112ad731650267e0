"""Mixed quasi-identifiers through microagg.anonymize: k-anonymity over the whole key with
any types, levels, weights, missing cells and strata; the release rules (modes, medians,
medoids) and the frame kinds."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from conftest import optional
from hypothesis import given, settings
from hypothesis import strategies as st

import microagg as ma
from microagg._mixed import workflow as _mixed

pd = optional("pandas")


def _wildcard_class_sizes(rows: list[tuple[Any, ...]]) -> list[int]:
    """For each row, how many rows agree with it wherever both are observed (None: missing)."""

    def agree(a: tuple[Any, ...], b: tuple[Any, ...]) -> bool:
        return all(x is None or y is None or x == y for x, y in zip(a, b))

    return [sum(agree(r, s) for s in rows) for r in rows]


def _cells(frame: Any, columns: list[str]) -> list[tuple[Any, ...]]:
    """Rows of the key with missing cells as None (floats rounded: group values are means)."""
    out = []
    for row in frame[columns].itertuples(index=False):
        out.append(tuple(None if pd.isna(v) else round(v, 9) if isinstance(v, float) else v for v in row))
    return out


@st.composite
def mixed_frames(draw: st.DrawFn) -> tuple[Any, dict[str, Any]]:
    n = draw(st.integers(6, 45))
    seed = draw(st.integers(0, 2**32 - 1))
    rng = np.random.default_rng(seed)
    kinds = draw(st.lists(st.sampled_from(["numeric", "nominal", "ordinal", "codes"]), min_size=1, max_size=4))
    data: dict[str, Any] = {}
    ordinal: dict[str, list[str]] = {}
    categorical: list[str] = []
    for j, kind in enumerate(kinds):
        name = f"{kind}{j}"
        levels = draw(st.integers(1, min(5, n // 2)))  # at most n/2 singletons: never an identifier
        if kind == "numeric":
            data[name] = rng.normal(size=n) * 10
        elif kind == "codes":
            data[name] = rng.integers(0, levels, n)
            categorical.append(name)
        else:
            names = [f"L{v}" for v in rng.permutation(levels)]
            data[name] = np.array(names, dtype=object)[rng.integers(0, levels, n)]
            if kind == "ordinal":
                ordinal[name] = names
    missing = draw(st.sampled_from(["error", "fill", "keep"]))
    if missing != "error":
        for name in data:
            col = data[name].astype(np.float64 if name.startswith(("numeric", "codes")) else object)
            holes = rng.random(n) < 0.2
            holes[0] = False  # every column keeps an observed value
            col[holes] = np.nan if col.dtype == np.float64 else None
            data[name] = col
    frame = pd.DataFrame(data)
    k = draw(st.integers(2, 4))
    options: dict[str, Any] = {
        "k": k,
        "columns": list(data),
        "categorical": categorical,
        "ordinal": ordinal,
        "missing": missing,
        "categorical_release": draw(st.sampled_from(["mode", "medoid"])),
        "attribute_weights": {c: draw(st.floats(0.2, 5)) for c in data if draw(st.booleans())},
        "method": draw(st.sampled_from(["mdav", "mondrian-v"] if missing == "error" else ["mdav"])),
    }
    if draw(st.booleans()):
        frame["w"] = rng.integers(0, 4, n).astype(np.float64)
        options["weights"] = "w"
    if draw(st.booleans()) and n >= 4 * k:
        options["max_part"] = draw(st.integers(2 * k, n))
    if draw(st.booleans()):  # strata, some perhaps below k and merged
        frame["s"] = rng.choice(["a", "b", "c"], n, p=[0.6, 0.3, 0.1])
        options["by"] = "s"
        options["small_strata"] = "merge"
    return frame, options


@settings(max_examples=120, deadline=None)
@given(mixed_frames())
def test_every_release_is_k_anonymous_over_the_mixed_key(case: tuple[Any, dict[str, Any]]) -> None:
    frame, options = case
    out = ma.anonymize(frame, **options)
    key = options["columns"]
    merged = "by" in options and frame["s"].value_counts().min() < options["k"]
    strata = ["s"] if "by" in options and not merged else []  # merged strata: over the file
    rows = _cells(out, strata + key)
    if options["missing"] == "keep":
        sizes = _wildcard_class_sizes(rows)
        assert min(sizes) >= options["k"]
    else:
        assert out[key].notna().all().all()
        assert out.groupby(strata + key, dropna=False).size().min() >= options["k"]
    for c in key:  # categories are only ever values of the column
        if c.startswith(("nominal", "ordinal")):
            assert set(out[c].dropna()) <= set(frame[c].dropna())
    if options["missing"] == "keep":  # missing cells stay missing, observed ones observed
        np.testing.assert_array_equal(out[key].isna().to_numpy(), frame[key].isna().to_numpy())


def _groups(n: int, seed: int = 0) -> Any:
    rng = np.random.default_rng(seed)
    return pd.DataFrame(
        {
            "age": rng.integers(18, 90, n).astype(float),
            "income": rng.lognormal(10, 1, n),
            "sex": rng.choice(["F", "M"], n),
            "region": rng.choice(["north", "south", "east", "west", "centre"], n, p=[0.4, 0.3, 0.1, 0.1, 0.1]),
            "edu": rng.choice(["HS", "BSc", "MSc", "PhD"], n, p=[0.4, 0.3, 0.2, 0.1]),
        }
    )


EDU = ["HS", "BSc", "MSc", "PhD"]


def test_the_default_release_is_the_plain_recipe() -> None:
    """Embedding by hand (z-scores, ranks, one-hot / sqrt 2), MDAV, means, modes and medians."""
    df = _groups(300)
    out = ma.anonymize(df, 5, columns=["age", "income", "sex", "region", "edu"], ordinal={"edu": EDU})
    num = df[["age", "income"]].to_numpy()
    rank = df["edu"].map({v: i for i, v in enumerate(EDU)}).to_numpy(float)[:, None]
    onehot = pd.get_dummies(df[["sex", "region"]]).to_numpy(float) / np.sqrt(2)
    z = np.hstack([(num - num.mean(0)) / num.std(0), (rank - rank.mean()) / rank.std(), onehot])
    res = ma.microaggregate(z, 5, standardize=False)
    np.testing.assert_allclose(out[["age", "income"]].to_numpy(), pd.DataFrame(num).groupby(res.labels).transform("mean").to_numpy())
    for c in ["sex", "region"]:
        mode = df.groupby(res.labels)[c].agg(lambda s: sorted(s.value_counts()[lambda v: v == v.max()].index)[0])
        assert (out[c].to_numpy() == mode.to_numpy()[res.labels]).all(), c
    median = pd.Series(rank[:, 0]).groupby(res.labels).quantile(0.5, interpolation="lower")
    assert (out["edu"].map(EDU.index).to_numpy() == median.to_numpy()[res.labels]).all()


def test_medoid_releases_only_combinations_of_the_original() -> None:
    df = _groups(400, seed=3)
    cats = ["sex", "region", "edu"]
    out = ma.anonymize(df, 6, columns=["age", "income", *cats], categorical_release="medoid")
    existing = set(map(tuple, df[cats].to_numpy().tolist()))
    released = set(map(tuple, out[cats].to_numpy().tolist()))
    assert released <= existing
    assert out.groupby(["age", "income", *cats]).size().min() >= 6


def test_ordinal_levels_are_never_invented_and_follow_the_declared_order() -> None:
    df = _groups(200, seed=5)
    values, res = _mixed.release(
        {"age": df["age"].to_numpy(), "edu": df["edu"].to_numpy()}, {"edu": "ordinal"}, {"edu": EDU}, k=4
    )
    for g in range(res.n_groups):
        members = res.labels == g
        assert set(values["edu"][members]) <= set(df["edu"][members])
    reversed_order = _mixed.release(
        {"age": df["age"].to_numpy(), "edu": df["edu"].to_numpy()}, {"edu": "ordinal"}, {"edu": EDU[::-1]}, k=4
    )[0]["edu"]
    assert (reversed_order != values["edu"]).any()  # the order is what the median uses


def test_attribute_weights_trade_numeric_loss_against_categories() -> None:
    df = _groups(600, seed=7)
    key = ["age", "income", "sex", "region"]

    def measures(weight: float) -> tuple[float, float]:
        out = ma.anonymize(df, 5, columns=key, attribute_weights={"sex": weight, "region": weight})
        il = ma.utility.information_loss(df[["age", "income"]].to_numpy(), out[["age", "income"]].to_numpy())
        return il, float((out[["sex", "region"]].to_numpy() != df[["sex", "region"]].to_numpy()).mean())

    (il_low, changed_low), (il_high, changed_high) = measures(0.3), measures(4.0)
    assert il_low < il_high
    assert changed_high < changed_low


@pytest.mark.parametrize("kind", ["pandas", "polars", "pyarrow"])
def test_frames_come_back_as_they_came_with_their_dtypes(kind: str) -> None:
    df = _groups(120, seed=2)
    df["edu"] = pd.Categorical(df["edu"], categories=EDU, ordered=True)
    df["region"] = df["region"].astype("category")
    df["code"] = np.random.default_rng(1).integers(1, 4, 120)
    key = ["age", "sex", "region", "edu", "code"]
    want = ma.anonymize(df, 4, columns=key, categorical=["code"])
    assert want["edu"].dtype == df["edu"].dtype and want["region"].dtype.name == "category"
    assert want["code"].dtype == df["code"].dtype
    if kind == "pandas":
        return
    if kind == "polars":
        pl = optional("polars")
        frame = pl.DataFrame(
            {c: df[c].astype(str).to_numpy() if c in ("sex", "region") else df[c].to_numpy() for c in key if c != "edu"}
        ).with_columns(pl.Series("edu", df["edu"].astype(str).to_numpy(), dtype=pl.Enum(EDU)))
        out = ma.anonymize(frame, 4, columns=key, categorical=["code"])
        assert isinstance(out, pl.DataFrame) and out.schema["edu"] == pl.Enum(EDU)
        got = out.to_pandas()
    else:
        pa = optional("pyarrow")
        table = pa.Table.from_pandas(df[key].assign(edu=df["edu"].astype(str)), preserve_index=False)
        table = table.set_column(2, "region", table.column("region").dictionary_encode())
        out = ma.anonymize(table, 4, columns=key, categorical=["code"], ordinal={"edu": EDU})
        assert isinstance(out, pa.Table) and pa.types.is_dictionary(out.schema.field("region").type)
        got = out.to_pandas()
    for c in key:
        np.testing.assert_array_equal(np.asarray(got[c], dtype=object), np.asarray(want[c], dtype=object), err_msg=c)


def test_is_k_anonymous_reads_a_mixed_key_from_a_frame() -> None:
    df = _groups(100, seed=4)
    key = ["age", "sex", "region"]
    out = ma.anonymize(df, 5, columns=key, by="edu", small_strata="merge")
    assert ma.is_k_anonymous(out, 5, columns=key, by="edu")
    assert not ma.is_k_anonymous(df, 2, columns=key)
    assert ma.is_k_anonymous(out, 5, columns=key + ["edu"]) == bool(out.groupby(key + ["edu"]).size().min() >= 5)
    with pytest.raises(TypeError, match="columns= names the key columns of a DataFrame"):
        ma.is_k_anonymous(np.zeros((4, 2)), 2, columns=["a"])


def test_categorical_changes_counts_cells_and_total_variation() -> None:
    before = np.array(["a", "a", "b", None, "c"], dtype=object)
    after = np.array(["a", "b", "b", "a", "a"], dtype=object)
    out = ma.utility.categorical_changes(before, after)
    assert out.cells_changed == pytest.approx(2 / 4)  # the missing cell is left out
    # shares before: a 1/2, b 1/4, c 1/4; after: a 3/5, b 2/5
    assert out.total_variation == pytest.approx(0.5 * (0.1 + 0.15 + 0.25))
    assert out.levels == ("a", "b", "c")
    assert out.original_frequencies.tolist() == [2, 1, 1] and out.released_frequencies.tolist() == [3, 2, 0]
    weighted = ma.utility.categorical_changes(before, after, weights=[1, 3, 1, 1, 0])
    assert weighted.cells_changed == pytest.approx(3 / 5)
    assert weighted.original_frequencies.tolist() == [4, 1, 0] and weighted.released_frequencies.tolist() == [2, 4, 0]
    assert ma.utility.categorical_changes([None, np.nan], [None, None]).levels == ()
    assert ma.utility.categorical_changes(before, before).total_variation == 0.0
    with pytest.raises(ValueError, match="same length"):
        ma.utility.categorical_changes(before, after[:3])


def test_bad_mixed_arguments_are_named() -> None:
    df = _groups(40)
    key = ["age", "sex", "edu"]
    with pytest.raises(ValueError, match="attribute_weights: the weight of 'sex' must be finite and positive"):
        ma.anonymize(df, 3, columns=key, attribute_weights={"sex": 0})
    with pytest.raises(ValueError, match="attribute_weights: 'zz' is not a key column"):
        ma.anonymize(df, 3, columns=key, attribute_weights={"zz": 1})
    with pytest.raises(ValueError, match="categorical_release must be 'mode' or 'medoid'"):
        ma.anonymize(df, 3, columns=key, categorical_release="mean")
    with pytest.raises(ValueError, match="ordinal: column 'edu' has the value 'PhD', which is not one of its levels"):
        ma.anonymize(df, 3, columns=key, ordinal={"edu": ["HS", "BSc", "MSc"]})
    with pytest.raises(ValueError, match="ordinal: column\\(s\\) not in the key: region"):
        ma.anonymize(df, 3, columns=key, ordinal={"region": ["a"]})
    with pytest.raises(ValueError, match="standardize cannot be given with a mixed key"):
        ma.anonymize(df, 3, columns=key, standardize=False)
    holes = df.assign(sex=df["sex"].where(np.arange(40) % 7 != 0, None))
    with pytest.raises(ValueError, match="missing cells in the key: sex \\(6\\); pass missing='fill' or missing='keep'"):
        ma.anonymize(holes, 3, columns=key)
    with pytest.raises(TypeError, match="microagg.anonymize"):
        ma.microaggregate(np.array([["a", "b"], ["c", "d"]]), 2)
    dates = df.assign(day=pd.Timestamp("2024-01-01") + pd.to_timedelta(np.arange(40) % 10, unit="D"))
    with pytest.raises(TypeError, match="column 'day' has dtype Datetime.*name it in categorical="):
        ma.anonymize(dates, 3, columns=["age", "day"])
    assert ma.anonymize(dates, 4, columns=["age", "day"], categorical=["day"])["day"].dtype == dates["day"].dtype


def test_flags_of_the_command_line_are_parsed() -> None:
    from microagg._mixed.flags import parse_attribute_weight, parse_ordinal

    assert parse_ordinal("education = HS<BSc< MSc") == ("education", ["HS", "BSc", "MSc"])
    assert parse_attribute_weight("sex=2") == ("sex", 2.0)
    for bad in ["education", "education=HS<<MSc", "=HS<MSc", "e=HS<HS"]:
        with pytest.raises(ValueError, match="--ordinal"):
            parse_ordinal(bad)
    for bad in ["sex=0", "sex=x", "sex", "sex=inf"]:
        with pytest.raises(ValueError, match="--attribute-weight"):
            parse_attribute_weight(bad)


def test_a_group_without_an_observed_category_takes_its_strata_value_whole() -> None:
    """Rows 0-3 form a group with no observed ``c``; stratum b (rows 3-5, below k) merged
    into a, so the group holds records of both: it releases stratum a's mode (its first
    record's), in every row."""
    x = np.repeat([0.0, 10.0, 20.0], 4)
    c = np.array([None] * 4 + ["z", "z"] + ["y"] * 6, dtype=object)
    strata = np.array(["a", "a", "a", "b", "b", "b"] + ["a"] * 6)
    values, res = _mixed.release(
        {"x": x, "c": c}, {"c": "nominal"}, k=4, by=strata, small_strata="merge", missing="fill"
    )
    assert len(res.merges) == 1 and res.labels[0] == res.labels[3]
    assert list(values["c"][:4]) == ["y"] * 4


def test_a_numeric_key_through_the_embedding_is_plain_microaggregation() -> None:
    """Unit attribute weights on a numeric key: the embedding is the z-scored data, so the
    groups and the released values are ``microaggregate``'s; a weight stretches its column."""
    df = _groups(200, seed=9)[["age", "income"]]
    plain = ma.anonymize(df, 5, aggregation="median")
    embedded = ma.anonymize(df, 5, attribute_weights={"age": 1.0}, aggregation="median")
    np.testing.assert_allclose(embedded.to_numpy(), plain.to_numpy())
    stretched = ma.anonymize(df, 5, attribute_weights={"age": 3.0})
    z = ((df - df.mean()) / df.std(ddof=0)).to_numpy() * [3.0, 1.0]
    want = ma.microaggregate(z, 5, standardize=False)
    np.testing.assert_allclose(stretched.to_numpy(), df.groupby(want.labels).transform("mean").to_numpy())


def test_a_key_column_of_lists_is_named() -> None:
    df = pd.DataFrame({"age": np.arange(20.0), "tags": [[i % 3] for i in range(20)]})
    for ordinal in ({}, {"tags": [0, 1, 2]}):
        with pytest.raises(TypeError, match="column 'tags' holds values that cannot be categories"):
            ma.anonymize(df, 2, columns=["age", "tags"], ordinal=ordinal)
