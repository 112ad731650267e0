"""DataFrame helper: anonymize chosen numeric columns of a pandas, polars or Arrow table."""

from __future__ import annotations

from typing import Any, Optional, Sequence

from ._api import microaggregate
from ._frames import as_frame, check_columns, is_numeric, numeric_matrix, replace_columns


def anonymize(
    df: Any,
    k: int = 5,
    columns: Optional[Sequence[Any]] = None,
    method: str = "mdav",
    **options: Any,
) -> Any:
    """Return a copy of ``df`` whose ``columns`` are k-anonymously microaggregated.

    ``df`` is a pandas or polars DataFrame, a ``pyarrow.Table``, or any table with the Arrow
    PyCapsule interface; the result is the same kind of frame (a ``pyarrow.Table`` for other
    Arrow tables). The chosen columns (all numeric, non-boolean columns when ``columns`` is
    None) are microaggregated jointly as quasi-identifiers and replaced by their group
    centroids (as float64); every other column is kept unchanged, in place and order.
    Every other keyword argument (``standardize``, ``dtype``, ``n_jobs``, ``seed``, method
    parameters) goes to :func:`microagg.microaggregate` unchanged.

    Raises
    ------
    TypeError
        ``df`` is not a DataFrame, or a chosen column is not numeric.
    ValueError
        A chosen column does not exist, no numeric column is available, or any error of
        :func:`microagg.microaggregate`.
    """
    frame = as_frame(df, "df")
    if frame is None:
        raise TypeError(
            "anonymize expects a DataFrame (pandas, polars, pyarrow.Table or an Arrow PyCapsule "
            f"table), got {type(df).__module__}.{type(df).__qualname__}"
        )
    if columns is None:
        cols = [c for c in frame.columns if is_numeric(frame, c, booleans=False)]
        if not cols:
            raise ValueError("the DataFrame has no numeric column to anonymize; pass columns=[...]")
    else:
        cols = [columns] if isinstance(columns, str) else list(columns)
        check_columns(frame, cols)
        bad = [str(c) for c in cols if not is_numeric(frame, c, booleans=True)]
        if bad:
            raise TypeError(f"column(s) not numeric: {', '.join(bad)}")
    res = microaggregate(numeric_matrix(frame, cols, name="df"), k, method, **options)
    return replace_columns(frame, cols, res.aggregated)
