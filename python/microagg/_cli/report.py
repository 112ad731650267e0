"""``microagg report ORIGINAL RELEASED -o report.html``: the release report
(:mod:`microagg.report`) of a release that exists, and :func:`write_release_report`, which
``anonymize --report`` calls with every parameter of its run."""

from __future__ import annotations

import argparse
import sys
from typing import Any, Optional

from .. import _core
from .._assessment import assess
from ..report import file_provenance, render_report
from .assess import release_inputs
from .common import CliError, add_input_arguments, in_cli_terms, split
from .output import check_output, write_file
from .tables import Table, read_table

GLOBAL_LINKAGE_MAX = 2000
"""Largest file whose report includes the global (one-to-one) record linkage: a dense
assignment problem, a few seconds at 2 000 records and a minute at 5 000."""


def add_parser(sub: Any) -> None:
    """Registers the ``report`` subcommand on the CLI's subparsers."""
    r = sub.add_parser("report", help="write the HTML release report of ORIGINAL and its RELEASED version")
    r.add_argument("input", help="the original: CSV file with a header row, or .parquet (needs pyarrow)")
    r.add_argument("released", help="its release (same rows in the same order)")
    r.add_argument("-o", "--output", required=True, metavar="HTML", help="the report to write")
    r.add_argument("-k", type=int, default=None, help="the k the release must reach (the summary says whether it does)")
    r.add_argument("--columns", help="comma-separated quasi-identifier columns (default: all numeric, minus --by, --weights)")
    r.add_argument("--categorical", metavar="COL[,COL...]",
                   help="key columns whose values are categories (integer codes); text columns named in "
                   "--columns are categories anyway")
    r.add_argument("--by", metavar="COL[,COL...]", help="strata columns: classes are counted within strata")
    r.add_argument("--weights", metavar="COL", help="sampling-weight column of the original")
    r.add_argument("--missing", choices=_core.MISSING_MODES, default="error",
                   help="missing cells in the original's key: refused (default), or allowed (fill, keep)")
    r.add_argument("-p", type=float, default=0.05, help="interval disclosure width in sds (default 0.05)")
    r.add_argument("--jobs", type=int, default=1, help="threads: 1 (default), -1 = all cores")
    add_input_arguments(r)
    r.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Scores the release and writes its report."""
    check_output(args.output, [args.input, args.released], args.overwrite)
    original = read_table(args.input, sep=args.sep, na_values=split(args.na_values))
    if original.n_rows == 0:
        raise CliError(f"{args.input} has no data rows")
    X, Xm, strata, weights, names, categorical = release_inputs(args, original)
    parameters = {"k": args.k, "key": ", ".join([*names, *categorical]), "by": args.by, "weights": args.weights,
                  "missing": args.missing, "p": args.p}
    write_release_report(
        args.output, original, X, Xm, strata=strata, weights=weights, names=names, k=args.k, p=args.p,
        jobs=args.jobs, merges=(), files=(args.input, args.released), parameters=parameters,
        overwrite=args.overwrite, categorical={name: ("nominal", pair) for name, pair in categorical.items()},
    )
    return 0


def write_release_report(
    path: str,
    original: Table,
    X: Any,
    Xm: Any,
    *,
    strata: Any,
    weights: Any,
    names: list[str],
    k: Optional[int],
    p: float,
    jobs: int,
    merges: Any,
    files: tuple[str, str],
    parameters: dict[str, Any],
    overwrite: bool,
    categorical: Optional[dict[str, tuple[str, tuple[Any, Any]]]] = None,
) -> None:
    """Assesses the release ``Xm`` of ``X`` (the numeric key ``names``; ``categorical`` maps
    each categorical key column to its kind and (original, released) values) and writes the
    report to ``path`` under the output rules, with the provenance of both ``files`` and
    ``parameters``."""
    categorical = categorical or {}
    if X.shape[1] == 0:
        raise CliError("the report needs at least one numeric key column")
    with in_cli_terms(original):
        a = assess(X, Xm, by=strata, weights=weights, p=p, n_jobs=jobs, columns=names, k=k,
                   global_linkage=X.shape[0] <= GLOBAL_LINKAGE_MAX, merges=merges,
                   categorical={name: pair for name, (_, pair) in categorical.items()} or None)
    provenance = {
        "original": file_provenance(files[0]),
        "released": file_provenance(files[1]),
        "key": {**{name: "numeric" for name in names}, **{name: kind for name, (kind, _) in categorical.items()}},
        "parameters": parameters,
        "command": " ".join(["microagg", *sys.argv[1:]]),
    }
    text = render_report(a, provenance=provenance)

    def write(target: str) -> None:
        with open(target, "w", encoding="utf-8") as f:
            f.write(text)

    write_file(path, write, overwrite)
    verdict = "" if k is None else f"; k requested {k}, achieved {a.min_group_size}"
    print(f"wrote the report {path} ({len(text.encode()):,} bytes{verdict})", file=sys.stderr)
