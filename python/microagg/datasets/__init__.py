"""Bundled reference data sets of the microaggregation literature (from R's sdcMicro).

Each loader returns the records in file order (the published Mondrian figures depend on
it) as a float64 array, or as a pandas DataFrame with ``as_frame=True``.

- :func:`load_census`: CASC "Census", 1080 records x 13 attributes.
- :func:`load_tarragona`: Tarragona companies, 834 x 13.
- :func:`load_eia`: EIA electric utilities, 4092 records; the 11 benchmark attributes
  (UTILITYID and columns 6-15) by default.
"""

from __future__ import annotations

import csv
from importlib import resources
from typing import Any

import numpy as np

__all__ = ["load_census", "load_tarragona", "load_eia", "EIA_BENCHMARK_ATTRIBUTES"]

EIA_BENCHMARK_ATTRIBUTES: tuple[str, ...] = (
    "UTILITYID", "RESREVENUE", "RESSALES", "COMREVENUE", "COMSALES", "INDREVENUE",
    "INDSALES", "OTHREVENUE", "OTHRSALES", "TOTREVENUE", "TOTSALES",
)
"""The 11 EIA attributes the papers use (0-based columns 0 and 5..14)."""


def _read(name: str) -> tuple[list[str], list[list[str]]]:
    text = resources.files(__name__).joinpath("data", f"{name}.csv").read_text(encoding="utf-8")
    rows = list(csv.reader(text.splitlines()))  # no field of the bundled files spans lines
    return rows[0], rows[1:]


def _load(name: str, columns: Any, as_frame: bool) -> Any:
    header, rows = _read(name)
    if columns is None:
        columns = header
    idx = [header.index(c) for c in columns]
    if as_frame:
        import pandas as pd

        frame = pd.DataFrame([[r[i] for i in idx] for r in rows], columns=list(columns))
        for c in frame.columns:
            converted = pd.to_numeric(frame[c], errors="coerce")
            if converted.notna().all():
                frame[c] = converted
        return frame
    return np.array([[float(r[i]) for i in idx] for r in rows], dtype=np.float64)


def load_census(as_frame: bool = False) -> Any:
    """CASC reference microdata "Census": 1080 records x 13 integer attributes."""
    return _load("census", None, as_frame)


def load_tarragona(as_frame: bool = False) -> Any:
    """Tarragona companies: 834 records x 13 integer attributes."""
    return _load("tarragona", None, as_frame)


def load_eia(as_frame: bool = False, benchmark_attributes: bool = True) -> Any:
    """EIA electric utilities, 4092 records.

    With ``benchmark_attributes=True`` (default) the 11 attributes of the papers
    (:data:`EIA_BENCHMARK_ATTRIBUTES`). Otherwise all columns: the 13 numeric ones as an
    array, or all 15 (with the text columns UTILNAME and STATE) as a DataFrame.
    """
    if benchmark_attributes:
        return _load("eia", EIA_BENCHMARK_ATTRIBUTES, as_frame)
    if as_frame:
        return _load("eia", None, True)
    header, _ = _read("eia")
    return _load("eia", [c for c in header if c not in ("UTILNAME", "STATE")], False)
