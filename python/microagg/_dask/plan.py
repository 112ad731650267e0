"""The Mondrian-V cut tree of a Dask DataFrame (docs/scaling.md#the-dask-engine), found without
gathering the data.

This reproduces ``src/workflow/parts.rs`` on data spread over many partitions: the
attributes are standardized with the whole file's mean and population sd (observed values
only); a part of m > ``max_part`` records is cut on the attribute whose standardized values
have the largest sum of squared deviations (two passes, mean then deviations; scores within
a relative 1e-9 of the best are ties, won by the lowest attribute), at position ⌊m/2⌋ of the
order (value, row id), missing values after every observed one. Row ids are positions in
the frame. Strata (``by``) are the roots of the tree and are cut independently. A mixed key
(:class:`microagg._dask.tree.Layout`) competes through its numeric columns and then every
level of its nominal columns, a level scored (w²/2)(c − c²/m) from the level counts summed
per part and cut on its 0/1 value (records without it first), as ``cut_mixed_into_parts``.

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

import logging
import time
from typing import Any, Callable, Optional

import numpy as np
import pandas as pd

from .._scale import shared_scale
from .blocks import bracket_sample, bucket_counts, level_sums, part_deviations, scan, squared_deviations
from .keys import NAN_BITS, Bracket, Float, Int, Keys, key_less, order_bits, pack_keys, unpack_keys
from .passes import Passes, State, executor
from .strata import combine, describe
from .tree import Layout, Plan, Spec, Tree, attribute_values

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
        passes = Passes(runner, source.frame.to_delayed())
        scans = passes.raw(scan, spec)
        n = int(sum(s[0] for s in scans))
        counts = np.sum([s[1] for s in scans], axis=0)
        sums = np.sum([s[2] for s in scans], axis=0)
        _check_values(spec, n, counts, any(s[3] for s in scans))
        centre = sums / counts
        mean = centre if spec.standardize else np.zeros(len(spec.columns))
        scale = np.ones(len(spec.columns))
        if spec.scale is not None:
            scale = spec.scale
        elif spec.standardize:
            sd = np.sqrt(np.sum(passes.raw(squared_deviations, spec, mean), axis=0) / counts)
            scale = shared_scale(np.where((sd > 0) & np.isfinite(sd), sd, 1.0))
        # A mixed key's codes stay codes; its strata merge on the numeric columns, as the core's.
        d = len(spec.columns) if spec.layout is None else spec.layout.numeric
        mean[d:] = 0.0
        strata: Optional[pd.DataFrame] = None
        if spec.by:
            # The core centres on the file's mean whether or not it standardizes.
            strata, merges = combine(spec.by, spec.k, [s[4] for s in scans], spec.merge, centre[:d], scale[:d])
            if merges:
                LOG.info("small strata merged: %s", describe(spec.by, strata, merges))
                if not spec.relabel:
                    LOG.warning("relabel=False: the merged strata's records keep their labels, which single them out")
        offsets = np.concatenate([[0], np.cumsum([s[0] for s in scans])]).astype(np.int64)
        codes = None if strata is None else strata[[*spec.by, "_root", "_size"]]
        tree = Tree()
        for size in ([n] if strata is None else [m for m in strata["_size"].tolist() if m > 0]):
            tree.add(int(size))
        roots = len(tree.size)
        active = [v for v in range(len(tree.size)) if tree.size[v] > spec.max_part]
        LOG.info("%d records in %d partitions: scaling and strata in %d passes, %.1f s", n, len(offsets) - 1, passes.count, time.perf_counter() - started)
        level, t0, count = 0, time.perf_counter(), passes.count
        slot_of = _slots_of(active, len(tree.size))
        sums = passes.start_level(State(spec, offsets, mean, scale, codes, tree.arrays()), slot_of, len(active)) if active else []
        while active:
            cut = len(active)
            sums, active, slot_of = _cut_level(passes, sums, tree, active, slot_of, spec.max_part, spec.layout)
            passes.set_state(State(spec, offsets, mean, scale, codes, tree.arrays()))
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


def _leaves(tree: Tree, root: int) -> list[int]:
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
    names = spec.columns if spec.labels is None else spec.labels
    if not spec.allow_missing and (counts < n).any():
        bad = [str(c) for c, m in zip(names, counts) if m < n]
        raise ValueError(f"column(s) {', '.join(bad)} contain missing values (NaN); pass missing='fill' or 'keep'")
    if (counts == 0).any():
        bad = [str(c) for c, m in zip(names, counts) if m == 0]
        raise ValueError(f"column(s) {', '.join(bad)} have no observed value")


Run = Callable[..., list[Any]]
"""``run(fn, *args)``: ``fn(block, *args, index=i)`` over every partition's records."""


def _slots_of(active: list[int], n_nodes: int) -> Int:
    """Each node's slot: its position in ``active``, -1 for the others."""
    slot_of = np.full(n_nodes, -1, dtype=np.int64)
    slot_of[active] = np.arange(len(active))
    return slot_of


def _cut_level(
    passes: Passes, sums: list[tuple[Float, Float]], tree: Tree, active: list[int], slot_of: Int, max_part: int,
    layout: Optional[Layout] = None,
) -> tuple[list[tuple[Float, Float]], list[int], Int]:
    """Cuts every node in ``active`` (slot ``slot_of[v]``, observed counts and sums
    ``sums`` per partition) in two, appending the children to ``tree``; returns the next
    level's sums, active nodes (the children of more than ``max_part`` records) and slots.
    A mixed key's levels compete after its numeric columns, each scored from its counts."""
    run = passes.blocks
    count = np.sum([s[0] for s in sums], axis=0)
    total = np.sum([s[1] for s in sums], axis=0)
    with np.errstate(invalid="ignore", divide="ignore"):
        means = total / count
    d = count.shape[1] if layout is None else layout.numeric
    sizes = np.array([tree.size[v] for v in active], dtype=np.int64)
    found = run(part_deviations, slot_of, means[:, :d], _strides(sizes))
    scores = np.where(count[:, :d] > 0, np.sum([f[0] for f in found], axis=0), 0.0)
    if layout is not None:
        scores = np.hstack([scores, _level_scores(count[:, d:], total[:, d:], layout)])
    best = np.maximum(scores.max(axis=1), 0.0)
    attr = np.argmax(scores >= (best * (1.0 - TIE))[:, None], axis=1).astype(np.int64)
    slot, ids, z = (np.concatenate(column) for column in zip(*(f[1] for f in found)))
    sample = pack_keys(slot, order_bits(attribute_values(z, np.arange(len(slot)), attr[slot], layout)), ids)
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
    child = children[slot, np.where(key_less(bits, ids, cut_bits[slot], cut_id[slot]), 0, 1)]
    placed = next_slot_of[child]
    kept = placed >= 0
    numeric = z[kept, :d]
    observed = ~np.isnan(numeric)
    np.add.at(next_count[:, :d], placed[kept], observed.astype(np.float64))
    np.add.at(next_sum[:, :d], placed[kept], np.where(observed, numeric, 0.0))
    if layout is not None:
        held_count, held = level_sums(placed[kept], z[kept], len(following), layout)
        next_count[:, d:] += held_count
        next_sum[:, d:] += held
    return [(next_count, next_sum)], following, next_slot_of


def _level_scores(count: Float, held: Float, layout: Layout) -> Float:
    """Each level's spread in a node, as ``src/workflow/parts.rs`` scores it: its 0/1
    column's sum of squared deviations (w²/2)(c − c²/m), c records holding it of the m that
    observed its column."""
    with np.errstate(invalid="ignore", divide="ignore"):
        spread = layout.level_weight * (held - held * held / count)
    return np.where(count > 0, spread, 0.0)


def _bracket(run: Run, summed: Callable[..., Any], slot_of: Int, attr: Int, rank: Int, size: Int, first_sample: Keys) -> tuple[Bracket, Int]:
    """For the key (value bits, row id) of rank ``rank[s]`` (0-based, in key order) among
    each active node's records: a bracket of keys holding it and at most :data:`PULL`
    records, and its rank inside the bracket (bracketing rounds; the caller pulls the
    bracket). ``first_sample`` is the first round's sample (packed keys of every
    :func:`_strides`-th record of each node), taken by the deviations pass."""
    n_slots = len(rank)
    lo_bits, lo_id = np.zeros(n_slots, np.uint64), np.zeros(n_slots, np.int64)
    hi_bits, hi_id = np.full(n_slots, NAN_BITS), np.full(n_slots, np.iinfo(np.int64).max)
    bracket = (lo_bits, lo_id, hi_bits, hi_id)
    rank, inside = rank.copy(), size.copy()
    sample: Optional[Keys] = first_sample
    while (inside > PULL).any():
        if sample is None:
            sample = np.concatenate(run(bracket_sample, slot_of, attr, bracket, _strides(inside)))
        pivots = _pivots(np.sort(sample), _pivot_counts(inside), n_slots)
        sample = None
        p_slot, p_bits, p_id = unpack_keys(pivots)
        n_piv = np.bincount(p_slot, minlength=n_slots)
        first = np.concatenate([[0], np.cumsum(n_piv)])
        start = first + np.arange(n_slots + 1)
        hist = summed(bucket_counts, slot_of, attr, bracket, pivots, int(start[-1]))
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
