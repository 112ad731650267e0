"""The functional API: :func:`microaggregate` and the quality measures (docs/api.md)."""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property
from typing import TYPE_CHECKING, Any, NamedTuple, Optional, TypeVar, Union

import numpy as np
import numpy.typing as npt

from . import _core
from ._assess_input import as_release
from ._kanonymity import class_sizes
from ._validation import (
    as_data_matrix,
    as_labels,
    check_bool,
    check_int,
    check_k,
    check_n_jobs,
    check_str,
    normalize_params,
)
from ._workflow import StratumMerge, workflow_options

if TYPE_CHECKING:
    from ._core import _RunOptions, _WorkflowOptions

R = TypeVar("R", bound="MicroaggregationResult")

METHODS: tuple[str, ...] = tuple(_core.METHODS)
"""Names accepted by ``method=``."""


@dataclass(frozen=True)
class MicroaggregationResult:
    """A k-anonymous partition of the records and its information loss.

    Attributes
    ----------
    labels : ndarray of int64, shape (n,)
        Group of each record, ``0 .. n_groups-1`` in order of creation.
    n_groups : int
        Number of groups.
    centroids : ndarray of float64, shape (n_groups, d)
        Group means in the caller's units: the plain mean of each group's records (of
        their observed values, with missing values), the centroid the algorithms group
        around; weights and the aggregation never change it. What a group publishes is
        :attr:`group_values`.
    sse, sst : float
        Within-group sum of squares around the released group values and total sum of
        squares around the overall mean, on the standardized data when
        ``standardize=True``; each record counts with its weight.
    k : int
        The anonymity parameter.
    method : str
        The method that produced the partition.
    aggregation : str
        What each group releases: "mean", "median", "trim" or "onestep".
    merges : tuple of StratumMerge
        Strata with fewer than ``k`` records merged into their nearest stratum
        (``small_strata="merge"``), in order; empty otherwise.
    released_values : ndarray of float64, shape (n_groups, d), or None
        The group values when they are not the centroids (weights, or any aggregation but
        "mean"); read :attr:`group_values` instead.
    missing : str
        How missing values (NaN) were treated: ``"error"``, ``"fill"`` or ``"keep"``.
    missing_cells : ndarray of bool, shape (n, d), or None
        With ``missing="keep"``, the cells that were missing in ``X`` (None when none was).
    n_filled : int
        With ``missing="fill"``, how many cells were missing in ``X`` and hold their group's
        value in :attr:`aggregated`; 0 otherwise.
    """

    labels: npt.NDArray[np.int64]
    n_groups: int
    centroids: npt.NDArray[np.float64]
    sse: float
    sst: float
    k: int
    method: str
    aggregation: str = "mean"
    merges: tuple[StratumMerge, ...] = ()
    released_values: Optional[npt.NDArray[np.float64]] = field(default=None, repr=False)
    missing: str = "error"
    missing_cells: Optional[npt.NDArray[np.bool_]] = None
    n_filled: int = 0

    @property
    def group_sizes(self) -> npt.NDArray[np.int64]:
        """Records per group, shape (n_groups,)."""
        return np.bincount(self.labels, minlength=self.n_groups).astype(np.int64)

    @property
    def information_loss(self) -> float:
        """SSE / SST in [0, 1] (the papers print 100 times this)."""
        return self.sse / self.sst if self.sst > 0 else 0.0

    @property
    def group_values(self) -> npt.NDArray[np.float64]:
        """What each group releases, shape (n_groups, d), in the caller's units: the
        ``aggregation`` of its records' values (weighted with ``weights``), so that
        ``aggregated[i] == group_values[labels[i]]`` in every cell that was observed or
        filled. Without weights and with ``aggregation="mean"`` these are the centroids."""
        return self.centroids if self.released_values is None else self.released_values

    @cached_property
    def aggregated(self) -> npt.NDArray[np.float64]:
        """The k-anonymous data: every record replaced by its group's value, shape (n, d).

        With missing values, a group's value comes from its observed values (from its
        members' completed values where none observed the attribute): ``missing="fill"``
        releases it in every cell (all rows of a group identical), ``missing="keep"`` leaves
        the cells that were missing in ``X`` as NaN. Such a
        release is k-anonymous when a missing value is read as matching any value
        (sdcMicro's convention, which :func:`is_k_anonymous` and :func:`microagg.assess`
        count): a group's rows agree on every cell two of them observe. Read as a value of
        its own, a blank could single a record out.
        """
        out = self.group_values[self.labels]
        if self.missing_cells is not None:
            out[self.missing_cells] = np.nan
        return out


def microaggregate(
    X: Any,
    k: int = 5,
    method: str = "mdav",
    *,
    standardize: Union[bool, npt.ArrayLike] = True,
    dtype: Any = None,
    n_jobs: int = 1,
    seed: Optional[int] = None,
    progress: Optional[_core.Progress] = None,
    by: Any = None,
    small_strata: str = "error",
    weights: Any = None,
    aggregation: str = "mean",
    trim: Optional[float] = None,
    missing: str = "error",
    max_part: Optional[int] = None,
    **method_params: Any,
) -> MicroaggregationResult:
    """Partition the records of ``X`` into groups of at least ``k`` (k-anonymous microaggregation).

    Parameters
    ----------
    X : array-like of shape (n_records, n_attributes)
        Real numbers: NumPy array of any numeric dtype and memory order, nested lists,
        or a numeric pandas DataFrame. Infinity is rejected; NaN too unless ``missing``
        allows it.
    k : int, default 5
        Minimum group size, ``2 <= k <= n_records`` (k = 1 would release every record as
        it is: a ``ValueError``).
    method : str, default "mdav"
        One of :data:`METHODS`.
    standardize : bool or array-like of d positive numbers, default True
        z-score every attribute (population std) before partitioning; SSE/SST are then
        measured on the standardized data, as in the papers.
        An array divides attribute j by ``standardize[j]`` instead of the data's own
        standard deviation (after centering): the units of a larger file the data is a part
        of, or known population standard deviations. The Dask engine groups its parts so.
    dtype : None, "float32" or "float64"
        Working precision. ``None`` uses float64 unless ``X`` is float32. float32 is
        F-MDAV's single-precision strategy: faster, same groups except near-ties.
    n_jobs : int, default 1
        1 is the single-threaded "fair" mode; -1 uses all cores; n > 1 uses n threads,
        at most as many as there are cores, or 8 on a machine with fewer (a larger n is
        capped: more threads would only compete for them; up to 8 lets a small machine run
        the splits of a larger one). The partition is identical for every value.
    seed : int, optional
        Seed of the randomized methods (``"ona"``); ``None`` means 0, so every result is
        reproducible. Deterministic methods ignore it.
    progress : microagg.Progress, optional
        Read from another thread while the run goes on: ``progress.assigned`` (records
        placed in groups so far, ``n`` at the end) and ``progress.rounds`` (improvement
        rounds done by ``"ona"`` and ``"ona-star"``).
    by : array-like of n labels, optional
        Strata: no group mixes records of different strata (numbers, strings, a pandas
        Series; NaN/None form one stratum of their own; a 2-D array or a DataFrame makes
        each distinct row a stratum). Labels stay ``0..n_groups-1`` over the whole file,
        strata in sorted order of their labels; standardization uses the whole file, so IL
        is comparable across strata. Strata run in parallel when ``n_jobs != 1``.
    small_strata : "error" or "merge", default "error"
        A stratum with fewer than ``k`` records is a ``ValueError`` naming every such stratum
        and its size, or (``"merge"``) is merged into the stratum whose centroid is nearest,
        repeatedly until every stratum has ``k`` records; ``res.merges`` reports the merges.
    weights : array-like of n non-negative numbers, optional
        Sampling weights. Groups are formed as without them (``k`` counts records); each
        group releases its weighted aggregate and SSE/SST are weighted. The weights are
        first multiplied by the power of two that brings the largest (a group's, for its
        value; the file's, for SSE/SST) into [1, 2): exact, so their ratios are kept, and
        subnormal or near-``float max`` weights release what unit weights do, every value
        within its group's range, SSE and SST finite. A group whose weights are all zero
        releases its unweighted aggregate.
    aggregation : "mean", "median", "trim" or "onestep", default "mean"
        What a group releases (sdcMicro's names); never changes the grouping. "median" is
        the weighted median (with equal weights the ordinary median); "trim" cuts a share
        ``trim`` of the group's total weight from each end, whole records only (with equal
        weights floor(trim * size) records per end, as R's ``mean(x, trim=)``), and releases
        the weighted mean of the rest; "onestep" clips every value to median +-
        (3/1.486) * MAD, MAD being R's ``mad()`` (1.4826 times the median absolute deviation),
        then releases the weighted mean (sdcMicro's definition).
    trim : float in [0, 0.5], optional
        The share cut from each end by ``aggregation="trim"`` (default 0.1; 0.5 gives the
        median). Only ``aggregation="trim"`` takes it.
    missing : {"error", "fill", "keep"}, default "error"
        Missing values (NaN) in ``X``. ``"error"`` refuses them. ``"fill"`` and ``"keep"``
        group records on completed coordinates: each missing cell is replaced, for grouping
        only, by its conditional expectation given the record's observed attributes under a
        multivariate normal fitted by EM to the standardized data (unweighted; a record
        with nothing observed gets the fitted means). Every method then runs as on complete
        data. Standardization uses each column's observed values; a group releases the
        aggregate of its observed values of each attribute (of its members' completed
        values where none observed it), and SSE/SST count observed cells only. ``"fill"``
        releases the group's value in every cell (k-anonymous rows); ``"keep"`` leaves
        missing cells missing in ``aggregated``. A column with no observed value is a
        ``ValueError`` naming it; infinity is always an error.
    max_part : int, optional
        Partitioned run (docs/scaling.md#partitioned-runs): Mondrian-V cuts every stratum (on the standardized
        values, at position floor(m/2) of the order (value, row index); missing cells at their
        completed values)
        until every part has at most ``max_part`` records, then the method groups each part
        on its own, parts in parallel under ``n_jobs``. MONA generalised to any method: how a
        quadratic method scales to millions of records, at a small IL cost (docs/scaling.md).
        At least ``2 * k``.
    **method_params
        Method-specific options. ``"mdav"``: ``algebraic_distance``, ``distance_reuse``,
        ``partial_sort``, ``centroid_by_subtraction`` (F-MDAV's strategies) and
        ``norm_pruning`` (microagg's exact pruned search for the farthest record), all True
        by default; all False with float64 is the traditional MDAV. ``spatial_index``
        (bool; unset = automatic: on for at most 5 attributes and at
        least 20 000 records, or at most 8 and at least 100 000) answers each round's farthest/nearest queries from a k-d
        tree with deletions instead of full passes: the same partition, about n log n in
        low dimension. ``compact_scan`` (bool; unset = automatic: on
        from 20 000 records where the k-d tree is not used) makes each pass read an int8
        copy of the records (a quarter of the bytes of float32) and re-check the few
        records that could be selected with the exact scores: the same partition, 2-3x
        faster in high dimension. A run drops the copy when it re-checks more than one
        record in 64 (heavy-tailed or well-separated data, where the int8 steps are coarse)
        and goes on with the exact scans. ``"mdav-star"``, ``"mdav-star-plus"``: ``spatial_index``
        and ``compact_scan`` likewise (same rules, same partition). ``"md"``: ``spatial_index`` likewise (same
        partition; automatic: on for 2 attributes from 2 000 records, 3 from 10 000).

    Returns
    -------
    MicroaggregationResult

    Raises
    ------
    TypeError
        Non-numeric data, or an argument of the wrong type.
    ValueError
        Empty, non-2-D or non-finite data, ``k`` out of range, an unknown method or
        parameter, strata smaller than ``k`` (with ``small_strata="error"``), bad weights,
        an unknown ``aggregation`` or ``small_strata``, ``trim`` outside [0, 0.5], a column
        with no observed value (``missing="fill"`` or ``"keep"``).
    """
    run = prepare_run(
        X, k, method, dtype=dtype, standardize=standardize, n_jobs=n_jobs, seed=seed, progress=progress, by=by,
        small_strata=small_strata, weights=weights, aggregation=aggregation, trim=trim, missing=missing,
        max_part=max_part, method_params=method_params,
    )
    out = _core.microaggregate_array(
        run.matrix, run.k, run.options, run.workflow, single_precision=run.single, progress=run.progress
    )
    return released_result(MicroaggregationResult, out, run.k, method, run.strata, **run.fields)


class PreparedRun(NamedTuple):
    """The arguments of a run checked and coerced as the extension's entry points
    (``microaggregate_array``, ``t_close_array``) take them."""

    matrix: npt.NDArray[Any]
    """The keys (float64, or float32 for F-MDAV's single precision)."""
    single: bool
    """Whether to compute in float32."""
    k: int
    strata: list[Any]
    """The original value of each stratum code (empty without ``by``)."""
    options: "_RunOptions"
    """The method, its ``params`` and the run options (:func:`run_options`)."""
    workflow: "_WorkflowOptions"
    """Strata, weights, aggregation, ``max_part`` and scale (:func:`workflow_options`)."""
    progress: Any
    """The caller's ``microagg._core.Progress`` or None."""
    fields: dict[str, Any]
    """What the result records of the run: ``aggregation``, ``missing``, ``missing_cells``,
    ``n_filled``."""


def prepare_run(
    X: Any,
    k: Any,
    method: Any,
    *,
    dtype: Any,
    standardize: Any,
    n_jobs: Any,
    seed: Any,
    progress: Any,
    by: Any,
    small_strata: Any,
    weights: Any,
    aggregation: Any,
    trim: Any,
    missing: Any,
    max_part: Any,
    method_params: dict[str, Any],
) -> PreparedRun:
    """Checks and coerces the keywords :func:`microaggregate` and
    :func:`microagg.t_close_microaggregate` share (each a ``TypeError``/``ValueError`` naming
    it; the core checks the values further)."""
    arr, single = as_data_matrix(X, dtype)
    k = check_k(k)
    standardize, scale = _standardization(standardize, arr.shape[1])
    n_jobs = check_n_jobs(n_jobs)
    if seed is not None:
        seed = check_int(seed, "seed", minimum=0, maximum=2**64 - 1)
    if progress is not None and not isinstance(progress, _core.Progress):
        raise TypeError("progress must be a microagg._core.Progress")
    workflow, strata = workflow_options(
        by,
        arr.shape[0],
        small_strata=small_strata,
        weights=weights,
        aggregation=aggregation,
        trim=trim,
        max_part=max_part,
        scale=scale,
    )
    missing = check_str(missing, "missing")
    options = run_options(check_str(method, "method"), method_params, standardize, n_jobs, seed, missing)
    cells = np.isnan(arr) if missing in ("fill", "keep") else None
    fields = dict(
        aggregation=aggregation,
        missing=missing,
        missing_cells=cells if missing == "keep" and cells is not None and cells.any() else None,
        n_filled=int(cells.sum()) if missing == "fill" and cells is not None else 0,
    )
    return PreparedRun(arr, single, k, strata, options, workflow, progress, fields)


def released_result(cls: type[R], out: Any, k: int, method: str, strata: list[Any], **fields: Any) -> R:
    """A result of class ``cls`` from the extension's ``(labels, n_groups, centroids, sse,
    sst, released, merges)`` (strata merges as codes into ``strata``) and further fields."""
    labels, n_groups, centroids, sse, sst, released, merges = out
    return cls(
        labels,
        n_groups,
        centroids,
        sse,
        sst,
        k,
        method,
        merges=tuple(StratumMerge(strata[s], strata[t], size) for s, t, size in merges),
        released_values=released,
        **fields,
    )


def run_options(
    method: str, method_params: dict[str, Any], standardize: bool, n_jobs: int, seed: Optional[int], missing: str
) -> _RunOptions:
    """The method and run options as the extension takes them (one dict, every key present;
    the core checks the values)."""
    return {
        "method": method,
        "params": normalize_params(method_params),
        "standardize": standardize,
        "n_jobs": n_jobs,
        "seed": seed,
        "missing": missing,
    }


def _standardization(standardize: Any, d: int) -> tuple[bool, Optional[npt.NDArray[np.float64]]]:
    """``standardize`` as (flag, explicit per-attribute scale or None)."""
    if isinstance(standardize, (bool, np.bool_)):
        return bool(standardize), None
    try:
        scale = np.asarray(standardize, dtype=np.float64)
    except (TypeError, ValueError):
        raise TypeError(
            f"standardize must be a bool or an array of {d} positive numbers, got {type(standardize).__name__}"
        ) from None
    if scale.shape != (d,) or not (np.isfinite(scale).all() and (scale > 0).all()):
        raise ValueError(f"standardize: an array must hold {d} finite positive numbers, one per attribute")
    return True, scale


def _evaluate(X: Any, labels: Any, standardize: bool, missing: str) -> tuple[float, float]:
    arr, _ = as_data_matrix(X)
    lab = as_labels(labels, arr.shape[0])
    _, sse_value, sst_value = _core.evaluate_labels(
        arr, lab, standardize=check_bool(standardize, "standardize"), missing=check_str(missing, "missing")
    )
    return sse_value, sst_value


def sse(X: Any, labels: Any, standardize: bool = True, missing: str = "error") -> float:
    """Within-group sum of squares of ``X`` grouped by ``labels`` (standardized units by default).

    ``missing="fill"`` or ``"keep"`` accepts NaN in ``X`` and sums over the observed cells.
    """
    return _evaluate(X, labels, standardize, missing)[0]


def information_loss(X: Any, labels: Any, standardize: bool = True, missing: str = "error") -> float:
    """SSE / SST of ``X`` grouped by ``labels``, in [0, 1] (0 when every record is equal).

    ``missing="fill"`` or ``"keep"`` accepts NaN in ``X``: both sums are then over the
    observed cells, around the observed means.
    """
    s, t = _evaluate(X, labels, standardize, missing)
    return s / t if t > 0 else 0.0


def is_k_anonymous(
    X_released: Any,
    k: int,
    *,
    by: Any = None,
    columns: Any = None,
    categorical: Any = None,
    ordinal: Any = None,
    weights: Any = None,
    sensitive: Any = None,
) -> bool:
    """True when every record of ``X_released`` is in a class of at least ``k`` records.

    The class of a record is every released record that agrees with it on each attribute
    of the key observed in both: a missing value (NaN, as ``missing="keep"`` leaves it)
    matches any value, sdcMicro's convention for keys. Without missing values that is "every
    distinct row occurs at least ``k`` times". -0.0 equals 0.0. Cost: one sort of the rows,
    and one more of the distinct rows per pair of missingness patterns (see
    :mod:`microagg._kanonymity`).

    With ``by`` (strata labels, as in :func:`microaggregate`, published with the data), only
    records of the same stratum count. ``k`` may be 1 here (every release passes): this is
    a check, not a release. Infinity is a ``ValueError``.

    A DataFrame ``X_released`` takes the column roles of :func:`microagg.anonymize`
    (:func:`microagg.risk.class_sizes`): ``columns`` the key, numeric and categorical
    columns together (a mixed key), ``categorical`` and ``ordinal`` key columns compared by
    category, ``by`` strata column names, ``weights`` and ``sensitive`` columns that are
    never keys.
    """
    k = check_int(k, "k", minimum=1)
    r = as_release(X_released, columns=columns, by=by, weights=weights, categorical=categorical, ordinal=ordinal,
                   sensitive=sensitive, name="X_released")
    return bool(class_sizes(r.key, r.strata).min() >= k)
