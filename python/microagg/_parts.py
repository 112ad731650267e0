"""Grouping one part of a partitioned run with the whole file's scaling (DESIGN §10).

A partitioned run (``max_part``) standardizes every part with the *global* mean and
scale, so that the parts' groups are comparable and a part gives the same groups whichever
engine cut it. This module is the one place that groups a part; the Dask engine calls it
on each worker.
"""

from __future__ import annotations

import inspect
from typing import Any, Optional

import numpy as np
import numpy.typing as npt

from ._api import microaggregate

AGGREGATIONS = ("mean", "median", "trim", "onestep")
"""Names accepted by ``aggregation=`` (DESIGN §8, sdcMicro's names)."""

MISSING = ("error", "fill", "keep")
"""Names accepted by ``missing=`` (DESIGN §8)."""


def workflow_options(*, weights: bool, aggregation: str, missing: str) -> dict[str, Any]:
    """The DESIGN §8 options that differ from their defaults, checked, as keyword
    arguments for :func:`microagg.microaggregate` (``weights`` only says whether there are
    weights). Raises ``ValueError`` naming the argument for an unknown name or for an
    option this build's ``microaggregate`` does not offer yet."""
    if aggregation not in AGGREGATIONS:
        raise ValueError(f"aggregation must be one of {', '.join(AGGREGATIONS)}, got {aggregation!r}")
    if missing not in MISSING:
        raise ValueError(f"missing must be one of {', '.join(MISSING)}, got {missing!r}")
    options: dict[str, Any] = {}
    if aggregation != "mean":
        options["aggregation"] = aggregation
    if missing != "error":
        options["missing"] = missing
    accepted = inspect.signature(microaggregate).parameters
    absent = [name for name in (*options, *(["weights"] if weights else [])) if name not in accepted]
    if absent:
        raise ValueError(
            f"{', '.join(absent)}: not supported by this version of microagg.microaggregate, "
            "which the Dask engine uses on each part"
        )
    return options


def group_part(
    values: npt.NDArray[np.float64],
    k: int,
    method: str,
    *,
    mean: npt.NDArray[np.float64],
    scale: npt.NDArray[np.float64],
    label_offset: int = 0,
    weights: Optional[npt.NDArray[np.float64]] = None,
    aggregation: str = "mean",
    missing: str = "error",
    n_jobs: int = 1,
    **method_params: Any,
) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.float64]]:
    """Group one part and return ``(labels, released)``.

    ``values`` (m × d, the caller's units, rows in increasing row-id order) are
    standardized with the global ``mean`` and ``scale`` as ``(x - mean) / scale`` (the
    core's formula), grouped by ``method`` with groups of at least ``k``, and every record
    is released as its group's aggregate of the *original* values (``"mean"``: the
    (weighted) mean over observed values; other aggregations are affine-equivariant and
    are mapped back from the standardized result). ``labels`` are ``label_offset`` plus the
    part's own group numbers 0..g-1: a caller that gives each part an offset of at least
    the previous parts' group counts gets ids unique over the whole file.
    """
    mean = np.asarray(mean, dtype=np.float64)
    scale = np.asarray(scale, dtype=np.float64)
    z = (values - mean) / scale
    options = workflow_options(weights=weights is not None, aggregation=aggregation, missing=missing)
    if weights is not None:
        options["weights"] = weights
    res = microaggregate(z, k, method, standardize=False, n_jobs=n_jobs, **options, **method_params)
    if aggregation == "mean":
        released = _group_means(values, res.labels, res.n_groups, weights)
        if missing == "keep":
            released[np.isnan(values)] = np.nan
    else:
        released = res.aggregated * scale + mean
    return res.labels + np.int64(label_offset), released


def _group_means(
    values: npt.NDArray[np.float64],
    labels: npt.NDArray[np.int64],
    n_groups: int,
    weights: Optional[npt.NDArray[np.float64]],
) -> npt.NDArray[np.float64]:
    """Each record's group mean of each attribute over the observed values, weighted when
    ``weights`` are given (a group whose weights are all zero uses the plain mean)."""
    observed = ~np.isnan(values)
    x = np.where(observed, values, 0.0)
    unit = np.ones(len(labels))
    w = unit if weights is None else np.asarray(weights, dtype=np.float64)
    out = np.empty_like(x)
    for j in range(x.shape[1]):
        ok = observed[:, j]
        total = np.bincount(labels, weights=w * ok, minlength=n_groups)
        plain = total == 0
        if weights is not None and plain.any():
            total = np.where(plain, np.bincount(labels, weights=unit * ok, minlength=n_groups), total)
            w_j = np.where(plain[labels], 1.0, w)
        else:
            w_j = w
        sums = np.bincount(labels, weights=w_j * x[:, j], minlength=n_groups)
        with np.errstate(invalid="ignore", divide="ignore"):
            out[:, j] = (sums / total)[labels]
    return out
