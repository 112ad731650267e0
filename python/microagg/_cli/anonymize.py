"""``microagg anonymize``: a CSV or Parquet file in, the same file with its key columns
replaced by their groups' values out (the other columns as they were), under the output
rules of :mod:`.output`."""

from __future__ import annotations

import argparse
import os
import sys
import time
from typing import Any

import numpy as np

from .._api import METHODS, microaggregate
from . import dask
from .._workflow import relabel_strata
from .columns import choose_columns, relabeled, workflow_columns
from .common import (
    CliError,
    add_input_arguments,
    add_workflow_arguments,
    in_cli_terms,
    run_with_progress,
    split,
    workflow_keywords,
)
from .output import check_output
from .report import write_release_report
from .tables import check_writable, read_table, write_table


def add_parser(sub: Any) -> None:
    """Registers the ``anonymize`` subcommand on the CLI's subparsers."""
    a = sub.add_parser("anonymize", help="microaggregate numeric columns of a CSV or Parquet file")
    a.add_argument("input", help="input CSV file with a header row, or .parquet (needs pyarrow)")
    a.add_argument("-k", type=int, required=True, help="minimum group size")
    a.add_argument("--columns", help="comma-separated quasi-identifier columns (default: all numeric)")
    a.add_argument("--method", choices=METHODS, default="mdav")
    a.add_argument("-o", "--output", help="output CSV or .parquet (default: INPUT_kK.EXT; never the input)")
    add_input_arguments(a)
    add_workflow_arguments(a)
    a.add_argument(
        "--no-relabel",
        action="store_true",
        help="with --small-strata merge: keep merged records' own strata labels (default: the label "
        "of the stratum they joined; their own label would single them out)",
    )
    a.add_argument("--report", metavar="HTML",
                   help="also write the release report (summary, provenance, privacy, utility) there")
    dask.add_arguments(a)
    a.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Anonymizes ``args.input`` into ``args.output`` and prints a summary."""
    if args.engine == "dask":
        return dask.run(args)
    dask.check_local(args)
    src = args.input
    out = args.output or "{0}_k{1}{2}".format(*os.path.splitext(src)[:1], args.k, os.path.splitext(src)[1] or ".csv")
    check_output(out, [src], args.overwrite)
    if args.report is not None:
        check_output(args.report, [src, out], args.overwrite, "--report")
        if os.path.abspath(args.report) == os.path.abspath(out):
            raise CliError("--report and -o name the same file")
    check_writable(out)
    table = read_table(src, sep=args.sep, na_values=split(args.na_values))
    if table.n_rows == 0:
        raise CliError(f"{src} has no data rows")
    strata, weights, reserved = workflow_columns(table, args.by, args.weights)
    cols = choose_columns(table, args.columns, reserved, args.missing != "error")
    if args.columns is None:
        print(f"key (every numeric column; choose with --columns): {', '.join(table.names[j] for j in cols)}")
    idx = list(cols)
    X = np.column_stack(list(cols.values()))
    options = workflow_keywords(args, strata, weights)
    t0 = time.perf_counter()
    with in_cli_terms(table):
        res = run_with_progress(
            X.shape[0], lambda progress: microaggregate(X, args.k, args.method, progress=progress, **options)
        )
    seconds = time.perf_counter() - t0
    agg = res.aggregated
    released = table.replaced({j: agg[:, jj] for jj, j in enumerate(idx)})
    if res.merges and not args.no_relabel:
        released = relabeled(released, strata, res.merges, split(args.by))
    write_table(released, out, args.overwrite)
    names = ", ".join(table.names[j] for j in idx)
    print(
        f"wrote {out}: {table.n_rows} records, columns {names}; k={args.k}, method={args.method}, "
        f"{res.n_groups} groups, information loss {100 * res.information_loss:.4f}% ({seconds:.2f} s)"
    )
    for m in res.merges:
        print(f"merged stratum {m.stratum!r} ({m.size} records) into stratum {m.into!r}")
    if args.report is not None:
        relabel = strata is not None and res.merges and not args.no_relabel
        published = relabel_strata(strata, res.merges) if relabel else strata
        parameters = {name: value for name, value in options.items() if name != "by" and not hasattr(value, "shape")}
        parameters.update(k=args.k, method=args.method, by=args.by, weights=args.weights, engine="local",
                          relabel=not args.no_relabel)
        write_release_report(
            args.report, table, X, agg, strata=published, weights=weights, names=[table.names[j] for j in idx],
            k=args.k, p=0.05, jobs=args.jobs, merges=res.merges, files=(src, out), parameters=parameters,
            overwrite=args.overwrite,
        )
    if res.merges:
        print(
            "merged records are published under the stratum they joined"
            if not args.no_relabel
            else "warning: --no-relabel keeps the merged records' own strata labels, which single them out",
            file=sys.stderr if args.no_relabel else sys.stdout,
        )
    return 0
