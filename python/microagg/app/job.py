"""One candidate release, run in its own process (``python -m microagg.app.job SPEC``) so
that the app's server survives a failed or exhausted run and its cancel button can stop it:
the ``microagg anonymize`` command of :mod:`.command` (its messages and progress on this
process's stderr), then :func:`microagg.assess` of the release against the original, pickled
beside it for the page and the report (docs/app.md)."""

from __future__ import annotations

import json
import pickle
import sys
from typing import Any

DEFAULT_NA = ["", "NA", "nan"]
"""The cell texts the command line always reads as missing (``--na-values`` adds more)."""


def read_frame(path: str, na_values: list[str]) -> Any:
    """The file as a pandas DataFrame with the command line's missing values."""
    import pandas as pd

    from .._cli.tables import is_parquet, sniff_delimiter

    if is_parquet(path):
        return pd.read_parquet(path)
    with open(path, encoding="utf-8-sig") as f:
        sep = sniff_delimiter(f.readline())
    return pd.read_csv(path, keep_default_na=False, na_values=DEFAULT_NA + na_values, sep=sep)


def assessment(spec: dict[str, Any]) -> Any:
    """:func:`microagg.assess` of ``spec["release"]`` against ``spec["original"]`` with the
    column roles of the run (``spec["roles"]``: keyword arguments of ``assess``)."""
    from .. import assess

    na = list(spec["na_values"])
    return assess(read_frame(spec["original"], na), read_frame(spec["release"], na), **spec["roles"])


def main(spec_path: str) -> int:
    """Runs the job that ``spec_path`` (JSON) describes; returns the command's exit status."""
    from .._cli.main import main as cli

    with open(spec_path, encoding="utf-8") as f:
        spec = json.load(f)
    status = cli(spec["argv"])
    if status != 0:
        return status
    try:
        result = assessment(spec)
    except (ValueError, TypeError) as exc:
        print(f"microagg: error: {exc}", file=sys.stderr)
        return 2
    with open(spec["assessment"], "wb") as f:
        pickle.dump(result, f)
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1]))
