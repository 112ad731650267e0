"""Shared fixtures: the reference figures and data sets in ../shared (beside the repo)."""

from __future__ import annotations

import csv
import os
from pathlib import Path

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


def gaussian(n: int, d: int, seed: int = 0) -> np.ndarray:
    """Continuous data: distance ties have probability zero."""
    return np.random.default_rng(seed).normal(size=(n, d))
