"""``microagg anonymize --engine dask``: Parquet in, Parquet out, on a Dask cluster
(docs/scaling.md#the-dask-engine).

Registered by :mod:`.anonymize` on the ``anonymize`` subcommand; Dask is imported only
when this engine runs.
"""

from __future__ import annotations

import argparse
import contextlib
import logging
import os
import time
import warnings
from typing import Any, Iterator, Optional

from .output import check_output_directory, write_directory

PARTITION_BYTES = 64 * 2**20
"""Largest partition (uncompressed Parquet bytes) read from one file: a large file is split
at its row groups into partitions of about this size, not read as one partition."""

QUIET = ("distributed", "dask", "tornado", "bokeh")
"""Loggers (and modules whose warnings) stay out of the user's stderr unless ``-v``."""


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Adds ``--engine``, ``--scheduler`` and ``-v`` to the ``anonymize`` parser (``--by``
    and ``--max-part`` are the local engine's own, read by both engines)."""
    parser.add_argument(
        "--engine", choices=["local", "dask"], default="local",
        help="local (default) or dask: Parquet file or directory in, Parquet directory out, on a Dask cluster",
    )
    parser.add_argument(
        "--scheduler", metavar="ADDRESS",
        help="with --engine dask: address of a Dask scheduler (default: a LocalCluster on this machine)",
    )
    parser.add_argument(
        "-v", "--verbose", action="store_true",
        help="with --engine dask: show Dask's own log lines and warnings (hidden by default)",
    )


def check_local(args: argparse.Namespace) -> None:
    """Refuses, on the local engine, the flag only the Dask engine reads."""
    from .common import CliError

    if args.scheduler is not None:
        raise CliError("--scheduler needs --engine dask")


@contextlib.contextmanager
def _client(address: Optional[str], verbose: bool) -> Iterator[Any]:
    """A client of the scheduler at ``address``, or of a new LocalCluster; Dask's log lines
    and warnings silenced (here and on the LocalCluster's workers) unless ``verbose``."""
    from distributed import Client, LocalCluster

    with _quiet(not verbose):
        if address:
            with Client(address) as client:
                yield client
        else:
            level = logging.INFO if verbose else logging.CRITICAL
            with LocalCluster(dashboard_address=None, silence_logs=level) as cluster, Client(cluster) as client:
                yield client


@contextlib.contextmanager
def _quiet(quiet: bool) -> Iterator[None]:
    """Raises the :data:`QUIET` loggers to CRITICAL and ignores their modules' warnings
    while ``quiet``."""
    if not quiet:
        yield
        return
    loggers = [logging.getLogger(name) for name in QUIET]
    levels = [logger.level for logger in loggers]
    for logger in loggers:
        logger.setLevel(logging.CRITICAL)
    try:
        with warnings.catch_warnings():
            for name in QUIET:
                warnings.filterwarnings("ignore", module=rf"{name}(\..*)?$")
            yield
    finally:
        for logger, level in zip(loggers, levels):
            logger.setLevel(level)


def _parquet_files(src: str) -> list[str]:
    """The data files Dask reads from ``src``: the file itself, or every file under the
    directory whose name starts with neither "_" nor "." (as pyarrow's discovery)."""
    if os.path.isfile(src):
        return [src]
    found = []
    for root, dirs, files in os.walk(src):
        dirs[:] = sorted(d for d in dirs if not d.startswith(("_", ".")))
        found += [os.path.join(root, f) for f in sorted(files) if not f.startswith(("_", "."))]
    return found


def _check_footers(files: list[str]) -> None:
    """Reads every file's Parquet footer (its metadata only): a file that is not Parquet,
    truncated or unreadable is named before any work starts."""
    import pyarrow.parquet as pq

    from .common import CliError

    for path in files:
        try:
            pq.read_metadata(path)
        except Exception as exc:  # pyarrow's errors vary: ArrowInvalid, OSError, ...
            raise CliError(f"cannot read {path} as Parquet: {exc}") from None


def _find_unreadable(files: list[str]) -> Optional[str]:
    """The first file whose data cannot be read through (streamed, a row group at a time),
    with the reason; None when every file reads."""
    import pyarrow.parquet as pq

    for path in files:
        try:
            for _ in pq.ParquetFile(path).iter_batches():
                pass
        except Exception as exc:
            return f"cannot read {path}: {exc}"
    return None


def run(args: argparse.Namespace) -> int:
    """Anonymizes the Parquet data ``args.input`` with :func:`microagg.dask.anonymize` and
    writes a Parquet directory (atomically: a temporary directory beside it, then renamed);
    prints what the local engine prints (records, columns, groups, information loss)."""
    from .common import CliError, in_cli_terms, parse_param, split

    try:
        import dask
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
    check_output_directory(out, [src], args.overwrite)
    params = dict(parse_param(p) for p in args.param)
    if getattr(args, "trim", None) is not None:
        params["trim"] = args.trim
    for name in ("weights", "aggregation", "missing"):  # the local engine's workflow flags, when present
        if getattr(args, name, None) is not None:
            params[name] = getattr(args, name)
    max_part = 100_000 if args.max_part is None else args.max_part
    files = _parquet_files(src)
    _check_footers(files)
    t0 = time.perf_counter()
    with _client(args.scheduler, args.verbose):
        try:
            ddf = dd.read_parquet(src, split_row_groups="adaptive", blocksize=PARTITION_BYTES)
        except Exception as exc:  # pyarrow's errors for files that are not Parquet vary
            raise CliError(f"cannot read {src} as Parquet: {exc}") from None
        columns = None if args.columns is None else split(args.columns)
        mixed = _mixed_options(args)
        text = [c for c in columns or [] if c in ddf.columns and ddf[c].dtype.kind not in "iufb"]
        summarize = not mixed and not text  # the summary covers numeric keys
        with in_cli_terms(None):
            result = mdask.anonymize(
                ddf, args.k, columns, args.method, by=split(args.by), max_part=max_part,
                small_strata=getattr(args, "small_strata", None) or "error",
                standardize=not args.no_standardize, n_jobs=args.jobs, summary=summarize, **mixed, **params,
            )
        frame, summary = result if summarize else (result, None)
        done: dict[str, Any] = {}

        def write(target: str) -> None:
            try:
                done["report"] = dask.compute(frame.to_parquet(target, compute=False), summary)[1]
            except (ValueError, TypeError, CliError):
                raise
            except Exception as exc:  # a part that fails to read: name its file when one does
                raise CliError(_find_unreadable(files) or f"the Dask run failed: {type(exc).__name__}: {exc}") from None

        with in_cli_terms(None):
            write_directory(out, write, args.overwrite)
    report = done["report"]
    seconds = time.perf_counter() - t0
    if report is None:
        print(f"wrote {out}; k={args.k}, method={args.method} ({seconds:.2f} s; {ddf.npartitions} partitions, "
              f"max_part={max_part})")
        return 0
    print(
        f"wrote {out}: {report.n_records} records, columns {', '.join(map(str, report.columns))}; "
        f"k={args.k}, method={args.method}, {report.n_groups} groups, information loss "
        f"{100 * report.information_loss:.4f}% ({seconds:.2f} s; "
        f"{ddf.npartitions} partitions, max_part={max_part})"
    )
    return 0


def _mixed_options(args: argparse.Namespace) -> dict[str, Any]:
    """The mixed-key flags of ``anonymize`` as :func:`microagg.dask.anonymize`'s keywords
    (only those given)."""
    from .._mixed.flags import by_column, parse_attribute_weight, parse_ordinal
    from .common import split

    options: dict[str, Any] = {}
    if args.categorical:
        options["categorical"] = split(args.categorical)
    if args.ordinal:
        options["ordinal"] = by_column(parse_ordinal, args.ordinal, "--ordinal")
    if args.attribute_weight:
        options["attribute_weights"] = by_column(parse_attribute_weight, args.attribute_weight, "--attribute-weight")
    if args.categorical_release != "mode":
        options["categorical_release"] = args.categorical_release
    return options
