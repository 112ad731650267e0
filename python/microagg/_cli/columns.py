"""Which columns of a file are what: the key (quasi-identifiers), the strata and the sampling
weights (``--columns``, ``--by``, ``--weights``), and the strata labels a release publishes
for merged strata."""

from __future__ import annotations

from typing import Any, Optional

import numpy as np

from .._columns import Terms, check_key, workflow_roles
from .._workflow import relabel_strata
from .common import CliError, split
from .tables import Table

TERMS = Terms("the file", flags=True)
"""The roles' messages in the command line's terms (its flags, quoted column names)."""


def choose_columns(
    table: Table, wanted: Optional[str], reserved: dict[int, str], missing: bool, allow_none: bool = False
) -> dict[int, np.ndarray]:
    """The chosen columns' indices and values (default: every numeric column that is not
    ``reserved``, the strata and weights columns, gaps allowed). Missing cells (empty /
    "NA" / "nan" / a ``--na-values`` code in CSV, nulls in Parquet) are NaN, refused unless
    ``missing``. A column that is numeric but for some cells is an error naming them, never
    silently left out of the key (and released raw). No numeric column at all is an error
    unless ``allow_none`` (a key of categories only)."""
    header = table.names
    if wanted is None:
        cols = {}
        for j in range(len(header)):
            if j in reserved:
                continue
            values = table.numeric(j)
            if values is None:
                _refuse_mostly_numeric(table, j)
            elif not np.isnan(values).all():
                cols[j] = values
        if not cols and not allow_none:
            raise CliError("no numeric column found; name them with --columns")
    else:
        cols = {}
        names = split(wanted)
        try:
            check_key(header, names, {header[j]: option for j, option in reserved.items()}, TERMS)
        except ValueError as exc:
            raise CliError(str(exc)) from None
        for c in names:
            j = header.index(c)
            values = table.numeric(j)
            if values is None:
                _refuse_mostly_numeric(table, j)
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


def _refuse_mostly_numeric(table: Table, j: int) -> None:
    """Raises when column ``j`` is numeric except for a minority of its cells (codes such as
    "?", "-" or "n/a"), naming the first of them and the flag that declares them missing."""
    bad = table.non_numeric_cells(j)
    if not bad or 2 * len(bad) >= table.n_rows:
        return
    first = ", ".join(f"{table.text(j, i)!r} ({table.where(i)})" for i in bad[:3])
    codes = ",".join(dict.fromkeys(table.text(j, i).strip() for i in bad))
    raise CliError(
        f"column {table.names[j]!r} is numeric except for {len(bad)} cell{'s' if len(bad) > 1 else ''}: {first}"
        f"{', ...' if len(bad) > 3 else ''}; declare missing-value codes with --na-values {codes[:60]!r} "
        "(then --missing fill or keep), or leave the column out with --columns"
    )


def categorical_key(
    table: Table, wanted: Optional[str], reserved: dict[int, str], categorical: list[str], ordinal: dict[str, list[str]]
) -> dict[int, str]:
    """The kind ("nominal" or "ordinal") of each categorical key column: those named in
    ``--categorical`` and ``--ordinal`` (which must be in ``--columns`` when it is given, as
    the API's ``categorical=`` / ``ordinal=`` must be in ``columns=``), and every text
    column named in ``--columns``. A
    column that is numeric but for a few codes stays an error (declare the codes, or name it
    in ``--categorical``)."""
    header = table.names
    for role, names in (("categorical", categorical), ("ordinal", list(ordinal))):
        flag = TERMS.option(role)
        for c in names:
            if c not in header:
                raise CliError(str(TERMS.unknown(role, [c], header)))
            if wanted is not None and c not in split(wanted):
                raise CliError(f"column {c!r} is in {flag} but not in --columns; add it to --columns to make it "
                               "part of the key")
            if header.index(c) in reserved:
                raise CliError(f"column {c!r} is both a quasi-identifier ({flag}) and in {reserved[header.index(c)]}")
    kinds = {header.index(c): "nominal" for c in categorical}
    kinds.update({header.index(c): "ordinal" for c in ordinal})
    for c in split(wanted):
        j = header.index(c) if c in header else -1
        if j >= 0 and j not in kinds and j not in reserved and table.numeric(j) is None:
            _refuse_mostly_numeric(table, j)
            kinds[j] = "nominal"
    return kinds


def workflow_columns(
    table: Table, by: Optional[str], weights: Optional[str]
) -> tuple[Optional[np.ndarray], Optional[np.ndarray], dict[int, str]]:
    """The strata labels (the values of the ``--by`` columns), the ``--weights`` values, and
    the option naming each of those columns."""
    header = table.names
    parsed: dict[str, Optional[np.ndarray]] = {}

    def numeric(name: str) -> bool:
        parsed[name] = table.numeric(header.index(name))
        return parsed[name] is not None

    try:
        roles = workflow_roles(header, numeric, split(by), weights, TERMS)
    except (ValueError, TypeError) as exc:
        raise CliError(str(exc)) from None
    reserved = {header.index(c): option for c, option in roles.of.items()}
    names = roles.by
    strata = None
    if names:
        labels = [table.labels(header.index(c)) for c in names]
        strata = labels[0] if len(labels) == 1 else np.column_stack(labels)
    return strata, parsed.get(weights) if weights is not None else None, reserved


def relabeled(table: Table, strata: Any, merges: Any, by: list[str]) -> Table:
    """``table`` with the ``--by`` columns set to the strata their records are published
    under: a merged stratum's records under the label of the stratum they joined
    (:func:`microagg.relabel_strata`), so that their own label does not single them out."""
    published = relabel_strata(strata, merges)
    columns = {}
    for position, name in enumerate(by):
        column = published[:, position] if published.ndim == 2 else published
        columns[table.names.index(name)] = np.asarray(column, dtype=object)
    return table.relabeled(columns)
