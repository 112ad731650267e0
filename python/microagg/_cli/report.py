"""``microagg report ORIGINAL RELEASED -o report.html``: the release report
(:mod:`microagg.report`) of a release that exists, and :func:`write_release_report`, which
``anonymize --report`` calls with every parameter of its run."""

from __future__ import annotations

import argparse
import dataclasses
import sys
from typing import Any, Optional

from .. import _core
from .._assessment import Assessment, assess, distinct_per_record
from .._mixed.flags import parse_ordinal
from ..report import file_provenance, render_report
from .assess import release_inputs
from .common import CliError, add_input_arguments, in_cli_terms, split
from .population_risk import DEFAULT_RISK_THRESHOLD, add_risk_threshold
from .output import check_output, write_file
from .roles import flag
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
    r.add_argument("-k", type=int, default=None,
                   help="the k the release must reach (the summary says whether it does; exit status 1 when missed)")
    r.add_argument("--columns", help="comma-separated quasi-identifier columns (default: all numeric, minus --by, --weights)")
    r.add_argument("--categorical", metavar="COL[,COL...]",
                   help="key columns whose values are categories (integer codes); text columns named in "
                   "--columns are categories anyway")
    r.add_argument("--ordinal", action="append", default=[], metavar="COL=L1<L2<...",
                   help="an ordered categorical key column and its levels, e.g. \"education=HS<BSc<MSc\"")
    r.add_argument("--sensitive", metavar="COL[,COL...]",
                   help="confidential columns (never keys): the report gives each one's largest class EMD")
    r.add_argument("--t", type=float, default=None, metavar="T",
                   help="with --sensitive: the t the release must reach (0 < T <= 1; exit status 1 when missed)")
    r.add_argument("--by", metavar="COL[,COL...]", help="strata columns: classes are counted within strata")
    r.add_argument("--weights", metavar="COL", help="sampling-weight column of the original")
    r.add_argument("--missing", choices=_core.MISSING_MODES, default="error",
                   help="missing cells in the original's key: refused (default), or allowed (fill, keep)")
    r.add_argument("-p", type=float, default=0.05, help="interval disclosure width in sds (default 0.05)")
    add_risk_threshold(r)
    r.add_argument("--jobs", type=int, default=1, help="threads: 1 (default), -1 = all cores")
    add_input_arguments(r)
    r.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Scores the release and writes its report; 1 when the release misses k or t."""
    check_output(args.output, [args.input, args.released], args.overwrite)
    original = read_table(args.input, sep=args.sep, na_values=split(args.na_values), encoding=args.encoding)
    if original.n_rows == 0:
        raise CliError(f"{args.input} has no data rows")
    ordinal = dict(flag(parse_ordinal, t) for t in args.ordinal)
    r = release_inputs(args, original, ordinal=ordinal, confidential=True)
    parameters = {"k": args.k, "key": ", ".join([*r.names, *r.categorical]), "by": args.by, "weights": args.weights,
                  "missing": args.missing, "p": args.p, "ordinal": args.ordinal or None,
                  "sensitive": args.sensitive, "t": args.t}
    roles = [original.names.index(c) for c in [*r.names, *r.categorical, *r.sensitive, *split(args.by),
                                                *split(args.weights)]]
    a = write_release_report(
        args.output, original, r.X, r.Xm, strata=r.strata, weights=r.weights, names=r.names, k=args.k, p=args.p,
        jobs=args.jobs, merges=(), files=(args.input, args.released), parameters=parameters,
        overwrite=args.overwrite,
        categorical={name: (r.kinds[name], pair) for name, pair in r.categorical.items()},
        sensitive=r.sensitive, t=args.t, risk_threshold=args.risk_threshold,
        identifiers=copied_identifiers(r.released, roles, original.names),
    )
    return 0 if a.meets_k is not False and a.meets_t is not False else 1


def copied_identifiers(released: Table, roles: list[int], header: Optional[list[str]] = None) -> tuple[str, ...]:
    """The columns of ``released`` outside ``roles`` (column indices of ``header``, default
    the release's own header: the key, strata, weights, sensitive columns) that hold a
    distinct value per record: possible direct identifiers copied as read."""
    used = {(header or released.names)[j] for j in roles}
    return distinct_per_record(((c, released.categories(j)) for j, c in enumerate(released.names)), used)


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
    sensitive: Optional[dict[str, Any]] = None,
    t: Optional[float] = None,
    identifiers: tuple[str, ...] = (),
    run: Optional[dict[str, Any]] = None,
    risk_threshold: float = DEFAULT_RISK_THRESHOLD,
) -> Assessment:
    """Assesses the release ``Xm`` of ``X`` (the numeric key ``names``; ``categorical`` maps
    each categorical key column to its kind and (original, released) values; ``sensitive``
    the confidential columns' values, ``t`` the t to meet) and writes the report to ``path``
    under the output rules, with the provenance of both ``files``, ``parameters``, the
    ``identifiers`` flagged (columns with a distinct value per record outside the key) and
    ``run``, figures of the run shown as recorded (the loss on a mixed key's embedding).
    Returns the assessment."""
    categorical = categorical or {}
    if X.shape[1] == 0:
        raise CliError("the report needs at least one numeric key column")
    with in_cli_terms(original):
        a = assess(X, Xm, by=strata, weights=weights, p=p, n_jobs=jobs, columns=names, k=k,
                   global_linkage=X.shape[0] <= GLOBAL_LINKAGE_MAX, merges=merges,
                   categorical={name: pair for name, (_, pair) in categorical.items()} or None,
                   sensitive=sensitive or None, t=t if sensitive else None, risk_threshold=risk_threshold)
    a = dataclasses.replace(a, identifiers=tuple(identifiers))
    provenance = {
        "original": file_provenance(files[0]),
        "released": file_provenance(files[1]),
        "key": {**{name: "numeric" for name in names}, **{name: kind for name, (kind, _) in categorical.items()}},
        "parameters": parameters,
        "command": " ".join(["microagg", *sys.argv[1:]]),
        **(run or {}),
    }
    text = render_report(a, provenance=provenance)

    def write(target: str) -> None:
        with open(target, "w", encoding="utf-8") as f:
            f.write(text)

    write_file(path, write, overwrite)
    verdict = "" if k is None else f"; k requested {k}, achieved {a.min_group_size}"
    if a.meets_t is not None:
        verdict += f"; t requested {t:g}, achieved {max(a.max_emd.values()) if a.max_emd else 0.0:.4g}"
    print(f"wrote the report {path} ({len(text.encode()):,} bytes{verdict})", file=sys.stderr)
    return a
