"""How the Dask planner runs its passes (docs/scaling.md#the-dask-engine): on the cluster
it runs on (through ``worker_client``) or the local scheduler, every pass reading each
input partition again, and only each record's current node kept between the passes of a
level.
"""

from __future__ import annotations

import contextlib
from dataclasses import dataclass
from typing import Any, Callable, Iterator, Optional, Sequence

import numpy as np
import numpy.typing as npt
import pandas as pd

from .blocks import Block, active_rows, part_sums
from .keys import Float, Int, Keys, UInt, key_less, order_bits, pack_keys
from .tree import Spec, attribute_values, descend, standardized, stratum_codes

FAN_IN = 8
"""Partial sums added per task when a pass's results are summed on the cluster."""


@dataclass(frozen=True)
class State:
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



@dataclass(frozen=True)
class Runner:
    """How lists of Delayed objects are computed (values back here) and persisted (values
    kept where they were computed)."""

    compute: Callable[[list[Any]], list[Any]]
    persist: Callable[[list[Any]], list[Any]]


@contextlib.contextmanager
def executor() -> Iterator[Runner]:
    """The cluster this planner task runs on (through ``worker_client``, so the planner's
    thread is free meanwhile), else the local scheduler."""
    try:
        from distributed import get_worker, worker_client

        get_worker()
    except (ImportError, ValueError):
        import dask

        yield Runner(lambda tasks: list(dask.compute(*tasks)), lambda tasks: list(dask.persist(*tasks)))
        return
    with worker_client() as client:
        yield Runner(lambda tasks: list(client.gather(client.compute(tasks))), lambda tasks: list(client.persist(tasks)))


class Passes:
    """Runs per-partition steps over the source. Each pass reads its partition again, so a
    worker holds one partition at a time; only the records' current nodes (2 bytes a
    record) are kept between the passes of a level, and Dask recomputes them from the
    source if a worker is lost."""

    def __init__(self, runner: Runner, parts: Sequence[Any]) -> None:
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

    def start_level(self, state: State, slot_of: Int, n_slots: int) -> list[tuple[Float, Float]]:
        """Places every record in its node of ``state.tree`` (kept for the level's passes,
        one step down from the previous level's nodes) and returns, per partition, the
        observed count and sum of every active node (:func:`part_sums`): one pass."""
        import dask

        self.state = dask.delayed(state, pure=False, traverse=False)
        shared = dask.delayed((slot_of, n_slots), pure=False, traverse=False)
        previous = self.nodes or [None] * len(self.parts)
        self.count += 1
        self.nodes = self.runner.persist(
            [dask.delayed(_start)(p, before, self.state, shared, i) for i, (p, before) in enumerate(zip(self.parts, previous))]
        )
        return self.runner.compute([dask.delayed(_second)(pair) for pair in self.nodes])

    def set_state(self, state: State) -> None:
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
        """``fn(block, *args, index=i)`` for every partition's :class:`Block` of this level."""
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


def _start(frame: pd.DataFrame, before: Optional[Level], state: State, args: tuple[Int, int], index: int) -> Level:
    ids, z = state.records(frame, index)
    start = stratum_codes(frame, state.spec.by, state.strata) if before is None else before[0].astype(np.int64)
    node = descend(start, ids, z, state.tree, state.spec.layout)
    return _compact(node), part_sums(Block(ids, z, node, state.spec.layout), *args, index=index)


def _compact(node: Int) -> npt.NDArray[np.signedinteger[Any]]:
    """Nodes as kept between passes: 2 bytes a record while the tree has under 32 768 nodes."""
    return node.astype(np.int16 if node.max(initial=0) < 2**15 else np.int32)


def _second(pair: Level) -> tuple[Float, Float]:
    return pair[1]  # type: ignore[no-any-return]


def _found(level: Level) -> tuple[tuple[Float, Float], tuple[Keys, Float]]:
    return level[1], level[2]


def _pull_start(frame: pd.DataFrame, before: Level, state: State, args: tuple[Any, ...], index: int) -> Level:
    """Ends a level and starts the next in one pass: each record of an active node whose key
    is below its node's bracket goes to the left child, at or past its end to the right
    child, and one inside the bracket (the cut lies there) stays for now and is returned
    (packed key, standardized values); the next level's active nodes' observed counts and
    sums are over the records placed. ``args``: the level's ``slot_of``, ``attr`` and
    bracket, the children of each slot (n × 2), and the next level's ``slot_of`` and
    number of slots."""
    slot_of, attr, bracket, children, next_slot_of, n_next = args
    ids, z = state.records(frame, index)
    layout = state.spec.layout
    node = descend(before[0].astype(np.int64), ids, z, state.tree, layout)
    rows, slot = active_rows(Block(ids, z, node, layout), slot_of)
    bits, rid = order_bits(attribute_values(z, rows, attr[slot], layout)), ids[rows]
    lo_bits, lo_id, hi_bits, hi_id = bracket
    left = key_less(bits, rid, lo_bits[slot], lo_id[slot])
    right = ~key_less(bits, rid, hi_bits[slot], hi_id[slot])
    inside = ~left & ~right
    node[rows[left]] = children[slot[left], 0]
    node[rows[right]] = children[slot[right], 1]
    sums = part_sums(Block(ids, z, node, layout), next_slot_of, n_next, index)
    return _compact(node), sums, (pack_keys(slot[inside], bits[inside], rid[inside]), z[rows[inside]])


def _on_block(frame: pd.DataFrame, level: Level, state: State, fn: Callable[..., Any], args: tuple[Any, ...], index: int) -> Any:
    ids, z = state.records(frame, index)
    layout = state.spec.layout
    return fn(Block(ids, z, descend(level[0].astype(np.int64), ids, z, state.tree, layout), layout), *args, index=index)

