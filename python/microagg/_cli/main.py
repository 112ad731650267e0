"""The ``microagg`` command-line tool: the parser of every command and the entry point.

Errors are one line on stderr and exit status 2; an input is never overwritten, an existing
output only with ``--overwrite``, and outputs are written atomically (:mod:`.output`).
"""

from __future__ import annotations

import argparse
import sys
from typing import Optional, Sequence

from .. import _core
from .._api import METHODS
from . import anonymize, app, assess, demo, report
from .common import CliError
from .output import OutputError, Terminated, signals_as_exceptions


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="microagg", description="Fast k-anonymous microaggregation.")
    p.add_argument("--version", action="version", version=f"microagg {_core.__version__}")
    sub = p.add_subparsers(dest="command", required=True)
    demo.add_parser(sub)
    anonymize.add_parser(sub)
    assess.add_parser(sub)
    report.add_parser(sub)
    app.add_parser(sub)
    sub.add_parser("methods", help="list the methods").set_defaults(
        func=lambda args: print("\n".join(METHODS)) or 0
    )
    return p


def main(argv: Optional[Sequence[str]] = None) -> int:
    """Entry point of the ``microagg`` console script; returns the exit status. SIGINT,
    SIGTERM and SIGHUP stop it cleanly: no temporary file is left behind."""
    args = _parser().parse_args(argv)
    try:
        with signals_as_exceptions():
            status: int = args.func(args)
        return status
    except (CliError, OutputError, ValueError, TypeError, OverflowError, OSError) as exc:
        print(f"microagg: error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("microagg: interrupted", file=sys.stderr)
        return 130
    except Terminated as exc:
        print(f"microagg: stopped by {exc}", file=sys.stderr)
        return 128 + exc.signum


if __name__ == "__main__":
    raise SystemExit(main())
