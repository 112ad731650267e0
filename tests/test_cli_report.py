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
from report_checks import SECTIONS, check_small_cells, parse, resolve

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


ADULT = Path(__file__).resolve().parents[1] / ".." / "shared" / "datasets" / "adult.csv"
KEY = "age,hours-per-week,workclass,education,occupation,sex"


@pytest.fixture(scope="module")
def adult(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Adult's first 2 000 records: 123 '?' in each of workclass and occupation, and rare
    levels (Without-pay: 1 record, Preschool: 2, Armed-Forces: 2)."""
    if not ADULT.exists():
        pytest.skip(f"{ADULT} is not here")
    folder = tmp_path_factory.mktemp("adult")
    with open(ADULT, encoding="utf-8") as f:
        (folder / "adult.csv").write_text("".join(next(f) for _ in range(2001)), encoding="utf-8")
    return folder


def test_anonymize_reports_the_whole_key_its_missing_cells_and_t_closeness(adult: Path) -> None:
    r = run("anonymize", "adult.csv", "-k", "5", "--columns", KEY, "--na-values", "?", "--missing", "keep",
            "--sensitive", "income", "--t", "0.3", "-o", "out.csv", "--report", "r.html", "--overwrite", cwd=adult)
    assert r.returncode == 0, r.stderr
    assert "information loss on the key's embedding" in r.stdout and "numeric information loss" in r.stdout
    html = (adult / "r.html").read_text(encoding="utf-8")
    assert "2,000 records, 6 key attributes (numeric: age, hours-per-week; nominal: workclass, education, " \
           "occupation, sex)" in html
    assert "<th scope=\"row\">key attributes</th><td class=\"num\">6</td>" in html
    assert "Missing cells: 246 in the original, 246 in the release" in html  # --missing keep leaves them
    assert 'id="t-closeness"' in html and "MEETS t = 0.3" in html
    assert "information loss on the key&#x27;s embedding (the run&#x27;s)" in html
    for level in ("Without-pay", "Preschool", "Armed-Forces"):
        assert level not in html
    check_small_cells(html, 5)


def test_report_takes_the_roles_anonymize_takes_and_exits_1_when_t_is_missed(adult: Path) -> None:
    r = run("anonymize", "adult.csv", "-k", "5", "--columns", KEY, "--na-values", "?", "--missing", "fill",
            "--sensitive", "income", "--t", "0.3", "-o", "filled.csv", "--overwrite", cwd=adult)
    assert r.returncode == 0, r.stderr
    common = ("report", "adult.csv", "filled.csv", "-k", "5", "--columns", KEY, "--na-values", "?", "--overwrite")
    r = run(*common, "--missing", "fill", "--sensitive", "income", "--t", "0.3", "-o", "met.html", cwd=adult)
    assert r.returncode == 0, r.stderr
    html = (adult / "met.html").read_text(encoding="utf-8")
    assert "MEETS t = 0.3" in html and "Missing cells: 246 in the original, 0 in the release" in html
    check_small_cells(html, 5)
    r = run(*common, "--missing", "fill", "--sensitive", "income", "--t", "0.01", "-o", "missed.html", cwd=adult)
    assert r.returncode == 1, r.stderr
    assert "MISSES t = 0.01" in (adult / "missed.html").read_text(encoding="utf-8")
    r = run(*common, "--missing", "fill", "--ordinal", "sex=Female<Male", "-o", "ordinal.html", cwd=adult)
    assert r.returncode == 0, r.stderr
    html = (adult / "ordinal.html").read_text(encoding="utf-8")
    assert '<th scope="row">sex</th><td>ordinal</td>' in html and "ordinal: sex" in html
    r = run(*common, "--missing", "fill", "--ordinal", "sex=Female", "-o", "bad.html", cwd=adult)
    assert r.returncode == 2 and "column 'sex' has the value 'Male', which is not one of its levels" in r.stderr
    # missing categorical cells follow anonymize's rule: --missing fill or keep, else refused
    r = run(*common, "-o", "refused.html", cwd=adult)
    assert r.returncode == 2 and "missing cells in the key: workclass (123), occupation (123)" in r.stderr
    assert not (adult / "refused.html").exists()
    r = run("assess", "adult.csv", "filled.csv", "-k", "5", "--columns", KEY, "--na-values", "?", cwd=adult)
    assert r.returncode == 2 and "missing cells in the key: workclass (123), occupation (123)" in r.stderr
    r = run("assess", "adult.csv", "filled.csv", "-k", "5", "--columns", KEY, "--na-values", "?", "--missing", "keep",
            cwd=adult)
    assert r.returncode == 0 and r.stdout.split()[0] == "IL(num)", r.stderr
    r = run(*common, "--missing", "fill", "--t", "0.3", "-o", "t.html", cwd=adult)
    assert r.returncode == 2 and "--t needs --sensitive" in r.stderr


def test_a_column_with_a_value_per_record_is_flagged(tmp_path: Path) -> None:
    survey(tmp_path / "in.csv")
    r = run("anonymize", "in.csv", "-k", "4", "--columns", "age,income", "--by", "region", "-o", "out.csv",
            "--report", "r.html", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    html = (tmp_path / "r.html").read_text(encoding="utf-8")
    assert "Possible direct identifiers copied as read: id." in html
    r = run("report", "in.csv", "out.csv", "-k", "4", "--columns", "age,income", "--by", "region", "-o", "s.html",
            cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert "Possible direct identifiers copied as read: id." in (tmp_path / "s.html").read_text(encoding="utf-8")
