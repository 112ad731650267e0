"""The ``microagg`` command-line tool.

``microagg demo`` runs a method on a bundled data set for k = 2..10; ``microagg anonymize``
rewrites the chosen numeric columns of a CSV or Parquet file (``_io``) with their
k-anonymous group centroids.
Errors are one line on stderr and exit status 2; the input file is never overwritten and the
output is written atomically (temporary file in the same folder, then rename).
"""

from __future__ import annotations

import argparse
import os
import sys
import threading
import time
from typing import Any, Callable, Optional, Sequence

import numpy as np

from . import _cli_assess, _cli_dask, _core, datasets
from ._api import METHODS, MicroaggregationResult, microaggregate
from ._io import Table, check_writable, read_table, write_table

_DATASETS: dict[str, Callable[[], Any]] = {
    "census": datasets.load_census,
    "tarragona": datasets.load_tarragona,
    "eia": datasets.load_eia,
}


class CliError(Exception):
    """A user error, printed as one line."""


def _parse_param(text: str) -> tuple[str, Any]:
    name, sep, value = text.partition("=")
    if not sep or not name:
        raise CliError(f"--param expects NAME=VALUE, got {text!r}")
    low = value.strip().lower()
    if low in ("true", "false"):
        return name, low == "true"
    for convert in (int, float):
        try:
            return name, convert(value)
        except ValueError:
            pass
    raise CliError(f"--param {name}: value {value!r} is not a bool or a number")


def _run_with_progress(n: int, run: Callable[[Optional[_core.Progress]], MicroaggregationResult]) -> MicroaggregationResult:
    """Runs ``run`` in a worker thread; after 2 s, reports its progress on stderr (records
    assigned, and improvement rounds for ONA / ONA*)."""
    progress = _core.Progress()
    box: dict[str, Any] = {}

    def work() -> None:
        try:
            box["result"] = run(progress)
        except BaseException as exc:  # re-raised in the calling thread
            box["error"] = exc

    worker = threading.Thread(target=work, daemon=True)
    start = time.perf_counter()
    worker.start()
    shown = False
    tty = sys.stderr.isatty()
    last = 0.0
    while worker.is_alive():
        worker.join(0.2)
        elapsed = time.perf_counter() - start
        if worker.is_alive() and elapsed > 2.0 and (tty or elapsed - last >= 5.0):
            last = elapsed
            done, rounds = progress.assigned, progress.rounds
            msg = f"  {done:,}/{n:,} records assigned ({100.0 * done / n:.0f}%)"
            msg += f", {rounds} improvement rounds" if rounds else ""
            msg += f", {elapsed:.0f} s"
            print(("\r" + msg) if tty else msg, end="" if tty else "\n", file=sys.stderr, flush=True)
            shown = True
    if shown and tty:
        print(file=sys.stderr)
    if "error" in box:
        raise box["error"]
    result: MicroaggregationResult = box["result"]
    return result


def _demo(args: argparse.Namespace) -> int:
    X = _DATASETS[args.dataset]()
    print(f"{args.method} on the bundled {args.dataset} data ({X.shape[0]} records x {X.shape[1]} attributes)")
    print(f"{'k':>3}  {'IL (%)':>8}  {'groups':>6}  {'time (ms)':>9}")
    for k in args.k:
        t0 = time.perf_counter()
        res = microaggregate(X, k, args.method, n_jobs=args.jobs, dtype=args.dtype)
        ms = 1000 * (time.perf_counter() - t0)
        print(f"{k:>3}  {100 * res.information_loss:8.4f}  {res.n_groups:6d}  {ms:9.2f}")
    return 0


def _choose_columns(
    table: Table, wanted: Optional[str], reserved: dict[int, str], missing: bool
) -> dict[int, np.ndarray]:
    """The chosen columns' indices and values (default: every numeric column that is not
    ``reserved``, the strata and weights columns, gaps allowed). Missing cells (empty /
    "NA" / "nan" in CSV, nulls in Parquet) are NaN, refused unless ``missing``, so a numeric
    column with gaps is never silently left out of the default selection."""
    header = table.names
    if wanted is None:
        parsed = {j: table.numeric(j) for j in range(len(header)) if j not in reserved}
        cols = {j: v for j, v in parsed.items() if v is not None and not np.isnan(v).all()}
        if not cols:
            raise CliError("no numeric column found; name them with --columns")
    else:
        cols = {}
        for c in (c.strip() for c in wanted.split(",") if c.strip()):
            if c not in header:
                raise CliError(f"unknown column {c!r}; columns are: {', '.join(header)}")
            j = header.index(c)
            if j in reserved:
                raise CliError(f"column {c!r} is both a quasi-identifier (--columns) and in {reserved[j]}")
            values = table.numeric(j)
            if values is None:
                raise CliError(f"column {c!r} is not numeric ({table.why_not_numeric(j)})")
            cols[j] = values
    if not missing:
        for j, values in cols.items():
            if np.isnan(values).any():
                where = table.cell(j, int(np.argmax(np.isnan(values))))
                raise CliError(
                    f"column {header[j]!r} has missing values ({where}); use --missing fill or --missing keep"
                )
    return cols


def _workflow_columns(
    table: Table, by: Optional[str], weights: Optional[str]
) -> tuple[Optional[np.ndarray], Optional[np.ndarray], dict[int, str]]:
    """The strata labels (the values of the ``--by`` columns), the ``--weights`` values, and
    the option naming each of those columns."""
    header = table.names
    reserved: dict[int, str] = {}
    names = [c.strip() for c in by.split(",") if c.strip()] if by is not None else []
    for option, wanted in (("--by", names), ("--weights", [weights] if weights is not None else [])):
        for c in wanted:
            if c not in header:
                raise CliError(f"{option}: unknown column {c!r}; columns are: {', '.join(header)}")
            reserved[header.index(c)] = option
    strata = None
    if names:
        labels = [table.labels(header.index(c)) for c in names]
        strata = labels[0] if len(labels) == 1 else np.column_stack(labels)
    w = None
    if weights is not None:
        w = table.numeric(header.index(weights))
        if w is None:
            raise CliError(f"--weights: column {weights!r} is not numeric")
    return strata, w, reserved


def _anonymize(args: argparse.Namespace) -> int:
    if args.engine == "dask":
        return _cli_dask.run(args)
    _cli_dask.check_local(args)
    src = args.input
    out = args.output or "{0}_k{1}{2}".format(*os.path.splitext(src)[:1], args.k, os.path.splitext(src)[1] or ".csv")
    if os.path.exists(out) and os.path.exists(src) and os.path.samefile(src, out):
        raise CliError("the output file is the input file; choose another -o (the input is never overwritten)")
    check_writable(out)
    table = read_table(src)
    if table.n_rows == 0:
        raise CliError(f"{src} has no data rows")
    strata, weights, reserved = _workflow_columns(table, args.by, args.weights)
    cols = _choose_columns(table, args.columns, reserved, args.missing != "error")
    idx = list(cols)
    X = np.column_stack(list(cols.values()))
    empty = [table.names[j] for jj, j in enumerate(idx) if np.isnan(X[:, jj]).all()]
    if empty:
        raise CliError(f"column(s) with no observed value (every cell missing): {', '.join(map(repr, empty))}")
    params = dict(_parse_param(p) for p in args.param)
    t0 = time.perf_counter()
    res = _run_with_progress(
        X.shape[0],
        lambda progress: microaggregate(
            X,
            args.k,
            args.method,
            standardize=not args.no_standardize,
            dtype=args.dtype,
            n_jobs=args.jobs,
            progress=progress,
            by=strata,
            small_strata=args.small_strata,
            weights=weights,
            aggregation=args.aggregation,
            trim=args.trim,
            missing=args.missing,
            max_part=args.max_part,
            **params,
        ),
    )
    seconds = time.perf_counter() - t0
    agg = res.aggregated
    write_table(table.replaced({j: agg[:, jj] for jj, j in enumerate(idx)}), out)
    names = ", ".join(table.names[j] for j in idx)
    print(
        f"wrote {out}: {table.n_rows} records, columns {names}; k={args.k}, method={args.method}, "
        f"{res.n_groups} groups, information loss {100 * res.information_loss:.4f}% ({seconds:.2f} s)"
        + (f"; {res.n_filled} missing cells filled" if res.n_filled else "")
    )
    for m in res.merges:
        print(f"merged stratum {m.stratum!r} ({m.size} records) into stratum {m.into!r}")
    return 0


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="microagg", description="Fast k-anonymous microaggregation.")
    p.add_argument("--version", action="version", version=f"microagg {_core.__version__}")
    sub = p.add_subparsers(dest="command", required=True)

    d = sub.add_parser("demo", help="run a method on a bundled data set for several k")
    d.add_argument("--dataset", choices=sorted(_DATASETS), default="census")
    d.add_argument("--method", choices=METHODS, default="mdav")
    d.add_argument("-k", type=int, nargs="+", default=list(range(2, 11)), help="k values (default 2..10)")
    d.add_argument("--jobs", type=int, default=1, help="threads: 1 (default), -1 = all cores")
    d.add_argument("--dtype", choices=["float32", "float64"], default=None)
    d.set_defaults(func=_demo)

    a = sub.add_parser("anonymize", help="microaggregate numeric columns of a CSV or Parquet file")
    a.add_argument("input", help="input CSV file with a header row, or .parquet (needs pyarrow)")
    a.add_argument("-k", type=int, required=True, help="minimum group size")
    a.add_argument("--columns", help="comma-separated quasi-identifier columns (default: all numeric)")
    a.add_argument("--method", choices=METHODS, default="mdav")
    a.add_argument("-o", "--output", help="output CSV or .parquet (default: INPUT_kK.EXT; never the input)")
    a.add_argument("--jobs", type=int, default=1, help="threads: 1 (default), -1 = all cores")
    a.add_argument("--dtype", choices=["float32", "float64"], default=None)
    a.add_argument("--no-standardize", action="store_true", help="do not z-score the columns first")
    a.add_argument("--param", action="append", default=[], metavar="NAME=VALUE", help="method parameter")
    a.add_argument("--by", metavar="COL[,COL...]", help="strata columns: no group mixes strata (any text)")
    a.add_argument(
        "--small-strata",
        choices=["error", "merge"],
        default="error",
        help="a stratum below k records is an error (default) or merged into the nearest stratum",
    )
    a.add_argument("--weights", metavar="COL", help="sampling-weight column (weighted group values and IL)")
    a.add_argument(
        "--aggregation",
        choices=["mean", "median", "trim", "onestep"],
        default="mean",
        help="what a group releases (default: mean)",
    )
    a.add_argument("--trim", type=float, default=None, help="share cut from each end by --aggregation trim (default 0.1)")
    a.add_argument(
        "--missing",
        choices=["error", "fill", "keep"],
        default="error",
        help="empty/NA/nan cells: refuse (default), or group on EM-completed values and write "
        "the group's value (fill) or leave them missing (keep)",
    )
    a.add_argument(
        "--max-part",
        type=int,
        default=None,
        metavar="N",
        help="cut into parts of at most N records (Mondrian-V), then run the method on each part",
    )
    _cli_dask.add_arguments(a)
    a.set_defaults(func=_anonymize)

    _cli_assess.add_parser(sub)

    sub.add_parser("methods", help="list the methods").set_defaults(
        func=lambda args: print("\n".join(METHODS)) or 0
    )
    return p


def main(argv: Optional[Sequence[str]] = None) -> int:
    """Entry point of the ``microagg`` console script; returns the exit status."""
    args = _parser().parse_args(argv)
    try:
        status: int = args.func(args)
        return status
    except (CliError, ValueError, TypeError, OSError) as exc:
        print(f"microagg: error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("microagg: interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":
    raise SystemExit(main())
