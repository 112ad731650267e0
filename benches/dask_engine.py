"""The Dask engine (docs/scaling.md#the-dask-engine): n × 4 Gaussian records from Parquet to Parquet
with ``microagg.dask.anonymize`` (mdav, k = 5) on a ``distributed.LocalCluster`` of 2 worker
processes (1 thread each), against one machine without a cluster (the local pipeline's
``max_part`` when this build has it, else the same engine on Dask's threaded scheduler),
and optionally out of core: workers whose memory limit is below the data's size.

    python benches/dask_engine.py                        # 10^7 x 4, max_part 100 000
    python benches/dask_engine.py --n 30000000 --out-of-core   # worker memory < the data

Peak memory is each worker process's maximum resident set (getrusage), read after the run
from a fresh cluster. The information loss is computed file by file (this process never holds
the data either). The planner's per-level log goes to ``--log``. Writes bench-results/dask.md
(the out-of-core run: its own section of that file, the other rows kept). Measures and
prints; asserts nothing.
"""

from __future__ import annotations

import argparse
import logging
import os
import re
import resource
import shutil
import tempfile
import time
from pathlib import Path
from typing import Optional

import numpy as np
import pandas as pd
from bench_common import OUT, write

import microagg as ma
import microagg.dask as mdask

COLUMNS = ["x0", "x1", "x2", "x3"]

WORKER_BASE_MIB = 250
"""Resident memory of an idle worker process with NumPy, pandas, pyarrow and microagg loaded."""


def make_parquet(path: Path, n: int, rows_per_file: int) -> None:
    """n Gaussian records in 4 columns plus a record id, one Parquet file per chunk."""
    path.mkdir(parents=True)
    rng = np.random.default_rng(0)
    for i, start in enumerate(range(0, n, rows_per_file)):
        m = min(rows_per_file, n - start)
        frame = pd.DataFrame(rng.normal(size=(m, 4)), columns=COLUMNS)
        frame.insert(0, "record", np.arange(start, start + m))
        frame.to_parquet(path / f"part.{i:04d}.parquet", index=False)


def peak_rss_mib() -> float:
    """This process's maximum resident set so far, MiB (Linux reports KiB)."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def log_to(path: str) -> None:
    """On a worker: the planner's INFO log (logger ``microagg.dask``) appended to ``path``."""
    handler = logging.FileHandler(path)
    handler.setFormatter(logging.Formatter("%(asctime)s %(message)s"))
    logger = logging.getLogger("microagg.dask")
    logger.addHandler(handler)
    logger.setLevel(logging.INFO)


def on_cluster(
    src: Path, out: Path, k: int, max_part: int, memory_limit: Optional[str], log: Optional[str] = None,
    no_pause: bool = False,
) -> tuple[float, list[float]]:
    """Seconds for read → anonymize → write on a fresh 2-worker LocalCluster, and each
    worker's peak memory (MiB)."""
    from distributed import Client, LocalCluster

    import dask.dataframe as dd

    import dask

    # Dask's p2p shuffle buffers up to 1 GiB of outgoing data a worker by default; with a
    # memory limit, smaller buffers (at 3e7 on 536 MiB workers a worker still paused at 80%
    # for good and the shuffle stalled; --no-pause: the nanny restarted both at 95%).
    small: dict[str, object] = {"distributed.p2p.comm.buffer": "64 MiB", "distributed.p2p.storage.buffer": "32 MiB"} if memory_limit else {}
    if no_pause:
        small["distributed.worker.memory.pause"] = False
    with dask.config.set(small), LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None,
                      memory_limit=memory_limit or "auto") as cluster, Client(cluster) as client:
        if log:
            client.run(log_to, log)
        t0 = time.perf_counter()
        result = mdask.anonymize(dd.read_parquet(src), k, COLUMNS, "mdav", max_part=max_part, group_column="group")
        result.to_parquet(out)
        seconds = time.perf_counter() - t0
        peaks = sorted(client.run(peak_rss_mib).values())
    return seconds, peaks


def one_machine(src: Path, out: Path, k: int, max_part: int) -> tuple[str, float]:
    """The same release without a cluster: ``ma.anonymize(..., max_part=)`` on 2 threads,
    Parquet read and written with pandas."""
    t0 = time.perf_counter()
    frame = pd.read_parquet(src)
    ma.anonymize(frame, k, COLUMNS, "mdav", max_part=max_part, n_jobs=2).to_parquet(out)
    return "one machine: ma.anonymize(max_part=..., n_jobs=2)", time.perf_counter() - t0


def information_loss(src: Path, out: Path) -> tuple[float, int]:
    """IL of the cluster's release and its smallest group, one Parquet file at a time.

    Every record is released as its group's mean, so per column the SSE is the sum of
    squared deviations of the original values from the overall mean minus that of the
    released ones (both sums over the whole file); the IL divides each column's SSE by its
    SST, as ``ma.information_loss`` does with standardized columns."""
    def sums(path: Path, columns: list[str], mean: Optional[np.ndarray]) -> tuple[int, np.ndarray, np.ndarray]:
        n, s1, s2 = 0, np.zeros(len(columns)), np.zeros(len(columns))
        for f in sorted(path.glob("*.parquet")):
            x = pd.read_parquet(f, columns=columns).to_numpy(np.float64)
            n += len(x)
            s1 += x.sum(axis=0)
            if mean is not None:
                s2 += ((x - mean) ** 2).sum(axis=0)
        return n, s1, s2

    n, total, _ = sums(src, COLUMNS, None)
    mean = total / n
    _, _, sst = sums(src, COLUMNS, mean)
    _, _, released = sums(out, COLUMNS, mean)
    sizes = np.zeros(0, dtype=np.int64)
    for f in sorted(out.glob("*.parquet")):
        counts = np.bincount(pd.read_parquet(f, columns=["group"])["group"].to_numpy())
        sizes = np.pad(sizes, (0, max(0, len(counts) - len(sizes))))
        sizes[: len(counts)] += counts
    il = float(np.sum((sst - released) / sst) / len(COLUMNS))
    return il, int(sizes[sizes > 0].min())


def out_of_core_section(args: argparse.Namespace, limit: str, data_mib: float, load: tuple[float, ...],
                        after: tuple[float, ...], seconds: float, peaks: list[float], il: float, smallest: int) -> list[str]:
    """The out-of-core run as a section of dask.md."""
    loads = ", ".join(f"{x:.2f}" for x in load)
    return [
        "## Out of core", "",
        "| n x d | data in memory (MiB) | workers x memory limit | time (s) | peak memory per worker (MiB) "
        "| load before | load after | IL (%) | smallest group |",
        "|---|---:|---|---:|---:|---|---|---:|---:|",
        f"| {args.n:,} x 4 | {data_mib:.0f} | 2 x {limit} (sum {2 * int(limit[:-3])} MiB) | {seconds:.1f} "
        f"| {', '.join(f'{p:.0f}' for p in peaks)} | {loads} | {', '.join(f'{x:.2f}' for x in after)} "
        f"| {100 * il:.3f} | {smallest} |",
        "",
        f"Parquet in and out ({args.rows_per_file:,} rows per file), mdav, k = {args.k}, max_part = {args.max_part:,}, "
        "LocalCluster of 2 worker processes x 1 thread; data in memory counts the 4 float64 "
        "columns and the int64 record id. The time is read -> anonymize -> write; the planner's "
        "per-level log is below.",
    ]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--n", type=int, default=10_000_000)
    ap.add_argument("--k", type=int, default=5)
    ap.add_argument("--max-part", type=int, default=100_000)
    ap.add_argument("--rows-per-file", type=int, default=250_000)
    ap.add_argument("--out-of-core", action="store_true",
                    help="instead: one cluster run whose worker memory limits add up to less than the data")
    ap.add_argument("--no-pause", action="store_true", help="workers never pause at 80%% of their memory limit")
    ap.add_argument("--log", help="append the planner's per-level log (from the workers) to this file")
    ap.add_argument("--tmp", default=tempfile.gettempdir())
    args = ap.parse_args()
    data_mib = args.n * 5 * 8 / 2**20
    work = Path(tempfile.mkdtemp(prefix="microagg-dask-bench-", dir=args.tmp))
    rows = []
    limit = f"{int(WORKER_BASE_MIB + data_mib / 4)}MiB" if args.out_of_core else None  # 2 workers hold < the data
    try:
        src = work / "in"
        make_parquet(src, args.n, args.rows_per_file)
        load = os.getloadavg()
        print(f"{args.n:,} x 4 records ({data_mib:.0f} MiB in memory); load {load}", flush=True)
        seconds, peaks = on_cluster(src, work / "cluster", args.k, args.max_part, limit, args.log, args.no_pause)
        after = os.getloadavg()
        rows.append((f"LocalCluster, 2 workers x 1 thread{f', memory limit {limit} each' if limit else ''}", seconds, peaks))
        print(rows[-1], f"load after {after}", flush=True)
        if not args.out_of_core:
            what, seconds = one_machine(src, work / "local", args.k, args.max_part)
            rows.append((what, seconds, [peak_rss_mib()]))  # this process: data generation included
            print(rows[-1], flush=True)
        il, smallest = information_loss(src, work / "cluster")  # last: it reads the data again
        print(f"IL {100 * il:.3f}%, smallest group {smallest}", flush=True)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    if args.out_of_core:
        assert limit is not None
        section = out_of_core_section(args, limit, data_mib, load, after, seconds, peaks, il, smallest)
        path = OUT / "dask.md"
        text = path.read_text() if path.exists() else "# Dask engine\n"
        text = re.sub(r"\n## Out of core\n.*?(?=\n## |\Z)", "", text, flags=re.S).rstrip("\n")
        write("dask.md", [text, "", *section])
        return
    lines = [
        "# Dask engine", "",
        f"{args.n:,} x 4 Gaussian records (+ a record id column), Parquet in and out, mdav, k = {args.k}, "
        f"max_part = {args.max_part:,}; {data_mib:.0f} MiB in memory. Load average before the run: "
        f"{load[0]:.2f}, {load[1]:.2f}, {load[2]:.2f} (a 2-core machine shared with other jobs).", "",
        f"Information loss of the cluster's release: {100 * il:.3f}%.", "",
        "| run | time (s) | peak memory per process (MiB) |", "|---|---:|---:|",
        *[f"| {what} | {seconds:.1f} | {', '.join(f'{p:.0f}' for p in peaks)} |" for what, seconds, peaks in rows],
    ]
    write("dask.md", lines)


if __name__ == "__main__":
    main()
