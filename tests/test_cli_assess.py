"""``microagg assess`` end to end, and the R-U map."""

from __future__ import annotations

import csv
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import microagg as ma


def run(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "microagg", *args], cwd=cwd, capture_output=True, text=True, timeout=300)


def write_data(path: Path, n: int = 120) -> np.ndarray:
    rng = np.random.default_rng(4)
    X = np.column_stack([rng.integers(18, 90, n), rng.normal(3e4, 1e4, n).round(2)])
    with open(path, "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["id", "age", "income", "region"])
        for i, (age, income) in enumerate(X):
            w.writerow([f"r{i}", int(age), income, "north" if i % 3 else "south"])
    return X


def test_assess_runs_every_method_and_k(tmp_path: Path) -> None:
    X = write_data(tmp_path / "in.csv")
    r = run("assess", "in.csv", "-k", "2", "5", "--method", "mdav", "ona-star", "--by", "region",
            "--plot", "ru.png", "-o", "table.csv", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert "[4/4] ona-star k=5" in r.stderr and "120 records x 2 attributes (age, income)" in r.stderr
    lines = r.stdout.strip().splitlines()
    assert lines[0].split()[:3] == ["method", "k", "IL(num)"] and len(lines) == 5
    with open(tmp_path / "table.csv", newline="") as f:
        table = list(csv.DictReader(f))
    assert [(t["method"], t["k"]) for t in table] == [("mdav", "2"), ("mdav", "5"), ("ona-star", "2"), ("ona-star", "5")]
    region = np.array(["north" if i % 3 else "south" for i in range(len(X))])
    for t in table:
        res = ma.microaggregate(X, int(t["k"]), t["method"], by=region)  # --by: groups within strata
        a = ma.assess(X, res.aggregated, by=region)
        assert float(t["information_loss"]) == pytest.approx(res.information_loss, rel=1e-9)
        assert float(t["record_linkage_rate"]) == pytest.approx(a.record_linkage.rate, rel=1e-12)
        assert float(t["interval_disclosure"]) == a.interval_disclosure
        assert int(t["min_group_size"]) == a.min_group_size <= int(t["k"]) * 2
    png = (tmp_path / "ru.png").read_bytes()
    assert png[:8] == b"\x89PNG\r\n\x1a\n" and len(png) > 10_000


def test_assess_errors_are_one_line(tmp_path: Path) -> None:
    write_data(tmp_path / "in.csv")
    r = run("assess", "in.csv", "--by", "nope", cwd=tmp_path)
    assert r.returncode == 2 and "--by: unknown column 'nope'" in r.stderr
    r = run("assess", "in.csv", "-k", "500", cwd=tmp_path)
    assert r.returncode == 2 and "every k must be between 2" in r.stderr
    r = run("assess", "in.csv", "-k", "1", cwd=tmp_path)
    assert r.returncode == 2 and "every k must be between 2" in r.stderr
    r = run("assess", "in.csv", "--columns", "region", cwd=tmp_path)
    assert r.returncode == 2 and "numeric keys only, and 'region' is categorical" in r.stderr


def test_ru_map_draws_one_labelled_point_per_release(tmp_path: Path) -> None:
    pytest.importorskip("matplotlib")
    X = ma.datasets.load_census()
    rows = []
    for method in ("mdav", "mondrian-v"):
        for k in (2, 5, 10):
            rows.append({"method": method, "k": k, **ma.assess(X, ma.microaggregate(X, k, method).aggregated).to_dict()})
    fig = ma.plot.ru_map(rows, risk="interval_disclosure", path=str(tmp_path / "m.png"))
    ax = fig.axes[0]
    assert [line.get_label() for line in ax.get_lines()] == ["mdav", "mondrian-v"]
    assert sorted(t.get_text() for t in ax.texts) == sorted(["2", "5", "10"] * 2)
    xs = ax.get_lines()[0].get_xdata()
    assert list(xs) == sorted(100 * r["information_loss"] for r in rows if r["method"] == "mdav")
    assert "information loss" in ax.get_xlabel() and "interval disclosure" in ax.get_ylabel()
    with pytest.raises(ValueError, match="needs the key 'k'"):
        ma.plot.ru_map([{"method": "x"}])


def write_release(path: Path, original: Path, values: np.ndarray, region: list[str] | None = None) -> None:
    rows = list(csv.reader(open(original, newline="")))
    with open(path, "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(rows[0])
        for i, r in enumerate(rows[1:]):
            age, income = ("" if np.isnan(v) else repr(float(v)) for v in values[i])
            w.writerow([r[0], age, income, region[i] if region else r[3]])


def test_assess_scores_an_existing_release(tmp_path: Path) -> None:
    X = write_data(tmp_path / "in.csv")
    region = ["north" if i % 3 else "south" for i in range(len(X))]
    res = ma.microaggregate(X, 4, "mdav", by=np.array(region))
    write_release(tmp_path / "rel.csv", tmp_path / "in.csv", res.aggregated)
    r = run("assess", "in.csv", "rel.csv", "--by", "region", "-k", "4", "-o", "score.csv", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert "k requested 4, achieved" in r.stdout and "meets it" in r.stdout
    (row,) = list(csv.DictReader(open(tmp_path / "score.csv", newline="")))
    a = ma.assess(X, res.aggregated, by=np.array(region))
    assert float(row["information_loss"]) == pytest.approx(a.information_loss, rel=1e-12)
    assert float(row["il1s"]) == pytest.approx(a.il1s, rel=1e-12)
    assert float(row["record_linkage_rate"]) == pytest.approx(a.record_linkage.rate, rel=1e-12)
    assert int(row["min_group_size"]) == a.min_group_size >= 4 and row["meets_k"] == "True"
    assert (row["original"], row["released"]) == ("in.csv", "rel.csv")
    # the original itself released: every record unique, the request missed (exit 1)
    r = run("assess", "in.csv", "in.csv", "-k", "2", cwd=tmp_path)
    assert r.returncode == 1 and "MISSES" in r.stdout, r.stderr
    # weights and Parquet output
    with open(tmp_path / "in.csv", newline="") as f:
        rows = list(csv.reader(f))
    rows[0].append("w")
    for i, row_ in enumerate(rows[1:]):
        row_.append(str(1 + i % 5))
    with open(tmp_path / "inw.csv", "w", newline="") as f:
        csv.writer(f).writerows(rows)
    r = run("assess", "inw.csv", "rel.csv", "--weights", "w", "-o", "score.parquet", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    pq = pytest.importorskip("pyarrow.parquet")
    got = pq.read_table(tmp_path / "score.parquet").to_pylist()[0]
    w = np.array([1 + i % 5 for i in range(len(X))], dtype=float)
    assert float(got["information_loss"]) == pytest.approx(ma.assess(X, res.aggregated, weights=w).information_loss)


def test_assess_scores_a_release_with_kept_missing_cells(tmp_path: Path) -> None:
    X = write_data(tmp_path / "in.csv")
    released = ma.microaggregate(X, 3).aggregated.copy()
    released[::7, 0] = np.nan
    write_release(tmp_path / "rel.csv", tmp_path / "in.csv", released)
    r = run("assess", "in.csv", "rel.csv", "-o", "s.csv", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    (row,) = list(csv.DictReader(open(tmp_path / "s.csv", newline="")))
    assert float(row["il1s"]) == pytest.approx(ma.utility.il1s(X, released), rel=1e-12)


def test_assess_release_errors(tmp_path: Path) -> None:
    X = write_data(tmp_path / "in.csv")
    write_release(tmp_path / "short.csv", tmp_path / "in.csv", ma.microaggregate(X, 3).aggregated)
    lines = (tmp_path / "short.csv").read_text().splitlines()
    (tmp_path / "short.csv").write_text("\n".join(lines[:-1]) + "\n")
    for args, message in [
        (("in.csv", "short.csv"), "short.csv has 119 rows and in.csv 120"),
        (("in.csv", "in.csv", "--method", "mdav"), "--method compares candidates"),
        (("in.csv", "in.csv", "-k", "2", "3"), "one k"),
        (("in.csv", "in.csv", "-o", "in.csv"), "the output file is the input file"),
    ]:
        r = run("assess", *args, cwd=tmp_path)
        assert r.returncode == 2 and message in r.stderr, (args, r.stderr)
        assert len(r.stderr.strip().splitlines()) <= 2
