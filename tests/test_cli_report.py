"""The release report from the command line: ``anonymize --report`` (with every parameter of
the run) and ``report ORIGINAL RELEASED``, under the CLI's output rules."""

from __future__ import annotations

import csv
import hashlib
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from report_checks import SECTIONS, parse, resolve

import microagg as ma


def run(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "microagg", *args], cwd=cwd, capture_output=True, text=True, timeout=300)


def survey(path: Path, n: int = 60) -> np.ndarray:
    rng = np.random.default_rng(8)
    X = np.column_stack([rng.integers(18, 90, n), rng.normal(3e4, 1e4, n).round(3)])
    X[5, 1] = 123456.789  # a distinctive value that must never reach the report
    with open(path, "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["id", "age", "income", "region", "w"])
        for i, (age, income) in enumerate(X):
            w.writerow([f"r{i}", int(age), income, "north" if i % 4 else "south", 1 + i % 3])
    return X


def sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def test_anonymize_writes_the_report_of_its_run(tmp_path: Path) -> None:
    X = survey(tmp_path / "in.csv")
    r = run("anonymize", "in.csv", "-k", "4", "--columns", "age,income", "--by", "region", "--weights", "w",
            "--aggregation", "median", "-o", "out.csv", "--report", "report.html", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    html = (tmp_path / "report.html").read_text(encoding="utf-8")
    cells = parse(html)
    assert [s for s in SECTIONS if s in cells.sections] == list(cells.sections) == list(SECTIONS[:4])
    for digest in (sha256(tmp_path / "in.csv"), sha256(tmp_path / "out.csv")):
        assert digest in html
    for text in ("median", "region", "MEETS"):
        assert text in html
    assert "123456.789" not in html and "123457" not in html
    region = np.array(["north" if i % 4 else "south" for i in range(len(X))])
    w = np.array([1 + i % 3 for i in range(len(X))], dtype=float)
    released = np.array([[float(v) for v in row[1:3]] for row in list(csv.reader(open(tmp_path / "out.csv")))[1:]])
    want = ma.assess(X, released, by=region, weights=w, k=4, columns=["age", "income"]).to_dict()
    for key, value, _ in cells.cells:
        if key.startswith(("information_loss", "il1s", "min_group_size", "record_linkage_rate")):
            assert float(value or "nan") == pytest.approx(resolve(key, want), rel=1e-12), key


def test_report_scores_a_release_and_keeps_the_rules(tmp_path: Path) -> None:
    survey(tmp_path / "in.csv")
    r = run("report", "in.csv", "in.csv", "-k", "3", "--columns", "age,income", "-o", "self.html", cwd=tmp_path)
    assert r.returncode == 1, r.stderr  # the report is written, and the status says k is missed, as assess's
    html = (tmp_path / "self.html").read_text(encoding="utf-8")
    assert "MISSES" in html and "k requested 3, achieved 1" in r.stderr
    r = run("report", "in.csv", "in.csv", "-k", "3", "-o", "self.html", cwd=tmp_path)
    assert r.returncode == 2 and "--overwrite" in r.stderr
    assert (tmp_path / "self.html").read_text(encoding="utf-8") == html
    r = run("report", "in.csv", "in.csv", "-o", "in.csv", "--overwrite", cwd=tmp_path)
    assert r.returncode == 2 and "the output file is the input file" in r.stderr
    r = run("anonymize", "in.csv", "-k", "3", "-o", "out.csv", "--report", "out.csv", cwd=tmp_path)
    assert r.returncode == 2 and "same file" in r.stderr and not (tmp_path / "out.csv").exists()
