"""What every command of the CLI shares: its error type, the flags that read a table and
guard the output, parsing of flag values, progress on stderr for long runs, and the wording
of the API's messages in the command line's terms (file lines, flag names)."""

from __future__ import annotations

import argparse
import contextlib
import re
import sys
import threading
import time
from typing import Any, Callable, Iterator, Optional, TypeVar

from .. import _core
from .tables import Table


Result = TypeVar("Result")
"""What a run done with progress reports returns."""


class CliError(Exception):
    """A user error, printed as one line."""


def add_input_arguments(parser: argparse.ArgumentParser) -> None:
    """The flags every command that reads a table and writes a file shares: how the CSV is
    read (``--sep``, ``--encoding``, ``--na-values``) and whether an existing output may be replaced."""
    parser.add_argument("--sep", metavar="CHAR", type=separator,
                        help="CSV delimiter: ',' ';' tab '|' ... (default: found from the header row)")
    parser.add_argument("--encoding", metavar="NAME",
                        help="text encoding of CSV input, e.g. latin-1, cp1252 (default: UTF-8)")
    parser.add_argument("--na-values", metavar="CODES",
                        help="comma-separated cell values that mean missing, e.g. '?,-9,n/a' "
                        "(empty, NA and nan always do)")
    parser.add_argument("--overwrite", action="store_true",
                        help="replace an existing output file (never the input)")


def add_workflow_arguments(parser: argparse.ArgumentParser) -> None:
    """The flags of the release workflow, with one meaning wherever a command runs a method
    (``anonymize``, ``assess``'s candidates): threads, precision, method parameters,
    strata, weights, aggregation, missing values and parts."""
    parser.add_argument("--jobs", type=int, default=1, help="threads: 1 (default), -1 = all cores")
    parser.add_argument("--dtype", choices=["float32", "float64"], default=None)
    parser.add_argument("--no-standardize", action="store_true", help="do not z-score the columns first")
    parser.add_argument("--param", action="append", default=[], metavar="NAME=VALUE", help="method parameter")
    parser.add_argument("--by", metavar="COL[,COL...]", help="strata columns: no group mixes strata (any text)")
    parser.add_argument("--small-strata", choices=_core.SMALL_STRATA, default="error",
                        help="a stratum below k records is an error (default) or merged into the nearest stratum")
    parser.add_argument("--weights", metavar="COL", help="sampling-weight column (weighted group values and IL)")
    parser.add_argument("--aggregation", choices=_core.AGGREGATIONS, default="mean",
                        help="what a group releases (default: mean)")
    parser.add_argument("--trim", type=float, default=None,
                        help="share cut from each end by --aggregation trim (default 0.1)")
    parser.add_argument("--missing", choices=_core.MISSING_MODES, default="error",
                        help="empty/NA/nan/--na-values cells: refuse (default), or group on completed values and "
                        "write the group's value (fill) or leave them missing (keep)")
    parser.add_argument("--max-part", type=int, default=None, metavar="N",
                        help="cut into parts of at most N records (Mondrian-V), then run the method on each part")


def workflow_keywords(args: argparse.Namespace, strata: Any, weights: Any) -> dict[str, Any]:
    """The keyword arguments of :func:`microagg.microaggregate` that the workflow flags set
    (the strata labels and weights read from the file's ``--by`` and ``--weights`` columns)."""
    return {
        "standardize": not args.no_standardize,
        "dtype": args.dtype,
        "n_jobs": args.jobs,
        "by": strata,
        "small_strata": args.small_strata,
        "weights": weights,
        "aggregation": args.aggregation,
        "trim": args.trim,
        "missing": args.missing,
        "max_part": args.max_part,
        **dict(parse_param(p) for p in args.param),
    }


def separator(text: str) -> str:
    sep = {"tab": "\t", "\\t": "\t"}.get(text.lower(), text)
    if len(sep) != 1 or sep in "\"\r\n":
        raise argparse.ArgumentTypeError(f"a delimiter is one character (or 'tab'), got {text!r}")
    return sep


def split(text: Optional[str]) -> list[str]:
    """The items of a comma-separated flag value (column names, ``--na-values`` codes)."""
    return [c.strip() for c in text.split(",") if c.strip()] if text else []


def parse_param(text: str) -> tuple[str, Any]:
    name, sep, value = text.partition("=")
    if not sep or not name:
        raise CliError(f"--param expects NAME=VALUE, got {text!r}")
    low = value.strip().lower()
    if low in ("true", "false"):
        return name, low == "true"
    for convert in (int, float):
        try:
            return name, convert(value)
        except ValueError:
            pass
    raise CliError(f"--param {name}: value {value!r} is not a bool or a number")


def run_with_progress(n: int, run: Callable[[Optional[_core.Progress]], Result]) -> Result:
    """Runs ``run`` in a worker thread; after 2 s, reports its progress on stderr (records
    assigned, and improvement rounds for ONA / ONA*)."""
    progress = _core.Progress()
    box: dict[str, Any] = {}

    def work() -> None:
        try:
            box["result"] = run(progress)
        except BaseException as exc:  # re-raised in the calling thread
            box["error"] = exc

    worker = threading.Thread(target=work, daemon=True)
    start = time.perf_counter()
    worker.start()
    shown = False
    tty = sys.stderr.isatty()
    last = 0.0
    while worker.is_alive():
        worker.join(0.2)
        elapsed = time.perf_counter() - start
        if worker.is_alive() and elapsed > 2.0 and (tty or elapsed - last >= 5.0):
            last = elapsed
            done, rounds = progress.assigned, progress.rounds
            msg = f"  {done:,}/{n:,} records assigned ({100.0 * done / n:.0f}%)"
            msg += f", {rounds} improvement rounds" if rounds else ""
            msg += f", {elapsed:.0f} s"
            print(("\r" + msg) if tty else msg, end="" if tty else "\n", file=sys.stderr, flush=True)
            shown = True
    if shown and tty:
        print(file=sys.stderr)
    if "error" in box:
        raise box["error"]
    result: Result = box["result"]
    return result


_FLAGS = {
    "small_strata": "--small-strata",
    "max_part": "--max-part",
    "missing": "--missing",
    "aggregation": "--aggregation",
    "weights": "--weights",
    "trim": "--trim",
    "n_jobs": "--jobs",
    "dtype": "--dtype",
}
"""The API's keyword arguments and the CLI flags that set them, to word the core's messages."""


@contextlib.contextmanager
def in_cli_terms(table: Optional[Table]) -> Iterator[None]:
    """Rewords the API's ``ValueError`` / ``TypeError`` raised in the block for the command
    line: records become the file's lines (or Parquet rows) when ``table`` is the file read,
    keyword arguments their flags."""
    try:
        yield
    except (ValueError, TypeError) as exc:
        text = str(exc)
        if table is not None:
            text = re.sub(r"\brecord (\d+)\b", lambda m: table.where(int(m.group(1))), text)
        text = re.sub(
            r"\b(" + "|".join(_FLAGS) + r")=(['\"]?)([\w.+-]*)\2",
            lambda m: f"{_FLAGS[m.group(1)]} {m.group(3)}".rstrip(),
            text,
        )
        bare = "|".join(name for name in _FLAGS if "_" in name)  # never a plain English word
        text = re.sub(r"(?<![-\w'])(" + bare + r")\b", lambda m: _FLAGS[m.group(1)], text)
        raise CliError(text) from None
