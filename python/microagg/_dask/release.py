"""The release step of the Dask engine (docs/scaling.md#the-dask-engine): every record tagged
with its part (the leaf of the cut tree it falls in), each part grouped by the Rust core in
the partition the shuffle put it in, group ids made consecutive, and the records put back in
their input partitions and order.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from .keys import Int
from .part import group_part
from .passes import executor
from .plan import FrameRef
from .summary import PartitionSums, partition_sums
from .tree import Plan, Spec, descend, standardized, stratum_codes

ROW = "__microagg_row"
PART = "__microagg_part"
KEY = "__microagg_key"
"""Input partition number × :data:`SLOT` + position in it: the key that sorts the released
records back into their input partitions and order."""
INDEX = "__microagg_index"
"""The input's index, carried as a column through the shuffle back."""
SLOT = 2**40
"""Records per input partition that :data:`KEY` can tell apart."""

FIXED_GROUP_COUNT = ("mdav",)
"""Methods that always form ``size // k`` groups from a part of ``size`` records: their
group ids are consecutive as soon as each part is grouped."""


def in_input_order(released: Any, ddf: Any, meta: pd.DataFrame) -> Any:
    """The released records moved back to their input partitions and positions (a shuffle
    on :data:`KEY`, whose divisions are known without computing anything), with their
    input index; the input's divisions when it had them."""
    import dask.dataframe as dd

    n = ddf.npartitions
    by_key = released.set_index(KEY, divisions=[p * SLOT for p in range(n)] + [n * SLOT - 1])
    restored = by_key.map_partitions(input_index, ddf.index.name, meta=meta)
    if not ddf.known_divisions:
        return restored
    return dd.from_delayed(restored.to_delayed(), meta=meta, divisions=ddf.divisions, verify_meta=False)


def input_index(frame: pd.DataFrame, name: Any) -> pd.DataFrame:
    """A released partition with the input's index back (in place of :data:`KEY`, which
    is the index after the shuffle back, else a column)."""
    return frame.drop(columns=[KEY], errors="ignore").set_index(INDEX).rename_axis(name)



def tag_partition(source: FrameRef, number: int, plan: Plan, spec: Spec) -> pd.DataFrame:
    """Reads partition ``number`` of ``source.frame`` (on the cluster this task runs on) and
    tags it (:func:`tag`)."""
    with executor() as runner:
        frame = runner.compute([source.frame.partitions[number]])[0]
    return tag(frame, plan, spec, number)


def tag(frame: pd.DataFrame, plan: Plan, spec: Spec, number: int) -> pd.DataFrame:
    """Adds each record's row id, part number (the leaf of the cut tree it falls in) and
    :data:`KEY` to partition ``number``."""
    ids = plan.offsets[number] + np.arange(len(frame), dtype=np.int64)
    if len(frame) != plan.offsets[number + 1] - plan.offsets[number]:
        raise RuntimeError("the DataFrame's partitions changed between planning and release")
    if len(frame) >= SLOT:
        raise ValueError(f"partition {number} holds {len(frame)} records; repartition the DataFrame below {SLOT}")
    z = standardized(frame, spec.columns, plan.mean, plan.scale)
    tree = (plan.attr, plan.cut_bits, plan.cut_id, plan.left, plan.right)
    leaf = descend(stratum_codes(frame, spec.by, plan.strata), ids, z, tree, spec.layout)
    key = number * SLOT + np.arange(len(frame), dtype=np.int64)
    return frame.assign(**{ROW: ids, PART: plan.part[leaf], KEY: key})


def release_meta(meta: pd.DataFrame, cols: list[Any], group_column: Any) -> pd.DataFrame:
    out = meta.astype({c: np.float64 for c in cols})
    return out if group_column is None else out.assign(**{group_column: np.zeros(0, np.int64)})


def group_and_release(frame: pd.DataFrame, plan: Plan, opts: dict[str, Any]) -> tuple[pd.DataFrame, Int, PartitionSums]:
    """Groups every part of one shuffled partition and releases its records; rows come out
    in row-id order, with their index in column :data:`INDEX` and their :data:`KEY`.
    Group ids start at each part's ``plan.label_offsets``; also returns ``(part, number of
    groups)`` of each part here, and the partition's share of the information loss. Each part
    is grouped by ``opts["group"]`` (:func:`group_part`'s signature; default
    :func:`group_part`)."""
    frame = frame.iloc[np.argsort(frame[ROW].to_numpy(), kind="stable")]
    parts = frame[PART].to_numpy()
    values = frame[opts["columns"]].to_numpy(dtype=np.float64, na_value=np.nan)
    w = None if opts["weights"] is None else frame[opts["weights"]].to_numpy(dtype=np.float64)
    released = np.empty_like(values)
    labels = np.empty(len(frame), dtype=np.int64)
    offsets = plan.label_offsets(opts["k"])
    counts = []
    for part in np.unique(parts):
        rows = np.flatnonzero(parts == part)
        labels[rows], released[rows] = opts.get("group", group_part)(
            values[rows], opts["k"], opts["method"], scale=plan.scale,
            label_offset=int(offsets[part]), weights=None if w is None else w[rows],
            aggregation=opts["aggregation"], missing=opts["missing"], n_jobs=opts["n_jobs"],
            **opts["method_params"],
        )
        counts.append((part, int(labels[rows].max() - offsets[part] + 1)))
        if opts["method"] in FIXED_GROUP_COUNT and counts[-1][1] != len(rows) // opts["k"]:
            raise RuntimeError(f"method {opts['method']!r} formed {counts[-1][1]} groups from {len(rows)} records")
    out = frame.drop(columns=[ROW, PART, KEY])
    for j, c in enumerate(opts["columns"]):  # names need not be strings
        out[c] = released[:, j]
    if opts["by"] and plan.strata is not None and (plan.strata["_size"] == 0).any():
        out = relabel_merged(out, opts["by"], plan.strata)
    if opts["group_column"] is not None:
        out[opts["group_column"]] = labels
    out[INDEX] = frame.index
    out[KEY] = frame[KEY].to_numpy()
    table = np.array(counts, dtype=np.int64).reshape(-1, 2)
    sums = partition_sums(values, released, w, plan.mean, plan.scale, int(table[:, 1].sum()))
    return out, table, sums


def relabel_merged(frame: pd.DataFrame, by: list[Any], strata: pd.DataFrame) -> pd.DataFrame:
    """The ``by`` columns of every record set to the values of the stratum its records
    are grouped with (``_root``, an index among the strata left after the merges): a
    merged stratum's records take the label of the stratum they joined, the others keep
    theirs."""
    kept = strata.loc[strata["_size"].to_numpy() > 0, list(by)].reset_index(drop=True)
    root = stratum_codes(frame, by, strata)
    out = frame.copy(deep=False)
    for c in by:  # names need not be strings
        out[c] = kept[c].to_numpy()[root]
    return out


def first_ids(counts: list[Int], plan: Plan) -> Int:
    """Each part's first group id when ids are consecutive, part after part."""
    groups = np.zeros(len(plan.part_sizes), dtype=np.int64)
    for table in counts:
        groups[table[:, 0]] = table[:, 1]
    return np.concatenate([[0], np.cumsum(groups)[:-1]]).astype(np.int64)


def renumber(frame: pd.DataFrame, plan: Plan, first: Int, k: int, group_column: Any) -> pd.DataFrame:
    """Group ids made consecutive: a part's ids, which start at its ``label_offsets``, move
    to start at ``first`` (its part is the last offset at or below the id)."""
    offsets = plan.label_offsets(k)
    ids = frame[group_column].to_numpy()
    part = np.searchsorted(offsets, ids, side="right") - 1
    return frame.assign(**{group_column: ids - offsets[part] + first[part]})
