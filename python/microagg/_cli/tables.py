"""Tables on disk for the command-line tool: CSV (standard library) and Parquet (pyarrow).

The format follows the file name: ``.parquet`` / ``.pq`` is Parquet, anything else CSV, so
``microagg anonymize in.parquet -o out.csv`` converts as it goes. A :class:`Table`
(:class:`CsvTable` or :class:`ArrowTable`) gives the CLI what it needs: the column names, a
column's values as float64 when it is numeric, where a data row stands in the file, and a
copy with columns replaced; the other columns are written back as they were read (CSV text
unchanged, in the input's delimiter; Parquet types kept). CSV files may start with a UTF-8
byte-order mark and use ``,`` ``;`` tab or ``|`` as delimiter (found from the header row, or
given). Cells equal to a declared missing-value code (``na_values``) are missing, like empty
cells. Writing follows :mod:`.output`'s rules. pyarrow is imported only for Parquet files,
with a clear error when it is missing.
"""

from __future__ import annotations

import csv
import os
from typing import Any, Collection, Optional

import numpy as np
import numpy.typing as npt

from .. import _frames as frames
from .output import write_file

PARQUET_SUFFIXES = (".parquet", ".pq")


MISSING_CELLS = frozenset({"", "na", "nan"})
"""CSV cells read as missing values (case-insensitive, surrounding blanks ignored); the CLI
refuses them unless ``--missing fill|keep``."""

DELIMITERS = (",", ";", "\t", "|")
"""The CSV delimiters found from a header row, in order of preference on a tie."""


class TableError(ValueError):
    """A file that cannot be read or written as a table (one line for the CLI)."""


def check_unique_names(names: list[str], path: str) -> None:
    """``TableError`` naming the columns of the file ``path`` whose name repeats."""
    try:
        frames.check_unique_names(names, path)
    except ValueError as exc:
        raise TableError(str(exc)) from None


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

    def __init__(self, path: str, names: list[str], na_values: Collection[str] = ()) -> None:
        check_unique_names(names, path)
        self.path = path
        self.names = names
        self.na_values = frozenset(v.strip() for v in na_values)

    @property
    def n_rows(self) -> int:
        """Number of data rows."""
        raise NotImplementedError

    def numeric(self, j: int) -> Optional[npt.NDArray[np.float64]]:
        """Column ``j`` as float64 when it holds numbers, else None; missing cells (CSV:
        empty, "NA" or "nan", any case; Parquet: nulls) are NaN."""
        raise NotImplementedError

    def where(self, i: int) -> str:
        """Where data row ``i`` stands in the file ("line 6", the header being line 1; "row 5"
        in a Parquet file), for messages."""
        raise NotImplementedError

    def cell(self, j: int, i: int) -> str:
        """Where data row ``i`` of column ``j`` is and what it holds, for an error message."""
        return f"{self.where(i)}: {self.text(j, i)!r}"

    def text(self, j: int, i: int) -> str:
        """The cell of data row ``i`` in column ``j`` as text."""
        raise NotImplementedError

    def non_numeric_cells(self, j: int) -> list[int]:
        """The data rows whose cell in column ``j`` is neither a number nor missing (an empty
        cell, "NA", "nan" or a declared missing-value code)."""
        raise NotImplementedError

    def why_not_numeric(self, j: int) -> str:
        """Why column ``j`` is not numeric, for an error message."""
        raise NotImplementedError

    def labels(self, j: int) -> npt.NDArray[Any]:
        """Column ``j`` as an object array of its values (text for CSV; nulls as None), to
        name strata."""
        raise NotImplementedError

    def categories(self, j: int) -> npt.NDArray[Any]:
        """Column ``j`` as an object array of categories, None where the cell is missing (as
        for :meth:`numeric`), for a categorical key column."""
        raise NotImplementedError

    def replaced(self, values: dict[int, npt.NDArray[np.float64]]) -> "Table":
        """A copy with column ``j`` replaced by the float64 ``values[j]`` for each key; a NaN
        (a cell ``missing="keep"`` left missing) stays missing as it was written."""
        raise NotImplementedError

    def relabeled(self, values: dict[int, npt.NDArray[Any]]) -> "Table":
        """A copy with the label column ``j`` (as :meth:`labels` gives it) replaced by
        ``values[j]`` for each key."""
        raise NotImplementedError

    def to_arrow(self) -> Any:
        """The table as a ``pyarrow.Table``."""
        raise NotImplementedError

    def write_csv(self, path: str) -> None:
        """Writes the table as CSV with a header row."""
        raise NotImplementedError


class CsvTable(Table):
    """A CSV file's columns as the strings read (untouched columns are written back as read)."""

    def __init__(
        self,
        path: str,
        names: list[str],
        columns: list[list[str]],
        *,
        delimiter: str = ",",
        lines: Optional[list[int]] = None,
        na_values: Collection[str] = (),
        line_end: str = "\n",
    ) -> None:
        super().__init__(path, names, na_values)
        self.columns = columns
        self.delimiter = delimiter
        self.line_end = line_end
        self.lines = lines if lines is not None else list(range(2, self.n_rows + 2))

    def _with(self, columns: list[list[str]]) -> "CsvTable":
        """A copy holding ``columns``, read from the same file (delimiter, lines, line ends)."""
        return CsvTable(
            self.path, self.names, columns, delimiter=self.delimiter, lines=self.lines, na_values=self.na_values,
            line_end=self.line_end,
        )

    @property
    def n_rows(self) -> int:
        return len(self.columns[0]) if self.columns else 0

    def _missing(self, text: str) -> bool:
        t = text.strip()
        return t.lower() in MISSING_CELLS or t in self.na_values

    def numeric(self, j: int) -> Optional[npt.NDArray[np.float64]]:
        texts = ["nan" if self._missing(t) else t for t in self.columns[j]]
        values = _parse(texts, float)
        return None if values is None else values.astype(np.float64)

    def where(self, i: int) -> str:
        return f"line {self.lines[i]}"

    def text(self, j: int, i: int) -> str:
        return self.columns[j][i]

    def non_numeric_cells(self, j: int) -> list[int]:
        return [i for i, t in enumerate(self.columns[j]) if not self._missing(t) and _parse([t], float) is None]

    def why_not_numeric(self, j: int) -> str:
        return self.cell(j, self.non_numeric_cells(j)[0])

    def labels(self, j: int) -> npt.NDArray[Any]:
        return np.array(self.columns[j], dtype=object)

    def categories(self, j: int) -> npt.NDArray[Any]:
        return np.array([None if self._missing(t) else t for t in self.columns[j]], dtype=object)

    def replaced(self, values: dict[int, npt.NDArray[np.float64]]) -> "CsvTable":
        columns = list(self.columns)
        for j, v in values.items():
            columns[j] = [t if np.isnan(x) else repr(float(x)) for x, t in zip(v, self.columns[j])]
        return self._with(columns)

    def relabeled(self, values: dict[int, npt.NDArray[Any]]) -> "CsvTable":
        columns = list(self.columns)
        for j, v in values.items():
            columns[j] = [str(x) for x in v]
        return self._with(columns)

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
            w = csv.writer(f, delimiter=self.delimiter, lineterminator=self.line_end)
            w.writerow(self.names)
            w.writerows(zip(*self.columns))


class ArrowTable(Table):
    """A Parquet file's table (untouched columns keep their Arrow types)."""

    def __init__(self, path: str, table: Any, na_values: Collection[str] = ()) -> None:
        super().__init__(path, list(table.column_names), na_values)
        self.table = table

    @property
    def n_rows(self) -> int:
        return int(self.table.num_rows)

    def _is_number_type(self, j: int) -> bool:
        col, types = self.table.column(j), _pyarrow(self.path).types
        return bool(types.is_integer(col.type) or types.is_floating(col.type) or types.is_decimal(col.type))

    def _is_text_type(self, j: int) -> bool:
        col, types = self.table.column(j), _pyarrow(self.path).types
        return bool(types.is_string(col.type) or types.is_large_string(col.type))

    def numeric(self, j: int) -> Optional[npt.NDArray[np.float64]]:
        """Integer, floating and decimal columns, and text columns whose every cell is a
        number or missing; nulls and declared missing-value codes become NaN."""
        if self._is_number_type(j):
            values = np.asarray(self.table.column(j).cast("float64").to_numpy(), dtype=np.float64)
            codes = [float(v) for v in self.na_values if _parse([v], float) is not None]
            return np.where(np.isin(values, codes), np.nan, values) if codes else values
        if not self._is_text_type(j) or self.non_numeric_cells(j):
            return None
        texts = ["nan" if self._missing(t) else t for t in self.table.column(j).to_pylist()]
        return np.asarray(_parse(texts, float), dtype=np.float64)

    def _missing(self, text: Optional[str]) -> bool:
        return text is None or text.strip().lower() in MISSING_CELLS or text.strip() in self.na_values

    def where(self, i: int) -> str:
        return f"row {i + 1}"

    def text(self, j: int, i: int) -> str:
        return str(self.table.column(j)[i].as_py())

    def non_numeric_cells(self, j: int) -> list[int]:
        if self._is_number_type(j):
            return []
        if not self._is_text_type(j):
            return list(range(self.n_rows))
        texts = self.table.column(j).to_pylist()
        return [i for i, t in enumerate(texts) if not self._missing(t) and _parse([t], float) is None]

    def why_not_numeric(self, j: int) -> str:
        return f"type {self.table.column(j).type}"

    def labels(self, j: int) -> npt.NDArray[Any]:
        out = np.empty(self.n_rows, dtype=object)
        out[:] = self.table.column(j).to_pylist()
        return out

    def categories(self, j: int) -> npt.NDArray[Any]:
        out = self.labels(j)
        out[[v is None or str(v).strip() in self.na_values for v in out]] = None
        return out

    def replaced(self, values: dict[int, npt.NDArray[np.float64]]) -> "ArrowTable":
        table, pa = self.table, _pyarrow(self.path)
        for j, v in values.items():
            column = np.asarray(v, dtype=np.float64)
            table = table.set_column(j, self.names[j], pa.array(column, mask=np.isnan(column)))
        return ArrowTable(self.path, table, self.na_values)

    def relabeled(self, values: dict[int, npt.NDArray[Any]]) -> "ArrowTable":
        table, pa = self.table, _pyarrow(self.path)
        for j, v in values.items():
            column = pa.array(list(v)).cast(table.column(j).type)
            table = table.set_column(j, self.names[j], column)
        return ArrowTable(self.path, table, self.na_values)

    def to_arrow(self) -> Any:
        return self.table

    def write_csv(self, path: str) -> None:
        pa = _pyarrow(self.path)
        import pyarrow.csv  # noqa: F401

        pa.csv.write_csv(self.table, path, pa.csv.WriteOptions(quoting_style="needed"))


def read_table(
    path: str, sep: Optional[str] = None, na_values: Collection[str] = (), encoding: Optional[str] = None
) -> Table:
    """Reads a CSV file (header row required) or a Parquet file.

    ``sep`` is the CSV delimiter (default: the one of ``,`` ``;`` tab ``|`` found most often
    in the header row); ``na_values`` are cell texts (or, in numeric Parquet columns,
    numbers) that mean a missing value, such as ``"?"`` or ``"-9"``; ``encoding`` is the CSV
    file's text encoding (default UTF-8, with or without a byte-order mark). The header's
    line end (``\\r\\n`` or ``\\n``) is the one the table is written back with.
    """
    if not os.path.exists(path):
        raise TableError(f"input file not found: {path}")
    if is_parquet(path):
        pa = _pyarrow(path)
        try:
            check_unique_names(list(pa.parquet.ParquetDataset(path).schema.names), path)  # a file or a folder
            table = pa.parquet.read_table(path)
        except (OSError, pa.ArrowException) as exc:
            raise TableError(f"cannot read {path}: {exc}") from None
        return ArrowTable(path, table, na_values)
    try:
        with open(path, newline="", encoding=encoding or "utf-8-sig") as f:
            first = f.readline()
            delimiter = sep if sep is not None else sniff_delimiter(first)
            f.seek(0)
            reader = csv.reader(f, delimiter=delimiter)
            rows, lines = [], []
            for row in reader:
                rows.append(row)
                lines.append(reader.line_num)
    except UnicodeDecodeError as exc:
        raise TableError(
            f"cannot read {path}, line {_undecodable_line(path, exc.encoding)}: not {exc.encoding} text "
            f"({exc.reason}); give the file's encoding with --encoding, e.g. --encoding latin-1"
        ) from None
    except LookupError as exc:
        raise TableError(f"--encoding: {exc}") from None
    except (OSError, csv.Error) as exc:
        raise TableError(f"cannot read {path}: {exc}") from None
    except TypeError as exc:  # a delimiter that is not one character
        raise TableError(f"--sep: {exc}") from None
    if not rows:
        raise TableError(f"{path} is empty (a header row is required)")
    header = rows[0]
    body = [(r, line) for r, line in zip(rows[1:], lines[1:]) if r]
    for r, line in body:
        if len(r) != len(header):
            raise TableError(f"{path}, line {line}: {len(r)} fields, header has {len(header)} (delimiter {delimiter!r})")
    columns = [[r[j] for r, _ in body] for j in range(len(header))]
    return CsvTable(
        path, header, columns, delimiter=delimiter, lines=[line for _, line in body], na_values=na_values,
        line_end="\r\n" if first.endswith("\r\n") else "\n",
    )


def _undecodable_line(path: str, encoding: str) -> int:
    """The number of the first line of ``path`` that is not ``encoding`` text."""
    with open(path, "rb") as f:
        for number, line in enumerate(f, start=1):
            try:
                line.decode(encoding)
            except UnicodeDecodeError:
                return number
    return 1


def sniff_delimiter(header: str) -> str:
    """The delimiter of a CSV header row: the one of :data:`DELIMITERS` found most often
    outside double quotes (``,`` when none is)."""
    outside = "".join(part for i, part in enumerate(header.split('"')) if i % 2 == 0)
    counts = [outside.count(d) for d in DELIMITERS]
    return DELIMITERS[counts.index(max(counts))] if max(counts) > 0 else ","


def check_writable(path: str) -> None:
    """Fails early (before a long run) when ``path`` is Parquet and pyarrow is missing."""
    if is_parquet(path):
        _pyarrow(path)


def write_table(table: Table, path: str, overwrite: bool = False) -> None:
    """Writes ``table`` to ``path`` as Parquet or CSV after the suffix of ``path``, by the
    rules of :mod:`.output` (atomic, never over an existing file unless ``overwrite``)."""
    if is_parquet(path):
        pa, arrow = _pyarrow(path), table.to_arrow()
        write_file(path, lambda target: pa.parquet.write_table(arrow, target), overwrite)
    else:
        write_file(path, table.write_csv, overwrite)
