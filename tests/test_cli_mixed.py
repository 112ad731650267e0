"""Mixed keys from the command line: text, --categorical and --ordinal columns grouped with
the numbers, the release k-anonymous over the whole key, on CSV and Parquet."""

from __future__ import annotations

import csv
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import microagg as ma

EDUCATION = ["HS", "BSc", "MSc", "PhD"]


def run(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "microagg", *args], cwd=cwd, capture_output=True, text=True, timeout=300)


def people(n: int = 90, seed: int = 2) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    return pd.DataFrame({
        "id": [f"p{i}" for i in range(n)],
        "age": rng.integers(18, 90, n),
        "hours": rng.integers(10, 60, n),
        "sex": rng.choice(["f", "m"], n),
        "region": rng.choice(["north", "south", "east"], n),
        "education": rng.choice(EDUCATION, n),
        "urban": rng.choice([1, 2, 3], n),
    })


KEY = ["age", "hours", "sex", "region", "education", "urban"]
FLAGS = ("--columns", ",".join(KEY), "--ordinal", "education=" + "<".join(EDUCATION), "--categorical", "urban")


@pytest.mark.parametrize("release", ["mode", "medoid"])
def test_csv_mixed_key_is_k_anonymous(tmp_path: Path, release: str) -> None:
    df = people()
    df.to_csv(tmp_path / "in.csv", index=False)
    r = run("anonymize", "in.csv", "-k", "5", *FLAGS, "--attribute-weight", "sex=2",
            "--categorical-release", release, "-o", "out.csv", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert "sex (nominal)" in r.stdout and "education (ordinal)" in r.stdout and "urban (nominal)" in r.stdout
    out = pd.read_csv(tmp_path / "out.csv")
    assert list(out.columns) == list(df.columns) and (out["id"] == df["id"]).all()
    assert ma.is_k_anonymous(out, 5, columns=KEY)
    assert not ma.is_k_anonymous(df, 5, columns=KEY)
    assert set(out["education"]) <= set(EDUCATION) and set(out["urban"]) <= {1, 2, 3}
    if release == "medoid":  # every released combination of categories exists in the input
        combos = set(map(tuple, df[["sex", "region", "education", "urban"]].to_numpy().tolist()))
        assert set(map(tuple, out[["sex", "region", "education", "urban"]].to_numpy().tolist())) <= combos
    want, _ = ma._mixed.workflow.release(
        {c: df[c].to_numpy(dtype=object if c in ("sex", "region", "education") else float) for c in KEY},
        {"sex": "nominal", "region": "nominal", "education": "ordinal", "urban": "nominal"},
        {"education": EDUCATION}, 5, attribute_weights={"sex": 2.0}, categorical_release=release,
    )
    np.testing.assert_allclose(out["age"], want["age"], rtol=1e-12)


def test_parquet_mixed_key_and_kept_missing_categories(tmp_path: Path) -> None:
    pytest.importorskip("pyarrow")
    df = people()
    df.loc[[3, 17, 40], "region"] = None
    df.to_parquet(tmp_path / "in.parquet")
    r = run("anonymize", "in.parquet", "-k", "4", *FLAGS, "--missing", "keep", "-o", "out.parquet", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    out = pd.read_parquet(tmp_path / "out.parquet")
    assert out["region"].isna().sum() == 3 and out.loc[[3, 17, 40], "region"].isna().all()
    assert ma.is_k_anonymous(out, 4, columns=KEY)
    df.to_csv(tmp_path / "in.csv", index=False)
    r = run("anonymize", "in.csv", "-k", "4", *FLAGS, "--missing", "keep", "-o", "out.csv", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    rows = list(csv.reader(open(tmp_path / "out.csv", newline="")))
    assert [rows[i + 1][4] for i in (3, 17, 40)] == ["", "", ""]  # left missing, as written
    r = run("anonymize", "in.csv", "-k", "4", *FLAGS, "--missing", "fill", "-o", "filled.csv", cwd=tmp_path)
    assert r.returncode == 0 and "3 missing cells filled" in r.stdout, r.stdout  # cells of the file
    assert pd.read_csv(tmp_path / "filled.csv")["region"].notna().all()


def test_mixed_flag_errors(tmp_path: Path) -> None:
    people().to_csv(tmp_path / "in.csv", index=False)
    for extra, message in [
        (("--ordinal", "education=HS<BSc"), "education"),
        (("--ordinal", "education"), "--ordinal takes COLUMN=VALUE"),
        (("--attribute-weight", "sex=0"), "finite and positive"),
        (("--attribute-weight", "nope=2"), "--attribute-weight: nope not in the key"),
        (("--categorical", "nope"), "--categorical: unknown column 'nope'"),
        (("--no-standardize",), "--no-standardize does not apply"),
    ]:
        r = run("anonymize", "in.csv", "-k", "5", *FLAGS, *extra, cwd=tmp_path)
        assert r.returncode == 2 and message in r.stderr, (extra, r.stderr)
        assert "Traceback" not in r.stderr


def test_mixed_release_scored_and_reported_over_the_whole_key(tmp_path: Path) -> None:
    from report_checks import parse, resolve

    df = people()
    df.to_csv(tmp_path / "in.csv", index=False)
    r = run("anonymize", "in.csv", "-k", "5", *FLAGS, "-o", "out.csv", "--report", "r.html", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    out = pd.read_csv(tmp_path / "out.csv")
    cats = ["sex", "region", "education", "urban"]
    a = ma.assess(df[["age", "hours"]].to_numpy(float), out[["age", "hours"]].to_numpy(float), k=5,
                  categorical={c: (df[c].to_numpy(object), out[c].to_numpy(object)) for c in cats})
    assert a.min_group_size >= 5 and a.meets_k
    # over the numbers alone the classes are the same or larger: the whole key is what counts
    assert ma.assess(df[["age", "hours"]].to_numpy(float), out[["age", "hours"]].to_numpy(float)).min_group_size >= a.min_group_size
    d = a.to_dict()
    assert 0 < d["categorical"]["sex"]["cells_changed"] < 1
    html = (tmp_path / "r.html").read_text(encoding="utf-8")
    cells = {key: value for key, value, _ in parse(html).cells}
    for c in cats:
        for m in ("cells_changed", "total_variation"):
            assert float(cells[f"categorical.{c}.{m}"]) == pytest.approx(resolve(f"categorical.{c}.{m}", d), rel=1e-12)
        # the frequency table: every level, counts of both files adding up to the records
        for m in ("original_frequencies", "released_frequencies"):
            shown = [float(cells[f"categorical.{c}.{m}.{i}"]) for i in range(len(d["categorical"][c]["levels"]))]
            assert shown == d["categorical"][c][m] and sum(shown) == len(df) - df[c].isna().sum()
        counts = df[c].dropna().astype(str).value_counts()
        assert d["categorical"][c]["original_frequencies"] == [counts.get(v, 0) for v in d["categorical"][c]["levels"]]
    assert float(cells["min_group_size"]) == d["min_group_size"]
    r = run("assess", "in.csv", "out.csv", "--columns", ",".join(KEY), "--categorical", "urban", "-k", "5", cwd=tmp_path)
    assert r.returncode == 0 and "meets it" in r.stdout and "sex:" in r.stdout, r.stderr
    r = run("assess", "in.csv", "in.csv", "--columns", ",".join(KEY), "-k", "5", cwd=tmp_path)
    assert r.returncode == 1 and "MISSES" in r.stdout


def test_cli_t_closeness(tmp_path: Path) -> None:
    df = people(120)
    df["income"] = np.random.default_rng(5).normal(3e4, 1e4, len(df)).round(2)
    df.to_csv(tmp_path / "in.csv", index=False)
    r = run("anonymize", "in.csv", "-k", "4", "--columns", "age,hours", "--sensitive", "income,region",
            "--t", "0.3", "-o", "out.csv", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert re.search(r"t-close \(t=0\.3, auto: (merge|k-first|t-first)\): largest class EMD", r.stdout), r.stdout
    assert "('" not in r.stdout  # the method in words, not a Python tuple
    out = pd.read_csv(tmp_path / "out.csv")
    assert (out["income"] == df["income"]).all() and (out["region"] == df["region"]).all()  # never changed
    assert ma.is_k_anonymous(out, 4, columns=["age", "hours"])
    emd = ma.risk.t_closeness(out, ["income", "region"], columns=["age", "hours"])
    assert set(emd) == {"income", "region"} and max(emd.values()) <= 0.3 + 1e-12
    plain = pd.read_csv(tmp_path / "in.csv")
    plain[["age", "hours"]] = ma.microaggregate(df[["age", "hours"]].to_numpy(float), 4).aggregated
    assert max(ma.risk.t_closeness(plain, ["income"], columns=["age", "hours"]).values()) > 0.3  # it did something
    for extra, message in [((), "--sensitive needs --t"), (("--t", "0.3", "--columns", "age,income"), "is both a quasi-identifier (--columns) and in --sensitive")]:
        r = run("anonymize", "in.csv", "-k", "4", "--sensitive", "income", *extra, cwd=tmp_path)
        assert r.returncode == 2 and message in r.stderr, (extra, r.stderr)


def test_cli_t_closeness_with_a_mixed_key_missing_cells_and_parts(tmp_path: Path) -> None:
    df = people(400)
    rng = np.random.default_rng(7)
    df["income"] = np.where(df["age"] + rng.normal(0, 10, len(df)) > 60, "high", "low")
    df.loc[rng.random(len(df)) < 0.05, "hours"] = np.nan
    df.loc[rng.random(len(df)) < 0.05, "sex"] = None
    df.to_csv(tmp_path / "in.csv", index=False)
    t = 0.1
    for extra in [(), ("--max-part", "100")]:
        r = run("anonymize", "in.csv", "-k", "4", *FLAGS, "--sensitive", "income", "--t", str(t),
                "--missing", "fill", "-o", "out.csv", "--overwrite", *extra, cwd=tmp_path)
        assert r.returncode == 0, r.stderr
        assert "t-close (t=0.1, auto: " in r.stdout and "missing cells filled" in r.stdout and "('" not in r.stdout
        out = pd.read_csv(tmp_path / "out.csv")
        assert (out["income"] == df["income"]).all()
        assert not out[KEY].isna().any().any()
        classes = out.groupby(KEY, sort=False).ngroup().to_numpy()
        assert np.bincount(classes).min() >= 4
        income = df["income"].to_numpy()
        q = (income == "high").mean()
        worst = max(0.5 * 2 * abs((income[classes == c] == "high").mean() - q) for c in np.unique(classes))
        assert worst <= t + 1e-9
    r = run("anonymize", "in.csv", "-k", "4", *FLAGS, "--sensitive", "income", "--t", "0.1", "--engine", "dask",
            cwd=tmp_path)
    assert r.returncode == 2 and "--sensitive (t-closeness) is not available with --engine dask" in r.stderr
    for extra, message in [
        (("--sensitive", "nope"), "--sensitive: unknown column 'nope'; columns are: "),
        (("--sensitive", "income,income"), "--sensitive must not repeat a column"),
        (("--sensitive", "income", "--by", "income"), "column 'income' is both confidential (--sensitive) and in --by"),
    ]:
        r = run("anonymize", "in.csv", "-k", "4", *FLAGS, *extra, "--t", "0.1", "-o", "bad.csv", cwd=tmp_path)
        assert r.returncode == 2 and message in r.stderr and "Traceback" not in r.stderr, (extra, r.stderr)
