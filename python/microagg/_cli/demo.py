"""``microagg demo``: a method on a bundled data set for several k, with the information loss
and time of each run."""

from __future__ import annotations

import argparse
import time
from typing import Any, Callable

from .. import datasets
from .._api import METHODS, microaggregate

_DATASETS: dict[str, Callable[[], Any]] = {
    "census": datasets.load_census,
    "tarragona": datasets.load_tarragona,
    "eia": datasets.load_eia,
}


def add_parser(sub: Any) -> None:
    """Registers the ``demo`` subcommand on the CLI's subparsers."""
    d = sub.add_parser("demo", help="run a method on a bundled data set for several k")
    d.add_argument("--dataset", choices=sorted(_DATASETS), default="census")
    d.add_argument("--method", choices=METHODS, default="mdav")
    d.add_argument("-k", type=int, nargs="+", default=list(range(2, 11)), help="k values (default 2..10)")
    d.add_argument("--jobs", type=int, default=1, help="threads: 1 (default), -1 = all cores")
    d.add_argument("--dtype", choices=["float32", "float64"], default=None)
    d.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Prints one line per k."""
    X = _DATASETS[args.dataset]()
    print(f"{args.method} on the bundled {args.dataset} data ({X.shape[0]} records x {X.shape[1]} attributes)")
    print(f"{'k':>3}  {'IL (%)':>8}  {'groups':>6}  {'time (ms)':>9}")
    for k in args.k:
        t0 = time.perf_counter()
        res = microaggregate(X, k, args.method, n_jobs=args.jobs, dtype=args.dtype)
        ms = 1000 * (time.perf_counter() - t0)
        print(f"{k:>3}  {100 * res.information_loss:8.4f}  {res.n_groups:6d}  {ms:9.2f}")
    return 0
