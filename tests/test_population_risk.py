"""ma.risk.individual_risk (sdcMicro's measure_risk, Benedetti–Franconi) and ma.risk.l_diversity."""

from __future__ import annotations

import csv
from pathlib import Path

import numpy as np
import pytest

import microagg as ma
from conftest import _shared

pd = pytest.importorskip("pandas")

KEY4 = ["REGION", "SEX", "AGE", "MARSTAT"]


@pytest.fixture(scope="module")
def free1() -> "pd.DataFrame":
    return pd.read_csv(_shared("datasets/free1.csv"))


@pytest.fixture(scope="module")
def reference() -> dict[str, dict[str, str]]:
    with open(_shared("reference/sdcmicro_measure_risk.csv"), newline="") as f:
        return {row["case"]: row for row in csv.DictReader(f)}


def _with_missing_cells(d: "pd.DataFrame") -> "pd.DataFrame":
    """The reference's missing-cells case (../shared/datasets/README.md): MARSTAT missing on
    every 50th row from row 1, REGION on every 97th from row 7 (1-based)."""
    m = d.astype({"MARSTAT": float, "REGION": float})
    m.loc[0::50, "MARSTAT"] = np.nan
    m.loc[6::97, "REGION"] = np.nan
    return m


def _check_case(r: ma.risk.IndividualRisk, row: dict[str, str]) -> None:
    for got, name in [
        (r.global_risk, "global_risk"),
        (r.expected_reidentifications, "expected_reidentifications"),
        (float(r.risk.max()), "max_risk"),
        (float(r.risk[0]), "risk_first_record"),
        (float(r.risk[-1]), "risk_last_record"),
    ]:
        assert got == pytest.approx(float(row[name]), rel=1e-9, abs=1e-12), name


@pytest.mark.parametrize(
    "case, key, weights, missing",
    [
        ("free1 4 keys weights", KEY4, "WEIGHT", False),
        ("free1 4 keys no weights", KEY4, None, False),
        ("free1 6 keys weights", KEY4 + ["KINDPERS", "OCCUCODE"], "WEIGHT", False),
        ("free1 4 keys with missing cells weights", KEY4, "WEIGHT", True),
    ],
)
def test_equals_sdcmicro_measure_risk_to_1e9(free1, reference, case, key, weights, missing):
    d = _with_missing_cells(free1) if missing else free1
    assert reference[case]["key"] == " ".join(key)
    r = ma.risk.individual_risk(d, columns=key, categorical=key, weights=weights)
    _check_case(r, reference[case])
    assert r.weighted is (weights is not None)


def test_arrays_equal_frames(free1, reference):
    key = free1[KEY4].to_numpy(dtype=float)
    r = ma.risk.individual_risk(key, weights=free1["WEIGHT"].to_numpy())
    _check_case(r, reference["free1 4 keys weights"])
    f = ma.risk.individual_risk(free1, columns=KEY4, categorical=KEY4, weights="WEIGHT")
    np.testing.assert_array_equal(r.fk, f.fk)
    np.testing.assert_allclose(r.Fk, f.Fk, rtol=1e-12)
    table = f.to_frame()
    assert list(table.columns) == ["risk", "fk", "Fk"] and len(table) == len(free1)


def test_hand_checked_classes_and_formula():
    # classes {0,1} (weights 3+5), {2} (weight 4), {3,4,5} (weights 2 each), {6} weight 1
    x = np.array([[1, 1], [1, 1], [2, 1], [3, 3], [3, 3], [3, 3], [9, 9]], dtype=float)
    w = np.array([3, 5, 4, 2, 2, 2, 1], dtype=float)
    r = ma.risk.individual_risk(x, weights=w)
    np.testing.assert_array_equal(r.fk, [2, 2, 1, 3, 3, 3, 1])
    np.testing.assert_allclose(r.Fk, [8, 8, 4, 6, 6, 6, 1])
    p2, p1, p3 = 2 / 8, 1 / 4, 3 / 6
    o2, o1 = p2 / (1 - p2), p1 / (1 - p1)
    expected = [o2 - o2**2 * np.log(1 / p2)] * 2 + [o1 * np.log(1 / p1)] + [p3 / (3 - (1 - p3))] * 3 + [1.0]
    np.testing.assert_allclose(r.risk, expected, rtol=1e-14)
    assert r.expected_reidentifications == pytest.approx(sum(expected))
    assert r.above(0.3) == int(np.count_nonzero(np.array(expected) > 0.3))
    unweighted = ma.risk.individual_risk(x)
    np.testing.assert_allclose(unweighted.risk, 1 / np.array([2, 2, 1, 3, 3, 3, 1]))


def test_strata_split_classes():
    x = np.array([[1.0], [1.0], [1.0], [1.0]])
    r = ma.risk.individual_risk(x, by=["a", "a", "b", "b"], weights=np.full(4, 10.0))
    np.testing.assert_array_equal(r.fk, [2, 2, 2, 2])
    np.testing.assert_allclose(r.Fk, [20, 20, 20, 20])
    r = ma.risk.individual_risk(x, by=["a", "b", "b", "b"])
    np.testing.assert_array_equal(r.fk, [1, 3, 3, 3])


def test_missing_cell_matches_any_value():
    x = np.array([[1, 1], [1, np.nan], [1, 2], [np.nan, np.nan]], dtype=float)
    r = ma.risk.individual_risk(x, weights=np.array([2.0, 3.0, 4.0, 5.0]))
    # [1,1] ~ [1,nan], [nan,nan]; [1,nan] ~ everything; [nan,nan] ~ everything (sdcMicro: f_k = n)
    np.testing.assert_array_equal(r.fk, [3, 4, 3, 4])
    np.testing.assert_allclose(r.Fk, [10, 14, 12, 14])


@pytest.mark.parametrize(
    "kwargs, error, match",
    [
        ({"weights": np.array([1.0, 0.5, 2.0])}, ValueError, "weights"),
        ({"weights": np.array([1.0, np.nan, 2.0])}, ValueError, "weights"),
        ({"weights": np.ones(4)}, ValueError, "weights"),
        ({"weights": "w"}, TypeError, "weights"),
        ({"columns": ["a"]}, TypeError, "columns"),
        ({"by": ["a", "b"]}, ValueError, "by"),
    ],
)
def test_bad_input_names_the_argument(kwargs, error, match):
    with pytest.raises(error, match=match):
        ma.risk.individual_risk(np.array([[1.0], [2.0], [3.0]]), **kwargs)


def test_bad_frame_weights_column(free1):
    with pytest.raises((ValueError, KeyError), match="NOPE"):
        ma.risk.individual_risk(free1, columns=KEY4, categorical=KEY4, weights="NOPE")
    with pytest.raises(ValueError, match="infinity"):
        ma.risk.individual_risk(np.array([[np.inf], [1.0]]))


def test_l_diversity_hand_checked():
    key = np.array([[1], [1], [1], [2], [2], [np.nan]], dtype=float)
    disease = np.array(["flu", "flu", "cold", "hiv", "hiv", "flu"], dtype=object)
    # classes: rows 0-2 with 5 -> {flu, cold}; rows 3-4 with 5 -> {hiv, flu}; row 5 -> all 3
    assert ma.risk.l_diversity(key, disease) == {"sensitive": 2}
    key2 = np.array([[1], [1], [1], [2], [2], [3]], dtype=float)
    assert ma.risk.l_diversity(key2, np.arange(12.0).reshape(6, 2) // 4) == {"sensitive[0]": 1, "sensitive[1]": 1}
    assert ma.risk.l_diversity(key2[:5], np.arange(5.0)) == {"sensitive": 2}
    frame = pd.DataFrame({"k": key2[:, 0], "s": ["a", "b", "a", "c", "c", "d"], "t": [1.0, 2, 3, 4, 5, 6], "g": list("xxyyyy")})
    assert ma.risk.l_diversity(frame, ["s", "t"], columns=["k"]) == {"s": 1, "t": 1}
    assert ma.risk.l_diversity(frame.iloc[:3], ["s", "t"], columns=["k"]) == {"s": 2, "t": 3}
    # strata split the class of k = 1 into {a, b} and {a}
    assert ma.risk.l_diversity(frame.iloc[:3], "s", columns=["k"], by="g") == {"s": 1}


MIXED = ["AGE", "INCOME", "REGION", "SEX", "MARSTAT"]
NOMINAL = ["REGION", "SEX", "MARSTAT"]


@pytest.fixture(scope="module")
def mixed_release(free1) -> tuple["pd.DataFrame", "pd.DataFrame"]:
    """free1's mixed key (two numbers, three categories) with its weights and EDUC1, and a
    microagg k = 3 release of it."""
    original = free1[[*MIXED, "WEIGHT", "EDUC1"]]
    return original, ma.anonymize(original, k=3, columns=MIXED, categorical=NOMINAL, weights="WEIGHT")


def test_assess_before_after_equal_individual_risk(mixed_release):
    original, release = mixed_release
    a = ma.assess(original, release, columns=MIXED, categorical=NOMINAL, weights="WEIGHT", sensitive=["EDUC1"],
                  k=3, risk_threshold=0.01)
    d = a.to_dict()["population_risk"]
    before = ma.risk.individual_risk(original, columns=MIXED, categorical=NOMINAL, weights="WEIGHT")
    after = ma.risk.individual_risk(release, columns=MIXED, categorical=NOMINAL, weights="WEIGHT")
    assert d["weighted"] and not d["weights_ignored"]
    assert d["global_risk_original"] == pytest.approx(before.global_risk, rel=1e-12)
    assert d["expected_reidentifications_released"] == pytest.approx(after.expected_reidentifications, rel=1e-12)
    assert d["records_above_original"] == before.above(0.01) and d["records_above_released"] == after.above(0.01)
    # a continuous income makes every original record unique; the release lowers the risk tenfold
    assert (before.fk == 1).all() and after.fk.min() >= 3
    assert d["expected_reidentifications_released"] < d["expected_reidentifications_original"] / 10
    assert sum(d["histogram"]["original"]) == sum(d["histogram"]["released"]) == len(original)
    l_rel = ma.risk.l_diversity(release, "EDUC1", columns=MIXED, categorical=NOMINAL)
    assert d["l_diversity_released"] == l_rel and d["l_diversity_original"] == {"EDUC1": 1}


def test_assess_ignores_weights_that_are_not_sampling_weights():
    rng = np.random.default_rng(1)
    x = rng.normal(size=(60, 2))
    xm = np.repeat(x.reshape(20, 3, 2).mean(axis=1), 3, axis=0)
    a = ma.assess(x, xm, weights=rng.uniform(0.5, 2.0, 60))
    d = a.to_dict()["population_risk"]
    assert d["weights_ignored"] and not d["weighted"]
    assert d["global_risk_released"] == pytest.approx(1 / 3)
    with pytest.raises(ValueError, match="risk_threshold"):
        ma.assess(x, xm, risk_threshold=1.5)
    with pytest.raises(TypeError, match="risk_threshold"):
        ma.assess(x, xm, risk_threshold="high")


def test_report_shows_the_before_after_figures_of_to_dict(mixed_release):
    from report_checks import check_cell, parse, resolve

    original, release = mixed_release
    a = ma.assess(original, release, columns=MIXED, categorical=NOMINAL, weights="WEIGHT", sensitive=["EDUC1"], k=3)
    d = a.to_dict()
    cells = [c for c in parse(a.to_html()).cells if c[0].startswith("population_risk.")]
    keys = {c[0] for c in cells}
    for name in ("global_risk", "expected_reidentifications", "max_risk", "records_above"):
        assert {f"population_risk.{name}_original", f"population_risk.{name}_released"} <= keys
    assert "population_risk.l_diversity_released.EDUC1" in keys
    for key, value, shown in cells:
        check_cell(key, value, shown, resolve(key, d))


def test_cli_assess_prints_population_risk_with_weights(tmp_path, mixed_release):
    import subprocess
    import sys

    original, release = mixed_release
    original.to_csv(tmp_path / "in.csv", index=False)
    release.to_csv(tmp_path / "out.csv", index=False)
    args = ["assess", "in.csv", "out.csv", "--columns", ",".join(MIXED), "--categorical", ",".join(NOMINAL)]
    r = subprocess.run([sys.executable, "-m", "microagg", *args, "--weights", "WEIGHT", "--risk-threshold", "0.01"],
                       cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    d = ma.assess(original, release, columns=MIXED, categorical=NOMINAL, weights="WEIGHT",
                  risk_threshold=0.01).to_dict()["population_risk"]
    assert "population risk, weighted (Benedetti-Franconi)" in r.stdout
    assert (f"expected re-identifications {d['expected_reidentifications_original']:.2f} -> "
            f"{d['expected_reidentifications_released']:.2f}") in r.stdout
    assert f"records with risk above 0.01: {d['records_above_original']} -> {d['records_above_released']}" in r.stdout
    r = subprocess.run([sys.executable, "-m", "microagg", *args], cwd=tmp_path, capture_output=True, text=True,
                       timeout=300)
    assert "population risk, unweighted (1 / class size)" in r.stdout


DATA = Path(__file__).resolve().parent / "data"


@pytest.mark.parametrize("file", ["original", "release"])
@pytest.mark.parametrize("weights", ["WEIGHT", ""])
def test_microagg_release_of_mixed_key_scored_by_sdcmicro_to_1e9(free1, file, weights):
    """tests/data/sdcmicro_measure_risk_release.csv: sdcMicro 5.8.1's freqCalc and indivRisk (the
    code measure_risk runs, by tests/data/sdcmicro_measure_risk_release.R) on free1's key AGE,
    INCOME, REGION, SEX, MARSTAT and a microagg k = 3 release of it."""
    with open(DATA / "sdcmicro_measure_risk_release.csv", newline="") as f:
        row = next(r for r in csv.DictReader(f) if r["file"] == file and r["weights"] == weights)
    # every key cell as text, as the R script reads it (a class: the same strings)
    path = DATA / "free1_mixed_k3_release.csv" if file == "release" else _shared("datasets/free1.csv")
    data = pd.read_csv(path, dtype={c: str for c in MIXED})
    r = ma.risk.individual_risk(data, columns=MIXED, categorical=MIXED, weights=weights or None)
    _check_case(r, row)
    assert float(np.sum(r.risk**2)) == pytest.approx(float(row["sum_squared_risk"]), rel=1e-9)
    assert int(np.count_nonzero(r.fk == 1)) == int(row["records_fk1"])
    assert float(r.Fk.sum()) == pytest.approx(float(row["sum_Fk"]), rel=1e-12)
