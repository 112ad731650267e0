"""Sort keys of the Dask planner (docs/scaling.md#the-dask-engine): a record's position in a
cut's order (value, row id) as integers, packed so that NumPy sorts and searches them.

A cut orders records by (value of the cut attribute, row id), missing values after every
observed one, as ``src/workflow/parts.rs`` does; :func:`order_bits` is the core's
``float::order_bits``.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

Int = npt.NDArray[np.int64]
UInt = npt.NDArray[np.uint64]
Float = npt.NDArray[np.float64]
Keys = npt.NDArray[np.void]
Sample = tuple[Int, Int, Float]
"""Sampled records: their node's slot, row ids and standardized values (all attributes)."""
Bracket = tuple[UInt, Int, UInt, Int]

NAN_BITS = np.uint64(2**64 - 1)
"""The key of a missing value: after every number."""
_SIGN = np.uint64(2**63)


def order_bits(v: Float) -> UInt:
    """Integer keys in the numeric order of ``v`` (``float::order_bits`` of the core:
    -0.0 equals 0.0), NaN after every number."""
    b = np.where(v == 0.0, 0.0, v).view(np.uint64)
    keys = np.where(b >= _SIGN, ~b, b | _SIGN)
    keys[np.isnan(v)] = NAN_BITS
    return keys


def pack_keys(slot: Int, bits: UInt, ids: Int) -> Keys:
    """(slot, bits, id) triples as 24-byte big-endian strings, whose byte order (used by
    ``np.sort`` and ``np.searchsorted`` on void arrays) is the lexicographic order."""
    m = np.empty((len(bits), 3), dtype=">u8")
    m[:, 0], m[:, 1], m[:, 2] = slot, bits, ids
    return m.view("V24").ravel()


def unpack_keys(keys: Keys) -> tuple[Int, UInt, Int]:
    """The (slot, bits, id) columns of packed keys."""
    m = np.frombuffer(keys.tobytes(), dtype=">u8").reshape(-1, 3)
    return m[:, 0].astype(np.int64), m[:, 1].astype(np.uint64), m[:, 2].astype(np.int64)



def key_less(bits: UInt, ids: Int, other_bits: UInt, other_ids: Int) -> npt.NDArray[np.bool_]:
    """Whether each key (bits, id) is below the other one."""
    below: npt.NDArray[np.bool_] = (bits < other_bits) | ((bits == other_bits) & (ids < other_ids))
    return below

