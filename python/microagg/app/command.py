"""The ``microagg anonymize`` command of the app's settings: the app runs exactly this
command to make a release, and offers it (and a Python snippet calling
:func:`microagg.cli.main` with the same arguments) for download, so that a batch script
reproduces the release byte for byte (docs/app.md)."""

from __future__ import annotations

import shlex
from dataclasses import dataclass, field
from typing import Optional

from .columns import Column


@dataclass
class Settings:
    """What the page sets: the columns (types, roles, ordinal levels), the missing-value
    codes, k, the method, missing handling, aggregation and, with sensitive columns, t."""

    columns: list[Column]
    k: int = 5
    method: str = "mdav"
    missing: str = "error"
    aggregation: str = "mean"
    t: Optional[float] = None
    na_values: str = ""
    numeric: set[str] = field(default_factory=set)
    """The columns that the file holds as numbers (a nominal one of them is ``--categorical``)."""


def _names(columns: list[Column], role: str) -> list[str]:
    return [c.name for c in columns if c.role == role]


def arguments(s: Settings, source: str, output: str) -> list[str]:
    """The arguments of ``microagg`` that release ``source`` into ``output`` with the
    settings ``s``. Raises ``ValueError`` for a setting the command line cannot express
    (a name with a comma, several weights columns, no key)."""
    for c in s.columns:
        if c.role != "copied" and "," in c.name:
            raise ValueError(f"column {c.name!r}: a name with a comma cannot be given to the command line")
    key = _names(s.columns, "key")
    if not key:
        raise ValueError("no key column: set the role of at least one column to key")
    weights = _names(s.columns, "weights")
    if len(weights) > 1:
        raise ValueError(f"one weights column at most, got {', '.join(weights)}")
    argv = ["anonymize", source, "-k", str(s.k), "--method", s.method, "--columns", ",".join(key)]
    categorical = [c.name for c in s.columns if c.role == "key" and c.type == "nominal" and c.name in s.numeric]
    if categorical:
        argv += ["--categorical", ",".join(categorical)]
    for c in s.columns:
        if c.role == "key" and c.type == "ordinal":
            argv += ["--ordinal", f"{c.name}={'<'.join(c.levels)}"]
    strata = _names(s.columns, "strata")
    if strata:
        argv += ["--by", ",".join(strata)]
    if weights:
        argv += ["--weights", weights[0]]
    sensitive = _names(s.columns, "sensitive")
    if sensitive:
        argv += ["--sensitive", ",".join(sensitive), "--t", repr(s.t if s.t is not None else 0.2)]
    if s.missing != "error":
        argv += ["--missing", s.missing]
    if s.aggregation != "mean":
        argv += ["--aggregation", s.aggregation]
    if s.na_values.strip():
        argv += ["--na-values", s.na_values.strip()]
    return argv + ["-o", output]


def shell_command(argv: list[str]) -> str:
    """The command line (POSIX shell quoting) of ``argv``."""
    return "microagg " + shlex.join(argv)


def python_snippet(argv: list[str]) -> str:
    """A Python script that runs the same command through :func:`microagg.cli.main`."""
    return (
        "# Reproduces the release made in `microagg app` (same file, byte for byte).\n"
        "from microagg.cli import main\n\n"
        f"status = main({argv!r})\n"
        "if status != 0:\n"
        "    raise SystemExit(status)\n"
    )
