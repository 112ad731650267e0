"""Identifiers are not quasi-identifiers: a nominal key column in which more than half of the
records hold a level no other record holds is refused by every entry point (its group's
mode would publish one member's real value), and a column with some repeated levels is not."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from conftest import optional

import microagg as ma
from microagg._mixed.workflow import release

pd = optional("pandas")

MESSAGE = r"column 'id' looks like an identifier: 500 of 500 records"


def people(n: int = 500, seed: int = 0) -> "pd.DataFrame":
    rng = np.random.default_rng(seed)
    return pd.DataFrame({
        "id": [f"p{i:04d}" for i in range(n)],
        "age": rng.integers(18, 90, n).astype(float),
        "sex": rng.choice(["F", "M"], n),
    })


def test_anonymize_refuses_an_identifier_in_the_key() -> None:
    with pytest.raises(ValueError, match=MESSAGE):
        ma.anonymize(people(), 5, columns=["age", "sex", "id"])


def test_integer_codes_named_categorical_are_checked_too() -> None:
    df = people().assign(code=np.arange(500))
    with pytest.raises(ValueError, match="column 'code' looks like an identifier"):
        ma.anonymize(df, 5, columns=["age", "code"], categorical=["code"])


def test_the_lower_level_release_refuses_it() -> None:
    df = people()
    with pytest.raises(ValueError, match=MESSAGE):
        release({"age": df["age"].to_numpy(), "id": df["id"].to_numpy(dtype=object)}, {"id": "nominal"}, k=5)


def test_half_singletons_is_still_a_category() -> None:
    """The rule is "more than half": 250 singletons in 500 records is accepted, 251 is not."""
    df = people()
    shared = [f"p{i:04d}" for i in range(250)] + ["common"] * 250
    out = ma.anonymize(df.assign(id=shared), 5, columns=["age", "id"])
    assert out.groupby(["age", "id"]).size().min() >= 5
    with pytest.raises(ValueError, match="251 of 500 records"):
        ma.anonymize(df.assign(id=[f"p{i:04d}" for i in range(251)] + ["common"] * 249), 5, columns=["age", "id"])


def test_the_cli_refuses_it(tmp_path: Path) -> None:
    people().to_csv(tmp_path / "in.csv", index=False)
    proc = subprocess.run(
        [sys.executable, "-m", "microagg", "anonymize", "in.csv", "-k", "5", "--columns", "age,sex,id", "-o", "out.csv"],
        cwd=tmp_path, capture_output=True, text=True, timeout=300,
    )
    assert proc.returncode != 0
    assert "column 'id' looks like an identifier" in proc.stderr
    assert not (tmp_path / "out.csv").exists()


def test_the_dask_engine_refuses_it() -> None:
    dd = optional("dask.dataframe")
    mdask = pytest.importorskip("microagg.dask")
    with pytest.raises(ValueError, match=MESSAGE):
        mdask.anonymize(dd.from_pandas(people(), npartitions=3), 5, ["age", "sex", "id"]).compute()
