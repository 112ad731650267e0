"""pandas helper: anonymize chosen numeric columns of a DataFrame."""

from __future__ import annotations

from typing import Any, Optional, Sequence

from ._api import microaggregate
from ._validation import dtype_kind


def anonymize(
    df: Any,
    k: int = 5,
    columns: Optional[Sequence[Any]] = None,
    method: str = "mdav",
    *,
    standardize: bool = True,
    dtype: Any = None,
    n_jobs: int = 1,
    seed: Optional[int] = None,
    **method_params: Any,
) -> Any:
    """Return a copy of ``df`` whose ``columns`` are k-anonymously microaggregated.

    The chosen columns (all numeric, non-boolean columns when ``columns`` is None) are
    microaggregated jointly as quasi-identifiers and replaced by their group centroids
    (as float64); every other column is kept unchanged, in place and order.

    Raises
    ------
    TypeError
        ``df`` is not a DataFrame, or a chosen column is not numeric.
    ValueError
        A chosen column does not exist, no numeric column is available, or any error of
        :func:`microagg.microaggregate`.
    """
    import pandas as pd  # optional dependency, imported only when used

    if not isinstance(df, pd.DataFrame):
        raise TypeError(f"anonymize expects a pandas DataFrame, got {type(df).__name__}")
    if columns is None:
        cols = [c for c, t in df.dtypes.items() if dtype_kind(t) in "iuf"]
        if not cols:
            raise ValueError("the DataFrame has no numeric column to anonymize; pass columns=[...]")
    else:
        if isinstance(columns, str):
            columns = [columns]
        cols = list(columns)
        missing = [str(c) for c in cols if c not in df.columns]
        if missing:
            raise ValueError(f"unknown column(s): {', '.join(missing)}")
        if len(set(cols)) != len(cols):
            raise ValueError("columns must not repeat")
        bad = [str(c) for c in cols if dtype_kind(df[c].dtype) not in "biuf"]
        if bad:
            raise TypeError(f"column(s) not numeric: {', '.join(bad)}")
    res = microaggregate(
        df[cols],
        k,
        method,
        standardize=standardize,
        dtype=dtype,
        n_jobs=n_jobs,
        seed=seed,
        **method_params,
    )
    out = df.copy()
    aggregated = res.aggregated
    for j, c in enumerate(cols):
        out[c] = aggregated[:, j]
    return out
