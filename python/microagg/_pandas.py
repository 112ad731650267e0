"""pandas helper: anonymize chosen numeric columns of a DataFrame."""

from __future__ import annotations

from typing import Any, Optional, Sequence, Tuple

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
    by: Any = None,
    small_strata: str = "error",
    weights: Any = None,
    aggregation: str = "mean",
    trim: Optional[float] = None,
    **method_params: Any,
) -> Any:
    """Return a copy of ``df`` whose ``columns`` are k-anonymously microaggregated.

    The chosen columns (all numeric, non-boolean columns when ``columns`` is None, except
    the ``by`` and ``weights`` columns) are microaggregated jointly as quasi-identifiers and
    replaced by their group values (as float64); every other column is kept unchanged, in
    place and order.

    ``by`` names the strata column(s) (one name or a list: no group mixes strata) and
    ``weights`` the sampling-weight column; ``small_strata``, ``aggregation`` and ``trim``
    are those of :func:`microagg.microaggregate`.

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
    strata, weight_values, roles = _workflow_columns(df, by, weights)
    if columns is None:
        cols = [c for c, t in df.dtypes.items() if dtype_kind(t) in "iuf" and c not in roles]
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
        for c in cols:
            if c in roles:
                raise ValueError(f"column {c!r} is both a quasi-identifier and in {roles[c]}")
    res = microaggregate(
        df[cols],
        k,
        method,
        standardize=standardize,
        dtype=dtype,
        n_jobs=n_jobs,
        seed=seed,
        by=strata,
        small_strata=small_strata,
        weights=weight_values,
        aggregation=aggregation,
        trim=trim,
        **method_params,
    )
    out = df.copy()
    aggregated = res.aggregated
    for j, c in enumerate(cols):
        out[c] = aggregated[:, j]
    return out


def _workflow_columns(df: Any, by: Any, weights: Any) -> Tuple[Any, Any, dict[Any, str]]:
    """The strata columns (a DataFrame) and weight values named by ``by`` and ``weights``,
    and the role ("by" or "weights") of each of those columns."""
    roles: dict[Any, str] = {}
    names = [] if by is None else list(by) if isinstance(by, (list, tuple)) else [by]
    for role, wanted in (("by", names), ("weights", [] if weights is None else [weights])):
        unknown = [str(c) for c in wanted if c not in df.columns]
        if unknown:
            raise ValueError(f"{role}: unknown column(s): {', '.join(unknown)}")
        roles.update((c, role) for c in wanted)
    if weights is not None and dtype_kind(df[weights].dtype) not in "iuf":
        raise TypeError(f"weights: column {weights!r} is not numeric")
    strata = df[names] if names else None
    return strata, (df[weights] if weights is not None else None), roles
