"""Mixed keys grouped natively by the core (docs/algorithms.md#mixed-keys): the numeric and
ordinal columns as a matrix z-scored x weight, the nominal ones as integer codes with their
weights, so exact MDAV and the four t-closeness methods work in the embedding's geometry
without its one-hot columns (O(n x attributes) memory instead of O(n x levels)).

What the result reports stays the embedding's: SSE and SST add each nominal column's part,
(w^2/2) * (W - sum_l W_l^2 / W) for a group (or the file) of total weight W with W_l on
level l, which is the one-hot block's sum of squares scaled by w/sqrt(2), with the record
weights scaled as the core scales them.
"""

from __future__ import annotations

import dataclasses
import functools
import inspect
from typing import TYPE_CHECKING, Any, Mapping, Optional, cast

import numpy as np
import numpy.typing as npt

from .. import _core
from .._api import MicroaggregationResult, microaggregate, prepare_run, released_result
from .._scale import shared_scale
from .._tcloseness import t_close_microaggregate, t_close_prepared
from .release import level_totals
from .types import NOMINAL, NUMERIC, KeyColumn

if TYPE_CHECKING:
    from .._core import _MixedWorkflowOptions

__all__ = ["NATIVE_METHODS", "group_natively", "takes_natively"]

NATIVE_METHODS = ("mdav",)
"""The methods that group a mixed key without its embedding (the core's ``NATIVE_MIXED``);
t-closeness too, from exact MDAV (every ``t_method``)."""

_T_CLOSE = ("sensitive", "t", "t_method", "kinds")
"""The keywords of :func:`t_close_microaggregate` that are not :func:`prepare_run`'s."""


def _is_t_close(group: Any) -> bool:
    """Whether ``group`` is :func:`t_close_microaggregate` bound to its confidential
    attributes (``microagg.anonymize``'s t-closeness step)."""
    return isinstance(group, functools.partial) and group.func is t_close_microaggregate


def takes_natively(key: list[KeyColumn], method: str, group: Any, categorical_release: str, options: Mapping[str, Any]) -> bool:
    """Whether ``key`` is grouped natively: exact MDAV by :func:`microaggregate` or to start
    :func:`t_close_microaggregate` from, a nominal column and a numeric or ordinal one
    (``max_part`` cuts the parts on the key itself; a missing nominal cell is completed by
    its most probable level, a numeric one by EM, for t-closeness too), groups released as
    their means (the result's SSE of another
    aggregation is taken around each one-hot column's own median) and the mode as the
    categorical release (the medoid is found on the embedding)."""
    kinds = {c.kind == NOMINAL for c in key}
    return (
        method in NATIVE_METHODS
        and (group is microaggregate or _is_t_close(group))
        and kinds == {True, False}
        and categorical_release == "mode"
        and options.get("aggregation", "mean") == "mean"
    )


def _nominal_sum_of_squares(codes: npt.NDArray[np.int64], groups: npt.NDArray[np.int64], w: Optional[npt.NDArray[np.float64]]) -> float:
    """sum over groups of W - sum_l W_l^2 / W: the squared deviations of a one-hot block,
    from the levels each group holds (never a group x level table)."""
    n_groups = int(groups.max()) + 1
    group, _, per_level = level_totals(codes, groups, n_groups, w)
    total = np.bincount(group, weights=per_level, minlength=n_groups)
    squares = np.bincount(group, weights=per_level**2, minlength=n_groups)
    return float(np.sum(total - squares / np.where(total > 0, total, 1.0)))


def group_natively(
    key: list[KeyColumn],
    k: int,
    method: str,
    attribute_weights: Mapping[Any, float],
    group: Any = microaggregate,
    scale: Optional[npt.NDArray[np.float64]] = None,
    **options: Any,
) -> tuple[dict[Any, npt.NDArray[np.float64]], MicroaggregationResult]:
    """Group ``key`` with the core's native mixed key (each column weighted by
    ``attribute_weights``, default 1) by ``group`` (:func:`microaggregate`, or
    :func:`t_close_microaggregate` bound to its confidential attributes) and its other
    ``options``. Returns the numeric columns' released values (ordinal ones release a level,
    like nominal ones, every cell its group's value: ``missing="keep"`` is the release's to
    apply) and the result, with SSE and SST on the embedding. ``scale`` divides the numeric
    and ordinal columns (default: their sd / weight over ``key``, the sd cut by
    :func:`microagg._scale.shared_scale` with ``max_part`` so that the Dask engine, which
    gives each part the whole file's, groups alike)."""
    numeric = [c for c in key if c.kind != NOMINAL]
    nominal = [c for c in key if c.kind == NOMINAL]
    matrix = np.column_stack([np.where(c.missing, np.nan, c.values.astype(np.float64)) for c in numeric])
    if scale is None:
        sd = np.nanstd(matrix, axis=0)
        sd = np.where(sd > 0, sd, 1.0)
        if options.get("max_part") is not None:  # as the core's partitioned runs (and the Dask engine)
            sd = shared_scale(sd)
        scale = sd / np.array([attribute_weights.get(c.name, 1.0) for c in numeric])
    weights = np.array([attribute_weights.get(c.name, 1.0) for c in nominal])
    codes = np.column_stack([c.values.astype(np.int64) for c in nominal])
    t_close = _is_t_close(group)
    entry = t_close_microaggregate if t_close else microaggregate
    keywords = {**group.keywords, **options} if t_close else options
    bound = inspect.signature(entry).bind(matrix, k, method, standardize=scale, **keywords)
    bound.apply_defaults()
    args = dict(bound.arguments)
    params, X, k, method = (args.pop(a) for a in ("method_params", "X", "k", "method"))
    closeness = {a: args.pop(a) for a in _T_CLOSE if a in args}
    if t_close:
        args["dtype"] = "float64"  # t-closeness works in float64
    run = prepare_run(X, k, method, **args, method_params=params)
    workflow = cast("_MixedWorkflowOptions", dict(run.workflow))
    workflow["nominal_codes"] = codes
    workflow["nominal_weights"] = weights.tolist()
    run = run._replace(workflow=workflow)
    if t_close:
        res: MicroaggregationResult = t_close_prepared(run, method, **closeness)
    else:
        out = _core.microaggregate_array(
            run.matrix, run.k, run.options, workflow, single_precision=run.single, progress=run.progress
        )
        res = released_result(MicroaggregationResult, out, run.k, method, run.strata, **run.fields)
    w = run.workflow["weights"]
    if w is not None:
        # The core counts each record with its weight times the power of two that brings the
        # largest weight into [1, 2) (src/workflow/evaluation.rs); so do the nominal parts.
        w = w * 2.0 ** (1 - np.frexp(w.max())[1])
    everyone = np.zeros(codes.shape[0], dtype=np.int64)
    sse, sst = res.sse, res.sst
    for j, wj in enumerate(weights):  # observed cells only, as the core's numeric part
        sse += wj**2 / 2 * _nominal_sum_of_squares(codes[:, j], res.labels, w)
        sst += wj**2 / 2 * _nominal_sum_of_squares(codes[:, j], everyone, w)
    released = res.group_values[res.labels]  # every cell its group's value, kept cells too
    values = {c.name: released[:, j] for j, c in enumerate(numeric) if c.kind == NUMERIC}
    n_filled = res.n_filled + (int((codes < 0).sum()) if res.missing == "fill" else 0)
    return values, dataclasses.replace(res, sse=sse, sst=sst, n_filled=n_filled)
