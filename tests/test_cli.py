"""The command-line tool, run as a subprocess on temporary CSV files."""

from __future__ import annotations

import csv
import subprocess
import sys
from pathlib import Path

import numpy as np

import microagg as ma


def run(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "microagg", *args], cwd=cwd, capture_output=True, text=True, timeout=300)


def write_csv(path: Path, n: int = 40) -> None:
    rng = np.random.default_rng(11)
    with open(path, "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["id", "age", "income", "city"])
        for i in range(n):
            w.writerow([f"r{i}", int(rng.integers(18, 90)), round(float(rng.normal(3e4, 1e4)), 2), "a,b" if i % 2 else "c"])


def read_csv(path: Path) -> list[list[str]]:
    with open(path, newline="") as f:
        return list(csv.reader(f))


def test_anonymize_rewrites_chosen_columns(tmp_path: Path) -> None:
    src = tmp_path / "in.csv"
    write_csv(src)
    before = src.read_bytes()
    r = run("anonymize", str(src), "-k", "4", "--columns", "age,income", "-o", "out.csv", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert "information loss" in r.stdout
    assert src.read_bytes() == before
    rows_in, rows_out = read_csv(src), read_csv(tmp_path / "out.csv")
    assert rows_out[0] == rows_in[0] and len(rows_out) == len(rows_in)
    assert [r[0] for r in rows_out] == [r[0] for r in rows_in]
    assert [r[3] for r in rows_out] == [r[3] for r in rows_in]
    released = np.array([[float(r[1]), float(r[2])] for r in rows_out[1:]])
    assert ma.is_k_anonymous(released, 4)
    original = np.array([[float(r[1]), float(r[2])] for r in rows_in[1:]])
    np.testing.assert_allclose(released, ma.microaggregate(original, 4).aggregated)


def test_default_columns_and_output_name(tmp_path: Path) -> None:
    src = tmp_path / "data.csv"
    write_csv(src)
    r = run("anonymize", "data.csv", "-k", "5", "--jobs", "-1", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert "columns age, income" in r.stdout
    assert (tmp_path / "data_k5.csv").exists()


def test_errors_are_one_line_and_leave_no_file(tmp_path: Path) -> None:
    src = tmp_path / "in.csv"
    write_csv(src, n=10)
    cases = {
        ("anonymize", "missing.csv", "-k", "3"): "input file not found",
        ("anonymize", "in.csv", "-k", "3", "--columns", "age,nope"): "unknown column 'nope'",
        ("anonymize", "in.csv", "-k", "3", "--weights", "city"): "--weights: column 'city' is not numeric",
        ("anonymize", "in.csv", "-k", "30", "-o", "o.csv"): "k must be between 2 and the number of records",
        ("anonymize", "in.csv", "-k", "3", "-o", "in.csv"): "the output file is the input file",
        ("anonymize", "in.csv", "-k", "3", "--param", "gamma=1"): "unknown parameter 'gamma'",
    }
    for args, message in cases.items():
        r = run(*args, cwd=tmp_path)
        assert r.returncode == 2, args
        assert message in r.stderr, (args, r.stderr)
        assert len(r.stderr.strip().splitlines()) == 1, r.stderr
        assert "Traceback" not in r.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == ["in.csv"]


def test_demo_and_methods(tmp_path: Path) -> None:
    r = run("demo", "-k", "3", "5", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    assert "census" in lines[0]
    il = {int(line.split()[0]): float(line.split()[1]) for line in lines[2:]}
    assert round(il[3], 2) == 5.69 and round(il[5], 2) == 9.09
    r = run("methods", cwd=tmp_path)
    assert r.returncode == 0 and "mdav" in r.stdout.split()
