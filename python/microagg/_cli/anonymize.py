"""``microagg anonymize``: a CSV or Parquet file in, the same file with its key columns
replaced by their groups' values out (the other columns as they were), under the output
rules of :mod:`.output`."""

from __future__ import annotations

import argparse
import functools
import os
import sys
import time
from collections import Counter
from typing import Any, Sequence

import numpy as np

from .. import _core
from .._api import METHODS, microaggregate
from .._tcloseness import t_close_microaggregate
from .._mixed.flags import by_column, parse_attribute_weight, parse_ordinal
from .._mixed.workflow import CATEGORICAL_RELEASES
from .._mixed.workflow import release as release_mixed
from ..utility import categorical_changes, information_loss
from . import dask
from .._workflow import relabel_strata
from .columns import categorical_key, choose_columns, relabeled, workflow_columns
from .common import CliError, add_input_arguments, add_workflow_arguments, in_cli_terms, run_with_progress, split, workflow_keywords
from .output import check_output
from .report import copied_identifiers, write_release_report
from .roles import sensitive_columns
from .tables import Table, check_writable, read_table, write_table


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
    a.add_argument("--categorical", metavar="COL[,COL...]",
                   help="key columns whose values are categories (integer codes); text columns named in "
                   "--columns are categories anyway")
    a.add_argument("--ordinal", action="append", default=[], metavar="COL=L1<L2<...",
                   help="an ordered categorical key column and its levels, e.g. \"education=HS<BSc<MSc\" "
                   "(a '<' inside a level is \\<, e.g. \"age=\\<18<18-65\"); once per column")
    a.add_argument("--attribute-weight", action="append", default=[], metavar="COL=W",
                   help="how much a key column counts in the grouping (default 1), e.g. sex=2")
    a.add_argument("--categorical-release", choices=CATEGORICAL_RELEASES, default="mode",
                   help="a group's categories: each column's (weighted) mode or median level (default), or "
                   "all of its most central member's (medoid: every released combination exists)")
    a.add_argument("--sensitive", metavar="COL[,COL...]",
                   help="confidential columns (never keys, never changed): every class made t-close in them "
                   "(numeric or categorical keys, --missing and --max-part apply; not with --engine dask)")
    a.add_argument("--t", type=float, default=None, metavar="T",
                   help="with --sensitive: the largest earth mover's distance of a class from the file (0 < T <= 1)")
    a.add_argument("--t-method", choices=_core.T_METHODS, default="auto",
                   help="with --sensitive: how classes are made t-close (default auto: the one of least loss)")
    a.add_argument("--report", metavar="HTML",
                   help="also write the release report (summary, provenance, privacy, utility) there")
    dask.add_arguments(a)
    a.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Anonymizes ``args.input`` into ``args.output`` and prints a summary."""
    if args.engine == "dask":
        if args.sensitive is not None:
            raise CliError("--sensitive (t-closeness) is not available with --engine dask; use the local "
                           "engine, with --max-part for a large file")
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
    table = read_table(src, sep=args.sep, na_values=split(args.na_values), encoding=args.encoding)
    if table.n_rows == 0:
        raise CliError(f"{src} has no data rows")
    strata, weights, reserved = workflow_columns(table, args.by, args.weights)
    sensitive = sensitive_columns(table, args, reserved)
    try:
        ordinal = by_column(parse_ordinal, args.ordinal, "--ordinal")
        attribute_weights = by_column(parse_attribute_weight, args.attribute_weight, "--attribute-weight")
    except ValueError as exc:
        raise CliError(str(exc)) from None
    kinds = categorical_key(table, args.columns, reserved, split(args.categorical), ordinal)
    numeric = None if args.columns is None else ",".join(
        c for c in split(args.columns) if c not in table.names or table.names.index(c) not in kinds)
    mixed = bool(kinds) or bool(attribute_weights) or args.categorical_release != "mode"
    cols = choose_columns(table, numeric, {**reserved, **{j: "a categorical key" for j in kinds}},
                          args.missing != "error", allow_none=bool(kinds))
    if args.columns is None:
        print(f"key (every numeric column; choose with --columns): {', '.join(table.names[j] for j in [*cols, *kinds])}")
    idx = list(cols)
    X = np.column_stack(list(cols.values())) if cols else np.empty((table.n_rows, 0))
    empty = [table.names[j] for jj, j in enumerate(idx) if np.isnan(X[:, jj]).all()]
    if empty:
        raise CliError(f"column(s) with no observed value (every cell missing): {', '.join(map(repr, empty))}")
    options = workflow_keywords(args, strata, weights)
    group: Any = microaggregate
    if sensitive:
        if args.dtype is not None:
            raise CliError("--dtype does not apply to --sensitive (t-closeness works in float64)")
        del options["dtype"]
        group = functools.partial(t_close_microaggregate, sensitive=sensitive, t=args.t, t_method=args.t_method)
    t0 = time.perf_counter()
    with in_cli_terms(table):
        if mixed:
            values, res = _release_mixed(table, cols, kinds, ordinal, attribute_weights, args, options, group)
        else:
            res = run_with_progress(
                X.shape[0], lambda progress: group(X, args.k, args.method, progress=progress, **options)
            )
            values = {j: res.aggregated[:, jj] for jj, j in enumerate(idx)}
    seconds = time.perf_counter() - t0
    agg = np.column_stack([values[j] for j in idx]) if idx else X
    released = table.replaced({j: values[j] for j in idx})
    if kinds:
        released = released.relabeled({j: _written(table, j, values[j]) for j in kinds})
    if res.merges and not args.no_relabel:
        released = relabeled(released, strata, res.merges, split(args.by))
    write_table(released, out, args.overwrite)
    names = ", ".join(table.names[j] for j in [*idx, *kinds])
    # Cells of the file, not of the key's embedding (a nominal column spans several there).
    filled = 0 if args.missing != "fill" else int(
        sum(np.isnan(v).sum() for v in cols.values()) + sum((table.categories(j) == None).sum() for j in kinds)  # noqa: E711
    )
    # A mixed key's two losses, each named: the run's on the embedding, sdcMicro's on the numeric columns.
    loss = "information loss" if not mixed else "information loss on the key's embedding"
    numeric_loss = f", numeric information loss {100 * information_loss(X, agg, weights):.4f}%" if mixed and idx else ""
    print(
        f"wrote {out}: {table.n_rows} records, columns {names}; k={args.k}, method={args.method}, "
        f"{res.n_groups} groups, {loss} {100 * res.information_loss:.4f}%{numeric_loss} ({seconds:.2f} s)"
        + (f"; {filled} missing cells filled" if filled else "")
    )
    if sensitive:
        worst = ", ".join(f"{name} {emd:.4f}" for name, emd in res.max_emd.items())
        print(f"t-close (t={args.t}, {_methods_used(res.t_method, res.chosen)}): largest class EMD {worst}")
    for j in kinds:
        changed = categorical_changes(table.categories(j), values[j]).cells_changed
        print(f"  {table.names[j]} ({kinds[j]}): {100 * changed:.2f}% of its cells changed")
    for m in res.merges:
        print(f"merged stratum {m.stratum!r} ({m.size} records) into stratum {m.into!r}")
    if args.report is not None:
        relabel = strata is not None and res.merges and not args.no_relabel
        published = relabel_strata(strata, res.merges) if relabel else strata
        parameters = {name: value for name, value in options.items() if name != "by" and not hasattr(value, "shape")}
        parameters.update(k=args.k, method=args.method, by=args.by, weights=args.weights, engine="local",
                          relabel=not args.no_relabel, categorical_release=args.categorical_release,
                          attribute_weights=args.attribute_weight or None, ordinal=args.ordinal or None)
        if sensitive:
            parameters.update(sensitive=args.sensitive, t=args.t, t_method=args.t_method)
        write_release_report(
            args.report, table, X, agg, strata=published, weights=weights, names=[table.names[j] for j in idx],
            k=args.k, p=0.05, jobs=args.jobs, merges=res.merges, files=(src, out), parameters=parameters,
            overwrite=args.overwrite,
            categorical={table.names[j]: (kind, (table.categories(j), values[j])) for j, kind in kinds.items()},
            sensitive=sensitive, t=args.t, identifiers=copied_identifiers(released, [*idx, *kinds, *reserved]),
            run={"information loss on the key's embedding (the run's)": res.information_loss} if mixed else None,
        )
    if res.merges:
        print(
            "merged records are published under the stratum they joined"
            if not args.no_relabel
            else "warning: --no-relabel keeps the merged records' own strata labels, which single them out",
            file=sys.stderr if args.no_relabel else sys.stdout,
        )
    return 0


def _release_mixed(
    table: Table, cols: dict[int, np.ndarray], kinds: dict[int, str], ordinal: dict[str, list[str]],
    attribute_weights: dict[str, float], args: argparse.Namespace, options: dict[str, Any], group: Any,
) -> tuple[dict[int, np.ndarray], Any]:
    """The mixed key's release (:func:`microagg._mixed.workflow.release`, grouped by
    ``group``: plain or t-close), by column index."""
    names = {j: table.names[j] for j in [*cols, *kinds]}
    unknown = [c for c in attribute_weights if c not in names.values()]
    if unknown:
        raise CliError(f"--attribute-weight: {', '.join(unknown)} not in the key ({', '.join(names.values())})")
    key = {names[j]: v for j, v in cols.items()}
    key.update({names[j]: table.categories(j) for j in kinds})
    kind_of = {names[j]: kind for j, kind in kinds.items()}
    if not options["standardize"]:
        raise CliError("--no-standardize does not apply to a key with categories (every column is z-scored); "
                       "weigh columns with --attribute-weight")
    rest = {name: value for name, value in options.items() if name not in ("missing", "standardize")}
    out, res = run_with_progress(table.n_rows, lambda progress: release_mixed(
        key, kind_of, ordinal, args.k, args.method, attribute_weights=attribute_weights,
        categorical_release=args.categorical_release, missing=options["missing"], group=group, progress=progress,
        **rest,
    ))
    return {j: out[name] for j, name in names.items()}, res


def _written(table: Table, j: int, values: np.ndarray) -> np.ndarray:
    """A released categorical column as the file writes it: a cell left missing as it was read."""
    read = table.labels(j)
    return np.array([read[i] if v is None else v for i, v in enumerate(values)], dtype=object)


def _methods_used(asked: str, chosen: Sequence[str]) -> str:
    """The t-closeness method in words: "k-first", or for "auto" the one it chose ("auto:
    k-first"), counted over the strata or parts where they differ ("auto: k-first in 3 of 4,
    merge in 1 of 4")."""
    counts = Counter(chosen)
    if len(counts) == 1:
        used = next(iter(counts))
    else:
        used = ", ".join(f"{m} in {c} of {len(chosen)}" for m, c in counts.most_common())
    return used if used == asked or not chosen else f"{asked}: {used}"
