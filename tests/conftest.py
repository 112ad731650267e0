"""Shared fixtures: the reference figures and data sets in ../shared (beside the repo)."""

from __future__ import annotations

import csv
import importlib
import os
from pathlib import Path
from typing import Any

import numpy as np
import pytest

SHARED = Path(os.environ.get("MICROAGG_SHARED", Path(__file__).resolve().parents[1].parent / "shared"))


def _shared(path: str) -> Path:
    p = SHARED / path
    if not p.exists():
        if os.environ.get("CI"):
            pytest.fail(f"{p} is missing: CI must run with ../shared beside the repository")
        pytest.skip(f"{p} not available (set MICROAGG_SHARED)")
    return p


@pytest.fixture(scope="session")
def published() -> list[dict[str, str]]:
    """Rows of reference/published_il.csv."""
    with open(_shared("reference/published_il.csv"), newline="") as f:
        return list(csv.DictReader(f))


@pytest.fixture(scope="session")
def sdcmicro_measures() -> list[dict[str, str]]:
    """Rows of reference/sdcmicro_measures.csv: what sdcMicro 5.8.1 prints for MDAV releases."""
    with open(_shared("reference/sdcmicro_measures.csv"), newline="") as f:
        return list(csv.DictReader(f))


@pytest.fixture(scope="session")
def adult() -> np.ndarray:
    """Adult's 3 benchmark attributes (age, education-num, hours-per-week), file order."""
    with open(_shared("datasets/adult.csv"), newline="") as f:
        rows = list(csv.reader(f))
    cols = [rows[0].index(c) for c in ("age", "education-num", "hours-per-week")]
    return np.array([[float(r[c]) for c in cols] for r in rows[1:]])


def published_figures(published: list[dict[str, str]], table: str, dataset: str, method: str) -> dict[int, str]:
    """{k: printed IL in percent} for one table, data set and method."""
    return {
        int(r["k"]): r["il_percent"]
        for r in published
        if r["table"] == table and r["dataset"] == dataset and r["method"] == method
    }


def gaussian(n: int, d: int, seed: int = 0) -> np.ndarray:
    """Continuous data: distance ties have probability zero."""
    return np.random.default_rng(seed).normal(size=(n, d))


def optional(module: str) -> Any:
    """Import an optional dependency of the ``test`` extra: skipped locally when missing,
    a failure in CI (where ``.[test]`` installs it, so its tests must run)."""
    try:
        return importlib.import_module(module)
    except ImportError:
        if os.environ.get("CI"):
            pytest.fail(f"{module} is missing: CI installs the test extra, pip install -e '.[test]'")
        pytest.skip(f"{module} is not installed")


def reference_parts(x: np.ndarray, max_part: int, strata: np.ndarray | None = None) -> list[np.ndarray]:
    """The cuts of docs/scaling.md#partitioned-runs, written directly: global standardization,
    the attribute of largest sum of squared deviations (first within 1e-9), stable sort by
    (value, row), NaN last."""
    mean = np.nanmean(x, axis=0)
    sd = np.nanstd(x, axis=0)
    z = (x - mean) / np.where(sd > 0, sd, 1.0)
    parts: list[np.ndarray] = []

    def cut(ids: np.ndarray) -> None:
        if len(ids) <= max_part:
            parts.append(np.sort(ids))
            return
        sub = z[ids]
        dev = sub - np.nanmean(sub, axis=0)
        scores = np.nansum(dev * dev, axis=0)
        j = int(np.argmax(scores >= scores.max() * (1 - 1e-9)))
        key = np.where(np.isnan(sub[:, j]), np.inf, sub[:, j])
        order = ids[np.lexsort((ids, np.isnan(sub[:, j]), key))]
        half = len(ids) // 2
        cut(order[:half])
        cut(order[half:])

    units = [np.arange(len(x))] if strata is None else [np.flatnonzero(strata == s) for s in np.unique(strata)]
    for ids in units:
        cut(ids)
    return parts
