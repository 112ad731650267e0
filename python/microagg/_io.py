"""Tables on disk for the command-line tool: CSV (standard library) and Parquet (pyarrow).

The format follows the file name: ``.parquet`` / ``.pq`` is Parquet, anything else CSV, so
``microagg anonymize in.parquet -o out.csv`` converts as it goes. A :class:`Table`
(:class:`CsvTable` or :class:`ArrowTable`) gives the CLI what it needs: the column names, a column's values as float64 when it is numeric, and a
copy with columns replaced; the other columns are written back as they were read (CSV text
unchanged, Parquet types kept). Writing is atomic (temporary file in the same folder, then
rename). pyarrow is imported only for Parquet files, with a clear error when it is missing.
"""

from __future__ import annotations

import csv
import os
import tempfile
from typing import Any, Callable, Optional

import numpy as np
import numpy.typing as npt

PARQUET_SUFFIXES = (".parquet", ".pq")


MISSING_CELLS = frozenset({"", "na", "nan"})
"""CSV cells read as missing values (case-insensitive, surrounding blanks ignored); the CLI
refuses them unless ``--missing fill|keep``."""


class TableError(ValueError):
    """A file that cannot be read or written as a table (one line for the CLI)."""


def is_parquet(path: str) -> bool:
    """Whether ``path`` names a Parquet file (by its suffix)."""
    return path.lower().endswith(PARQUET_SUFFIXES)


def _pyarrow(path: str) -> Any:
    try:
        import pyarrow  # optional dependency, imported only for Parquet files
        import pyarrow.parquet  # noqa: F401
    except ImportError:
        raise TableError(
            f"{path}: Parquet files need pyarrow: pip install pyarrow (or microagg[arrow])"
        ) from None
    return pyarrow


def _parse(texts: list[str], kind: type) -> Optional[npt.NDArray[Any]]:
    """The texts as an array of ``kind`` (int or float), None when one does not parse."""
    try:
        values = np.array([kind(t) for t in texts])
    except (ValueError, OverflowError):
        return None
    return None if values.dtype == object else values  # ints beyond int64


class Table:
    """Named columns read from a file: what the CLI reads, replaces and writes."""

    def __init__(self, path: str, names: list[str]) -> None:
        self.path = path
        self.names = names

    @property
    def n_rows(self) -> int:
        """Number of data rows."""
        raise NotImplementedError

    def numeric(self, j: int) -> Optional[npt.NDArray[np.float64]]:
        """Column ``j`` as float64 when it holds numbers, else None; missing cells (CSV:
        empty, "NA" or "nan", any case; Parquet: nulls) are NaN."""
        raise NotImplementedError

    def cell(self, j: int, i: int) -> str:
        """Where data row ``i`` of column ``j`` is and what it holds, for an error message."""
        raise NotImplementedError

    def why_not_numeric(self, j: int) -> str:
        """Why column ``j`` is not numeric, for an error message."""
        raise NotImplementedError

    def labels(self, j: int) -> npt.NDArray[Any]:
        """Column ``j`` as an object array of its values (text for CSV; nulls as None), to
        name strata."""
        raise NotImplementedError

    def replaced(self, values: dict[int, npt.NDArray[np.float64]]) -> "Table":
        """A copy with column ``j`` replaced by the float64 ``values[j]`` for each key; a NaN
        (a cell ``missing="keep"`` left missing) stays missing as it was written."""
        raise NotImplementedError

    def to_arrow(self) -> Any:
        """The table as a ``pyarrow.Table``."""
        raise NotImplementedError

    def write_csv(self, path: str) -> None:
        """Writes the table as CSV with a header row."""
        raise NotImplementedError


class CsvTable(Table):
    """A CSV file's columns as the strings read (untouched columns are written back as read)."""

    def __init__(self, path: str, names: list[str], columns: list[list[str]]) -> None:
        super().__init__(path, names)
        self.columns = columns

    @property
    def n_rows(self) -> int:
        return len(self.columns[0]) if self.columns else 0

    def numeric(self, j: int) -> Optional[npt.NDArray[np.float64]]:
        texts = ["nan" if t.strip().lower() in MISSING_CELLS else t for t in self.columns[j]]
        values = _parse(texts, float)
        return None if values is None else values.astype(np.float64)

    def cell(self, j: int, i: int) -> str:
        return f"line {i + 2}: {self.columns[j][i]!r}"

    def why_not_numeric(self, j: int) -> str:
        line, text = next((i, t) for i, t in enumerate(self.columns[j], start=2) if _parse([t], float) is None)
        return f"line {line}: {text!r}"

    def labels(self, j: int) -> npt.NDArray[Any]:
        return np.array(self.columns[j], dtype=object)

    def replaced(self, values: dict[int, npt.NDArray[np.float64]]) -> "CsvTable":
        columns = list(self.columns)
        for j, v in values.items():
            columns[j] = [t if np.isnan(x) else repr(float(x)) for x, t in zip(v, self.columns[j])]
        return CsvTable(self.path, self.names, columns)

    def to_arrow(self) -> Any:
        """Integer, float and other (string) columns, by what every value parses as."""
        pa = _pyarrow(self.path)
        arrays = []
        for col in self.columns:
            parsed = _parse(col, int)
            parsed = parsed if parsed is not None else _parse(col, float)
            arrays.append(pa.array(parsed if parsed is not None else col))
        return pa.table(arrays, names=self.names)

    def write_csv(self, path: str) -> None:
        with open(path, "w", newline="", encoding="utf-8") as f:
            w = csv.writer(f, lineterminator="\n")
            w.writerow(self.names)
            w.writerows(zip(*self.columns))


class ArrowTable(Table):
    """A Parquet file's table (untouched columns keep their Arrow types)."""

    def __init__(self, path: str, table: Any) -> None:
        super().__init__(path, list(table.column_names))
        self.table = table

    @property
    def n_rows(self) -> int:
        return int(self.table.num_rows)

    def numeric(self, j: int) -> Optional[npt.NDArray[np.float64]]:
        """Integer, floating and decimal columns; nulls become NaN."""
        col, types = self.table.column(j), _pyarrow(self.path).types
        if not (types.is_integer(col.type) or types.is_floating(col.type) or types.is_decimal(col.type)):
            return None
        return np.asarray(col.cast("float64").to_numpy(), dtype=np.float64)

    def cell(self, j: int, i: int) -> str:
        return f"row {i + 1}: {self.table.column(j)[i].as_py()!r}"

    def why_not_numeric(self, j: int) -> str:
        return f"type {self.table.column(j).type}"

    def labels(self, j: int) -> npt.NDArray[Any]:
        out = np.empty(self.n_rows, dtype=object)
        out[:] = self.table.column(j).to_pylist()
        return out

    def replaced(self, values: dict[int, npt.NDArray[np.float64]]) -> "ArrowTable":
        table, pa = self.table, _pyarrow(self.path)
        for j, v in values.items():
            column = np.asarray(v, dtype=np.float64)
            table = table.set_column(j, self.names[j], pa.array(column, mask=np.isnan(column)))
        return ArrowTable(self.path, table)

    def to_arrow(self) -> Any:
        return self.table

    def write_csv(self, path: str) -> None:
        pa = _pyarrow(self.path)
        import pyarrow.csv  # noqa: F401

        pa.csv.write_csv(self.table, path, pa.csv.WriteOptions(quoting_style="needed"))


def read_table(path: str) -> Table:
    """Reads a CSV file (header row required) or a Parquet file."""
    if not os.path.exists(path):
        raise TableError(f"input file not found: {path}")
    if is_parquet(path):
        pa = _pyarrow(path)
        try:
            table = pa.parquet.read_table(path)
        except (OSError, pa.ArrowException) as exc:
            raise TableError(f"cannot read {path}: {exc}") from None
        return ArrowTable(path, table)
    try:
        with open(path, newline="", encoding="utf-8") as f:
            rows = list(csv.reader(f))
    except (OSError, UnicodeDecodeError, csv.Error) as exc:
        raise TableError(f"cannot read {path}: {exc}") from None
    if not rows:
        raise TableError(f"{path} is empty (a header row is required)")
    header, body = rows[0], [r for r in rows[1:] if r]
    for i, r in enumerate(body, start=2):
        if len(r) != len(header):
            raise TableError(f"{path}, line {i}: {len(r)} fields, header has {len(header)}")
    return CsvTable(path, header, [[r[j] for r in body] for j in range(len(header))])


def check_writable(path: str) -> None:
    """Fails early (before a long run) when ``path`` is Parquet and pyarrow is missing."""
    if is_parquet(path):
        _pyarrow(path)


def write_table(table: Table, path: str) -> None:
    """Writes ``table`` to ``path`` atomically, as Parquet or CSV after the suffix of ``path``."""
    if is_parquet(path):
        pa, arrow = _pyarrow(path), table.to_arrow()
        _write_atomically(path, lambda tmp: pa.parquet.write_table(arrow, tmp))
    else:
        _write_atomically(path, table.write_csv)


def _write_atomically(path: str, write: Callable[[str], None]) -> None:
    folder = os.path.dirname(os.path.abspath(path))
    fd, tmp = tempfile.mkstemp(prefix=".microagg-", suffix=os.path.splitext(path)[1], dir=folder)
    os.close(fd)
    try:
        write(tmp)
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise
