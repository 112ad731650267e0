"""What a Dask release reports once computed: records, groups and the information loss.

The information loss is SSE / SST as :func:`microagg.microaggregate` reports it for the same
run: sums of squares over the observed cells, in the whole file's units (the plan's scale),
SST around each column's (weighted) observed mean (a ratio: the weights' scale does not
change it). Every released partition contributes per-column sums (:func:`partition_sums`),
taken around the plan's mean with its weights divided by its own largest; :func:`summarize`
rescales them to the file's largest weight and adds them up, so no pass over the data is
added and no sum can overflow whatever the weights' scale.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Optional, Sequence

import numpy as np
import numpy.typing as npt

Float = npt.NDArray[np.float64]


@dataclass(frozen=True)
class Summary:
    """The outcome of a computed Dask release."""

    columns: tuple[Any, ...]
    """The quasi-identifiers that were microaggregated."""
    n_records: int
    n_groups: int
    information_loss: float
    """SSE / SST in [0, 1] (0 when every record is alike), as the local engine reports it."""


@dataclass(frozen=True)
class PartitionSums:
    """One released partition's share of the sums (weights divided by ``top``, its largest)."""

    n_records: int
    n_groups: int
    top: float
    sse: float
    weight: Float
    """Per column: Σ w over the observed cells."""
    first: Float
    """Per column: Σ w·z, z the value centred on the plan's mean and divided by its scale."""
    second: Float
    """Per column: Σ w·z²."""


def partition_sums(
    values: Float, released: Float, weights: Optional[Float], mean: Float, scale: Float, n_groups: int
) -> PartitionSums:
    """The sums of one partition: its original ``values``, their ``released`` values and
    its ``weights`` (None: unit weights)."""
    observed = ~np.isnan(values)
    w = np.ones(len(values)) if weights is None else np.asarray(weights, dtype=np.float64)
    top = float(w.max()) if len(w) else 0.0
    unit = (w / top if top > 0 else np.zeros_like(w))[:, None] * observed
    z = np.where(observed, (values - mean) / scale, 0.0)
    gap = np.where(observed, (values - released) / scale, 0.0)
    return PartitionSums(
        len(values), n_groups, top, float((unit * gap**2).sum()),
        unit.sum(axis=0), (unit * z).sum(axis=0), (unit * z**2).sum(axis=0),
    )


def summarize(parts: list[PartitionSums], columns: Sequence[Any]) -> Summary:
    """The file's records, groups and information loss from every partition's sums."""
    top = max((p.top for p in parts), default=0.0)
    factor = [p.top / top if top > 0 else 0.0 for p in parts]
    sse = sum(f * p.sse for f, p in zip(factor, parts))
    weight, first, second = (sum(f * getattr(p, name) for f, p in zip(factor, parts)) for name in ("weight", "first", "second"))
    with np.errstate(invalid="ignore", divide="ignore"):
        sst = float(np.sum(np.where(weight > 0, second - first**2 / weight, 0.0)))
    loss = min(max(sse / sst, 0.0), 1.0) if sst > 0 else 0.0
    return Summary(tuple(columns), sum(p.n_records for p in parts), sum(p.n_groups for p in parts), loss)
