"""The package is typed: mypy --strict accepts a script that uses the public API."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

SCRIPT = '''
import numpy as np
import microagg as ma

X = np.random.default_rng(0).normal(size=(100, 3))
res: ma.MicroaggregationResult = ma.microaggregate(X, k=5, method="mdav", n_jobs=-1)
labels: np.ndarray = res.labels
il: float = res.information_loss + ma.information_loss(X, labels) + ma.sse(X, labels)
ok: bool = ma.is_k_anonymous(res.aggregated, 5)
est = ma.MicroAggregator(k=3).fit(X)
Xt = est.fit_transform(X)
names: tuple[str, ...] = ma.METHODS
p = ma.Progress()
n: int = p.assigned
inc = ma.IncrementalMicroaggregator(k=5, strategy="nn").fit(X[:80]).extend(X[80:])
sizes: np.ndarray = inc.group_sizes_
ratio: float = ma.incremental.plan(5.0, deadline=0.5).optimal_ratio
'''


def test_mypy_strict_accepts_api_usage(tmp_path: Path) -> None:
    if shutil.which("mypy") is None and subprocess.run([sys.executable, "-m", "mypy", "--version"], capture_output=True).returncode:
        pytest.skip("mypy is not installed")
    script = tmp_path / "use_api.py"
    script.write_text(SCRIPT)
    r = subprocess.run(
        [sys.executable, "-m", "mypy", "--strict", "--no-incremental", str(script)],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        timeout=300,
    )
    assert r.returncode == 0, r.stdout + r.stderr


def test_mypy_strict_accepts_the_package_source() -> None:
    if subprocess.run([sys.executable, "-m", "mypy", "--version"], capture_output=True).returncode:
        pytest.skip("mypy is not installed")
    root = Path(__file__).resolve().parents[1]
    r = subprocess.run(
        [sys.executable, "-m", "mypy", "--config-file", str(root / "pyproject.toml"), "--no-incremental",
         str(root / "python" / "microagg")],
        capture_output=True,
        text=True,
        cwd=root,
        timeout=300,
    )
    assert r.returncode == 0, r.stdout + r.stderr
