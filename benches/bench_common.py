"""Shared helpers of the benchmark scripts: data sets, published figures, timing, output."""

from __future__ import annotations

import csv
import os
import time
from pathlib import Path
from typing import Any, Callable

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")  # keep NumPy's BLAS threads off the cores

import numpy as np

import microagg as ma

SHARED = Path(os.environ.get("MICROAGG_SHARED", Path(__file__).resolve().parents[2] / "shared"))
OUT = Path(__file__).resolve().parents[1] / "bench-results"


def load(name: str) -> np.ndarray:
    """census, tarragona, eia (bundled) or adult (3 attributes, from ../shared)."""
    if name == "adult":
        with open(SHARED / "datasets" / "adult.csv", newline="") as f:
            rows = list(csv.reader(f))
        cols = [rows[0].index(c) for c in ("age", "education-num", "hours-per-week")]
        return np.array([[float(r[c]) for c in cols] for r in rows[1:]])
    loader: Callable[[], np.ndarray] = getattr(ma.datasets, f"load_{name}")
    return loader()


def published(paper: str = "scalable") -> dict[tuple[str, str, int], str]:
    """{(dataset, method, k): printed IL %} from one paper's tables in published_il.csv
    (``"scalable"``: ona-mona Tables 1 and 6; ``"data-oriented"``: mhm Table 5)."""
    with open(SHARED / "reference" / "published_il.csv", newline="") as f:
        return {
            (r["dataset"], r["method"], int(r["k"])): r["il_percent"]
            for r in csv.DictReader(f)
            if r["paper"].startswith(paper)
        }


def timed(fn: Callable[[], Any], repeat: int = 1) -> tuple[float, Any]:
    """Best wall time of `repeat` calls, and the last result."""
    best, out = float("inf"), None
    for _ in range(repeat):
        t0 = time.perf_counter()
        out = fn()
        best = min(best, time.perf_counter() - t0)
    return best, out


def write(name: str, lines: list[str]) -> Path:
    """Writes bench-results/<name> and returns its path."""
    OUT.mkdir(exist_ok=True)
    path = OUT / name
    path.write_text("\n".join(lines) + "\n")
    print(f"wrote {path}")
    return path


def pyplot() -> Any:
    """matplotlib's pyplot on the Agg backend (files, no display), or None with a note when
    matplotlib is not installed (the tables are written anyway)."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("matplotlib not installed: no PNG")
        return None
    return plt
