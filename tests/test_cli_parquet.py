"""The command-line tool on Parquet files (pyarrow), and converting to and from CSV."""

from __future__ import annotations

import csv
import datetime
import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from conftest import optional

import microagg as ma

N = 30


def run(*args: str, cwd: Path, block_pyarrow: bool = False) -> subprocess.CompletedProcess[str]:
    prelude = "import sys; sys.modules['pyarrow'] = None; " if block_pyarrow else "import sys; "
    code = prelude + "from microagg.cli import main; sys.exit(main(sys.argv[1:]))"
    return subprocess.run([sys.executable, "-c", code, *args], cwd=cwd, capture_output=True, text=True, timeout=300)


@pytest.fixture()
def people(tmp_path: Path) -> Any:
    """A Parquet file with an id, two numeric quasi-identifiers, a date and a nullable string."""
    pa = optional("pyarrow")
    import pyarrow.parquet as pq

    rng = np.random.default_rng(4)
    table = pa.table(
        {
            "id": pa.array(np.arange(N, dtype=np.int32)),
            "age": pa.array(rng.integers(18, 90, N)),
            "income": pa.array(rng.normal(3e4, 1e4, N)),
            "born": pa.array([datetime.date(1950 + i, 1, 1) for i in range(N)]),
            "city": pa.array([None if i % 7 == 0 else f"c{i % 3}" for i in range(N)]),
        }
    )
    pq.write_table(table, tmp_path / "people.parquet")
    return table


def _released(table: Any) -> np.ndarray:
    return np.column_stack([table.column(c).to_numpy() for c in ("age", "income")])


def test_parquet_in_parquet_out(tmp_path: Path, people: Any) -> None:
    import pyarrow.parquet as pq

    r = run("anonymize", "people.parquet", "-k", "4", "--columns", "age,income", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    out = pq.read_table(tmp_path / "people_k4.parquet")  # default name keeps the suffix
    assert out.column_names == people.column_names
    for name in ("id", "born", "city"):  # untouched, types included
        assert out.column(name).equals(people.column(name)), name
    assert str(out.schema.field("age").type) == "double"
    released = _released(out)
    assert ma.is_k_anonymous(released, 4)
    np.testing.assert_array_equal(released, ma.microaggregate(_released(people), 4).aggregated)


def test_parquet_to_csv_and_back(tmp_path: Path, people: Any) -> None:
    import pyarrow.parquet as pq

    r = run("anonymize", "people.parquet", "-k", "5", "-o", "out.csv", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert "columns id, age, income" in r.stdout  # default: every numeric column
    with open(tmp_path / "out.csv", newline="") as f:
        rows = list(csv.reader(f))
    assert rows[0] == people.column_names and len(rows) == N + 1
    assert [r[3] for r in rows[1:]] == [str(d) for d in people.column("born").to_pylist()]
    assert rows[1][4] == ""  # a null string is an empty field
    r = run("anonymize", "out.csv", "-k", "5", "--columns", "age,income", "-o", "back.parquet", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    back = pq.read_table(tmp_path / "back.parquet")
    assert str(back.schema.field("id").type) == "double"  # microaggregated in the first run
    assert back.column("born").to_pylist() == [str(d) for d in people.column("born").to_pylist()]
    assert ma.is_k_anonymous(_released(back), 5)


def test_parquet_errors_are_one_line(tmp_path: Path, people: Any) -> None:
    r = run("anonymize", "people.parquet", "-k", "3", "--weights", "city", cwd=tmp_path)
    assert r.returncode == 2
    assert r.stderr.strip() == "microagg: error: --weights: column 'city' is not numeric"
    r = run("anonymize", "people.parquet", "-k", "3", "--columns", "age,city", cwd=tmp_path)  # city: a category
    assert r.returncode == 2
    assert r.stderr.strip() == "microagg: error: missing cells in the key: city (5); pass --missing fill or --missing keep"
    (tmp_path / "broken.parquet").write_bytes(b"not a parquet file")
    r = run("anonymize", "broken.parquet", "-k", "3", cwd=tmp_path)
    assert r.returncode == 2 and r.stderr.startswith("microagg: error: cannot read broken.parquet")
    assert len(r.stderr.strip().splitlines()) == 1
    assert not (tmp_path / "broken_k3.parquet").exists()


def test_parquet_without_pyarrow_says_what_to_install(tmp_path: Path) -> None:
    (tmp_path / "in.csv").write_text("a,b\n1,2\n3,4\n5,6\n")
    r = run("anonymize", "in.csv", "-k", "2", "-o", "out.parquet", cwd=tmp_path, block_pyarrow=True)
    assert r.returncode == 2
    assert r.stderr.strip() == (
        "microagg: error: out.parquet: Parquet files need pyarrow: pip install pyarrow (or microagg[arrow])"
    )
    assert not (tmp_path / "out.parquet").exists()
    r = run("anonymize", "in.csv", "-k", "2", "-o", "out.csv", cwd=tmp_path, block_pyarrow=True)
    assert r.returncode == 0, r.stderr  # CSV never needs pyarrow
