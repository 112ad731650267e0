"""The numeric embedding of a mixed key, in which every method runs unchanged.

Numeric column: its values, z-scored (whole file, population sd) and multiplied by the
attribute weight w. Ordinal column: the level's rank 0..L-1, z-scored likewise, times w.
Nominal column with L levels: L one-hot columns times w/sqrt(2), so two records with
different categories are w^2 apart in squared distance (as far as one sd of a numeric column
at w = 1) and a group's centroid is its frequency vector of the levels. A missing cell is NaN
in its column (a nominal one: in its whole one-hot block), completed by ``microaggregate``'s
missing-value handling like a numeric cell.

The embedding is handed to ``microaggregate`` as the raw columns (values, ranks, 0/1) with
``standardize=`` set to the divisor of each column (sd / w, sqrt(2) / w): the algorithm sees
exactly the embedding, and the numeric columns come back aggregated in their own units.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Mapping

import numpy as np
import numpy.typing as npt

from .native import NATIVE_METHODS
from .types import NOMINAL, KeyColumn

# Largest embedding built (bytes of float64); a nominal column with a level per record (an
# identifier) would otherwise ask for n^2 cells.
_MAX_BYTES = 4 << 30


@dataclass(frozen=True)
class Embedding:
    """The matrix given to ``microaggregate`` and its per-column divisors.

    ``blocks[j]`` is the slice of columns that key column j occupies.
    """

    matrix: npt.NDArray[np.float64]
    scale: npt.NDArray[np.float64]
    blocks: tuple[slice, ...]

    def standardized(self) -> npt.NDArray[np.float64]:
        """The embedding itself (columns divided by their scale, not centred; NaN where missing)."""
        return self.matrix / self.scale


def embed(key: list[KeyColumn], attribute_weights: Mapping[Any, float]) -> Embedding:
    """The embedding of ``key`` with each column's weight (default 1)."""
    n = key[0].values.shape[0]
    width = sum(len(c.levels) if c.kind == NOMINAL else 1 for c in key)
    if n * width * 8 > _MAX_BYTES:
        widest = max(key, key=lambda c: len(c.levels))
        raise ValueError(
            f"the key's embedding would take {n * width * 8 / 2**30:.1f} GiB: column "
            f"{widest.name!r} has {len(widest.levels)} levels; merge its levels or drop it from the key, or group it with a "
            f"method that takes the key without its embedding ({', '.join(NATIVE_METHODS)})"
        )
    matrix = np.empty((n, width), dtype=np.float64, order="F")
    scale = np.empty(width, dtype=np.float64)
    blocks = []
    start = 0
    for c in key:
        w = attribute_weights.get(c.name, 1.0)
        missing = c.missing
        if c.kind == NOMINAL:
            block = slice(start, start + len(c.levels))
            one_hot = (c.values[:, None] == np.arange(len(c.levels))).astype(np.float64)
            one_hot[missing] = np.nan
            matrix[:, block] = one_hot
            scale[block] = np.sqrt(2.0) / w
        else:
            block = slice(start, start + 1)
            values = np.where(missing, np.nan, c.values.astype(np.float64))
            matrix[:, start] = values
            sd = float(np.std(values[~missing])) if (~missing).any() else 0.0
            scale[start] = (sd if sd > 0 else 1.0) / w
        blocks.append(block)
        start = block.stop
    return Embedding(matrix, scale, tuple(blocks))
