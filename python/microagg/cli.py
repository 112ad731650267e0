"""The ``microagg`` command-line tool.

``microagg demo`` runs a method on a bundled data set for k = 2..10; ``microagg anonymize``
rewrites the chosen numeric columns of a CSV file with their k-anonymous group centroids.
Errors are one line on stderr and exit status 2; the input file is never overwritten and the
output is written atomically (temporary file in the same folder, then rename).
"""

from __future__ import annotations

import argparse
import csv
import os
import sys
import tempfile
import threading
import time
from typing import Any, Callable, Optional, Sequence

import numpy as np

from . import _cli_dask, _core, datasets
from ._api import METHODS, MicroaggregationResult, microaggregate

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


def _read_csv(path: str) -> tuple[list[str], list[list[str]]]:
    try:
        with open(path, newline="", encoding="utf-8") as f:
            rows = list(csv.reader(f))
    except FileNotFoundError:
        raise CliError(f"input file not found: {path}") from None
    except (OSError, UnicodeDecodeError, csv.Error) as exc:
        raise CliError(f"cannot read {path}: {exc}") from None
    if not rows:
        raise CliError(f"{path} is empty (a header row is required)")
    header, body = rows[0], [r for r in rows[1:] if r]
    for i, r in enumerate(body, start=2):
        if len(r) != len(header):
            raise CliError(f"{path}, line {i}: {len(r)} fields, header has {len(header)}")
    return header, body


def _numeric_column(rows: list[list[str]], j: int) -> Optional[np.ndarray]:
    try:
        return np.array([float(r[j]) for r in rows], dtype=np.float64)
    except ValueError:
        return None


def _choose_columns(header: list[str], rows: list[list[str]], wanted: Optional[str]) -> dict[int, np.ndarray]:
    """The chosen columns' indices and parsed values (default: every numeric column)."""
    if wanted is None:
        parsed = {j: _numeric_column(rows, j) for j in range(len(header))}
        cols = {j: v for j, v in parsed.items() if v is not None}
        if not cols:
            raise CliError("no numeric column found; name them with --columns")
        return cols
    cols = {}
    for c in (c.strip() for c in wanted.split(",") if c.strip()):
        if c not in header:
            raise CliError(f"unknown column {c!r}; columns are: {', '.join(header)}")
        j = header.index(c)
        values = _numeric_column(rows, j)
        if values is None:
            bad = next(i for i, r in enumerate(rows, start=2) if not _is_float(r[j]))
            raise CliError(f"column {c!r} is not numeric (line {bad}: {rows[bad - 2][j]!r})")
        cols[j] = values
    return cols


def _is_float(text: str) -> bool:
    try:
        float(text)
        return True
    except ValueError:
        return False


def _write_atomically(path: str, header: list[str], rows: list[list[str]]) -> None:
    folder = os.path.dirname(os.path.abspath(path))
    fd, tmp = tempfile.mkstemp(prefix=".microagg-", suffix=".csv", dir=folder)
    try:
        with os.fdopen(fd, "w", newline="", encoding="utf-8") as f:
            w = csv.writer(f, lineterminator="\n")
            w.writerow(header)
            w.writerows(rows)
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise


def _anonymize(args: argparse.Namespace) -> int:
    if args.engine == "dask":
        return _cli_dask.run(args)
    _cli_dask.check_local(args)
    src = args.input
    out = args.output or "{0}_k{1}{2}".format(*os.path.splitext(src)[:1], args.k, os.path.splitext(src)[1] or ".csv")
    if os.path.exists(out) and os.path.exists(src) and os.path.samefile(src, out):
        raise CliError("the output file is the input file; choose another -o (the input is never overwritten)")
    header, rows = _read_csv(src)
    if not rows:
        raise CliError(f"{src} has no data rows")
    cols = _choose_columns(header, rows, args.columns)
    idx = list(cols)
    X = np.column_stack(list(cols.values()))
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
            **params,
        ),
    )
    seconds = time.perf_counter() - t0
    agg = res.aggregated
    for i, r in enumerate(rows):
        for jj, j in enumerate(idx):
            r[j] = repr(float(agg[i, jj]))
    _write_atomically(out, header, rows)
    names = ", ".join(header[j] for j in idx)
    print(
        f"wrote {out}: {len(rows)} records, columns {names}; k={args.k}, method={args.method}, "
        f"{res.n_groups} groups, information loss {100 * res.information_loss:.4f}% ({seconds:.2f} s)"
    )
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

    a = sub.add_parser("anonymize", help="microaggregate numeric columns of a CSV file")
    a.add_argument("input", help="input CSV file with a header row")
    a.add_argument("-k", type=int, required=True, help="minimum group size")
    a.add_argument("--columns", help="comma-separated quasi-identifier columns (default: all numeric)")
    a.add_argument("--method", choices=METHODS, default="mdav")
    a.add_argument("-o", "--output", help="output CSV (default: INPUT_kK.csv; never the input)")
    a.add_argument("--jobs", type=int, default=1, help="threads: 1 (default), -1 = all cores")
    a.add_argument("--dtype", choices=["float32", "float64"], default=None)
    a.add_argument("--no-standardize", action="store_true", help="do not z-score the columns first")
    a.add_argument("--param", action="append", default=[], metavar="NAME=VALUE", help="method parameter")
    _cli_dask.add_arguments(a)
    a.set_defaults(func=_anonymize)

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
