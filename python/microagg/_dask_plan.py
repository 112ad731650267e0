"""The Mondrian-V cut tree of a Dask DataFrame (docs/scaling.md#the-dask-engine), found without
gathering the data.

This reproduces ``src/workflow/parts.rs`` on data spread over many partitions: the
attributes are standardized with the whole file's mean and population sd (observed values
only); a part of m > ``max_part`` records is cut on the attribute whose standardized values
have the largest sum of squared deviations (two passes, mean then deviations; scores within
a relative 1e-9 of the best are ties, won by the lowest attribute), at position ⌊m/2⌋ of the
order (value, row id), missing values after every observed one. Row ids are positions in
the frame. Strata (``by``) are the roots of the tree and are cut independently.

Every step is a pass over the data (each task reads one input partition again, so a worker
holds one partition at a time; only each record's current node, 2 bytes, is kept between
passes) that returns per-part summaries, all parts of a level together. A level costs three
passes: (1) squared deviations of each part (the cut attribute) and a sample of its records;
(2) exact counts of the records between pivots taken from that sample (as many as leave
about ``PULL / SPREAD`` records between two, up to :data:`PIVOTS`), which leave a bracket of
keys holding the wanted rank (more rounds of sampling and counting while a bracket holds
over :data:`PULL` records); (3) the records
inside the brackets are pulled and sorted (the cut), while every other record moves to its
child and the children's counts and sums, the next level's first statistics, are summed in
the same pass (the pulled records are added to them once the cut is known). Before the
first level: two passes for the scaling and strata, and one for the roots' counts and sums.

The planner itself runs as one task of the caller's graph: on a ``distributed`` worker it
submits the passes to the cluster through ``worker_client``; under a local scheduler it
runs them with ``dask.compute``.
"""

from __future__ import annotations

import contextlib
import logging
import time
from dataclasses import dataclass, field
from typing import Any, Callable, Iterator, Optional, Sequence

import numpy as np
import numpy.typing as npt
import pandas as pd

from ._dask_strata import combine, describe, partition_strata
from ._parts import shared_scale

LOG = logging.getLogger("microagg.dask")
"""Reports each planning step (passes over the data, seconds) at INFO level."""

TIE = 1e-9
"""Relative tolerance under which two attributes' scores are a tie (as in parts.rs)."""

PIVOTS = 16384
"""Most pivots per part and selection round: one round brings a part of up to
``PIVOTS * PULL / SPREAD`` (3·10⁷) records to a bracket of about ``PULL / SPREAD``; larger
ones (the first levels past that) take two rounds."""

SAMPLES = 4 * PIVOTS
"""Most records sampled per part and round to choose the pivots (four per pivot)."""

FAN_IN = 8
"""Partial sums added per task when a pass's results are summed on the cluster."""

SPREAD = 4
"""A round takes enough pivots (up to :data:`PIVOTS`) that a bucket holds about
``PULL / SPREAD`` records: a part of 2·10⁵ records takes 98 pivots, so that samples,
pivots and histograms stay small next to the data."""

PULL = 8192
"""A node whose bracket holds at most this many records needs no (further) selection round:
its bracket is pulled to the planner (keys and standardized values) and sorted. The planner
receives at most about this many records per part and level, never whole parts. About four
samples a pivot put sampled keys below the first pivot, so it is above the bracket's lowest
key and every round shrinks the bracket."""

Int = npt.NDArray[np.int64]
UInt = npt.NDArray[np.uint64]
Float = npt.NDArray[np.float64]
Keys = npt.NDArray[np.void]
Sample = tuple[Int, Int, Float]
"""Sampled records: their node's slot, row ids and standardized values (all attributes)."""
Bracket = tuple[UInt, Int, UInt, Int]
"""Per active node: the lowest key inside (bits, id) and the first key past the end."""

_NAN_BITS = np.uint64(2**64 - 1)
_SIGN = np.uint64(2**63)


def order_bits(v: Float) -> UInt:
    """Integer keys in the numeric order of ``v`` (``float::order_bits`` of the core:
    -0.0 equals 0.0), NaN after every number."""
    b = np.where(v == 0.0, 0.0, v).view(np.uint64)
    keys = np.where(b >= _SIGN, ~b, b | _SIGN)
    keys[np.isnan(v)] = _NAN_BITS
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
class _Block:
    """The records of one input partition as a pass sees them: row ids, standardized values,
    current node."""

    ids: Int
    z: Float
    node: Int


@dataclass(frozen=True)
class _State:
    """What a pass needs to rebuild a partition's records: scaling, row offsets, strata and
    the tree so far."""

    spec: Spec
    offsets: Int
    mean: Float
    scale: Float
    strata: Optional[pd.DataFrame]
    tree: tuple[Int, UInt, Int, Int, Int]

    def records(self, frame: pd.DataFrame, index: int) -> tuple[Int, Float]:
        """Partition ``index``'s row ids and standardized values."""
        ids = self.offsets[index] + np.arange(len(frame), dtype=np.int64)
        return ids, standardized(frame, self.spec.columns, self.mean, self.scale)


@dataclass
class _Tree:
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


def descend(node: Int, ids: Int, z: Float, tree: tuple[Int, UInt, Int, Int, Int]) -> Int:
    """Each record's leaf, starting from ``node``: one vectorized step per tree level."""
    attr, cut_bits, cut_id, left, right = tree
    node = node.copy()
    rows = np.flatnonzero(attr[node] >= 0)
    while len(rows):
        at = node[rows]
        bits = order_bits(z[rows, attr[at]])
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


@dataclass(frozen=True)
class _Runner:
    """How lists of Delayed objects are computed (values back here) and persisted (values
    kept where they were computed)."""

    compute: Callable[[list[Any]], list[Any]]
    persist: Callable[[list[Any]], list[Any]]


@contextlib.contextmanager
def executor() -> Iterator[_Runner]:
    """The cluster this planner task runs on (through ``worker_client``, so the planner's
    thread is free meanwhile), else the local scheduler."""
    try:
        from distributed import get_worker, worker_client

        get_worker()
    except (ImportError, ValueError):
        import dask

        yield _Runner(lambda tasks: list(dask.compute(*tasks)), lambda tasks: list(dask.persist(*tasks)))
        return
    with worker_client() as client:
        yield _Runner(lambda tasks: list(client.gather(client.compute(tasks))), lambda tasks: list(client.persist(tasks)))


class _Passes:
    """Runs per-partition steps over the source. Each pass reads its partition again, so a
    worker holds one partition at a time; only the records' current nodes (2 bytes a
    record) are kept between the passes of a level, and Dask recomputes them from the
    source if a worker is lost."""

    def __init__(self, runner: _Runner, parts: Sequence[Any]) -> None:
        self.runner, self.parts = runner, list(parts)
        self.state: Any = None
        self.nodes: list[Any] = []
        self.count = 0

    def raw(self, fn: Callable[..., Any], *args: Any) -> list[Any]:
        """``fn(frame, *args, index=i)`` for every partition frame."""
        import dask

        shared = dask.delayed(args, pure=False, traverse=False)
        self.count += 1
        return self.runner.compute([dask.delayed(_on_frame)(p, fn, shared, i) for i, p in enumerate(self.parts)])

    def start_level(self, state: _State, slot_of: Int, n_slots: int) -> list[tuple[Float, Float]]:
        """Places every record in its node of ``state.tree`` (kept for the level's passes,
        one step down from the previous level's nodes) and returns, per partition, the
        observed count and sum of every active node (:func:`_part_sums`): one pass."""
        import dask

        self.state = dask.delayed(state, pure=False, traverse=False)
        shared = dask.delayed((slot_of, n_slots), pure=False, traverse=False)
        previous = self.nodes or [None] * len(self.parts)
        self.count += 1
        self.nodes = self.runner.persist(
            [dask.delayed(_start)(p, before, self.state, shared, i) for i, (p, before) in enumerate(zip(self.parts, previous))]
        )
        return self.runner.compute([dask.delayed(_second)(pair) for pair in self.nodes])

    def set_state(self, state: _State) -> None:
        """The tree of a new level whose records were placed by :meth:`pull_and_start`."""
        import dask

        self.state = dask.delayed(state, pure=False, traverse=False)

    def pull_and_start(self, *args: Any) -> list[tuple[tuple[Float, Float], tuple[Keys, Float]]]:
        """One pass that ends this level and starts the next (:func:`_pull_start`): per
        partition, the next level's active nodes' observed counts and sums, and the
        bracketed records (packed keys and standardized values)."""
        import dask

        shared = dask.delayed(args, pure=False, traverse=False)
        previous = self.nodes
        self.count += 1
        self.nodes = self.runner.persist(
            [dask.delayed(_pull_start)(p, before, self.state, shared, i) for i, (p, before) in enumerate(zip(self.parts, previous))]
        )
        return self.runner.compute([dask.delayed(_found)(level) for level in self.nodes])

    def blocks(self, fn: Callable[..., Any], *args: Any) -> list[Any]:
        """``fn(block, *args, index=i)`` for every partition's :class:`_Block` of this level."""
        import dask

        shared = dask.delayed(args, pure=False, traverse=False)
        self.count += 1
        return self.runner.compute(self._tasks(fn, shared))

    def summed(self, fn: Callable[..., Any], *args: Any) -> Any:
        """The sum of ``fn(block, *args, index=i)`` (arrays of one shape) over the
        partitions, added up on the cluster (:data:`FAN_IN` at a time), so that the
        planner receives one array, not one a partition."""
        import dask

        shared = dask.delayed(args, pure=False, traverse=False)
        self.count += 1
        tasks = self._tasks(fn, shared)
        while len(tasks) > 1:
            tasks = [dask.delayed(_add)(*tasks[i : i + FAN_IN]) for i in range(0, len(tasks), FAN_IN)]
        return self.runner.compute(tasks)[0]

    def _tasks(self, fn: Callable[..., Any], shared: Any) -> list[Any]:
        import dask

        return [dask.delayed(_on_block)(p, nodes, self.state, fn, shared, i) for i, (p, nodes) in enumerate(zip(self.parts, self.nodes))]


def _add(*arrays: Any) -> Any:
    return np.sum(arrays, axis=0)


def _on_frame(frame: pd.DataFrame, fn: Callable[..., Any], args: tuple[Any, ...], index: int) -> Any:
    return fn(frame, *args, index=index)


Level = tuple[Any, ...]
"""What the pass that starts a level keeps of a partition: each record's node (int32; a
record inside the bracket of the previous level's cut is still at that node), the active
nodes' observed counts and sums and (:func:`_pull_start`) the bracketed records."""


def _start(frame: pd.DataFrame, before: Optional[Level], state: _State, args: tuple[Int, int], index: int) -> Level:
    ids, z = state.records(frame, index)
    start = stratum_codes(frame, state.spec.by, state.strata) if before is None else before[0].astype(np.int64)
    node = descend(start, ids, z, state.tree)
    return _compact(node), _part_sums(_Block(ids, z, node), *args, index=index)


def _compact(node: Int) -> npt.NDArray[np.signedinteger[Any]]:
    """Nodes as kept between passes: 2 bytes a record while the tree has under 32 768 nodes."""
    return node.astype(np.int16 if node.max(initial=0) < 2**15 else np.int32)


def _second(pair: Level) -> tuple[Float, Float]:
    return pair[1]  # type: ignore[no-any-return]


def _found(level: Level) -> tuple[tuple[Float, Float], tuple[Keys, Float]]:
    return level[1], level[2]


def _pull_start(frame: pd.DataFrame, before: Level, state: _State, args: tuple[Any, ...], index: int) -> Level:
    """Ends a level and starts the next in one pass: each record of an active node whose key
    is below its node's bracket goes to the left child, at or past its end to the right
    child, and one inside the bracket (the cut lies there) stays for now and is returned
    (packed key, standardized values); the next level's active nodes' observed counts and
    sums are over the records placed. ``args``: the level's ``slot_of``, ``attr`` and
    bracket, the children of each slot (n × 2), and the next level's ``slot_of`` and
    number of slots."""
    slot_of, attr, bracket, children, next_slot_of, n_next = args
    ids, z = state.records(frame, index)
    node = descend(before[0].astype(np.int64), ids, z, state.tree)
    rows, slot = _slots(_Block(ids, z, node), slot_of)
    bits, rid = order_bits(z[rows, attr[slot]]), ids[rows]
    lo_bits, lo_id, hi_bits, hi_id = bracket
    left = _less(bits, rid, lo_bits[slot], lo_id[slot])
    right = ~_less(bits, rid, hi_bits[slot], hi_id[slot])
    inside = ~left & ~right
    node[rows[left]] = children[slot[left], 0]
    node[rows[right]] = children[slot[right], 1]
    sums = _part_sums(_Block(ids, z, node), next_slot_of, n_next, index)
    return _compact(node), sums, (pack_keys(slot[inside], bits[inside], rid[inside]), z[rows[inside]])


def _on_block(frame: pd.DataFrame, level: Level, state: _State, fn: Callable[..., Any], args: tuple[Any, ...], index: int) -> Any:
    ids, z = state.records(frame, index)
    return fn(_Block(ids, z, descend(level[0].astype(np.int64), ids, z, state.tree)), *args, index=index)


# --- per-block steps (run where the block lives) -------------------------------------------


def _scan(frame: pd.DataFrame, spec: Spec, index: int) -> tuple[int, Int, Float, bool, Optional[pd.DataFrame]]:
    """Records, observed counts and sums per column, whether any value is ±inf, and the
    strata with their sizes (:func:`partition_strata`)."""
    x = frame[spec.columns].to_numpy(dtype=np.float64, na_value=np.nan)
    observed = ~np.isnan(x)
    strata = partition_strata(frame, spec.by, x, spec.merge) if spec.by else None
    return len(x), observed.sum(axis=0), np.where(observed, x, 0.0).sum(axis=0), bool(np.isinf(x).any()), strata


def _squared_deviations(frame: pd.DataFrame, spec: Spec, mean: Float, index: int) -> Float:
    """Per column: sum of squared deviations of the observed values from ``mean``."""
    x = frame[spec.columns].to_numpy(dtype=np.float64, na_value=np.nan)
    return np.asarray(np.nansum((x - mean) ** 2, axis=0), dtype=np.float64)


def _slots(block: _Block, slot_of: Int) -> tuple[Int, Int]:
    """Rows of the block in an active node, and their node's slot."""
    rows = np.flatnonzero(slot_of[block.node] >= 0)
    return rows, slot_of[block.node[rows]]


def _part_sums(block: _Block, slot_of: Int, n_slots: int, index: int) -> tuple[Float, Float]:
    """Per active node and attribute: observed count and sum."""
    rows, slot = _slots(block, slot_of)
    z = block.z[rows]
    ok = ~np.isnan(z)
    return _sums_by_slot(slot, ok.astype(np.float64), n_slots), _sums_by_slot(slot, np.where(ok, z, 0.0), n_slots)


def _part_deviations(block: _Block, slot_of: Int, means: Float, stride: Int, index: int) -> tuple[Float, Sample]:
    """Per active node and attribute: sum of squared deviations of the observed values; and
    every ``stride[slot]``-th record of each node, in row order (the first selection round's
    sample, taken before the cut attribute is known)."""
    rows, slot = _slots(block, slot_of)
    deviations = _sums_by_slot(slot, np.nan_to_num((block.z[rows] - means[slot]) ** 2, nan=0.0), len(means))
    keep = _every(slot, stride)
    return deviations, (slot[keep], block.ids[rows[keep]], block.z[rows[keep]])


def _every(slot: Int, stride: Int) -> Int:
    """Positions of every ``stride[s]``-th entry of each slot s, in the given order."""
    order = np.argsort(slot, kind="stable")
    ordered = slot[order]
    keep = (np.arange(len(ordered)) - np.searchsorted(ordered, ordered, side="left")) % stride[ordered] == 0
    return np.sort(order[keep])


def _sums_by_slot(slot: Int, values: Float, n_slots: int) -> Float:
    """Column sums of ``values`` per slot, shape (n_slots, d), float64 (``np.bincount`` of
    no records gives integers)."""
    sums = [np.bincount(slot, weights=values[:, j], minlength=n_slots) for j in range(values.shape[1])]
    return np.stack(sums, axis=1).astype(np.float64, copy=False)


def _bracketed(block: _Block, slot_of: Int, attr: Int, bracket: Bracket) -> tuple[Int, UInt, Int]:
    """Slots, value keys and ids of the block's records inside their node's bracket."""
    rows, slot = _slots(block, slot_of)
    bits, ids = order_bits(block.z[rows, attr[slot]]), block.ids[rows]
    lo_bits, lo_id, hi_bits, hi_id = bracket
    inside = ~_less(bits, ids, lo_bits[slot], lo_id[slot]) & _less(bits, ids, hi_bits[slot], hi_id[slot])
    return slot[inside], bits[inside], ids[inside]


def _less(bits: UInt, ids: Int, other_bits: UInt, other_ids: Int) -> npt.NDArray[np.bool_]:
    """Whether each key (bits, id) is below the other one."""
    below: npt.NDArray[np.bool_] = (bits < other_bits) | ((bits == other_bits) & (ids < other_ids))
    return below


def _sample(block: _Block, slot_of: Int, attr: Int, bracket: Bracket, stride: Int, index: int) -> Keys:
    """Every ``stride[slot]``-th bracketed record of each node, in row order (packed keys)."""
    slot, bits, ids = _bracketed(block, slot_of, attr, bracket)
    keep = _every(slot, stride)
    return pack_keys(slot[keep], bits[keep], ids[keep])


def _bucket_counts(block: _Block, slot_of: Int, attr: Int, bracket: Bracket, pivots: Keys, bins: int, index: int) -> Int:
    """Bracketed records per bucket between consecutive pivots. A record's bin is the
    number of (flattened, sorted) pivots at or below its key plus its slot, so node s owns
    (its pivots + 1) consecutive bins."""
    slot, bits, ids = _bracketed(block, slot_of, attr, bracket)
    where = np.searchsorted(pivots, pack_keys(slot, bits, ids), side="right") + slot
    return np.bincount(where, minlength=bins).astype(np.int64)


# --- the planner ---------------------------------------------------------------------------


class FrameRef:
    """Holds a Dask DataFrame without Dask seeing it as a dependency (the planner task
    must receive the recipe, not the computed data)."""

    def __init__(self, frame: Any) -> None:
        self.frame = frame


def plan_cuts(source: FrameRef, spec: Spec) -> Plan:
    """Runs the planning passes over ``source.frame`` (the chosen and ``by`` columns) and
    returns the :class:`Plan`. Raises ``ValueError`` for empty data, non-finite values,
    missing values when they are not allowed, ``k`` above the number of records or a stratum
    with fewer than ``k`` records."""
    started = time.perf_counter()
    with executor() as runner:
        passes = _Passes(runner, source.frame.to_delayed())
        scans = passes.raw(_scan, spec)
        n = int(sum(s[0] for s in scans))
        counts = np.sum([s[1] for s in scans], axis=0)
        sums = np.sum([s[2] for s in scans], axis=0)
        _check_values(spec, n, counts, any(s[3] for s in scans))
        centre = sums / counts
        mean = centre if spec.standardize else np.zeros(len(spec.columns))
        scale = np.ones(len(spec.columns))
        if spec.standardize:
            sd = np.sqrt(np.sum(passes.raw(_squared_deviations, spec, mean), axis=0) / counts)
            scale = shared_scale(np.where((sd > 0) & np.isfinite(sd), sd, 1.0))
        strata: Optional[pd.DataFrame] = None
        if spec.by:
            # The core centres on the file's mean whether or not it standardizes.
            strata, merges = combine(spec.by, spec.k, [s[4] for s in scans], spec.merge, centre, scale)
            if merges:
                LOG.info("small strata merged: %s", describe(spec.by, strata, merges))
                if not spec.relabel:
                    LOG.warning("relabel=False: the merged strata's records keep their labels, which single them out")
        offsets = np.concatenate([[0], np.cumsum([s[0] for s in scans])]).astype(np.int64)
        codes = None if strata is None else strata[[*spec.by, "_root", "_size"]]
        tree = _Tree()
        for size in ([n] if strata is None else [m for m in strata["_size"].tolist() if m > 0]):
            tree.add(int(size))
        roots = len(tree.size)
        active = [v for v in range(len(tree.size)) if tree.size[v] > spec.max_part]
        LOG.info("%d records in %d partitions: scaling and strata in %d passes, %.1f s", n, len(offsets) - 1, passes.count, time.perf_counter() - started)
        level, t0, count = 0, time.perf_counter(), passes.count
        slot_of = _slots_of(active, len(tree.size))
        sums = passes.start_level(_State(spec, offsets, mean, scale, codes, tree.arrays()), slot_of, len(active)) if active else []
        while active:
            cut = len(active)
            sums, active, slot_of = _cut_level(passes, sums, tree, active, slot_of, spec.max_part)
            passes.set_state(_State(spec, offsets, mean, scale, codes, tree.arrays()))
            level += 1
            LOG.info("cut level %d: %d parts cut in %d passes, %.1f s", level, cut, passes.count - count, time.perf_counter() - t0)
            t0, count = time.perf_counter(), passes.count
    LOG.info("planned in %.1f s", time.perf_counter() - started)
    attr, cut_bits, cut_id, left, right = tree.arrays()
    part = np.full(len(attr), -1, dtype=np.int64)
    leaves = [v for root in range(roots) for v in _leaves(tree, root)]
    part[leaves] = np.arange(len(leaves))
    return Plan(
        mean, scale, offsets, codes,
        attr, cut_bits, cut_id, left, right, part, np.array([tree.size[v] for v in leaves], dtype=np.int64),
    )


def _leaves(tree: _Tree, root: int) -> list[int]:
    """Leaves under ``root``, left to right."""
    if tree.attr[root] < 0:
        return [root]
    return _leaves(tree, tree.left[root]) + _leaves(tree, tree.right[root])


def _check_values(spec: Spec, n: int, counts: Int, infinite: bool) -> None:
    if n == 0:
        raise ValueError("the DataFrame has no rows")
    if spec.k > n:
        raise ValueError(f"k={spec.k} is larger than the number of records ({n})")
    if infinite:
        raise ValueError("the chosen columns contain infinity")
    if not spec.allow_missing and (counts < n).any():
        bad = [str(c) for c, m in zip(spec.columns, counts) if m < n]
        raise ValueError(f"column(s) {', '.join(bad)} contain missing values (NaN); pass missing='fill' or 'keep'")
    if (counts == 0).any():
        bad = [str(c) for c, m in zip(spec.columns, counts) if m == 0]
        raise ValueError(f"column(s) {', '.join(bad)} have no observed value")


Run = Callable[..., list[Any]]
"""``run(fn, *args)``: ``fn(block, *args, index=i)`` over every partition's records."""


def _slots_of(active: list[int], n_nodes: int) -> Int:
    """Each node's slot: its position in ``active``, -1 for the others."""
    slot_of = np.full(n_nodes, -1, dtype=np.int64)
    slot_of[active] = np.arange(len(active))
    return slot_of


def _cut_level(passes: _Passes, sums: list[tuple[Float, Float]], tree: _Tree, active: list[int], slot_of: Int, max_part: int) -> tuple[list[tuple[Float, Float]], list[int], Int]:
    """Cuts every node in ``active`` (slot ``slot_of[v]``, observed counts and sums
    ``sums`` per partition) in two, appending the children to ``tree``; returns the next
    level's sums, active nodes (the children of more than ``max_part`` records) and slots."""
    run = passes.blocks
    count = np.sum([s[0] for s in sums], axis=0)
    with np.errstate(invalid="ignore", divide="ignore"):
        means = np.sum([s[1] for s in sums], axis=0) / count
    sizes = np.array([tree.size[v] for v in active], dtype=np.int64)
    found = run(_part_deviations, slot_of, means, _strides(sizes))
    scores = np.where(count > 0, np.sum([f[0] for f in found], axis=0), 0.0)
    best = np.maximum(scores.max(axis=1), 0.0)
    attr = np.argmax(scores >= (best * (1.0 - TIE))[:, None], axis=1).astype(np.int64)
    slot, ids, z = (np.concatenate(column) for column in zip(*(f[1] for f in found)))
    sample = pack_keys(slot, order_bits(z[np.arange(len(slot)), attr[slot]]), ids)
    bracket, rank = _bracket(run, passes.summed, slot_of, attr, sizes // 2, sizes, sample)
    # The children are numbered as they are added below: slot s gets base + 2s and + 1.
    base, halves = len(tree.size), sizes // 2
    children = base + np.arange(2 * len(active), dtype=np.int64).reshape(-1, 2)
    child_sizes = np.stack([halves, sizes - halves], axis=1)
    following = children.ravel()[child_sizes.ravel() > max_part].tolist()
    next_slot_of = _slots_of(following, base + 2 * len(active))
    found = passes.pull_and_start(slot_of, attr, bracket, children, next_slot_of, len(following))
    keys = np.concatenate([f[1][0] for f in found])
    z = np.concatenate([f[1][1] for f in found])
    order = np.argsort(keys)
    keys, z = keys[order], z[order]
    slot, bits, ids = unpack_keys(keys)
    at = np.searchsorted(slot, np.arange(len(active)), side="left") + rank
    cut_bits, cut_id = bits[at], ids[at]
    for s, v in enumerate(active):
        tree.attr[v], tree.cut_bits[v], tree.cut_id[v] = int(attr[s]), int(cut_bits[s]), int(cut_id[s])
        tree.left[v] = tree.add(int(child_sizes[s, 0]))
        tree.right[v] = tree.add(int(child_sizes[s, 1]))
    # The bracketed records join their child's sums now that the cut is known.
    next_count = np.sum([f[0][0] for f in found], axis=0)
    next_sum = np.sum([f[0][1] for f in found], axis=0)
    child = children[slot, np.where(_less(bits, ids, cut_bits[slot], cut_id[slot]), 0, 1)]
    placed = next_slot_of[child]
    kept = placed >= 0
    observed = ~np.isnan(z[kept])
    np.add.at(next_count, placed[kept], observed.astype(np.float64))
    np.add.at(next_sum, placed[kept], np.where(observed, z[kept], 0.0))
    return [(next_count, next_sum)], following, next_slot_of


def _bracket(run: Run, summed: Callable[..., Any], slot_of: Int, attr: Int, rank: Int, size: Int, first_sample: Keys) -> tuple[Bracket, Int]:
    """For the key (value bits, row id) of rank ``rank[s]`` (0-based, in key order) among
    each active node's records: a bracket of keys holding it and at most :data:`PULL`
    records, and its rank inside the bracket (bracketing rounds; the caller pulls the
    bracket). ``first_sample`` is the first round's sample (packed keys of every
    :func:`_strides`-th record of each node), taken by the deviations pass."""
    n_slots = len(rank)
    lo_bits, lo_id = np.zeros(n_slots, np.uint64), np.zeros(n_slots, np.int64)
    hi_bits, hi_id = np.full(n_slots, _NAN_BITS), np.full(n_slots, np.iinfo(np.int64).max)
    bracket = (lo_bits, lo_id, hi_bits, hi_id)
    rank, inside = rank.copy(), size.copy()
    sample: Optional[Keys] = first_sample
    while (inside > PULL).any():
        if sample is None:
            sample = np.concatenate(run(_sample, slot_of, attr, bracket, _strides(inside)))
        pivots = _pivots(np.sort(sample), _pivot_counts(inside), n_slots)
        sample = None
        p_slot, p_bits, p_id = unpack_keys(pivots)
        n_piv = np.bincount(p_slot, minlength=n_slots)
        first = np.concatenate([[0], np.cumsum(n_piv)])
        start = first + np.arange(n_slots + 1)
        hist = summed(_bucket_counts, slot_of, attr, bracket, pivots, int(start[-1]))
        for s in np.flatnonzero(n_piv):
            below = np.cumsum(hist[start[s] : start[s + 1]])
            b = int(np.searchsorted(below, rank[s], side="right"))
            rank[s] -= below[b - 1] if b else 0
            inside[s] = below[b] - (below[b - 1] if b else 0)
            if b:
                lo_bits[s], lo_id[s] = p_bits[first[s] + b - 1], p_id[first[s] + b - 1]
            if b < n_piv[s]:
                hi_bits[s], hi_id[s] = p_bits[first[s] + b], p_id[first[s] + b]
    return bracket, rank


def _pivot_counts(inside: Int) -> Int:
    """Pivots each node takes this round: none once its bracket holds at most :data:`PULL`
    records, else enough for buckets of about ``PULL / SPREAD`` records, at most
    :data:`PIVOTS`."""
    wanted = np.minimum(PIVOTS, np.maximum(1, -(-SPREAD * inside // PULL)))
    return np.where(inside > PULL, wanted, 0).astype(np.int64)


def _strides(inside: Int) -> Int:
    """Sampling stride of each node: about four sampled records per pivot, at most
    :data:`SAMPLES` (four for a node that needs no pivots)."""
    stride: Int = np.maximum(1, inside // np.minimum(SAMPLES, 4 * np.maximum(1, _pivot_counts(inside))))
    return stride


def _pivots(sample: Keys, counts: Int, n_slots: int) -> Keys:
    """``counts[s]`` evenly spaced inner quantiles of each node's sampled keys (fewer when
    it has fewer samples), sorted (the sample is sorted: each node's keys are contiguous)."""
    start = np.searchsorted(unpack_keys(sample)[0], np.arange(n_slots + 1), side="left")
    picks = [
        start[s] + np.unique((np.arange(counts[s]) + 1) * (start[s + 1] - start[s]) // (counts[s] + 1))
        for s in np.flatnonzero(counts)
        if start[s + 1] > start[s]
    ]
    return sample[np.concatenate(picks)] if picks else sample[:0]
