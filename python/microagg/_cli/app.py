"""``microagg app``: the local web app (:mod:`microagg.app`, the optional extra ``app``),
imported only when the command runs so that the rest of the command line never needs it."""

from __future__ import annotations

import argparse
import os
from typing import Any

from .common import CliError


def add_parser(sub: Any) -> None:
    """Registers the ``app`` subcommand on the CLI's subparsers."""
    a = sub.add_parser("app", help="open the web app in the browser (needs: pip install 'microagg[app]')")
    a.add_argument("input", nargs="?", help="a CSV or Parquet file to open (or upload one in the page)")
    a.add_argument("--port", type=int, default=None, help="TCP port (default: a free one)")
    a.add_argument("--host", default="127.0.0.1",
                   help="address to listen on (default 127.0.0.1: this machine only; another prints a warning)")
    a.add_argument("--no-browser", action="store_true", help="do not open the browser")
    a.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Serves the app until interrupted."""
    if args.input is not None and not os.path.isfile(args.input):
        raise CliError(f"input file not found: {args.input}")
    try:
        from ..app.server import serve
    except ImportError as exc:
        raise CliError(f"the app needs its extra: pip install 'microagg[app]' ({exc})") from None
    serve(args.input, port=args.port, host=args.host, browser=not args.no_browser)
    return 0
