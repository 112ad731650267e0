"""``microagg assess``: disclosure risk against information loss, in two modes.

* ``microagg assess ORIGINAL RELEASED``: scores a release that exists (made by microagg or
  any other tool): the measures of :func:`microagg.assess` over the key columns, strata
  read from the release (what an intruder sees), weights from the original.
* ``microagg assess ORIGINAL -k 3 5 --method mdav ona-star``: runs every method x k with
  the workflow flags of ``anonymize`` and compares the candidates, optionally on the R-U map.

Either way: one table on stdout, optionally written as CSV or Parquet (``-o``), progress on
stderr, no input ever written over.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from typing import Any, NamedTuple

import numpy as np

from .._api import METHODS, microaggregate
from .._assess_input import check_aligned
from .._assessment import assess
from .._mixed.types import missing_cells, ordinal_column
from .._workflow import relabel_strata
from .columns import categorical_key, choose_columns, workflow_columns
from .common import CliError, add_input_arguments, add_workflow_arguments, in_cli_terms, run_with_progress, split, workflow_keywords
from .output import check_output, write_file
from .population_risk import add_risk_threshold, population_risk_lines
from .roles import sensitive_columns
from .tables import CsvTable, Table, read_table, write_table

MEASURES = (
    "information_loss", "il1s", "eigen", "interval_disclosure", "record_linkage_rate", "min_group_size",
)
"""The measures of a row of the table, as :meth:`microagg.Assessment.to_dict` names them."""

CANDIDATE_COLUMNS = ("method", "k", *MEASURES, "seconds", "assess_seconds")
"""Columns of the candidates' table (``seconds``: the microaggregation, ``assess_seconds``:
the measures)."""

RELEASE_COLUMNS = ("original", "released", "n_records", "n_attributes", *MEASURES, "k_requested", "meets_k")
"""Columns of a scored release's table."""


def add_parser(sub: Any) -> None:
    """Registers the ``assess`` subcommand on the CLI's subparsers."""
    a = sub.add_parser(
        "assess",
        help="score a release (ORIGINAL RELEASED) or compare methods and k by risk and information loss",
    )
    a.add_argument("input", help="the original: CSV file with a header row, or .parquet (needs pyarrow)")
    a.add_argument("released", nargs="?",
                   help="a release of it to score (same rows in the same order); without it, candidates are "
                   "run. With -k, the exit status is 1 when the release misses k")
    a.add_argument("-k", type=int, nargs="+", default=None,
                   help="candidates: k values (default 2 3 5 10); a release: the k it must reach")
    a.add_argument("--method", nargs="+", choices=METHODS, default=None, metavar="METHOD",
                   help="candidates: methods (default mdav); see 'microagg methods'")
    a.add_argument("--columns", help="comma-separated quasi-identifier columns (default: all numeric, minus --by, --weights)")
    a.add_argument("--categorical", metavar="COL[,COL...]",
                   help="a release: key columns whose values are categories (integer codes); text columns named in "
                   "--columns are categories anyway")
    a.add_argument("--risk", choices=["linkage", "interval"], default="linkage",
                   help="risk on the R-U map's y axis (default: record linkage)")
    a.add_argument("-p", type=float, default=0.05, help="interval disclosure width in sds (default 0.05)")
    a.add_argument("--plot", metavar="PNG", help="candidates: write the R-U map there")
    a.add_argument("-o", "--output", metavar="TABLE", help="write the table there (.csv, or .parquet)")
    add_risk_threshold(a)
    add_workflow_arguments(a)
    add_input_arguments(a)
    a.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Scores the release, or runs the candidates; prints the table and writes the outputs."""
    inputs = [args.input] + ([args.released] if args.released else [])
    for option, path in (("-o", args.output), ("--plot", args.plot)):
        if path is not None:
            check_output(path, inputs, args.overwrite, option)
    if args.output is not None and args.plot is not None and os.path.abspath(args.output) == os.path.abspath(args.plot):
        raise CliError("-o and --plot name the same file")
    data = read_table(args.input, sep=args.sep, na_values=split(args.na_values), encoding=args.encoding)
    if data.n_rows == 0:
        raise CliError(f"{args.input} has no data rows")
    return _score_release(args, data) if args.released else _compare_candidates(args, data)


class ReleaseInputs(NamedTuple):
    """What scoring a release compares (see :func:`release_inputs`)."""

    X: Any
    Xm: Any
    strata: Any
    weights: Any
    names: list[str]
    categorical: dict[str, Any]
    kinds: dict[str, str]
    sensitive: dict[str, Any]
    released: Table


def release_inputs(
    args: argparse.Namespace, original: Table, *, ordinal: dict[str, list[str]] | None = None,
    confidential: bool = False,
) -> ReleaseInputs:
    """What scoring ``args.released`` against ``original`` compares: the numeric key of both
    files (``--columns``, default every numeric column of the original but strata, weights
    and sensitive columns), the strata as the release publishes them, the original's
    weights, the numeric key's names, each categorical key column's (original, released)
    values (text columns named in ``--columns``, ``--categorical`` and the ``ordinal``
    columns) and kind, the ``--sensitive`` columns' values when ``confidential``, and the
    release as read. Missing cells of the key need ``--missing fill`` or ``keep``, as
    ``anonymize`` asks, categorical cells as numeric ones."""
    released = read_table(args.released, sep=args.sep, na_values=split(args.na_values), encoding=args.encoding)
    if released.n_rows != original.n_rows:
        raise CliError(
            f"{args.released} has {released.n_rows} rows and {args.input} {original.n_rows}; "
            "a release has the original's records in the original's order"
        )
    _, weights, reserved = workflow_columns(original, args.by, args.weights)
    strata, _, _ = workflow_columns(released, args.by, None)
    sensitive = sensitive_columns(original, args, reserved, need_t=False) if confidential else {}
    kinds = categorical_key(original, args.columns, reserved, split(args.categorical), ordinal or {})
    numeric = None if args.columns is None else ",".join(
        c for c in split(args.columns) if c not in original.names or original.names.index(c) not in kinds)
    cols = choose_columns(original, numeric, {**reserved, **{j: "a categorical key" for j in kinds}},
                          args.missing != "error", allow_none=bool(kinds))
    names = [original.names[j] for j in cols]
    absent = [c for c in names + [original.names[j] for j in kinds] if c not in released.names]
    if absent:
        raise CliError(f"{args.released} lacks the key column(s) {', '.join(absent)}")
    if not cols:
        raise CliError("the key has no numeric column; scoring needs at least one")
    X = np.column_stack(list(cols.values()))
    Xm = np.column_stack([_released_column(released, c) for c in names])
    categorical = {
        original.names[j]: (original.categories(j), released.categories(released.names.index(original.names[j])))
        for j in kinds
    }
    for name, levels in (ordinal or {}).items():
        for values in categorical[name]:
            try:
                ordinal_column(name, values, missing_cells(values), levels)
            except ValueError as exc:
                raise CliError(str(exc).replace("ordinal: ", "--ordinal: ", 1)) from None
    holes = {name: int(missing_cells(pair[0]).sum()) for name, pair in categorical.items()}
    if args.missing == "error" and any(holes.values()):
        listed = ", ".join(f"{name} ({count})" for name, count in holes.items() if count)
        raise CliError(f"missing cells in the key: {listed}; pass --missing fill or --missing keep")
    _check_aligned(original, released, {*names, *categorical, *split(args.by), *sensitive})
    key = ", ".join([*names, *categorical])
    print(f"{X.shape[0]} records x {X.shape[1] + len(categorical)} attributes ({key})", file=sys.stderr)
    return ReleaseInputs(X, Xm, strata, weights, names, categorical,
                         {original.names[j]: kind for j, kind in kinds.items()}, sensitive, released)


def _score_release(args: argparse.Namespace, original: Table) -> int:
    for flag, value in (("--method", args.method), ("--plot", args.plot), ("--param", args.param)):
        if value:
            raise CliError(f"{flag} compares candidates; it does not apply to scoring a release")
    if args.k is not None and len(args.k) > 1:
        raise CliError("a release is scored against one k (-k K)")
    r = release_inputs(args, original)
    with in_cli_terms(original):
        a = assess(r.X, r.Xm, by=r.strata, weights=r.weights, p=args.p, n_jobs=args.jobs,
                   categorical=r.categorical or None, risk_threshold=args.risk_threshold).to_dict()
    k = args.k[0] if args.k else None
    row = {"original": args.input, "released": args.released, "n_records": a["n_records"],
           "n_attributes": a["n_attributes"], **{m: a[m] for m in MEASURES},
           "k_requested": "" if k is None else k, "meets_k": "" if k is None else a["min_group_size"] >= k}
    _print_table([row], args.p, ("information_loss",))
    for name, c in a["categorical"].items():
        print(f"  {name}: {100 * c['cells_changed']:.2f}% of its cells changed, total variation {c['total_variation']:.4f}")
    print("\n".join(population_risk_lines(a)))
    if k is not None:
        verdict = "meets" if row["meets_k"] else "MISSES"
        print(f"k requested {k}, achieved {a['min_group_size']} over the key{' within strata' if args.by else ''}: {verdict} it")
    _write_rows(args, [row], RELEASE_COLUMNS)
    return 0 if k is None or row["meets_k"] else 1


def _check_aligned(original: Table, released: Table, key: set[str]) -> None:
    """The columns both files hold outside the key and the strata are copied as read: equal
    row by row, else an error naming the column and the release's first line that differs
    (:func:`microagg._assess_input.check_aligned`); with none, :func:`microagg.assess`
    refuses an information loss above 100 %."""
    copied = [c for c in original.names if c in released.names and c not in key]
    before: dict[str, Any] = {}
    after: dict[str, Any] = {}
    for c in copied:  # numbers where both files read numbers ("3" and "3.0" are equal), else text
        i, j = original.names.index(c), released.names.index(c)
        before[c], after[c] = original.numeric(i), released.numeric(j)
        if before[c] is None or after[c] is None:
            before[c], after[c] = original.labels(i), released.labels(j)
    check_aligned(before, after, copied, released.where)


def _released_column(released: Table, name: str) -> np.ndarray:
    j = released.names.index(name)
    values = released.numeric(j)
    if values is None:
        raise CliError(f"column {name!r} of {released.path} is not numeric ({released.why_not_numeric(j)})")
    return values


def _compare_candidates(args: argparse.Namespace, data: Table) -> int:
    ks = args.k if args.k is not None else [2, 3, 5, 10]
    methods = args.method if args.method is not None else ["mdav"]
    strata, weights, reserved = workflow_columns(data, args.by, args.weights)
    categorical = [data.names[j] for j in categorical_key(data, args.columns, reserved, split(args.categorical), {})]
    if categorical:
        raise CliError(
            f"candidates are compared on numeric keys only, and {', '.join(map(repr, categorical))} "
            f"{'is' if len(categorical) == 1 else 'are'} categorical: release the mixed key with microagg anonymize "
            "(--categorical, --ordinal), then score that release with microagg assess ORIGINAL RELEASED"
        )
    cols = choose_columns(data, args.columns, reserved, args.missing != "error")
    X = np.column_stack(list(cols.values()))
    if any(k < 2 or k > X.shape[0] for k in ks):
        raise CliError(f"every k must be between 2 and the number of records ({X.shape[0]}), got {ks}")
    names = ", ".join(data.names[j] for j in cols)
    print(f"{X.shape[0]} records x {X.shape[1]} attributes ({names})", file=sys.stderr)
    options = workflow_keywords(args, strata, weights)
    table: list[dict[str, Any]] = []
    runs = [(m, k) for m in methods for k in ks]
    for i, (method, k) in enumerate(runs, start=1):
        print(f"[{i}/{len(runs)}] {method} k={k} ...", file=sys.stderr, flush=True)
        t0 = time.perf_counter()
        with in_cli_terms(data):
            res = run_with_progress(
                X.shape[0], lambda progress: microaggregate(X, k, method, progress=progress, **options)
            )
        t1 = time.perf_counter()
        published = None if strata is None else relabel_strata(strata, res.merges)
        a = assess(X, res.aggregated, by=published, weights=weights, p=args.p, n_jobs=args.jobs).to_dict()
        t2 = time.perf_counter()
        table.append({"method": method, "k": k, **{c: a[c] for c in MEASURES},
                      "seconds": t1 - t0, "assess_seconds": t2 - t1})
        print(f"[{i}/{len(runs)}] {method} k={k}: {t1 - t0:.2f} s, measures {t2 - t1:.2f} s", file=sys.stderr)
    _print_table(table, args.p, ("method", "k"))
    _write_rows(args, table, CANDIDATE_COLUMNS)
    if args.plot:
        from ..plot import ru_map

        risk = "record_linkage_rate" if args.risk == "linkage" else "interval_disclosure"
        title = f"R-U map of {args.input} ({X.shape[0]} records)"
        write_file(args.plot, lambda target: ru_map(table, risk=risk, path=target, title=title), args.overwrite)
        print(f"wrote {args.plot}", file=sys.stderr)
    return 0


def _write_rows(args: argparse.Namespace, rows: list[dict[str, Any]], columns: tuple[str, ...]) -> None:
    if args.output:
        cells = [[_cell(r[c]) for r in rows] for c in columns]
        write_table(CsvTable(args.output, list(columns), cells), args.output, args.overwrite)
        print(f"wrote {args.output}", file=sys.stderr)


def _cell(v: Any) -> str:
    return repr(float(v)) if isinstance(v, float) else str(v)


def _print_table(table: list[dict[str, Any]], p: float, lead: tuple[str, ...]) -> None:
    """The table on stdout: ``lead`` decides the first columns (method and k for candidates)."""
    first = f"{'method':<14} {'k':>3} " if "method" in lead else ""
    print(f"{first}{'IL(num) %':>10} {'IL1s':>10} {'eigen':>8} {f'ID({p:g}) %':>10} {'RL %':>7} {'min k':>6}"
          + (f" {'seconds':>8}" if "method" in lead else ""))
    for r in table:
        first = f"{r['method']:<14} {r['k']:>3} " if "method" in lead else ""
        print(f"{first}{100 * r['information_loss']:10.3f} {r['il1s']:10.6g} {r['eigen']:8.4f} "
              f"{100 * r['interval_disclosure']:10.2f} {100 * r['record_linkage_rate']:7.2f} {r['min_group_size']:>6}"
              + (f" {r['seconds']:8.3f}" if "method" in lead else ""))
