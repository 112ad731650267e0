"""The mixed-key flags of the command line refuse what they cannot honour: a column outside
``--columns``, a column given twice, a weight too large; ``--ordinal`` levels holding '<'
are written ``\\<``; candidates on a categorical key say so."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from microagg._mixed.flags import parse_ordinal


def run(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "microagg", *args], cwd=cwd, capture_output=True, text=True, timeout=300)


@pytest.fixture()
def folder(tmp_path: Path) -> Path:
    rng = np.random.default_rng(4)
    n = 60
    pd.DataFrame({
        "age": rng.integers(18, 90, n),
        "hours": rng.integers(10, 60, n),
        "sex": rng.choice(["f", "m"], n),
        "band": rng.choice(["<18", "18-65", ">65"], n),
    }).to_csv(tmp_path / "in.csv", index=False)
    return tmp_path


def anonymize(folder: Path, *flags: str) -> subprocess.CompletedProcess[str]:
    return run("anonymize", "in.csv", "-k", "3", "-o", "out.csv", *flags, cwd=folder)


@pytest.mark.parametrize("flag", [["--categorical", "sex"], ["--ordinal", "sex=f<m"]])
def test_a_categorical_flag_outside_columns_is_refused(folder: Path, flag: list[str]) -> None:
    proc = anonymize(folder, "--columns", "age,hours", *flag)
    assert proc.returncode != 0
    assert f"column 'sex' is in {flag[0]} but not in --columns" in proc.stderr
    assert not (folder / "out.csv").exists()


def test_a_column_given_twice_is_refused(folder: Path) -> None:
    proc = anonymize(folder, "--columns", "age,sex", "--ordinal", "sex=f<m", "--ordinal", "sex=m<f")
    assert proc.returncode != 0 and "--ordinal names column 'sex' twice" in proc.stderr
    proc = anonymize(folder, "--columns", "age,sex", "--attribute-weight", "sex=2", "--attribute-weight", "sex=3")
    assert proc.returncode != 0 and "--attribute-weight names column 'sex' twice" in proc.stderr


def test_a_huge_attribute_weight_is_called_too_large(folder: Path) -> None:
    proc = anonymize(folder, "--columns", "age,sex", "--attribute-weight", "sex=1e308")
    assert proc.returncode != 0
    assert "the weight is too large" in proc.stderr and "standardize" not in proc.stderr


def test_levels_holding_a_less_than_sign_are_escaped(folder: Path) -> None:
    assert parse_ordinal(r"band=\<18<18-65<>65") == ("band", ["<18", "18-65", ">65"])
    assert parse_ordinal(r"x=a\\<b") == ("x", ["a\\", "b"])
    with pytest.raises(ValueError, match="trailing backslash"):
        parse_ordinal("x=a<b\\")
    proc = anonymize(folder, "--columns", "age,band", "--ordinal", r"band=\<18<18-65<>65")
    assert proc.returncode == 0, proc.stderr
    released = pd.read_csv(folder / "out.csv")
    assert set(released["band"]) <= {"<18", "18-65", ">65"}
    assert released.groupby(["age", "band"]).size().min() >= 3


def test_candidates_on_a_categorical_key_say_so(folder: Path) -> None:
    for flags in (["--columns", "age,sex", "--categorical", "sex"], ["--columns", "age,sex"]):
        proc = run("assess", "in.csv", "-k", "2", "3", *flags, cwd=folder)
        assert proc.returncode != 0
        assert "numeric keys only, and 'sex' is categorical" in proc.stderr
        assert "is not numeric" not in proc.stderr
