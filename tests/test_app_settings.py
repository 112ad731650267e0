"""The app's pieces that need no browser (nor Shiny): the columns inferred as the command line
reads a file, the refusal of a file too large for the memory, and the ``microagg anonymize``
command of the page's settings, which run gives the release the page shows (docs/app.md)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from microagg.app.columns import check_size, infer_columns
from microagg.app.command import Settings, arguments, python_snippet, shell_command
from microagg.cli import main

CSV = "id,age,code,edu,town,w\n" + "".join(
    f"{i},{'' if i % 9 == 0 else 20 + i % 40},{i % 4},{('low', 'mid', 'high')[i % 3]},t{i % 2},{1 + i % 3}\n"
    for i in range(60)
)


@pytest.fixture
def survey(tmp_path: Path) -> Path:
    path = tmp_path / "survey.csv"
    path.write_text(CSV)
    return path


def test_columns_inferred_as_the_command_line_reads_them(survey: Path) -> None:
    _, columns = infer_columns(str(survey))
    got = {c.name: (c.type, c.role) for c in columns}
    assert got == {"id": ("numeric", "copied"), "age": ("numeric", "key"), "code": ("numeric", "key"),
                   "edu": ("nominal", "copied"), "town": ("nominal", "copied"), "w": ("numeric", "key")}
    by_name = {c.name: c for c in columns}
    assert "identifier" in by_name["id"].flag
    assert by_name["code"].levels == ["0", "1", "2", "3"]
    assert by_name["edu"].levels == ["high", "low", "mid"]


def test_measurements_that_all_differ_are_no_identifiers(tmp_path: Path) -> None:
    path = tmp_path / "m.csv"
    path.write_text("income,code,name\n" + "".join(f"{1000 + 37.5 * i},{10 * i},n{i}\n" for i in range(30)))
    _, columns = infer_columns(str(path))
    assert [bool(c.flag) for c in columns] == [False, False, True]
    assert [c.role for c in columns] == ["key", "key", "copied"]


def test_a_bad_file_raises_the_command_lines_message(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    bad = tmp_path / "bad.csv"
    bad.write_text("a,b\n1,2\n3\n")
    with pytest.raises(ValueError) as raised:
        infer_columns(str(bad))
    assert main(["anonymize", str(bad), "-k", "2"]) == 2
    assert capsys.readouterr().err.strip() == f"microagg: error: {raised.value}"


def test_a_file_too_large_for_the_memory_is_refused(survey: Path) -> None:
    check_size(str(survey), 2**30)
    with pytest.raises(ValueError, match="survey.csv .* too large for this machine's free memory"):
        check_size(str(survey), survey.stat().st_size)


def test_the_command_of_the_settings_makes_the_release(survey: Path, tmp_path: Path) -> None:
    _, columns = infer_columns(str(survey))
    roles = {"age": ("numeric", "key"), "code": ("nominal", "key"), "edu": ("ordinal", "key"),
             "town": ("nominal", "strata"), "w": ("numeric", "weights")}
    for c in columns:
        c.type, c.role = roles.get(c.name, (c.type, "copied"))
        if c.name == "edu":
            c.levels = ["low", "mid", "high"]
    s = Settings(columns, k=3, method="mdav", missing="fill", numeric={"age", "code", "w", "id"})
    argv = arguments(s, str(survey), str(tmp_path / "out.csv"))
    assert argv[argv.index("--columns") + 1] == "age,code,edu"
    assert argv[argv.index("--categorical") + 1] == "code"
    assert argv[argv.index("--ordinal") + 1] == "edu=low<mid<high"
    assert argv[argv.index("--by") + 1] == "town" and argv[argv.index("--weights") + 1] == "w"
    assert main(argv) == 0
    # the shell command and the Python script say the same
    again = tmp_path / "again.csv"
    assert shell_command(argv[:-1] + [str(again)]).startswith("microagg anonymize ")
    script = tmp_path / "redo.py"
    script.write_text(python_snippet(argv[:-1] + [str(again)]))
    assert subprocess.run([sys.executable, str(script)], timeout=300).returncode == 0
    assert again.read_bytes() == (tmp_path / "out.csv").read_bytes()


def test_settings_the_command_line_cannot_express_are_refused(survey: Path) -> None:
    _, columns = infer_columns(str(survey))
    for c in columns:
        c.role = "copied"
    with pytest.raises(ValueError, match="no key column"):
        arguments(Settings(columns), "survey.csv", "out.csv")
    columns[1].role = "key"
    columns[2].role = columns[5].role = "weights"
    with pytest.raises(ValueError, match="one weights column at most"):
        arguments(Settings(columns), "survey.csv", "out.csv")
