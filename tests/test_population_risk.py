"""ma.risk.individual_risk (sdcMicro's measure_risk, Benedetti–Franconi) and ma.risk.l_diversity."""

from __future__ import annotations

import csv

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
