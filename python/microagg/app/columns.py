"""The columns of a file as the app first shows them: each one's type and role inferred the
way ``microagg anonymize`` reads the file (:func:`microagg._cli.tables.read_table`, a
column is numeric when every observed cell parses as a number, else text), with the
identifier-like columns flagged (docs/app.md)."""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import Any, Collection

import numpy as np

from .._cli.tables import Table, read_table

TYPES = ("numeric", "nominal", "ordinal")
"""A key column's type: numbers, unordered categories, ordered categories."""

ROLES = ("key", "sensitive", "strata", "weights", "copied")
"""What the release does with a column: group it (key), keep it t-close (sensitive), never
mix it (strata), weigh by it (weights), or copy it as read."""

MEMORY_FACTOR = 20
"""Bytes of memory a byte of the file may take once read (text cells become Python strings,
numbers float64 arrays, the release a second copy): a file above the available memory over
this factor is refused before it is read."""


@dataclass
class Column:
    """One column of the file: its name, inferred type and role, its levels (the order of
    an ordinal column, editable in the app) and why it is flagged ("" when it is not)."""

    name: str
    type: str
    role: str
    levels: list[str] = field(default_factory=list)
    flag: str = ""


def available_memory() -> int:
    """Bytes of memory the machine has free now (``MemAvailable`` where the system says it,
    else the free pages)."""
    try:
        with open("/proc/meminfo") as f:
            for line in f:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    return int(os.sysconf("SC_AVPHYS_PAGES") * os.sysconf("SC_PAGE_SIZE"))


def check_size(path: str, available: int) -> None:
    """Raises ``ValueError`` when ``path`` is too large to be read into ``available`` bytes
    of memory (see :data:`MEMORY_FACTOR`)."""
    size = os.path.getsize(path)
    if size * MEMORY_FACTOR > available:
        raise ValueError(
            f"{os.path.basename(path)} ({size / 2**20:.0f} MiB) is too large for this machine's free memory "
            f"({available / 2**20:.0f} MiB); run `microagg anonymize --engine dask` on it instead"
        )


def infer_columns(path: str, na_values: Collection[str] = ()) -> tuple[Table, list[Column]]:
    """The table read as the command line reads it and its columns: numeric columns are
    key columns, text columns copied nominal ones (the command line's default key: every
    numeric column); a column whose values all differ and look like codes (text, or whole
    numbers close to a run) is flagged as an identifier and copied, a numeric column with a
    few text codes flagged for ``--na-values``, an empty one copied. Raises the command line's ``ValueError`` for a file it cannot read."""
    table = read_table(path, na_values=na_values)
    if table.n_rows == 0:
        raise ValueError(f"{os.path.basename(path)} has no data rows")
    return table, [_column(table, j) for j in range(len(table.names))]


def _column(table: Table, j: int) -> Column:
    name = table.names[j]
    values = table.numeric(j)
    labels = table.categories(j)
    observed = [v for v in labels if v is not None]
    distinct = sorted({str(v) for v in observed}, key=_level_order(values is not None))
    if values is None:
        codes = table.non_numeric_cells(j)
        if codes and 2 * len(codes) < table.n_rows:
            shown = ", ".join(sorted({table.text(j, i).strip() for i in codes})[:5])
            return Column(name, "numeric", "copied", distinct,
                          f"numeric but for {len(codes)} cells ({shown}): declare them missing")
        kind = "nominal"
    else:
        if np.isnan(values).all():
            return Column(name, "numeric", "copied", [], "every cell missing")
        kind = "numeric"
    if table.n_rows > 1 and len(distinct) == len(observed) == table.n_rows and _codes(values):
        return Column(name, kind, "copied", distinct, "identifier-like: every value differs")
    return Column(name, kind, "key" if kind == "numeric" else "copied", distinct)


def _codes(values: Any) -> bool:
    """Whether all-distinct values look like record identifiers: text, or whole numbers
    close to a run (at most twice as many possible values as records), not measurements
    such as incomes, which are all distinct too."""
    if values is None:
        return True
    whole = bool(np.all(values == np.round(values)))
    return whole and float(values.max() - values.min()) < 2 * len(values)


def _level_order(numeric: bool) -> Any:
    """The sort key of a column's levels: by value for numbers (2 before 10), else by text."""
    return float if numeric else str
