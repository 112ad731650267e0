"""The command-line tool never loses or silently changes data: inputs are never written over,
existing outputs only with --overwrite, devices are never replaced by files, a failed write
or a signal leaves nothing behind, outputs follow the umask, and a column that is numeric
but for a few codes is an error, not a column silently released raw."""

from __future__ import annotations

import csv
import os
import signal
import stat
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import microagg as ma


def run(*args: str, cwd: Path, umask: int | None = None) -> subprocess.CompletedProcess[str]:
    def set_umask() -> None:
        if umask is not None:
            os.umask(umask)

    return subprocess.run(
        [sys.executable, "-m", "microagg", *args], cwd=cwd, capture_output=True, text=True, timeout=300,
        preexec_fn=set_umask,
    )


def write_rows(path: Path, rows: list[list[object]], delimiter: str = ",", bom: bool = False) -> None:
    with open(path, "w", newline="", encoding="utf-8-sig" if bom else "utf-8") as f:
        csv.writer(f, delimiter=delimiter).writerows(rows)


def people(n: int = 30, seed: int = 3) -> list[list[object]]:
    rng = np.random.default_rng(seed)
    rows: list[list[object]] = [["id", "age", "income", "city"]]
    for i in range(n):
        rows.append([f"r{i}", int(rng.integers(18, 90)), round(float(rng.normal(3e4, 1e4)), 2), "x" if i % 2 else "y"])
    return rows


def leftovers(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir() if p.name.startswith(".microagg-"))


def test_no_command_writes_over_its_input(tmp_path: Path) -> None:
    src = tmp_path / "data.csv"
    write_rows(src, people())
    before = src.read_bytes()
    (tmp_path / "link.csv").symlink_to(src)
    os.link(src, tmp_path / "hard.csv")
    for target in ("data.csv", "./data.csv", str(src), "link.csv", "hard.csv", "../" + tmp_path.name + "/data.csv"):
        for args in (
            ("anonymize", "data.csv", "-k", "3", "-o", target),
            ("anonymize", "data.csv", "-k", "3", "-o", target, "--overwrite"),
            ("assess", "data.csv", "-k", "3", "-o", target, "--overwrite"),
            ("assess", "data.csv", "-k", "3", "--plot", target, "--overwrite"),
        ):
            r = run(*args, cwd=tmp_path)
            assert r.returncode == 2, (args, r.stdout)
            assert "the output file is the input file" in r.stderr, (args, r.stderr)
            assert src.read_bytes() == before
    assert leftovers(tmp_path) == []


def test_existing_output_is_replaced_only_with_overwrite(tmp_path: Path) -> None:
    write_rows(tmp_path / "data.csv", people())
    for out, args in (("out.csv", ("anonymize", "data.csv", "-k", "3")), ("table.csv", ("assess", "data.csv", "-k", "3"))):
        (tmp_path / out).write_text("precious\n")
        r = run(*args, "-o", out, cwd=tmp_path)
        assert r.returncode == 2 and "exists" in r.stderr and "--overwrite" in r.stderr, r.stderr
        assert (tmp_path / out).read_text() == "precious\n"
        r = run(*args, "-o", out, "--overwrite", cwd=tmp_path)
        assert r.returncode == 0, r.stderr
        assert (tmp_path / out).read_text() != "precious\n"
    (tmp_path / "plot.png").write_text("precious\n")
    r = run("assess", "data.csv", "-k", "3", "--plot", "plot.png", cwd=tmp_path)
    assert r.returncode == 2 and (tmp_path / "plot.png").read_text() == "precious\n"
    assert leftovers(tmp_path) == []


def test_outputs_follow_the_umask(tmp_path: Path) -> None:
    write_rows(tmp_path / "data.csv", people())
    for umask, mode in ((0o022, 0o644), (0o027, 0o640), (0o002, 0o664)):
        out = f"out_{umask:o}.csv"
        r = run("anonymize", "data.csv", "-k", "3", "-o", out, cwd=tmp_path, umask=umask)
        assert r.returncode == 0, r.stderr
        assert stat.S_IMODE(os.stat(tmp_path / out).st_mode) == mode


def test_devices_are_written_to_never_replaced(tmp_path: Path) -> None:
    write_rows(tmp_path / "data.csv", people())
    r = run("anonymize", "data.csv", "-k", "3", "-o", "/dev/null", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert stat.S_ISCHR(os.stat("/dev/null").st_mode)
    r = run("anonymize", "data.csv", "-k", "3", "-o", "/dev/full", cwd=tmp_path)
    assert r.returncode == 2 and "cannot write /dev/full" in r.stderr and "No space left" in r.stderr, r.stderr
    assert stat.S_ISCHR(os.stat("/dev/full").st_mode)
    assert "wrote" not in r.stdout
    fifo = tmp_path / "pipe.csv"
    os.mkfifo(fifo)
    reader = subprocess.Popen(["cat", str(fifo)], stdout=subprocess.PIPE, text=True)
    r = run("anonymize", "data.csv", "-k", "3", "-o", "pipe.csv", cwd=tmp_path)
    out, _ = reader.communicate(timeout=60)
    assert r.returncode == 0, r.stderr
    assert out.splitlines()[0] == "id,age,income,city" and len(out.splitlines()) == 31
    assert stat.S_ISFIFO(os.stat(fifo).st_mode)
    os.mkdir(tmp_path / "folder")
    r = run("anonymize", "data.csv", "-k", "3", "-o", "folder", cwd=tmp_path)
    assert r.returncode == 2 and "is a directory" in r.stderr
    assert leftovers(tmp_path) == []


SLOW_WRITE = """
import sys, time
from microagg._cli import tables
plain = tables.CsvTable.write_csv
def slow(self, path):
    plain(self, path)
    print("writing", flush=True)
    time.sleep(60)
tables.CsvTable.write_csv = slow
from microagg.cli import main
sys.exit(main(sys.argv[1:]))
"""


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGHUP, signal.SIGINT])
def test_a_signal_during_the_write_leaves_nothing_behind(tmp_path: Path, signum: int) -> None:
    write_rows(tmp_path / "data.csv", people())
    proc = subprocess.Popen(
        [sys.executable, "-c", SLOW_WRITE, "anonymize", "data.csv", "-k", "3", "--columns", "age,income", "-o", "out.csv"],
        cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        # A job started in the background of a shell (CI, `cmd &`) inherits SIGINT ignored,
        # and a Python started so never raises KeyboardInterrupt: give the CLI Ctrl-C as a
        # terminal would.
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )
    assert proc.stdout is not None
    assert proc.stdout.readline().strip() == "writing"
    assert len(leftovers(tmp_path)) == 1  # the temporary file, complete, not yet renamed
    proc.send_signal(signum)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == (130 if signum == signal.SIGINT else 128 + signum), err
    assert "Traceback" not in err
    assert leftovers(tmp_path) == [] and not (tmp_path / "out.csv").exists()


def test_a_column_numeric_but_for_some_codes_is_an_error(tmp_path: Path) -> None:
    rows = people(20)
    rows[4][1] = "?"
    rows[9][1] = " ?"
    rows[12][1] = "n/a"
    rows[7][2] = "-9"
    write_rows(tmp_path / "data.csv", rows)
    r = run("anonymize", "data.csv", "-k", "3", cwd=tmp_path)
    assert r.returncode == 2
    assert "column 'age' is numeric except for 3 cells" in r.stderr, r.stderr
    assert "'?' (line 5)" in r.stderr and "' ?' (line 10)" in r.stderr and "'n/a' (line 13)" in r.stderr
    assert "--na-values '?,n/a'" in r.stderr
    r = run("anonymize", "data.csv", "-k", "3", "--columns", "age", cwd=tmp_path)
    assert r.returncode == 2 and "--na-values" in r.stderr
    # declared codes are missing values: refused, then grouped and kept as written
    r = run("anonymize", "data.csv", "-k", "3", "--na-values", "?,n/a", cwd=tmp_path)
    assert r.returncode == 2 and "column 'age' has missing values (line 5: '?')" in r.stderr, r.stderr
    r = run("anonymize", "data.csv", "-k", "3", "--na-values", "?,n/a,-9", "--missing", "keep", "-o", "k.csv", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert "key (every numeric column; choose with --columns): age, income" in r.stdout
    out = list(csv.reader(open(tmp_path / "k.csv", newline="")))
    assert [out[i][1] for i in (4, 9, 12)] == ["?", " ?", "n/a"] and out[7][2] == "-9"
    assert out[1][1] != rows[1][1]  # the column was microaggregated, not released raw


def test_parquet_missing_codes(tmp_path: Path) -> None:
    pa = pytest.importorskip("pyarrow")
    import pyarrow.parquet as pq

    age = [float(x) for x in range(20, 40)]
    age[3] = -9.0
    pq.write_table(pa.table({"age": age, "income": [float(x) for x in range(20)]}), tmp_path / "d.parquet")
    r = run("anonymize", "d.parquet", "-k", "4", "--na-values", "-9", "--missing", "keep", "-o", "o.parquet", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    got = pq.read_table(tmp_path / "o.parquet").column("age").to_pylist()
    assert got[3] is None and all(v is not None for i, v in enumerate(got) if i != 3)


@pytest.mark.parametrize("delimiter", [";", "\t", "|"])
def test_csv_dialects_and_byte_order_mark(tmp_path: Path, delimiter: str) -> None:
    rows = people()
    rows[1][3] = "a,b"  # a comma inside a field does not fool the delimiter search
    write_rows(tmp_path / "data.csv", rows, delimiter=delimiter, bom=True)
    r = run("anonymize", "data.csv", "-k", "3", "--weights", "id", cwd=tmp_path)
    assert r.returncode == 2 and "--weights: column 'id' is not numeric" in r.stderr  # the first column is found
    r = run("anonymize", "data.csv", "-k", "3", "--columns", "age,income", "-o", "out.csv", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    out = list(csv.reader(open(tmp_path / "out.csv", newline="", encoding="utf-8"), delimiter=delimiter))
    assert out[0] == rows[0] and [r[3] for r in out] == [r[3] for r in rows]
    released = np.array([[float(r[1]), float(r[2])] for r in out[1:]])
    original = np.array([[float(r[1]), float(r[2])] for r in rows[1:]])
    np.testing.assert_allclose(released, ma.microaggregate(original, 3).aggregated)
    r = run("anonymize", "data.csv", "-k", "3", "--sep", ",", "--columns", "age", cwd=tmp_path)
    assert r.returncode == 2 and "line 2: 2 fields, header has 1 (delimiter ',')" in r.stderr, r.stderr


def test_messages_speak_of_lines_and_flags(tmp_path: Path) -> None:
    rows: list[list[object]] = [["age", "income", "w", "region"]]
    rows += [[20 + i, 1000 + 10 * i, 1.0, "north" if i < 12 else "south"] for i in range(13)]
    rows[6][2] = -1.0
    with open(tmp_path / "data.csv", "w", newline="") as f:
        w = csv.writer(f)
        w.writerows(rows[:3])
        f.write("\n")  # a blank line: file lines and records part ways
        w.writerows(rows[3:])
    r = run("anonymize", "data.csv", "-k", "3", "--weights", "w", "--columns", "age,income", cwd=tmp_path)
    assert r.returncode == 2 and "at line 8" in r.stderr and "record" not in r.stderr, r.stderr
    r = run("anonymize", "data.csv", "-k", "3", "--by", "region", "--columns", "age,income", cwd=tmp_path)
    assert r.returncode == 2 and "--small-strata merge" in r.stderr and "small_strata" not in r.stderr, r.stderr
    r = run("anonymize", "data.csv", "-k", "3", "--max-part", "4", "--columns", "age,income", cwd=tmp_path)
    assert r.returncode == 2 and "--max-part" in r.stderr and "max_part" not in r.stderr, r.stderr


def test_merged_strata_keep_their_labels_only_when_asked(tmp_path: Path) -> None:
    rows: list[list[object]] = [["age", "income", "region"]]
    rows += [[20 + i, 1000 + 10 * i, "north" if i < 12 else "south"] for i in range(13)]
    write_rows(tmp_path / "data.csv", rows)
    base = ("anonymize", "data.csv", "-k", "3", "--by", "region", "--small-strata", "merge")
    r = run(*base, "-o", "a.csv", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert [row[2] for row in csv.reader(open(tmp_path / "a.csv"))][1:] == ["north"] * 13
    r = run(*base, "--no-relabel", "-o", "b.csv", cwd=tmp_path)
    assert r.returncode == 0 and "single them out" in r.stderr
    assert [row[2] for row in csv.reader(open(tmp_path / "b.csv"))][-1] == "south"
