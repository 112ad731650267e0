"""The units every part of a partitioned run is grouped in (docs/scaling.md#the-dask-engine):
standard deviations cut to the precision both engines agree on."""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

__all__ = ["shared_scale"]


def shared_scale(sd: npt.NDArray[np.float64]) -> npt.NDArray[np.float64]:
    """Per-attribute standard deviations with their last 21 mantissa bits cleared, as the
    core's ``workflow::parts::shared_scale`` does for a ``max_part`` run: engines that sum the
    file in different orders then agree on the scale, bit for bit, so they group every part
    alike even on tie-heavy data."""
    bits = np.ascontiguousarray(sd, dtype=np.float64).view(np.uint64)
    return (bits & ~np.uint64((1 << 21) - 1)).view(np.float64)
