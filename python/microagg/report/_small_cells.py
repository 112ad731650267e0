"""The release report's small-cell rule: no category level, histogram bin or table cell of
the page describes fewer than k records of either file. A level held by 1 to k − 1 records
of the original or of the release would name a rare value of a few people (a record id, an
unusual occupation), and a histogram bin of 1 to k − 1 records places a few people on the
axis; the rule merges them before anything is drawn (docs/assessment.md, "The release
report"). Empty levels and bins describe nobody and stay."""

from __future__ import annotations

from typing import Any, Sequence

DEFAULT_THRESHOLD = 3
"""The rule's k when no k was requested: sdcMicro's report counts 2- and 3-anonymity
violations, so a cell of fewer than 3 records is the smallest it treats as safe."""


def threshold(d: dict[str, Any]) -> int:
    """The rule's k for an assessment's ``to_dict()``: the requested k, else
    :data:`DEFAULT_THRESHOLD`."""
    k = d.get("k_requested")
    return int(k) if k is not None else DEFAULT_THRESHOLD


def rule_text(k: int) -> str:
    """The rule as the page states it."""
    return (f"Aggregates only, by a stated rule: no record of either file, and no category level, "
            f"histogram bin or table cell that describes fewer than {k} records of either file. Levels held "
            f"by fewer than {k} records merge into one row, sparse histogram bins into their neighbours, and a "
            f"merged row of fewer than {k} records shows no count. Class-size counts name no value and are shown.")


def sparse(count: float, k: int) -> bool:
    """Whether ``count`` records are too few to show: some, but fewer than ``k``."""
    return 0 < count < k


def rare_levels(original: Sequence[int], released: Sequence[int], k: int) -> list[bool]:
    """Per level, whether the original or the release holds it in 1 to k − 1 records."""
    return [sparse(a, k) or sparse(b, k) for a, b in zip(original, released)]


def merge_sparse_bins(
    edges: Sequence[float], original: Sequence[int], released: Sequence[int], k: int
) -> tuple[list[float], list[int], list[int]]:
    """Histogram bins merged with their neighbours until no bin holds 1 to k − 1 records of
    either file: consecutive bins are joined left to right until the run is empty or holds
    at least ``k`` of each file's records; a sparse run left at the end joins the bin before
    it. Returns the merged (edges, original counts, released counts); a file of fewer than
    ``k`` records in all keeps one bin."""
    out_edges, out_o, out_r = [float(edges[0])], [], []
    run_o = run_r = 0
    for i, (a, b) in enumerate(zip(original, released)):
        run_o, run_r = run_o + int(a), run_r + int(b)
        if not (sparse(run_o, k) or sparse(run_r, k)):
            out_edges.append(float(edges[i + 1]))
            out_o.append(run_o)
            out_r.append(run_r)
            run_o = run_r = 0
    if run_o or run_r:  # a sparse run at the end joins the bins before it until it is not sparse
        while out_o and (sparse(run_o, k) or sparse(run_r, k)):
            run_o, run_r = run_o + out_o.pop(), run_r + out_r.pop()
            out_edges.pop()
        out_edges.append(float(edges[-1]))
        out_o.append(run_o)
        out_r.append(run_r)
    return out_edges, out_o, out_r
