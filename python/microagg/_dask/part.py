"""Grouping one part of a partitioned run with the whole file's scaling
(docs/scaling.md#partitioned-runs).

A partitioned run (``max_part``) groups every part in the units of the whole file (its
per-attribute standard deviations), so that the parts' groups are comparable and a part
gives the same groups whichever engine cut it. This module is the one place where the Dask
engine groups a part, on each worker, with the same core call the local pipeline makes.
"""

from __future__ import annotations

from typing import Any, Optional

import numpy as np
import numpy.typing as npt

from .. import _core
from .._api import microaggregate


def workflow_options(*, weights: bool, aggregation: str, missing: str) -> dict[str, Any]:
    """The workflow options (docs/workflow.md) that differ from their defaults, checked, as keyword
    arguments for :func:`microagg.microaggregate` (``weights`` only says whether there are
    weights: they are per-part data). Raises ``ValueError`` naming the argument for an
    unknown name, before any task runs."""
    for name, value, allowed in (("aggregation", aggregation, _core.AGGREGATIONS), ("missing", missing, _core.MISSING_MODES)):
        if value not in allowed:
            raise ValueError(f"{name} must be one of {', '.join(allowed)}, got {value!r}")
    options: dict[str, Any] = {}
    if aggregation != "mean":
        options["aggregation"] = aggregation
    if missing != "error":
        options["missing"] = missing
    return options


def group_part(
    values: npt.NDArray[np.float64],
    k: int,
    method: str,
    *,
    scale: npt.NDArray[np.float64],
    label_offset: int = 0,
    weights: Optional[npt.NDArray[np.float64]] = None,
    aggregation: str = "mean",
    missing: str = "error",
    n_jobs: int = 1,
    **method_params: Any,
) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.float64]]:
    """Group one part and return ``(labels, released)``.

    ``values`` (m × d, the caller's units, rows in increasing row-id order) are grouped as
    the local pipeline groups a part of a ``max_part`` run: by the Rust core, in the units
    of the whole file's per-attribute ``scale`` (``standardize=scale``; pass it through
    :func:`microagg._scale.shared_scale` as the local pipeline does), and every record is
    released as its group's aggregate of the original values (observed values, weights and
    ``missing`` honoured). Given the same part and scale, this is the local run's grouping
    and release bit for bit. ``labels`` are ``label_offset`` plus the part's own group
    numbers 0..g-1: a caller that gives each part an offset of at least the previous parts'
    group counts gets ids unique over the whole file.
    """
    res = microaggregate(
        values,
        k,
        method,
        standardize=np.asarray(scale, dtype=np.float64),
        weights=weights,
        aggregation=aggregation,
        missing=missing,
        n_jobs=n_jobs,
        **method_params,
    )
    return res.labels + np.int64(label_offset), res.aggregated
