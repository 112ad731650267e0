"""Column roles read from the flags that ``anonymize`` and ``report`` share: the confidential
columns of ``--sensitive`` (with ``--t``) and the parsing of ``COL=...`` flags such as
``--ordinal``, with their errors in the CLI's terms."""

from __future__ import annotations

import argparse
from typing import Any

from .._columns import confidential_columns
from .columns import TERMS
from .common import CliError, split
from .tables import Table


def sensitive_columns(
    table: Table, args: argparse.Namespace, reserved: dict[int, str], *, need_t: bool = True
) -> dict[str, Any]:
    """The ``--sensitive`` columns' values (numbers where a column holds them, categories
    otherwise), marked in ``reserved`` so that they are never keys. ``--t`` needs
    ``--sensitive``, and with ``need_t`` (making a release) ``--sensitive`` needs ``--t``;
    scoring a release may measure the closeness without a t to meet."""
    if args.sensitive is None:
        if args.t is not None:
            raise CliError("--t needs --sensitive (the confidential columns)")
        return {}
    if args.t is None and need_t:
        raise CliError("--sensitive needs --t (0 < T <= 1)")
    roles = {table.names[j]: role for j, role in reserved.items()}
    try:
        wanted = confidential_columns(table.names, split(args.sensitive), roles, TERMS)
    except ValueError as exc:
        raise CliError(str(exc)) from None
    out: dict[str, Any] = {}
    for c in wanted:
        j = table.names.index(c)
        reserved[j] = roles[c]
        numbers = table.numeric(j)
        out[c] = numbers if numbers is not None else table.categories(j)
    return out


def flag(parse: Any, text: str) -> Any:
    """``parse(text)`` for a ``COL=...`` flag, its ``ValueError`` as the CLI's error."""
    try:
        return parse(text)
    except ValueError as exc:
        raise CliError(str(exc)) from None
