"""``microagg anonymize --engine dask``: Parquet in, Parquet out, on a Dask cluster
(docs/scaling.md#the-dask-engine).

Registered by :mod:`.anonymize` on the ``anonymize`` subcommand; Dask is imported only
when this engine runs.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import shutil
import tempfile
import time
from typing import Any, Iterator, Optional


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Adds ``--engine`` and ``--scheduler`` to the ``anonymize`` parser (``--by`` and
    ``--max-part`` are the local engine's own, read by both engines)."""
    parser.add_argument(
        "--engine", choices=["local", "dask"], default="local",
        help="local (default) or dask: Parquet file or directory in, Parquet directory out, on a Dask cluster",
    )
    parser.add_argument(
        "--scheduler", metavar="ADDRESS",
        help="with --engine dask: address of a Dask scheduler (default: a LocalCluster on this machine)",
    )


def check_local(args: argparse.Namespace) -> None:
    """Refuses, on the local engine, the flag only the Dask engine reads."""
    from .common import CliError

    if args.scheduler is not None:
        raise CliError("--scheduler needs --engine dask")


def _names(text: Optional[str]) -> Optional[list[str]]:
    return None if text is None else [c.strip() for c in text.split(",") if c.strip()]


@contextlib.contextmanager
def _client(address: Optional[str]) -> Iterator[Any]:
    """A client of the scheduler at ``address``, or of a new LocalCluster."""
    from distributed import Client, LocalCluster

    if address:
        with Client(address) as client:
            yield client
    else:
        with LocalCluster(dashboard_address=None) as cluster, Client(cluster) as client:
            yield client


def run(args: argparse.Namespace) -> int:
    """Anonymizes the Parquet data ``args.input`` with :func:`microagg.dask.anonymize` and
    writes a Parquet directory (atomically: a temporary directory beside it, then renamed)."""
    from .common import CliError, parse_param

    try:
        import dask.dataframe as dd

        from .. import dask as mdask
    except ImportError as exc:
        raise CliError(f"--engine dask needs Dask: pip install 'microagg[dask]' ({exc})") from None
    src = args.input.rstrip("/")
    if not os.path.exists(src):
        raise CliError(f"input not found: {src}")
    if args.dtype == "float32":
        raise CliError("--dtype float32 is not available with --engine dask")
    out = args.output or f"{os.path.splitext(src)[0]}_k{args.k}.parquet"
    if os.path.exists(out):
        raise CliError(f"{out} exists; choose another -o (nothing is overwritten)")
    params = dict(parse_param(p) for p in args.param)
    if getattr(args, "trim", None) is not None:
        params["trim"] = args.trim
    for name in ("weights", "aggregation", "missing"):  # the local engine's workflow flags, when present
        if getattr(args, name, None) is not None:
            params[name] = getattr(args, name)
    max_part = 100_000 if args.max_part is None else args.max_part
    t0 = time.perf_counter()
    with _client(args.scheduler):
        try:
            ddf = dd.read_parquet(src)
        except Exception as exc:  # pyarrow's errors for files that are not Parquet vary
            raise CliError(f"cannot read {src} as Parquet: {exc}") from None
        result = mdask.anonymize(
            ddf, args.k, _names(args.columns), args.method, by=_names(args.by), max_part=max_part,
            small_strata=getattr(args, "small_strata", None) or "error",
            standardize=not args.no_standardize, n_jobs=args.jobs, **params,
        )
        tmp = tempfile.mkdtemp(prefix=".microagg-", dir=os.path.dirname(os.path.abspath(out)))
        try:
            result.to_parquet(tmp)
            os.replace(tmp, out)
        finally:
            shutil.rmtree(tmp, ignore_errors=True)
    print(
        f"wrote {out}: {ddf.npartitions} partitions; k={args.k}, method={args.method}, "
        f"max_part={max_part} ({time.perf_counter() - t0:.2f} s)"
    )
    return 0
