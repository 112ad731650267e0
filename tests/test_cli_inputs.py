"""How the command line reads its input files: duplicate column names refused by name, text
encodings (a line that is not UTF-8 named, ``--encoding``), line ends kept."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from conftest import optional


def run(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "microagg", *args], cwd=cwd, capture_output=True, text=True, timeout=300)


ROWS = [(20 + i % 7, 30 + i % 5, ["Köln", "Bonn"][i % 2]) for i in range(20)]


def test_duplicate_csv_header_is_refused(tmp_path: Path) -> None:
    (tmp_path / "in.csv").write_text("age,age,city\n" + "".join(f"{a},{b},{c}\n" for a, b, c in ROWS))
    proc = run("anonymize", "in.csv", "-k", "2", "--columns", "age", "-o", "out.csv", cwd=tmp_path)
    assert proc.returncode != 0
    assert "duplicate column names: 'age' (2 times)" in proc.stderr
    assert not (tmp_path / "out.csv").exists()


def test_duplicate_parquet_columns_are_refused(tmp_path: Path) -> None:
    pa, pq = optional("pyarrow"), optional("pyarrow.parquet")
    pq.write_table(pa.table([[a for a, _, _ in ROWS], [b for _, b, _ in ROWS]], names=["x", "x"]), tmp_path / "in.parquet")
    proc = run("anonymize", "in.parquet", "-k", "2", "-o", "out.parquet", cwd=tmp_path)
    assert proc.returncode != 0 and "duplicate column names: 'x' (2 times)" in proc.stderr


def test_latin1_file_names_the_line_and_the_encoding_flag(tmp_path: Path) -> None:
    text = "age,hours,city\n" + "".join(f"{a},{b},{c}\n" for a, b, c in ROWS)
    (tmp_path / "in.csv").write_bytes(text.encode("latin-1"))
    proc = run("anonymize", "in.csv", "-k", "2", "--columns", "age,hours", "-o", "out.csv", cwd=tmp_path)
    assert proc.returncode != 0
    assert "line 2" in proc.stderr and "--encoding" in proc.stderr
    proc = run("anonymize", "in.csv", "-k", "2", "--columns", "age,hours", "-o", "out.csv", "--encoding", "latin-1",
               cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert "Köln" in (tmp_path / "out.csv").read_text(encoding="utf-8")


@pytest.mark.parametrize("end", ["\r\n", "\n"])
def test_line_ends_are_kept(tmp_path: Path, end: str) -> None:
    text = "age,hours,city" + end + "".join(f"{a},{b},{c}{end}" for a, b, c in ROWS)
    (tmp_path / "in.csv").write_bytes(text.encode())
    proc = run("anonymize", "in.csv", "-k", "2", "--columns", "age,hours", "-o", "out.csv", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    out = (tmp_path / "out.csv").read_bytes()
    assert out.count(end.encode()) == len(ROWS) + 1
    if end == "\n":
        assert b"\r" not in out
