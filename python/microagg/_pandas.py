"""DataFrame helper: anonymize chosen key columns of a frame (pandas, polars, Arrow), numeric
or mixed with categories."""

from __future__ import annotations

import warnings
from typing import TYPE_CHECKING, Any, Mapping, Optional, Sequence, Tuple, cast

import numpy as np

from ._api import microaggregate
from ._columns import Roles, choose_key, mixed_key, workflow_roles
from ._mixed.workflow import anonymize_frame
from ._frames import as_frame, column, is_numeric, numeric_matrix, replace_columns
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
    categorical: Any = None,
    ordinal: Optional[Mapping[Any, Sequence[Any]]] = None,
    attribute_weights: Optional[Mapping[Any, float]] = None,
    categorical_release: str = "mode",
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
    make the classes t-close too (:func:`microagg.t_close_microaggregate`), with a numeric
    or a mixed key, ``missing`` and ``max_part`` as without them.
    With ``missing="keep"`` a missing cell stays missing: the release is k-anonymous when a
    missing value is read as matching any value, as :func:`microagg.is_k_anonymous` and
    :func:`microagg.assess` read it.

    Mixed keys (numbers with categories): a key column that is not numeric (strings,
    booleans, pandas/polars ``Categorical``, Arrow dictionaries) is nominal, an ordered pandas
    ``Categorical`` or a polars ``Enum`` is ordinal; ``categorical`` names more columns to
    treat as nominal (integer codes), ``ordinal`` maps columns to their levels in increasing
    order (``{"education": ["HS", "BSc", "MSc"]}``; a value outside them is an error). The
    key is grouped on an embedding (z-scored numbers and ordinal ranks, one-hot nominal
    columns scaled so two categories are as far apart as one sd), ``attribute_weights``
    (``{"sex": 2.0}``, default 1, positive) scaling each column's distances. Each group
    releases the aggregation of its numeric columns, the weighted median level of an ordinal
    column and the weighted mode of a nominal one (ties: the level that sorts first), or
    with ``categorical_release="medoid"`` all categories of its member nearest the group's
    centroid (every released combination exists in the data). Categorical columns keep
    their dtype; ``missing`` covers missing categories as missing numbers. With only
    numeric columns and none of these arguments, the key is microaggregated as before.

    Raises
    ------
    TypeError
        ``df`` is not a DataFrame, the weights column is not numeric, or a key column is
        neither numeric nor categorical (dates: name them in ``categorical``).
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
    roles = workflow_roles(frame.columns, lambda c: is_numeric(frame, c, booleans=False), by, weights)
    strata, weight_values = _workflow_values(frame, roles)
    group = t_closeness_step(frame, options, roles.of) or microaggregate  # t-close with sensitive=, t=
    cols = choose_key(frame, columns, roles.of, categorical, ordinal)
    relabel = check_bool(relabel, "relabel")
    mixed = mixed_key(frame, cols, categorical, ordinal, attribute_weights, categorical_release)
    if mixed is not None:
        out, res = anonymize_frame(
            frame, mixed.columns, k, method, categorical=mixed.categorical, ordinal=mixed.ordinal,
            by=strata, weights=weight_values, attribute_weights=attribute_weights,
            categorical_release=categorical_release, options=options, group=group,
        )
    else:
        X = numeric_matrix(frame, cols, name="df")
        empty = [str(c) for j, c in enumerate(cols) if len(X) and np.isnan(X[:, j]).all()]
        if empty and options.get("missing", "error") != "error":
            raise ValueError(f"column(s) with no observed value (every cell missing): {', '.join(empty)}; drop them")
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
    labels = relabel_strata(strata, res.merges).reshape(len(res.labels), len(roles.by))
    return replace_columns(cast("nw.DataFrame[Any]", as_frame(out, "df")), roles.by, labels, keep_dtypes=True)


def _workflow_values(frame: "nw.DataFrame[Any]", roles: Roles) -> Tuple[Any, Any]:
    """The strata labels (1-D, or 2-D for several columns) and the weight values of the
    ``by`` and ``weights`` columns (see :mod:`microagg._columns`)."""
    labels = [column(frame.to_native(), c) for c in roles.by]
    strata = None if not labels else labels[0] if len(labels) == 1 else _stack(labels)
    return strata, (numeric_matrix(frame, [roles.weights])[:, 0] if roles.weights is not None else None)


def _stack(labels: list[Any]) -> Any:
    """Several label columns as one 2-D object array (each row a stratum)."""
    out = np.empty((len(labels[0]), len(labels)), dtype=object)
    for j, values in enumerate(labels):
        out[:, j] = values
    return out
