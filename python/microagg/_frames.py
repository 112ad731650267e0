"""DataFrames of any library, read and written through narwhals (docs/api.md#dataframes).

pandas, polars, pyarrow (and every other eager frame narwhals knows: modin, cuDF, ...) are
handled natively; any other object with the Arrow PyCapsule stream interface
(``__arrow_c_stream__``, e.g. a DuckDB result) is read as a pyarrow Table (or a polars
DataFrame when pyarrow is missing). The API needs three things of a frame, one helper each:
its numeric columns as a 2-D float array (:func:`numeric_matrix`), one column as a 1-D NumPy
array of its own dtype, strings included (:func:`column`), and a copy with some columns
replaced, of the same kind as the input (:func:`replace_columns`).

narwhals is imported only when a frame is passed, never at package import.
"""

from __future__ import annotations

import importlib.util
from typing import TYPE_CHECKING, Any, Optional, Sequence, cast

import numpy as np
import numpy.typing as npt

if TYPE_CHECKING:
    import narwhals.stable.v2 as nw

_SUPPORTED = (
    "a NumPy array, a pandas or polars DataFrame, a pyarrow.Table or another object with the "
    "Arrow PyCapsule interface (__arrow_c_stream__)"
)


def _type_name(obj: Any) -> str:
    cls = type(obj)
    return f"{cls.__module__}.{cls.__qualname__}"


def _looks_like_frame(obj: Any) -> bool:
    """A table-like object (frames, lazy frames, Arrow streams), as opposed to an array."""
    return any(hasattr(obj, a) for a in ("__arrow_c_stream__", "__dataframe__", "collect", "columns"))


def _narwhals() -> Any:
    import narwhals.stable.v2 as nw_module  # optional dependency, imported only when used

    return nw_module


def as_frame(obj: Any, name: str = "X") -> Optional["nw.DataFrame[Any]"]:
    """The narwhals view of ``obj`` when it is a DataFrame, None for arrays, lists and series.

    Raises ``TypeError`` naming the type of a table-like object that cannot be read (a lazy
    frame, an unknown library's frame), and ``ImportError`` when a frame is given but
    narwhals is not installed.
    """
    if isinstance(obj, (np.ndarray, list, tuple, int, float, str, bytes)):
        return None
    if importlib.util.find_spec("narwhals") is None:
        if _looks_like_frame(obj):
            raise ImportError(
                f"reading a {_type_name(obj)} needs narwhals: pip install narwhals "
                "(or microagg[pandas] / microagg[polars] / microagg[arrow])"
            )
        return None
    check_unique_names(_native_names(obj), name)
    nw_module = _narwhals()
    frame = nw_module.from_native(obj, eager_only=True, pass_through=True)
    if isinstance(frame, nw_module.DataFrame):
        return cast("nw.DataFrame[Any]", frame)
    if isinstance(nw_module.from_native(obj, series_only=True, pass_through=True), nw_module.Series):
        return None  # one column: the array checks report it as 1-D
    if hasattr(obj, "__arrow_c_stream__"):
        return cast("nw.DataFrame[Any]", nw_module.from_arrow(obj, backend=_arrow_backend(obj)))
    if _looks_like_frame(obj):
        lazy = " (a lazy frame: collect it first)" if hasattr(obj, "collect") else ""
        raise TypeError(f"{name}: unsupported type {_type_name(obj)}{lazy}; pass {_SUPPORTED}")
    return None


def _native_names(obj: Any) -> list[Any]:
    """The column names of a native frame as its library holds them (pandas and pyarrow
    allow a name twice), empty for an object without named columns."""
    names = getattr(obj, "column_names", None)
    if names is None:
        names = getattr(obj, "columns", None)
    try:
        return list(names) if names is not None and not isinstance(names, (str, bytes)) else []
    except TypeError:
        return []


def check_unique_names(names: Sequence[Any], name: str) -> None:
    """``ValueError`` naming the columns that ``names`` holds more than once: a release
    would aggregate one copy and leave the other raw (docs/workflow.md)."""
    seen: dict[Any, int] = {}
    for c in names:
        seen[c] = seen.get(c, 0) + 1
    repeated = [f"{c!r} ({times} times)" for c, times in seen.items() if times > 1]
    if repeated:
        raise ValueError(f"{name} has duplicate column names: {', '.join(repeated)}; rename or drop the copies")


def _arrow_backend(obj: Any) -> str:
    for backend in ("pyarrow", "polars"):
        if importlib.util.find_spec(backend) is not None:
            return backend
    raise ImportError(f"reading a {_type_name(obj)} through the Arrow PyCapsule interface needs pyarrow or polars")


def is_numeric(frame: "nw.DataFrame[Any]", column_name: Any, *, booleans: bool) -> bool:
    """Whether a column holds real numbers (booleans count only when ``booleans``)."""
    dtype = frame.schema[column_name]
    return bool(dtype.is_numeric()) or (booleans and dtype == _narwhals().Boolean)


def check_columns(frame: "nw.DataFrame[Any]", names: Sequence[Any], *, name: str = "df") -> None:
    """Every name is a column of ``frame``, once (``ValueError`` naming the unknown ones)."""
    missing = [str(c) for c in names if c not in frame.columns]
    if missing:
        raise ValueError(
            f"unknown column(s): {', '.join(missing)}; the columns of {name} are: "
            f"{', '.join(map(str, frame.columns))}"
        )
    if len(set(names)) != len(names):
        raise ValueError("columns must not repeat")


def numeric_matrix(
    frame: "nw.DataFrame[Any]", names: Optional[Sequence[Any]] = None, *, name: str = "X"
) -> npt.NDArray[np.float64]:
    """The columns ``names`` (default: all) as an (n, len(names)) float64 array; nulls become
    NaN. A column that is neither numeric nor boolean raises ``TypeError`` naming it."""
    names = list(frame.columns if names is None else names)
    check_columns(frame, names, name=name)
    bad = [str(c) for c in names if not is_numeric(frame, c, booleans=True)]
    if bad:
        raise TypeError(
            f"{name} has non-numeric columns: {', '.join(bad)}; select numeric columns "
            "or use microagg.anonymize(df, columns=[...])"
        )
    out = np.empty((len(frame), len(names)), dtype=np.float64, order="F")
    nw_module = _narwhals()
    for j, c in enumerate(names):
        out[:, j] = frame.get_column(c).cast(nw_module.Float64).to_numpy()
    return out


def column(df: Any, column_name: Any, *, name: str = "df") -> npt.NDArray[Any]:
    """One column of the frame ``df`` as a 1-D NumPy array of its own dtype (strings too)."""
    frame = as_frame(df, name)
    if frame is None:
        raise TypeError(f"{name} must be a DataFrame to name columns, got {_type_name(df)}")
    check_columns(frame, [column_name], name=name)
    return np.asarray(frame.get_column(column_name).to_numpy())


def replace_columns(
    frame: "nw.DataFrame[Any]", names: Sequence[Any], values: npt.NDArray[Any], *, keep_dtypes: bool = False
) -> Any:
    """A native frame of the same kind as ``frame`` with column ``names[j]`` replaced by
    ``values[:, j]``; other columns, their order and the pandas index are kept. With
    ``keep_dtypes`` each new column takes the dtype of the one it replaces (labels: strings,
    categories, integers); otherwise the dtype of ``values``."""
    nw_module = _narwhals()
    backend = frame.implementation
    new = [
        nw_module.new_series(str(c), values[:, j].tolist(), dtype=frame.schema[c], backend=backend).alias(c)
        if keep_dtypes
        else nw_module.new_series(str(c), values[:, j], backend=backend).alias(c)
        for j, c in enumerate(names)
    ]
    return nw_module.to_native(frame.with_columns(*new))
