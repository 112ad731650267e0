"""DataFrame helper: anonymize chosen numeric columns of a frame (pandas, polars, Arrow)."""

from __future__ import annotations

import warnings
from typing import TYPE_CHECKING, Any, Optional, Sequence, Tuple, cast

import numpy as np

from ._api import microaggregate
from ._frames import as_frame, check_columns, column, is_numeric, numeric_matrix, replace_columns
from ._tcloseness import t_closeness_step
from ._validation import check_bool
from ._workflow import relabel_strata

if TYPE_CHECKING:
    import narwhals.stable.v2 as nw


def anonymize(
    df: Any,
    k: int = 5,
    columns: Optional[Sequence[Any]] = None,
    method: str = "mdav",
    *,
    by: Any = None,
    weights: Any = None,
    relabel: bool = True,
    **options: Any,
) -> Any:
    """Return a copy of ``df`` whose ``columns`` are k-anonymously microaggregated.

    ``df`` is a pandas or polars DataFrame, a ``pyarrow.Table``, or any table with the Arrow
    PyCapsule interface; the result is the same kind of frame (a ``pyarrow.Table`` for other
    Arrow tables). The chosen columns (all numeric, non-boolean columns when ``columns`` is
    None, except the ``by`` and ``weights`` columns) are microaggregated jointly as
    quasi-identifiers and replaced by their group values (as float64); every other column is
    kept unchanged, in place and order.

    ``by`` names the strata column(s) (one name or a list: no group mixes strata) and
    ``weights`` the sampling-weight column. With ``small_strata="merge"``, the records of a
    stratum smaller than ``k`` are grouped with the stratum it was merged into; ``relabel``
    (default True) then publishes them under that stratum's label (every ``by`` column
    takes its values, as :func:`microagg.relabel_strata` does), since their own label would
    single them out: a label that fewer than ``k`` records carry. ``relabel=False`` keeps
    their labels and warns (``UserWarning``). Every other keyword argument (``standardize``,
    ``dtype``, ``n_jobs``, ``seed``, ``small_strata``, ``aggregation``, ``trim``,
    ``missing``, method parameters) goes to :func:`microagg.microaggregate` unchanged.
    ``sensitive`` (confidential column names, never keys), ``t``, ``t_method`` and ``kinds``
    make the classes t-close too (:func:`microagg.t_close_microaggregate`).
    With ``missing="keep"`` a missing cell stays missing: the release is k-anonymous when a
    missing value is read as matching any value, as :func:`microagg.is_k_anonymous` and
    :func:`microagg.assess` read it.

    Raises
    ------
    TypeError
        ``df`` is not a DataFrame, or a chosen column (or the weights column) is not numeric.
    ValueError
        A named column does not exist, a column is both a quasi-identifier and a strata or
        weights column, no numeric column is available, or any error of
        :func:`microagg.microaggregate`.
    """
    frame = as_frame(df, "df")
    if frame is None:
        raise TypeError(
            "anonymize expects a DataFrame (pandas, polars, pyarrow.Table or an Arrow PyCapsule "
            f"table), got {type(df).__module__}.{type(df).__qualname__}"
        )
    strata, weight_values, roles = _workflow_columns(frame, by, weights)
    group = t_closeness_step(frame, options, roles) or microaggregate  # t-close with sensitive=, t=
    if columns is None:
        cols = [c for c in frame.columns if is_numeric(frame, c, booleans=False) and c not in roles]
        if not cols:
            raise ValueError("the DataFrame has no numeric column to anonymize; pass columns=[...]")
    else:
        cols = [columns] if isinstance(columns, str) else list(columns)
        check_columns(frame, cols)
        bad = [str(c) for c in cols if not is_numeric(frame, c, booleans=True)]
        if bad:
            raise TypeError(f"column(s) not numeric: {', '.join(bad)}")
        for c in cols:
            if c in roles:
                raise ValueError(f"column {c!r} is both a quasi-identifier and in {roles[c]}")
    relabel = check_bool(relabel, "relabel")
    X = numeric_matrix(frame, cols, name="df")
    res = group(X, k, method, by=strata, weights=weight_values, **options)
    out = replace_columns(frame, cols, res.aggregated)
    if not res.merges:
        return out
    if not relabel:
        warnings.warn(
            f"relabel=False publishes {sum(m.size for m in res.merges)} records of merged strata "
            f"({', '.join(repr(m.stratum) for m in res.merges)}) under their own labels, carried by "
            f"fewer than k={k} records: the labels single them out",
            UserWarning,
            stacklevel=2,
        )
        return out
    names = list(by) if isinstance(by, (list, tuple)) else [by]
    labels = relabel_strata(strata, res.merges).reshape(len(X), len(names))
    return replace_columns(cast("nw.DataFrame[Any]", as_frame(out, "df")), names, labels, keep_dtypes=True)


def _workflow_columns(frame: Any, by: Any, weights: Any) -> Tuple[Any, Any, dict[Any, str]]:
    """The strata labels (1-D, or 2-D for several columns) and weight values named by ``by``
    and ``weights``, and the role ("by" or "weights") of each of those columns."""
    roles: dict[Any, str] = {}
    names = [] if by is None else list(by) if isinstance(by, (list, tuple)) else [by]
    for role, wanted in (("by", names), ("weights", [] if weights is None else [weights])):
        unknown = [str(c) for c in wanted if c not in frame.columns]
        if unknown:
            raise ValueError(f"{role}: unknown column(s): {', '.join(unknown)}")
        roles.update((c, role) for c in wanted)
    if weights is not None and not is_numeric(frame, weights, booleans=False):
        raise TypeError(f"weights: column {weights!r} is not numeric")
    labels = [column(frame.to_native(), c) for c in names]
    strata = None if not labels else labels[0] if len(labels) == 1 else _stack(labels)
    return strata, (numeric_matrix(frame, [weights])[:, 0] if weights is not None else None), roles


def _stack(labels: list[Any]) -> Any:
    """Several label columns as one 2-D object array (each row a stratum)."""
    out = np.empty((len(labels[0]), len(labels)), dtype=object)
    for j, values in enumerate(labels):
        out[:, j] = values
    return out
