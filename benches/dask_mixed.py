"""The Dask engine's mixed path (docs/scaling.md#the-dask-engine): a key of numbers beside a
many-level region code, released by ``microagg.dask.anonymize`` natively (a column per
attribute, cuts through the region's levels, each part grouped on the core's native key)
and through the one-hot embedding added to every partition (the path main took before, and
still takes for ``categorical_release="medoid"`` or methods other than mdav). One thread
(the synchronous scheduler), k = 5. Prints and writes bench-results/dask_mixed.md; asserts
nothing.

    python benches/dask_mixed.py                    # 2*10^5 records, 2 000 levels, both paths
    python benches/dask_mixed.py --n 50000 --paths native

Each run is a subprocess, so its peak resident memory (ru_maxrss) is its own.
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import time

import numpy as np
from bench_common import write

K = 5
PARTITIONS = 8


def frame(n: int, levels: int, seed: int = 0) -> object:
    """Age, hours and income beside sex and a Zipf-distributed region code."""
    import pandas as pd

    rng = np.random.default_rng(seed)
    p = 1.0 / np.arange(1, levels + 1)
    return pd.DataFrame(
        {
            "age": rng.integers(17, 90, n).astype(np.float64),
            "hours": rng.integers(1, 99, n).astype(np.float64),
            "income": rng.lognormal(10, 1, n),
            "sex": rng.choice(["F", "M"], n),
            "region": rng.choice(levels, n, p=p / p.sum()).astype(str).astype(object),
        }
    )


def child(n: int, levels: int, max_part: int, path: str) -> None:
    """One release in this process; prints its seconds and peak RSS as JSON."""
    import dask
    import dask.dataframe as dd

    import microagg._dask.mixed as dask_mixed
    import microagg.dask as mdask

    if path == "embedding":  # the path main took before: the one-hot columns on every partition
        dask_mixed.takes_natively = lambda *args, **kwargs: False
    ddf = dd.from_pandas(frame(n, levels), npartitions=PARTITIONS)
    key = ["age", "hours", "income", "sex", "region"]
    with dask.config.set({"scheduler": "synchronous", "dataframe.shuffle.method": "tasks"}):
        start = time.perf_counter()
        out = mdask.anonymize(ddf, K, columns=key, max_part=max_part).compute()
        seconds = time.perf_counter() - start
    smallest = int(out.groupby(key).size().min())
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(json.dumps({"seconds": seconds, "peak_mib": peak, "smallest": smallest}))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=200_000)
    parser.add_argument("--levels", type=int, default=2_000)
    parser.add_argument("--max-part", type=int, default=20_000)
    parser.add_argument("--paths", default="native,embedding")
    parser.add_argument("--timeout", type=float, default=1800.0)
    parser.add_argument("--child", default=None, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        child(args.n, args.levels, args.max_part, args.child)
        return
    rows = []
    for path in args.paths.split(","):
        cmd = [sys.executable, __file__, "--n", str(args.n), "--levels", str(args.levels),
               "--max-part", str(args.max_part), "--child", path]
        try:
            done = subprocess.run(cmd, capture_output=True, text=True, check=True, timeout=args.timeout)
            r = json.loads(done.stdout.strip().splitlines()[-1])
            row = f"| {path} | {args.n} | {args.levels} | {args.max_part} | {r['seconds']:.2f} | {r['peak_mib']:.0f} | {r['smallest']} |"
        except subprocess.TimeoutExpired:
            row = f"| {path} | {args.n} | {args.levels} | {args.max_part} | > {args.timeout:.0f} (stopped) | — | — |"
        print(row, flush=True)
        rows.append(row)
    write("dask_mixed.md", [
        "# The Dask engine's mixed path",
        "",
        f"`microagg.dask.anonymize`, exact MDAV, k = {K}, key age, hours, income, sex and a Zipf region code, "
        f"{PARTITIONS} partitions, synchronous scheduler (one thread), on a shared 2-core machine. Peak RSS of the "
        "run's own subprocess (Python, the data and the release). `benches/dask_mixed.py`.",
        "",
        "| path | records | region levels | max_part | time (s) | peak RSS (MiB) | smallest class |",
        "|---|---:|---:|---:|---:|---:|---:|",
        *rows,
        "",
        "native: a column per key attribute on every partition, cuts through the region's levels from level "
        "counts, each part grouped on the core's native key. embedding: the one-hot columns (one per level) "
        "added to every partition and the numeric engine run on them, as main did before.",
    ])


if __name__ == "__main__":
    main()
