"""The cut tree of a Dask run (docs/scaling.md#the-dask-engine): what the planner finds
(:class:`Plan`: the global scaling, the strata and the Mondrian-V cuts) and how a record
finds its part in it (:func:`descend`), in the planner's passes and in the release alike.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Optional, Sequence

import numpy as np
import pandas as pd

from .keys import Float, Int, UInt, order_bits


@dataclass(frozen=True)
class Spec:
    """What the planner needs to know besides the data."""

    columns: list[Any]
    by: list[Any]
    k: int
    max_part: int
    standardize: bool
    allow_missing: bool
    merge: bool = False
    """``small_strata="merge"``: undersized strata are merged, not an error."""
    relabel: bool = True
    """Merged strata are released under the label of the stratum they joined."""
    layout: Optional["Layout"] = None
    """A mixed key: the last ``len(layout.levels)`` columns are nominal codes (cut through
    their levels); None for a numeric key."""
    scale: Optional[Float] = None
    """The divisor of every column, given (a mixed key's whole-file sd / weight, 1 for the
    codes) rather than measured."""
    labels: Optional[list[Any]] = None
    """How error messages name the columns (a mixed key's own names), if not ``columns``."""


@dataclass(frozen=True)
class Layout:
    """The attributes a mixed key is cut on (docs/scaling.md, "Mixed keys"): attributes
    ``0..numeric-1`` are the numeric (and ordinal) columns, then come the levels of each
    nominal column in turn, as in the key's one-hot embedding. A record's standardized values
    hold the numeric columns then each nominal column's code (NaN where missing), so a
    level's 0/1 value is computed from the code, never stored."""

    numeric: int
    levels: tuple[int, ...]
    """Number of levels of each nominal column."""
    weights: tuple[float, ...]
    """Weight w of each nominal column: a level's spread is (w²/2)(c − c²/m)."""

    @property
    def width(self) -> int:
        """Number of attributes (numeric columns plus every level)."""
        return self.numeric + sum(self.levels)

    @property
    def source(self) -> Int:
        """For each attribute, the column of the standardized values it is read from."""
        return np.concatenate([np.arange(self.numeric), np.repeat(self.numeric + np.arange(len(self.levels)), self.levels)]).astype(np.int64)

    @property
    def level(self) -> Int:
        """For each attribute, its level (-1 for a numeric column)."""
        return np.concatenate([np.full(self.numeric, -1)] + [np.arange(n) for n in self.levels]).astype(np.int64)

    @property
    def level_weight(self) -> Float:
        """For each level attribute, w²/2 of its column."""
        return np.repeat(np.square(np.asarray(self.weights, dtype=np.float64)) / 2.0, self.levels)


def attribute_values(z: Float, rows: Int, attr: Int, layout: Optional[Layout]) -> Float:
    """Each row's value of its attribute ``attr`` (one per row): a numeric column's
    standardized value, or a level's 0/1 (NaN where the code is missing)."""
    if layout is None or not layout.levels:
        return z[rows, attr]
    v = z[rows, layout.source[attr]]
    level = layout.level[attr]
    held = np.where(np.isnan(v), np.nan, (v == level).astype(np.float64))
    return np.where(level < 0, v, held)


@dataclass
class Plan:
    """The cut tree and the global scaling: small, sent to every task of the release.

    Nodes ``0..r-1`` are the strata that remain after merges (``strata`` maps each stratum
    to its node in column ``_root``; ``_size`` is its records after the merges, 0 for a
    merged one), in code order; an internal node
    sends a record to ``left`` when its key (value of attribute ``attr``, row id) is below
    (``cut_bits``, ``cut_id``), else to ``right``; a leaf's ``part`` is its part number,
    parts numbered left to right, stratum after stratum.
    """

    mean: Float
    scale: Float
    offsets: Int
    strata: Optional[pd.DataFrame]
    attr: Int
    cut_bits: UInt
    cut_id: Int
    left: Int
    right: Int
    part: Int
    part_sizes: Int

    def label_offsets(self, k: int) -> Int:
        """First group id of each part: the previous parts can hold at most size // k groups."""
        return np.concatenate([[0], np.cumsum(self.part_sizes // k)[:-1]]).astype(np.int64)



@dataclass
class Tree:
    """The cut tree as it grows (one entry per node)."""

    attr: list[int] = field(default_factory=list)
    cut_bits: list[int] = field(default_factory=list)
    cut_id: list[int] = field(default_factory=list)
    left: list[int] = field(default_factory=list)
    right: list[int] = field(default_factory=list)
    size: list[int] = field(default_factory=list)

    def add(self, size: int) -> int:
        """Appends a leaf of ``size`` records; returns its node id."""
        for column, value in ((self.attr, -1), (self.cut_bits, 0), (self.cut_id, 0), (self.left, -1), (self.right, -1)):
            column.append(value)
        self.size.append(size)
        return len(self.size) - 1

    def arrays(self) -> tuple[Int, UInt, Int, Int, Int]:
        """(attr, cut_bits, cut_id, left, right) as arrays, as :func:`descend` takes them."""
        return (
            np.array(self.attr, dtype=np.int64),
            np.array(self.cut_bits, dtype=np.uint64),
            np.array(self.cut_id, dtype=np.int64),
            np.array(self.left, dtype=np.int64),
            np.array(self.right, dtype=np.int64),
        )


def descend(node: Int, ids: Int, z: Float, tree: tuple[Int, UInt, Int, Int, Int], layout: Optional[Layout] = None) -> Int:
    """Each record's leaf, starting from ``node``: one vectorized step per tree level (a
    level node of a mixed key tests the record's code, :func:`attribute_values`)."""
    attr, cut_bits, cut_id, left, right = tree
    node = node.copy()
    rows = np.flatnonzero(attr[node] >= 0)
    while len(rows):
        at = node[rows]
        bits = order_bits(attribute_values(z, rows, attr[at], layout))
        below = (bits < cut_bits[at]) | ((bits == cut_bits[at]) & (ids[rows] < cut_id[at]))
        node[rows] = np.where(below, left[at], right[at])
        rows = rows[attr[node[rows]] >= 0]
    return node


def standardized(frame: pd.DataFrame, columns: Sequence[Any], mean: Float, scale: Float) -> Float:
    """The chosen columns of one partition as float64, standardized ``(x - mean) / scale``."""
    x = frame[list(columns)].to_numpy(dtype=np.float64, na_value=np.nan)
    return np.asarray((x - mean) / scale, dtype=np.float64)


def stratum_codes(frame: pd.DataFrame, by: Sequence[Any], strata: Optional[pd.DataFrame]) -> Int:
    """Each record's root node: column ``_root`` of its row in ``strata`` (NaN matches
    NaN); 0 without strata."""
    if strata is None:
        return np.zeros(len(frame), dtype=np.int64)
    merged = frame[list(by)].reset_index(drop=True).merge(strata[[*by, "_root"]], how="left", on=list(by))
    return np.asarray(merged["_root"].to_numpy(dtype=np.int64), dtype=np.int64)
