"""DataFrames of pandas, polars and pyarrow (and any Arrow PyCapsule table) in microaggregate
and anonymize; anonymize returns the kind of frame it was given."""

from __future__ import annotations

from typing import Any, Callable

import numpy as np
import pytest
from conftest import optional

import microagg as ma
from microagg import _frames

N = 40


def _columns() -> dict[str, Any]:
    rng = np.random.default_rng(8)
    return {
        "name": [f"p{i}" for i in range(N)],
        "age": rng.integers(18, 90, N),
        "income": rng.normal(3e4, 1e4, N),
        "flag": rng.integers(0, 2, N).astype(bool),
    }


class ArrowStream:
    """A table known only through the Arrow PyCapsule interface (like a DuckDB result)."""

    def __init__(self, table: Any) -> None:
        self._table = table

    def __arrow_c_stream__(self, requested_schema: Any = None) -> Any:
        return self._table.__arrow_c_stream__(requested_schema)


def _pandas(data: dict[str, Any]) -> Any:
    return optional("pandas").DataFrame(data)


def _polars(data: dict[str, Any]) -> Any:
    return optional("polars").DataFrame(data)


def _arrow(data: dict[str, Any]) -> Any:
    return optional("pyarrow").table(data)


def _stream(data: dict[str, Any]) -> Any:
    return ArrowStream(_arrow(data))


MAKERS: dict[str, Callable[[dict[str, Any]], Any]] = {
    "pandas": _pandas,
    "polars": _polars,
    "pyarrow": _arrow,
    "stream": _stream,
}
QI = ["age", "income"]


def _to_numpy(frame: Any, columns: list[str]) -> np.ndarray:
    return np.column_stack([_frames.column(frame, c) for c in columns]).astype(np.float64)


@pytest.mark.parametrize("kind", MAKERS)
def test_microaggregate_reads_numeric_frames(kind: str) -> None:
    optional("narwhals")
    data = {c: _columns()[c] for c in QI}
    X = np.column_stack(list(data.values())).astype(np.float64)
    want = ma.microaggregate(X, 4)
    res = ma.microaggregate(MAKERS[kind](data), 4)
    np.testing.assert_array_equal(res.labels, want.labels)
    np.testing.assert_array_equal(res.centroids, want.centroids)
    assert ma.information_loss(MAKERS[kind](data), res.labels) == pytest.approx(want.information_loss)
    assert ma.is_k_anonymous(MAKERS[kind]({c: res.aggregated[:, j] for j, c in enumerate(QI)}), 4)


@pytest.mark.parametrize("kind", MAKERS)
def test_anonymize_returns_the_same_kind_of_frame(kind: str) -> None:
    optional("narwhals")
    df = MAKERS[kind](_columns())
    out = ma.anonymize(df, k=5, columns=QI)
    expected_type = type(_arrow(_columns())) if kind == "stream" else type(df)
    assert type(out) is expected_type
    original = _columns()
    assert list(_frames.as_frame(out).columns) == list(original)  # type: ignore[union-attr]
    assert list(_frames.column(out, "name")) == original["name"]  # untouched, strings too
    assert list(_frames.column(out, "flag")) == list(original["flag"])
    released = _to_numpy(out, QI)
    assert ma.is_k_anonymous(released, 5)
    X = np.column_stack([original[c] for c in QI]).astype(np.float64)
    np.testing.assert_allclose(released, ma.microaggregate(X, 5).aggregated)
    auto = ma.anonymize(MAKERS[kind](_columns()), k=5)  # numeric, non-boolean columns by default
    np.testing.assert_array_equal(_to_numpy(auto, QI), released)


def test_anonymize_keeps_the_pandas_index_and_forwards_options() -> None:
    pd = optional("pandas")
    df = _pandas(_columns()).set_index(pd.Index(np.arange(N) * 3 + 7))
    out = ma.anonymize(df, k=4, columns=["income"], method="mondrian-v", standardize=False, n_jobs=2)
    assert (out.index == df.index).all()
    pd.testing.assert_series_equal(out["age"], df["age"])
    want = ma.microaggregate(df[["income"]], 4, "mondrian-v", standardize=False)
    np.testing.assert_array_equal(out["income"].to_numpy(), want.aggregated[:, 0])
    with pytest.raises(ValueError, match="method 'mondrian-v' takes no parameter, got 'rho'"):
        ma.anonymize(df, k=4, method="mondrian-v", rho=0.5)


def test_polars_input_no_longer_fails_internally() -> None:
    pl = optional("polars")
    optional("narwhals")
    df = pl.DataFrame({"a": np.arange(12.0), "b": np.arange(12) % 5})
    assert ma.microaggregate(df, 3).n_groups == 4  # was AttributeError: 'list' ... 'items'
    with pytest.raises(ValueError, match="NaN or infinity"):
        ma.microaggregate(pl.DataFrame({"a": [1.0, None, 3.0, 4.0]}), 2)


@pytest.mark.parametrize("kind", ["pandas", "polars", "pyarrow"])
def test_non_numeric_columns_are_named(kind: str) -> None:
    optional("narwhals")
    df = MAKERS[kind](_columns())
    with pytest.raises(TypeError, match="X has non-numeric columns: name"):
        ma.microaggregate(df, 3)
    released = ma.anonymize(df, k=3, columns=["age", "flag"])  # booleans: a nominal key column
    assert ma.is_k_anonymous(released, 3, columns=["age", "flag"])
    with pytest.raises(ValueError, match="column 'name' looks like an identifier"):  # a text id
        ma.anonymize(df, k=3, columns=["age", "name"])
    with pytest.raises(ValueError, match="unknown column\\(s\\): zz; the columns of df are: name, age"):
        ma.anonymize(df, k=3, columns=["zz"])
    with pytest.raises(ValueError, match="unknown column\\(s\\): zz"):
        _frames.column(df, "zz")


def test_unsupported_inputs_name_their_type() -> None:
    pl = optional("polars")
    optional("narwhals")
    lazy = pl.DataFrame({"a": [1.0, 2.0]}).lazy()
    with pytest.raises(TypeError, match="unsupported type polars.*LazyFrame \\(a lazy frame: collect it first\\)"):
        ma.microaggregate(lazy, 2)
    with pytest.raises(TypeError, match="anonymize expects a DataFrame .* got numpy.ndarray"):
        ma.anonymize(np.zeros((4, 2)), k=2)
    with pytest.raises(TypeError, match="anonymize expects a DataFrame .* got builtins.dict"):
        ma.anonymize({"a": [1.0, 2.0]}, k=2)
    with pytest.raises(TypeError, match="df must be a DataFrame to name columns, got numpy.ndarray"):
        _frames.column(np.zeros((4, 2)), "a")


def test_sparse_input_gets_a_clear_error() -> None:
    sparse = optional("scipy.sparse")
    with pytest.raises(TypeError, match="X is a sparse matrix .*pass X.toarray\\(\\)"):
        ma.microaggregate(sparse.csr_matrix(np.eye(4)), 2)


def test_duplicate_column_names_are_refused_by_name() -> None:
    """pandas and pyarrow allow a name twice; the release would aggregate one copy only."""
    pd, pa = optional("pandas"), optional("pyarrow")
    df = pd.DataFrame([[30, 31, "a"], [40, 41, "b"]] * 10, columns=["age", "age", "city"])
    with pytest.raises(ValueError, match=r"df has duplicate column names: 'age' \(2 times\)"):
        ma.anonymize(df, 2, columns=["age"])
    table = pa.table([[1.0, 2.0] * 10, [3.0, 4.0] * 10], names=["x", "x"])
    with pytest.raises(ValueError, match=r"duplicate column names: 'x' \(2 times\)"):
        ma.microaggregate(table, 2)
