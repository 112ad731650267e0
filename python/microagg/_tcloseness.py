"""t-closeness of confidential attributes through microaggregation (Soria-Comas,
Domingo-Ferrer, Sánchez and Martínez, "t-Closeness through Microaggregation", IEEE TKDE
27(11), 2015): :func:`t_close_microaggregate` groups the key attributes so that every class
has at least ``k`` records and holds each confidential attribute within earth mover's distance
``t`` of its distribution over the whole file; :func:`t_closeness` measures a release.

EMD (the paper's §2.2): for a numerical (ordered) attribute with the file's distinct values
v_1 < ... < v_m, (1/(m-1)) * sum_{i<m} |sum_{j<=i} (p_j - q_j)| (0 when m = 1); for a
nominal one, 1/2 * sum |p_i - q_i|. P is a class's distribution, Q the whole file's, both
weighted when weights are given.
"""

from __future__ import annotations

import functools
import math
import numbers
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Callable, Optional, Union

import numpy as np
import numpy.typing as npt

from . import _core
from ._api import MicroaggregationResult, prepare_run, released_result
from ._validation import as_data_matrix, check_str
from ._workflow import _factorize_column, _is_missing, as_weights, factorize_strata

T_METHODS: tuple[str, ...] = tuple(_core.T_METHODS)
"""Names accepted by ``t_method=``."""

KINDS = ("numerical", "nominal")
"""How a confidential attribute's distance is measured: ordered values, or categories."""


@dataclass(frozen=True)
class TCloseResult(MicroaggregationResult):
    """A k-anonymous, t-close partition: a :class:`MicroaggregationResult` and

    Attributes
    ----------
    t : float
        The bound on every class's EMD.
    t_method : str
        The algorithm asked for ("auto", "merge", "k-first" or "t-first").
    chosen : tuple of str
        The algorithm that built the classes of each stratum (one entry without strata; with
        ``max_part``, of each part grouped): ``t_method``, or the one "auto" chose (least SSE).
    max_emd : dict of str to float
        The largest EMD of a class, per confidential attribute.
    """

    t: float = 1.0
    t_method: str = "auto"
    chosen: tuple[str, ...] = ()
    max_emd: dict[str, float] = field(default_factory=dict)


def t_close_microaggregate(
    X: Any,
    k: int = 5,
    method: str = "mdav",
    *,
    sensitive: Any,
    t: float,
    t_method: str = "auto",
    kinds: Any = None,
    standardize: Union[bool, npt.ArrayLike] = True,
    n_jobs: int = 1,
    seed: Optional[int] = None,
    by: Any = None,
    small_strata: str = "error",
    weights: Any = None,
    aggregation: str = "mean",
    trim: Optional[float] = None,
    missing: str = "error",
    max_part: Optional[int] = None,
    progress: Optional[_core.Progress] = None,
    **method_params: Any,
) -> TCloseResult:
    """Microaggregate the keys ``X`` into classes of at least ``k`` records in which every
    confidential attribute is within EMD ``t`` of its distribution over the whole file.

    Parameters
    ----------
    X : array-like of shape (n, d)
        The key attributes (quasi-identifiers), real numbers (NaN a missing value where
        ``missing`` allows it); computed in float64.
    k, method, standardize, n_jobs, seed, by, small_strata, weights, aggregation, trim, missing, progress
        As in :func:`microagg.microaggregate`; ``method`` (and its parameters) is what
        ``"merge"`` starts from. With ``by``, the reference distribution stays the whole
        file's; a stratum itself farther than ``t`` from it is a ``ValueError`` naming it.
        With ``weights``, distributions are weighted. With ``missing="fill"`` or ``"keep"``
        the classes are built on the EM-completed keys and released from the observed
        cells, as plain microaggregation does.
    sensitive : array-like of n values, a mapping of names to such arrays, or (n, s) array
        The confidential attributes, never changed and never keys. A missing value (None,
        NaN) is a ``ValueError`` naming the attribute.
    t : float in (0, 1]
        The bound on every class's EMD for every confidential attribute.
    t_method : "auto", "merge", "k-first" or "t-first", default "auto"
        "merge": ``method``, then the class of largest EMD joins the class of nearest key
        centroid until all are t-close. "k-first": MDAV whose groups grow by the nearest
        record lowering their EMD. "t-first": k' = max(k, ceil(n / (2(n-1)t + 1))) runs of
        the records sorted by the (first) confidential value, each class one record of
        every run. Every result is verified and merged until t-close; "auto" runs the three
        and keeps the least SSE.
    kinds : "numerical", "nominal", or one per attribute (sequence or mapping), optional
        Ordered or nominal distance. Default: numerical for numeric values, nominal else.
    max_part : int, optional
        Partitioned run (docs/scaling.md#partitioned-runs): every stratum is cut into parts
        of at most ``max_part`` records and each part made t-close on its own against the
        whole file's distribution, so every class keeps the bound. A part farther than
        ``t`` from the file cannot be (the EMD is convex), so such parts are first joined
        to the part of nearest key centroid until each is within ``t``: a joined part may
        exceed ``max_part``. ``chosen`` then has one entry per part grouped.

    Returns
    -------
    TCloseResult

    Raises
    ------
    ValueError
        ``t`` outside (0, 1], an unknown ``t_method`` or kind, missing confidential values
        (whatever ``missing`` says: it is about the keys), a stratum farther than ``t`` from
        the file, or any error of ``microaggregate``.
    """
    if "dtype" in method_params:
        raise TypeError("dtype does not apply to t-closeness: it works in float64")
    run = prepare_run(
        X, k, method, dtype="float64", standardize=standardize, n_jobs=n_jobs, seed=seed, progress=progress,
        by=by, small_strata=small_strata, weights=weights, aggregation=aggregation, trim=trim, missing=missing,
        max_part=max_part, method_params=method_params,
    )
    t = _check_t(t)
    t_method = check_str(t_method, "t_method")
    names, columns = _sensitive_columns(sensitive, run.matrix.shape[0])
    kind_of = _kinds(kinds, names, columns)
    encoded = [_encode(c, name, kind_of[name]) for name, c in zip(names, columns)]
    out, chosen, max_emd = _core.t_close_array(
        np.asarray(run.matrix, dtype=np.float64),
        run.k,
        [e[0] for e in encoded],
        [e[1] for e in encoded],
        [kind_of[name] == "numerical" for name in names],
        names,
        t,
        t_method,
        run.options,
        run.workflow,
        progress=run.progress,
    )
    return released_result(
        TCloseResult,
        out,
        run.k,
        method,
        run.strata,
        t=t,
        t_method=t_method,
        chosen=tuple(chosen),
        max_emd=dict(zip(names, max_emd)),
        **run.fields,
    )


def t_closeness(
    released: Any,
    sensitive: Any,
    *,
    columns: Any = None,
    by: Any = None,
    weights: Any = None,
    kinds: Any = None,
) -> dict[str, float]:
    """The largest EMD between a class of the release and the whole file, per confidential
    attribute: the t the release achieves.

    ``released`` is the released key matrix (n, d) and ``sensitive`` the confidential values
    (as in :func:`t_close_microaggregate`), or ``released`` is a DataFrame, ``columns`` its
    key columns (default: every numeric column that is not confidential, ``by`` or
    ``weights``; categorical columns of a mixed key count by their categories) and
    ``sensitive``, ``by`` and ``weights`` column names. A class is the
    records with equal released keys (within a stratum with ``by``); distributions are
    weighted with ``weights``.
    """
    from ._frames import as_frame, is_numeric, numeric_matrix

    frame = as_frame(released, "released")
    if frame is not None:
        wanted = [sensitive] if isinstance(sensitive, str) else list(sensitive)
        by_names = [] if by is None else [by] if isinstance(by, str) else list(by)
        roles = set(wanted) | set(by_names) | ({weights} if weights is not None else set())
        missing = [str(c) for c in roles if c not in frame.columns]
        if missing:
            raise ValueError(f"unknown column(s): {', '.join(missing)}")
        keys = [c for c in frame.columns if c not in roles and is_numeric(frame, c, booleans=False)]
        keys = keys if columns is None else [columns] if isinstance(columns, str) else list(columns)
        native = frame.to_native()
        sensitive = {c: _column(native, c) for c in wanted}
        by = None if not by_names else np.column_stack([np.asarray(_column(native, c), dtype=object) for c in by_names])
        weights = numeric_matrix(frame, [weights])[:, 0] if weights is not None else None
        unknown = [str(c) for c in keys if c not in frame.columns]
        if unknown:
            raise ValueError(f"unknown column(s): {', '.join(unknown)}")
        # a categorical key column (a mixed key's release) counts by its categories
        numeric_keys = [c for c in keys if is_numeric(frame, c, booleans=False)]
        categories = [factorize_strata(np.asarray(_column(native, c), dtype=object), len(native), name=str(c))[0]
                      for c in keys if c not in numeric_keys]
        released = numeric_matrix(frame, numeric_keys, name="released") if numeric_keys else np.empty((len(native), 0))
        released = np.column_stack([released, *categories]) if categories else released
    xm = np.asarray(as_data_matrix(released, name="released")[0], dtype=np.float64)
    n = xm.shape[0]
    names, cols = _sensitive_columns(sensitive, n)
    kind_of = _kinds(kinds, names, cols)
    key = xm if by is None else np.column_stack([factorize_strata(by, n)[0].astype(np.float64), xm])
    classes = np.unique(key, axis=0, return_inverse=True)[1].reshape(-1)
    mass = as_weights(weights, n) if weights is not None else np.ones(n)
    return {
        name: float(class_emd(*_encode(c, name, kind_of[name]), kind_of[name] == "numerical", classes, mass).max())
        for name, c in zip(names, cols)
    }


def class_emd(
    codes: npt.NDArray[np.int64],
    m: int,
    ordered: bool,
    classes: npt.NDArray[np.int64],
    mass: npt.NDArray[np.float64],
) -> npt.NDArray[np.float64]:
    """The EMD of every class (labels 0..g) for one attribute of codes 0..m, dense, in
    chunks of classes (a class or file of zero total mass counts records)."""
    g = int(classes.max()) + 1
    q = _chunk_shares(codes, np.zeros_like(classes), mass, m, 1)[0]
    out = np.empty(g)
    chunk = max(1, 2_000_000 // max(m, 1))
    for lo in range(0, g, chunk):
        hi = min(g, lo + chunk)
        inside = (classes >= lo) & (classes < hi)
        p = _chunk_shares(codes[inside], classes[inside] - lo, mass[inside], m, hi - lo)
        if ordered:
            out[lo:hi] = np.abs(np.cumsum(p - q, axis=1)[:, :-1]).sum(axis=1) / (m - 1) if m > 1 else 0.0
        else:
            out[lo:hi] = 0.5 * np.abs(p - q).sum(axis=1)
    return out


def _chunk_shares(
    codes: npt.NDArray[np.int64], labels: npt.NDArray[np.int64], mass: npt.NDArray[np.float64], m: int, rows: int
) -> npt.NDArray[np.float64]:
    """Per class (rows of labels 0..rows), the share of each code: by mass, or by count
    where a class's mass is 0."""
    flat = labels * m + codes
    p = np.bincount(flat, weights=mass, minlength=rows * m).reshape(rows, m)
    counts = np.bincount(flat, minlength=rows * m).reshape(rows, m).astype(np.float64)
    p = np.where(p.sum(axis=1, keepdims=True) > 0, p, counts)
    shares: npt.NDArray[np.float64] = p / p.sum(axis=1, keepdims=True)
    return shares


def t_closeness_step(frame: Any, options: dict[str, Any], roles: dict[Any, str]) -> Optional[Callable[..., Any]]:
    """For :func:`microagg.anonymize`: takes ``sensitive``, ``t``, ``t_method`` and
    ``kinds`` out of ``options``, marks the confidential columns in ``roles`` (they are never
    keys) and returns :func:`t_close_microaggregate` bound to the confidential columns'
    values; None when no t-closeness was asked."""
    asked = {name: options.pop(name) for name in ("sensitive", "t", "t_method", "kinds") if name in options}
    if not asked:
        return None
    if "sensitive" not in asked or "t" not in asked:
        raise ValueError("t-closeness needs both sensitive= (the confidential columns) and t=")
    from ._columns import confidential_columns
    from ._frames import column

    wanted = confidential_columns(frame.columns, asked["sensitive"], roles)
    values = {str(c): column(frame.to_native(), c) for c in wanted}
    return functools.partial(t_close_microaggregate, **{**asked, "sensitive": values})


def _column(native: Any, name: Any) -> Any:
    from ._frames import column

    return column(native, name)


def _check_t(t: Any) -> float:
    if isinstance(t, bool) or not isinstance(t, numbers.Real):
        raise TypeError(f"t must be a number in (0, 1], got {type(t).__name__} {t!r}")
    v = float(t)
    if not (0.0 < v <= 1.0) or math.isnan(v):
        raise ValueError(f"t must be in (0, 1], got {t!r}")
    return v


def _sensitive_columns(sensitive: Any, n: int) -> tuple[list[str], list[Any]]:
    """Names and value columns of the confidential attributes."""
    if isinstance(sensitive, Mapping):
        names, cols = [str(k) for k in sensitive], list(sensitive.values())
    else:
        arr = sensitive.to_numpy() if hasattr(sensitive, "to_numpy") else np.asarray(sensitive)
        if arr.ndim == 2:
            names, cols = [f"sensitive[{j}]" for j in range(arr.shape[1])], [arr[:, j] for j in range(arr.shape[1])]
        elif arr.ndim == 1:
            names, cols = [str(getattr(sensitive, "name", None) or "sensitive")], [arr]
        else:
            raise ValueError(f"sensitive must be 1-D or 2-D, got shape {arr.shape}")
    if not cols:
        raise ValueError("sensitive: name at least one confidential attribute")
    for name, c in zip(names, cols):
        if len(c) != n:
            raise ValueError(f"sensitive {name!r}: {len(c)} values for {n} records")
    return names, cols


def _kinds(kinds: Any, names: list[str], cols: list[Any]) -> dict[str, str]:
    """The kind of each attribute (numerical for numeric values unless told)."""
    if kinds is None or isinstance(kinds, str):
        given: dict[str, Any] = {name: kinds for name in names}
    elif isinstance(kinds, Mapping):
        given = {name: kinds.get(name) for name in names}
    else:
        kinds = list(kinds)
        if len(kinds) != len(names):
            raise ValueError(f"kinds: {len(kinds)} kinds for {len(names)} confidential attributes")
        given = dict(zip(names, kinds))
    out = {}
    for name, c in zip(names, cols):
        kind = given[name]
        if kind is None:
            dtype = getattr(c, "dtype", np.asarray(c).dtype)
            kind = "numerical" if np.dtype(dtype).kind in "iuf" else "nominal"
        if kind not in KINDS:
            raise ValueError(f"kinds: unknown kind {kind!r} for {name!r}; one of {', '.join(KINDS)}")
        out[name] = kind
    return out


def _encode(values: Any, name: str, kind: str) -> tuple[npt.NDArray[np.int64], int]:
    """Codes 0..m of one attribute (ranks of its distinct values when numerical)."""
    if kind == "numerical":
        try:
            arr = np.asarray(values.to_numpy() if hasattr(values, "to_numpy") else values, dtype=np.float64)
        except (TypeError, ValueError):
            raise TypeError(f"sensitive {name!r} is numerical but not numeric; pass kinds='nominal'") from None
        if np.isnan(arr).any():
            raise ValueError(f"sensitive {name!r} has {int(np.isnan(arr).sum())} missing values; not supported")
        uniques, codes = np.unique(arr, return_inverse=True)
        return codes.reshape(-1).astype(np.int64), len(uniques)
    codes, found = _factorize_column(values)
    if any(_is_missing(v) for v in found):
        raise ValueError(f"sensitive {name!r} has missing values; not supported")
    return codes, len(found)
