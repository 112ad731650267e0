"""``microagg assess``: run several methods and k on a CSV file and compare their releases
by disclosure risk and information loss (docs/assessment.md): a table on stdout, optionally a CSV
file and the R-U map as a picture, progress on stderr."""

from __future__ import annotations

import argparse
import sys
import time
from typing import Any

import numpy as np

from ._api import METHODS, microaggregate
from ._assessment import assess
from ._io import CsvTable, read_table, write_table

COLUMNS = (
    "method", "k", "information_loss", "il1s", "eigen", "interval_disclosure",
    "record_linkage_rate", "min_group_size", "seconds", "assess_seconds",
)
"""Columns of the output table (``seconds``: the microaggregation, ``assess_seconds``: the measures)."""


def add_parser(sub: Any) -> None:
    """Registers the ``assess`` subcommand on the CLI's subparsers."""
    a = sub.add_parser("assess", help="compare methods and k by disclosure risk and information loss")
    a.add_argument("input", help="input CSV file with a header row, or .parquet (needs pyarrow)")
    a.add_argument("-k", type=int, nargs="+", default=[2, 3, 5, 10], help="k values (default 2 3 5 10)")
    a.add_argument("--method", nargs="+", choices=METHODS, default=["mdav"], metavar="METHOD",
                   help="methods (default mdav); see 'microagg methods'")
    a.add_argument("--columns", help="comma-separated quasi-identifier columns (default: all numeric, minus --by)")
    a.add_argument("--by", help="comma-separated strata columns: min group size counts within strata")
    a.add_argument("--risk", choices=["linkage", "interval"], default="linkage",
                   help="risk on the R-U map's y axis (default: record linkage)")
    a.add_argument("-p", type=float, default=0.05, help="interval disclosure width in sds (default 0.05)")
    a.add_argument("--plot", metavar="PNG", help="write the R-U map there")
    a.add_argument("-o", "--output", metavar="CSV", help="write the table there")
    a.add_argument("--jobs", type=int, default=1, help="threads: 1 (default), -1 = all cores")
    a.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Runs every method × k, prints the table and writes the CSV and the R-U map."""
    from .cli import CliError, _choose_columns, _run_with_progress, _workflow_columns

    data = read_table(args.input)
    if data.n_rows == 0:
        raise CliError(f"{args.input} has no data rows")
    by, _, reserved = _workflow_columns(data, args.by, None)
    cols = _choose_columns(data, args.columns, reserved, False)
    header = data.names
    X = np.column_stack(list(cols.values()))
    if any(k < 1 or k > X.shape[0] for k in args.k):
        raise CliError(f"every k must be between 1 and the number of records ({X.shape[0]}), got {args.k}")
    names = ", ".join(header[j] for j in cols)
    print(f"{X.shape[0]} records x {X.shape[1]} attributes ({names})", file=sys.stderr)
    table: list[dict[str, Any]] = []
    runs = [(m, k) for m in args.method for k in args.k]
    for i, (method, k) in enumerate(runs, start=1):
        print(f"[{i}/{len(runs)}] {method} k={k} ...", file=sys.stderr, flush=True)
        t0 = time.perf_counter()
        res = _run_with_progress(X.shape[0], lambda progress: microaggregate(
            X, k, method, n_jobs=args.jobs, progress=progress))
        t1 = time.perf_counter()
        a = assess(X, res.aggregated, by=by, p=args.p, n_jobs=args.jobs).to_dict()
        t2 = time.perf_counter()
        table.append({"method": method, "k": k, **{c: a[c] for c in COLUMNS[2:8]},
                      "seconds": t1 - t0, "assess_seconds": t2 - t1})
        print(f"[{i}/{len(runs)}] {method} k={k}: {t1 - t0:.2f} s, measures {t2 - t1:.2f} s", file=sys.stderr)
    _print_table(table, args.p)
    if args.output:
        rows = [[_cell(r[c]) for r in table] for c in COLUMNS]
        write_table(CsvTable(args.output, list(COLUMNS), rows), args.output)
        print(f"wrote {args.output}", file=sys.stderr)
    if args.plot:
        from .plot import ru_map

        risk = "record_linkage_rate" if args.risk == "linkage" else "interval_disclosure"
        ru_map(table, risk=risk, path=args.plot, title=f"R-U map of {args.input} ({X.shape[0]} records)")
        print(f"wrote {args.plot}", file=sys.stderr)
    return 0


def _cell(v: Any) -> str:
    return repr(float(v)) if isinstance(v, float) else str(v)


def _print_table(table: list[dict[str, Any]], p: float) -> None:
    head = (f"{'method':<14} {'k':>3} {'IL %':>8} {'IL1s':>8} {'eigen':>8} {f'ID({p:g}) %':>10} "
            f"{'RL %':>7} {'min k':>6} {'seconds':>8}")
    print(head)
    for r in table:
        print(f"{r['method']:<14} {r['k']:>3} {100 * r['information_loss']:8.3f} {r['il1s']:8.4f} "
              f"{r['eigen']:8.4f} {100 * r['interval_disclosure']:10.2f} {100 * r['record_linkage_rate']:7.2f} "
              f"{r['min_group_size']:>6} {r['seconds']:8.3f}")
