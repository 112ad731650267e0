"""The lazy graph of a partitioned Dask release (docs/scaling.md#the-dask-engine): the planner
(:mod:`.plan`) as one task, the tagging, shuffle and grouping of every part
(:mod:`.release`), the summary (:mod:`.summary`). The numeric engine (:mod:`.engine`) and the
native mixed key (:mod:`.mixed`) both wire their runs through :func:`partitioned`.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .plan import FrameRef, plan_cuts
from .release import (
    FIXED_GROUP_COUNT,
    INDEX,
    KEY,
    PART,
    ROW,
    first_ids,
    group_and_release,
    in_input_order,
    input_index,
    release_meta,
    renumber,
    tag_partition,
)
from .summary import summarize
from .tree import Spec


def partitioned(ddf: Any, spec: Spec, release: dict[str, Any], keep_order: bool, summary: bool) -> Any:
    """The released frame of ``ddf`` cut as ``spec`` says and grouped part by part as
    ``release`` (:func:`group_and_release`'s options) says; with ``summary`` also a
    Delayed :class:`microagg.dask.Summary`."""
    import dask
    import dask.dataframe as dd

    cols, k, method, group_column = release["columns"], release["k"], release["method"], release["group_column"]
    plan = dask.delayed(plan_cuts, pure=False)(FrameRef(ddf[cols + spec.by]), spec)
    tagged_meta = ddf._meta.assign(**{ROW: np.zeros(0, np.int64), PART: np.zeros(0, np.int64), KEY: np.zeros(0, np.int64)})
    # Each partition is read inside its tagging task, which depends on the plan only: had
    # the tasks taken ddf's partitions as inputs, the scheduler would read the whole frame
    # into worker memory while the (seceded) planner task runs.
    source = dask.delayed(FrameRef(ddf), traverse=False)
    tag = dask.delayed(tag_partition, pure=False)
    tagged = dd.from_delayed(
        [tag(source, number, plan, spec) for number in range(ddf.npartitions)], meta=tagged_meta, verify_meta=False
    )
    shuffled = tagged.shuffle(on=PART, npartitions=ddf.npartitions)
    # Delayed tasks again (not map_partitions with the plan as an argument, which gives the
    # planner a second graph key: it ran twice).
    grouped = [dask.delayed(group_and_release, nout=3)(part, plan, release) for part in shuffled.to_delayed()]
    frames = [frame for frame, _, _ in grouped]
    if group_column is not None and method not in FIXED_GROUP_COUNT:
        first = dask.delayed(first_ids)([counts for _, counts, _ in grouped], plan)
        frames = [dask.delayed(renumber)(frame, plan, first, k, group_column) for frame in frames]
    meta = release_meta(ddf._meta, cols, group_column)
    released = dd.from_delayed(frames, meta=meta.assign(**{INDEX: ddf._meta.index, KEY: np.zeros(0, np.int64)}), verify_meta=False)
    if keep_order:
        out = in_input_order(released, ddf, meta)
    else:
        out = released.map_partitions(input_index, ddf.index.name, meta=meta)
    if not summary:
        return out
    return out, dask.delayed(summarize)([sums for _, _, sums in grouped], cols)
