"""The per-partition steps of the Dask planner's passes (docs/scaling.md#the-dask-engine):
each runs where its partition lives and returns a small summary (counts, sums, samples,
histograms) that the planner adds up.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

import numpy as np
import pandas as pd

from .keys import Bracket, Float, Int, Keys, Sample, UInt, key_less, order_bits, pack_keys
from .strata import partition_strata
from .tree import Layout, Spec, attribute_values


@dataclass
class Block:
    """The records of one input partition as a pass sees them: row ids, standardized values,
    current node (and a mixed key's :class:`Layout`: the last columns of ``z`` are codes)."""

    ids: Int
    z: Float
    node: Int
    layout: Optional[Layout] = None



def scan(frame: pd.DataFrame, spec: Spec, index: int) -> tuple[int, Int, Float, bool, Optional[pd.DataFrame]]:
    """Records, observed counts and sums per column, whether any value is ±inf, and the
    strata with their sizes (:func:`partition_strata`)."""
    x = frame[spec.columns].to_numpy(dtype=np.float64, na_value=np.nan)
    observed = ~np.isnan(x)
    strata = partition_strata(frame, spec.by, x, spec.merge) if spec.by else None
    return len(x), observed.sum(axis=0), np.where(observed, x, 0.0).sum(axis=0), bool(np.isinf(x).any()), strata


def squared_deviations(frame: pd.DataFrame, spec: Spec, mean: Float, index: int) -> Float:
    """Per column: sum of squared deviations of the observed values from ``mean``."""
    x = frame[spec.columns].to_numpy(dtype=np.float64, na_value=np.nan)
    return np.asarray(np.nansum((x - mean) ** 2, axis=0), dtype=np.float64)


def active_rows(block: Block, slot_of: Int) -> tuple[Int, Int]:
    """Rows of the block in an active node, and their node's slot."""
    rows = np.flatnonzero(slot_of[block.node] >= 0)
    return rows, slot_of[block.node[rows]]


def part_sums(block: Block, slot_of: Int, n_slots: int, index: int) -> tuple[Float, Float]:
    """Per active node and attribute: observed count and sum (a level of a mixed key: its
    column's observed count and the records holding it, :func:`level_sums`)."""
    rows, slot = active_rows(block, slot_of)
    layout = block.layout
    z = block.z[rows] if layout is None else block.z[rows, : layout.numeric]
    ok = ~np.isnan(z)
    count, total = sums_by_slot(slot, ok.astype(np.float64), n_slots), sums_by_slot(slot, np.where(ok, z, 0.0), n_slots)
    if layout is None:
        return count, total
    held_count, held = level_sums(slot, block.z[rows], n_slots, layout)
    return np.hstack([count, held_count]), np.hstack([total, held])


def level_sums(slot: Int, z: Float, n_slots: int, layout: Layout) -> tuple[Float, Float]:
    """Per slot and level of a mixed key (records with standardized values ``z``, codes in
    the columns after the numeric ones): the observed count of the level's column and the
    records holding the level, shape (n_slots, levels), from the codes alone."""
    counts, held = [], []
    for j, n_levels in enumerate(layout.levels):
        code = z[:, layout.numeric + j]
        ok = ~np.isnan(code)
        observed = np.bincount(slot[ok], minlength=n_slots).astype(np.float64)
        counts.append(np.repeat(observed[:, None], n_levels, axis=1))
        flat = slot[ok] * n_levels + code[ok].astype(np.int64)
        held.append(np.bincount(flat, minlength=n_slots * n_levels).astype(np.float64).reshape(n_slots, n_levels))
    return np.hstack(counts), np.hstack(held)


def part_deviations(block: Block, slot_of: Int, means: Float, stride: Int, index: int) -> tuple[Float, Sample]:
    """Per active node and numeric attribute (the columns of ``means``): sum of squared
    deviations of the observed values; and
    every ``stride[slot]``-th record of each node, in row order (the first selection round's
    sample, taken before the cut attribute is known)."""
    rows, slot = active_rows(block, slot_of)
    z = block.z[rows] if block.layout is None else block.z[rows, : means.shape[1]]
    deviations = sums_by_slot(slot, np.nan_to_num((z - means[slot]) ** 2, nan=0.0), len(means))
    keep = every(slot, stride)
    return deviations, (slot[keep], block.ids[rows[keep]], block.z[rows[keep]])


def every(slot: Int, stride: Int) -> Int:
    """Positions of every ``stride[s]``-th entry of each slot s, in the given order."""
    order = np.argsort(slot, kind="stable")
    ordered = slot[order]
    keep = (np.arange(len(ordered)) - np.searchsorted(ordered, ordered, side="left")) % stride[ordered] == 0
    return np.sort(order[keep])


def sums_by_slot(slot: Int, values: Float, n_slots: int) -> Float:
    """Column sums of ``values`` per slot, shape (n_slots, d), float64 (``np.bincount`` of
    no records gives integers)."""
    sums = [np.bincount(slot, weights=values[:, j], minlength=n_slots) for j in range(values.shape[1])]
    return np.stack(sums, axis=1).astype(np.float64, copy=False)


def bracketed(block: Block, slot_of: Int, attr: Int, bracket: Bracket) -> tuple[Int, UInt, Int]:
    """Slots, value keys and ids of the block's records inside their node's bracket."""
    rows, slot = active_rows(block, slot_of)
    bits, ids = order_bits(attribute_values(block.z, rows, attr[slot], block.layout)), block.ids[rows]
    lo_bits, lo_id, hi_bits, hi_id = bracket
    inside = ~key_less(bits, ids, lo_bits[slot], lo_id[slot]) & key_less(bits, ids, hi_bits[slot], hi_id[slot])
    return slot[inside], bits[inside], ids[inside]



def bracket_sample(block: Block, slot_of: Int, attr: Int, bracket: Bracket, stride: Int, index: int) -> Keys:
    """Every ``stride[slot]``-th bracketed record of each node, in row order (packed keys)."""
    slot, bits, ids = bracketed(block, slot_of, attr, bracket)
    keep = every(slot, stride)
    return pack_keys(slot[keep], bits[keep], ids[keep])


def bucket_counts(block: Block, slot_of: Int, attr: Int, bracket: Bracket, pivots: Keys, bins: int, index: int) -> Int:
    """Bracketed records per bucket between consecutive pivots. A record's bin is the
    number of (flattened, sorted) pivots at or below its key plus its slot, so node s owns
    (its pivots + 1) consecutive bins."""
    slot, bits, ids = bracketed(block, slot_of, attr, bracket)
    where = np.searchsorted(pivots, pack_keys(slot, bits, ids), side="right") + slot
    return np.bincount(where, minlength=bins).astype(np.int64)

