"""The release report's HTML without a browser: sections in order, every number equal to
``Assessment.to_dict()``, no record-level value, no reference outside the page; and the
measures the report adds to ``assess`` (class sizes, histograms, k, merges)."""

from __future__ import annotations

import hashlib
import re
from pathlib import Path

import numpy as np
import pytest

import microagg as ma
from report_checks import SECTIONS, check_cell, parse, resolve


@pytest.fixture(scope="module")
def census() -> np.ndarray:
    return ma.datasets.load_census()


@pytest.fixture(scope="module")
def candidates(census: np.ndarray) -> list[dict]:
    return [{"method": "mdav", "k": k, **ma.assess(census, ma.microaggregate(census, k).aggregated).to_dict()}
            for k in (2, 3, 5)]


def test_sections_in_order_and_every_number_is_the_assessments(census: np.ndarray, candidates: list[dict]) -> None:
    a = ma.assess(census, ma.microaggregate(census, 5).aggregated, k=5)
    html = a.to_html(candidates=candidates)
    cells = parse(html)
    assert cells.sections == list(SECTIONS)
    d = a.to_dict()
    keys = {key for key, _, _ in cells.cells}
    for key, value, shown in cells.cells:
        check_cell(key, value, shown, resolve(key, d, candidates))
    for key in ("min_group_size", "k_requested", "records_below_k", "records_violating.5", "il1s",
                "reidentification_risk_mean", "eigen", "information_loss",
                "interval_disclosure", "record_linkage_rate", "record_linkage_global_rate", "candidates.2.k"):
        assert key in keys, key
    for j in range(d["n_attributes"]):
        assert f"variance_ratio.{j}" in keys and f"mean_original.{j}" in keys
    assert len(re.findall(r"<svg ", html)) == 1 + d["n_attributes"] + 2  # class sizes, histograms, R-U map


def test_without_candidates_there_is_no_ru_map(census: np.ndarray) -> None:
    html = ma.assess(census, ma.microaggregate(census, 3).aggregated).to_html()
    assert parse(html).sections == list(SECTIONS[:-1])
    assert "No k was requested" in html


def test_a_release_below_k_is_marked_missing(census: np.ndarray) -> None:
    release = ma.microaggregate(census, 3).aggregated
    a = ma.assess(census, release, k=5)
    sizes = ma.risk.class_sizes(release)
    assert a.meets_k is False and a.records_below_k == int(np.count_nonzero(sizes < 5)) > 0
    html = a.to_html()
    assert "MISSES k = 5" in html and '<p id="verdict" class="miss">' in html


def test_no_record_level_value_appears() -> None:
    rng = np.random.default_rng(7)
    x = np.round(rng.uniform(1000, 9000, size=(12, 2)), 3) + 0.123
    x[4, 0] = 123456.789
    release = ma.microaggregate(x, 3).aggregated
    html = ma.assess(x, release, k=3).to_html()
    values = np.unique(np.concatenate([x.ravel(), release.ravel()]))
    for token in re.findall(r"\d+(?:\.\d+)?(?:e[+-]?\d+)?", html.replace(",", "")):
        decimals = len(token.partition(".")[2].partition("e")[0])
        if len(token.replace(".", "").lstrip("0").partition("e")[0]) < 4:
            continue  # counts, pixels, percentages: too few digits to name a value
        near = values[np.abs(values - float(token)) <= 0.5 * 10.0**-decimals * (1 + 1e-9)]
        assert near.size == 0, f"{token} shows the value {near[0]} of a record"
    assert "123456" not in html and "45232" not in html


def test_the_page_fetches_nothing() -> None:
    x = ma.datasets.load_census()[:200]
    html = ma.assess(x, ma.microaggregate(x, 4).aggregated).to_html(title="<b>T</b>")
    assert "default-src 'none'" in html and "<script" not in html
    assert not re.search(r"\b(src|href)\s*=\s*[\"']?(https?:|//)|url\(|@import", html)
    assert "<h1>&lt;b&gt;T&lt;/b&gt;</h1>" in html  # text is escaped


def test_provenance_and_file_written(tmp_path: Path, census: np.ndarray) -> None:
    original, released = tmp_path / "census.csv", tmp_path / "census_k5.csv"
    release = ma.microaggregate(census, 5).aggregated
    np.savetxt(original, census, delimiter=",")
    np.savetxt(released, release, delimiter=",")
    prov = {"original": ma.report.file_provenance(original), "released": ma.report.file_provenance(released),
            "key": {f"x{j}": "numeric" for j in range(13)},
            "parameters": {"k": 5, "method": "mdav", "by": None, "weights": None, "aggregation": "mean",
                           "missing": "error", "max_part": None, "engine": "rust"}}
    assert prov["original"] == {"name": "census.csv", "size": original.stat().st_size,
                                "sha256": hashlib.sha256(original.read_bytes()).hexdigest()}
    out = tmp_path / "report.html"
    text = ma.report.write_report(out, ma.assess(census, release, k=5), provenance=prov)
    assert out.read_text(encoding="utf-8") == text
    assert prov["released"]["sha256"] in text and "census_k5.csv" in text and "Release report: census_k5.csv" in text
    assert "aggregation" in text and "max_part" in text and ma.__version__ in text
    with pytest.raises(ValueError, match="not a regular file"):
        ma.report.file_provenance(tmp_path)


def test_bad_candidates_are_refused(census: np.ndarray) -> None:
    a = ma.assess(census[:100], census[:100])
    with pytest.raises(ValueError, match="every candidate needs"):
        a.to_html(candidates=[{"k": 3}])


def test_class_sizes_count_equal_rows_within_strata() -> None:
    xm = np.array([[1.0, 2.0], [1.0, 2.0], [1.0, 2.0], [3.0, np.nan], [3.0, np.nan], [-0.0, 5.0], [0.0, 5.0]])
    assert ma.risk.class_sizes(xm).tolist() == [3, 3, 3, 2, 2, 2, 2]
    by = ["a", "a", "b", "a", "a", "a", "a"]
    assert ma.risk.class_sizes(xm, by).tolist() == [2, 2, 1, 2, 2, 2, 2]
    assert ma.risk.min_group_size(xm, by) == 1
    a = ma.assess(xm + 0.5, xm, by=by, k=2)
    assert a.class_size_records == ((1, 1), (2, 6)) and a.records_below_k == 1 and a.n_strata == 2
    assert a.to_dict()["records_violating"] == {"2": 1, "3": 7}
    assert a.reidentification_risk == (1.0, (1 + 6 / 2) / 7)
    assert a.missing_released == 2 and a.missing_original == 2


def test_histograms_count_every_observed_value_over_round_edges(census: np.ndarray) -> None:
    x = census.astype(float)
    x[::7, 2] = np.nan
    release = ma.microaggregate(census, 5).aggregated
    for j, h in enumerate(ma.utility.histograms(x, release)):
        obs, rel = x[:, j][~np.isnan(x[:, j])], release[:, j]
        assert h.original.sum() == obs.size and h.released.sum() == rel.size
        assert h.edges[0] < min(obs.min(), rel.min()) and h.edges[-1] > max(obs.max(), rel.max())
        step = h.edges[1] - h.edges[0]
        assert np.allclose(np.diff(h.edges), step) and len(h.edges) - 1 <= 22
        mantissa = step / 10 ** np.floor(np.log10(step))
        assert any(np.isclose(mantissa, m) for m in (1, 2, 2.5, 5, 10))
    with pytest.raises(ValueError, match="bins"):
        ma.utility.histograms(x, release, bins=0)


def test_assess_columns_k_and_merges(census: np.ndarray) -> None:
    pd = pytest.importorskip("pandas")
    frame = pd.DataFrame(census, columns=[f"c{j}" for j in range(13)])
    release = frame.copy()
    release[["c1", "c4"]] = ma.microaggregate(census[:, [1, 4]], 3).aggregated
    a = ma.assess(frame, release, columns=["c1", "c4"], k=3)
    assert a.attributes == ("c1", "c4") and a.meets_k is True and a.records_below_k == 0
    assert ma.assess(census[:, :2], census[:, :2], columns=["age", "income"]).attributes == ("age", "income")
    with pytest.raises(ValueError, match="unknown column.*nope; the columns of X are"):
        ma.assess(frame, release, columns=["nope"])
    with pytest.raises(ValueError, match="columns names 1 columns"):
        ma.assess(census[:, :2], census[:, :2], columns=["a"])
    with pytest.raises(ValueError, match="k must be at least 2"):
        ma.assess(census, census, k=1)
    by = np.where(np.arange(len(census)) < 4, "tiny", "big")
    res = ma.microaggregate(census, 5, by=by, small_strata="merge")
    a = ma.assess(census, res.aggregated, merges=res.merges)
    assert a.to_dict()["merges"] == [{"stratum": "tiny", "into": "big", "size": 4}]
    assert "Strata merged for having fewer than k records" in a.to_html()
    with pytest.raises(TypeError, match="merges must hold"):
        ma.assess(census, census, merges=[1])


def test_global_linkage_on_request(census: np.ndarray) -> None:
    x = census[:300]
    release = ma.microaggregate(x, 3).aggregated
    assert ma.assess(x, release).record_linkage_global is None
    a = ma.assess(x, release, global_linkage=True)
    assert a.to_dict()["record_linkage_global_rate"] == ma.risk.record_linkage(x, release, "global").rate


def test_weights_are_stated(census: np.ndarray) -> None:
    release = ma.microaggregate(census, 4).aggregated
    weighted = ma.assess(census, release, weights=np.linspace(1, 2, len(census)))
    assert weighted.to_dict()["weighted"] is True and "weighted by the survey weights" in weighted.to_html()
    assert "unweighted" in ma.assess(census, release).to_html()
