"""The README's Dask example, runnable: anonymize a Parquet data set on a local Dask cluster.

    python examples/dask_anonymize.py [WORKDIR]

It writes a small generated census (``WORKDIR/census/``, 20 000 records in 4 files), releases
it 5-anonymous with MDAV on parts of at most 2 000 records, within strata of ``region``, to
``WORKDIR/census_k5/``, and prints the size of the smallest released class. The ``__main__`` guard is needed:
``Client()`` starts worker processes, which import this script again.
"""

from __future__ import annotations

import logging
import sys
import tempfile
from pathlib import Path

import dask.dataframe as dd
import numpy as np
import pandas as pd
from distributed import Client, LocalCluster

import microagg.dask


def write_census(path: Path, n: int = 20_000) -> None:
    """A generated census: age, income, region and an identifier, as 4 Parquet files."""
    rng = np.random.default_rng(0)
    census = pd.DataFrame(
        {
            "age": rng.integers(18, 90, n),
            "income": rng.lognormal(10, 0.6, n).round(-2),
            "region": rng.choice(["north", "south", "east", "west"], n),
            "id": np.arange(n),
        }
    )
    dd.from_pandas(census, npartitions=4).to_parquet(path)


def main(workdir: Path) -> None:
    write_census(workdir / "census")
    # silence_logs: the workers' routine warnings (shuffles starting and ending) stay quiet.
    cluster = LocalCluster(n_workers=2, threads_per_worker=1, dashboard_address=None, silence_logs=logging.ERROR)
    with cluster, Client(cluster):
        ddf = dd.read_parquet(workdir / "census")
        out = microagg.dask.anonymize(ddf, k=5, columns=["age", "income"], by="region", method="mdav", max_part=2_000)
        out.to_parquet(workdir / "census_k5")  # nothing runs before this line
    released = pd.read_parquet(workdir / "census_k5")
    smallest = released.groupby(["region", "age", "income"]).size().min()
    print(f"wrote {workdir / 'census_k5'}: {len(released)} records, smallest class {smallest}")


if __name__ == "__main__":
    if len(sys.argv) > 1:
        main(Path(sys.argv[1]))
    else:
        with tempfile.TemporaryDirectory() as tmp:
            main(Path(tmp))
