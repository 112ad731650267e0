"""t-closeness of confidential attributes through microaggregation (Soria-Comas,
Domingo-Ferrer, Sánchez and Martínez, "t-Closeness through Microaggregation", IEEE TKDE
27(11), 2015): :func:`t_close_microaggregate` groups the key attributes so that every class
has at least ``k`` records and holds each confidential attribute within earth mover's distance
``t`` of its distribution over the whole file; :func:`t_closeness` measures a release.

EMD (the paper's §2.2): for a numerical (ordered) attribute with the file's distinct values
v_1 < ... < v_m, (1/(m-1)) * sum_{i<m} |sum_{j<=i} (p_j - q_j)| (0 when m = 1); for a
nominal one, 1/2 * sum |p_i - q_i|. P is a class's distribution, Q the whole file's, both
counting records: t, like k, counts records (sampling weights change released values only).
"""

from __future__ import annotations

import dataclasses
import functools
import math
import numbers
import warnings
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Callable, Optional, Union

import numpy as np
import numpy.typing as npt

from . import _core
from ._api import MicroaggregationResult, PreparedRun, prepare_run, released_result
from ._validation import as_data_matrix, check_str
from ._assess_input import as_release
from ._frames import as_frame, column
from ._kanonymity import Classes, classes
from ._workflow import _factorize_column, _is_missing, as_weights

T_METHODS: tuple[str, ...] = tuple(_core.T_METHODS)
"""Names accepted by ``t_method=``."""

KINDS = ("numerical", "nominal")
"""How a confidential attribute's distance is measured: ordered values, or categories."""


@dataclass(frozen=True)
class Confidential:
    """One confidential attribute as the measures take it: codes 0..m (ranks when
    ``ordered``)."""

    name: str
    codes: npt.NDArray[np.int64]
    m: int
    ordered: bool


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
    confidential: tuple[Confidential, ...] = field(default=(), repr=False, compare=False)
    """The confidential attributes as codes, for a release built on this partition (a mixed
    key's) to keep its classes t-close (:func:`fill_until_t_close`)."""
    published_strata: Optional[npt.NDArray[np.int64]] = field(default=None, repr=False, compare=False)
    """Each record's stratum code as the release publishes it (merged strata joined), or None."""


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
        ``weights`` weight the release (and the SSE "auto" compares); the distributions
        count records, since t, like k, counts released records. With ``missing="fill"`` or ``"keep"``
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
    return t_close_prepared(run, method, sensitive=sensitive, t=t, t_method=t_method, kinds=kinds)


def t_close_prepared(run: PreparedRun, method: str, *, sensitive: Any, t: Any, t_method: Any, kinds: Any) -> TCloseResult:
    """:func:`t_close_microaggregate` of a run already checked by :func:`prepare_run` (whose
    workflow may also carry a mixed key's nominal codes, ``_mixed/native.py``); the other
    arguments are its own."""
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
    res = released_result(
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
    strata = _published_strata(run.workflow["by"], run.strata, res)
    _warn_single_classes(res, strata, run.strata, t)
    confidential = tuple(Confidential(name, *e, kind_of[name] == "numerical") for name, e in zip(names, encoded))
    res = dataclasses.replace(res, confidential=confidential, published_strata=strata)
    if res.missing_cells is None:
        return res
    cells, largest = fill_until_t_close(res, res.group_values[res.labels], res.missing_cells)
    filled = int(res.missing_cells.sum() - cells.sum())
    return dataclasses.replace(res, missing_cells=cells if cells.any() else None, n_filled=filled, max_emd=largest)



def _published_strata(
    codes: Optional[npt.NDArray[np.int64]], labels: list[Any], res: TCloseResult
) -> Optional[npt.NDArray[np.int64]]:
    """Each record's stratum code (``labels`` the value of each code) once merged strata
    joined the stratum they were merged into, as the release publishes them; None without
    strata."""
    if codes is None:
        return None
    out = np.asarray(codes, dtype=np.int64).copy()
    code_of = {repr(label): j for j, label in enumerate(labels)}
    for m in res.merges:
        out[out == code_of[repr(m.stratum)]] = code_of[repr(m.into)]
    return out


def _warn_single_classes(
    res: TCloseResult, strata: Optional[npt.NDArray[np.int64]], labels: list[Any], t: float
) -> None:
    """Warns, naming it, of a stratum (or the whole file) of at least 2k records that t made
    one class: k alone would have split it, so t is so small that the stratum is released
    as its mean, which protects but keeps little (docs/workflow.md)."""
    codes = np.zeros(len(res.labels), dtype=np.int64) if strata is None else strata
    for code in np.unique(codes):
        inside = codes == code
        if inside.sum() >= 2 * res.k and len(np.unique(res.labels[inside])) == 1:
            where = "the whole file" if strata is None else f"stratum {labels[code]!r}"
            warnings.warn(
                f"t={t:g} made {where} one class of {int(inside.sum())} records: every record of it is "
                "released alike; a larger t keeps more of the key",
                UserWarning,
                stacklevel=4,  # the caller of t_close_microaggregate (through t_close_prepared)
            )


def fill_until_t_close(
    res: TCloseResult, filled: npt.NDArray[np.float64], cells: npt.NDArray[np.bool_]
) -> tuple[npt.NDArray[np.bool_], dict[str, float]]:
    """``missing="keep"`` under the one class rule (docs/workflow.md): which of the missing
    ``cells`` (n, d) of the release ``filled`` (every cell its group's value, in any units
    where equal values are equal releases) stay missing, and the largest class EMD per
    confidential attribute of ``res`` then. A record's class is every released record that
    agrees with it where both are observed, so a missing cell can join records of several
    groups into a class farther than t from the file. While one is, missing cells get their
    group's value (as ``"fill"`` releases them): first those of the far records themselves,
    then, when those are complete, those of the records in their classes. This ends t-close:
    a class whose records are all complete holds every record of each group released as its
    row (a group's records agree wherever observed), so it is whole groups, t-close by
    construction (the EMD is convex)."""
    cells = cells.copy()
    while True:
        cls = classes(np.where(cells, np.nan, filled), res.published_strata)
        emds = [class_emd(a.codes, a.m, a.ordered, cls) for a in res.confidential]
        far = np.max(emds, axis=0) > res.t + 1e-12
        gaps = cells.any(axis=1)
        fill = far[cls.inverse] & gaps  # first the far records' own gaps
        if far.any() and not fill.any():  # then the gaps of the records that join them to a far class
            fill = (cls.spread(far[:, None].astype(np.float64))[cls.inverse, 0] > 0) & gaps
        if not fill.any():
            return cells, {a.name: float(e.max()) for a, e in zip(res.confidential, emds)}
        cells[fill] = False


def t_closeness(
    released: Any,
    sensitive: Any,
    *,
    columns: Any = None,
    by: Any = None,
    weights: Any = None,
    kinds: Any = None,
    categorical: Any = None,
    ordinal: Any = None,
) -> dict[str, float]:
    """The largest EMD between a record's class and the whole file, per confidential
    attribute: the t the release achieves.

    A record's class is the one class rule of k-anonymity (:func:`microagg.is_k_anonymous`,
    docs/workflow.md#t-closeness-of-confidential-attributes): the released records equal to
    it on the whole key within its stratum, a missing key cell matching any value. t, like
    k, counts records: P (a class) and Q (the whole file) count released records, whatever
    the sampling weights (they change released values only).

    ``released`` is the released key matrix (n, d) and ``sensitive`` the confidential values
    (as in :func:`t_close_microaggregate`), ``by`` strata labels; or ``released`` is a
    DataFrame with the column roles of :func:`microagg.anonymize`: ``columns`` the key
    (default: every numeric column without another role, and the ``categorical`` and
    ``ordinal`` ones, compared by category), ``sensitive``, ``by`` and ``weights`` column
    names (a weights column is never a key).
    """
    frame = as_frame(released, "released")
    names_given = frame is not None and isinstance(sensitive, (str, list, tuple))
    r = as_release(released, columns=columns, by=by, weights=weights if frame is not None else None,
                   categorical=categorical, ordinal=ordinal, sensitive=sensitive if names_given else None,
                   name="released")
    n = r.key.shape[0]
    if r.roles is not None and names_given:
        sensitive = {str(c): column(r.frame.to_native(), c) for c in r.roles.sensitive}
    if weights is not None and frame is None:
        as_weights(weights, n)  # checked; the distributions count records
    names, cols = _sensitive_columns(sensitive, n)
    kind_of = _kinds(kinds, names, cols)
    cls = classes(r.key, r.strata)
    return {
        name: float(class_emd(*_encode(c, name, kind_of[name]), kind_of[name] == "numerical", cls).max())
        for name, c in zip(names, cols)
    }


def class_emd(codes: npt.NDArray[np.int64], m: int, ordered: bool, cls: Classes) -> npt.NDArray[np.float64]:
    """The EMD of the class of every distinct released row of ``cls`` for one attribute of
    codes 0..m, counting records; dense in chunks of values (a row's histogram summed over
    its class, :meth:`microagg._kanonymity.Classes.spread`), the ordered distance carrying
    the cumulative shares from chunk to chunk."""
    rows = len(cls.counts)
    q = np.bincount(codes, minlength=m) / len(codes)
    sizes = cls.spread(cls.counts[:, None].astype(np.float64))
    out, carry, q_carry = np.zeros(rows), np.zeros(rows), 0.0
    chunk = max(1, 2_000_000 // rows)
    for lo in range(0, m, chunk):
        hi = min(m, lo + chunk)
        inside = (codes >= lo) & (codes < hi)
        own = np.bincount(cls.inverse[inside] * (hi - lo) + codes[inside] - lo, minlength=rows * (hi - lo))
        p = cls.spread(own.reshape(rows, hi - lo).astype(np.float64)) / sizes
        if not ordered:
            out += 0.5 * np.abs(p - q[lo:hi]).sum(axis=1)
            continue
        cdf, q_cdf = carry[:, None] + np.cumsum(p, axis=1), q_carry + np.cumsum(q[lo:hi])
        last = hi - lo - (hi == m)  # F_P and F_Q both reach 1 at the last value
        out += np.abs(cdf[:, :last] - q_cdf[:last]).sum(axis=1)
        carry, q_carry = cdf[:, -1], float(q_cdf[-1])
    return out / (m - 1) if ordered and m > 1 else (np.zeros(rows) if ordered else out)


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
