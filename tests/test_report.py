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
from report_checks import SECTIONS, check_cell, check_small_cells, frequency_rows, parse, resolve


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
    assert len(re.findall(r"<svg ", html)) == 2 + d["n_attributes"] + 2  # class sizes, risk, histograms, R-U map


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


ADULT = Path(__file__).resolve().parents[1] / ".." / "shared" / "datasets" / "adult.csv"


@pytest.fixture(scope="module")
def adult() -> "pd.DataFrame":
    pd = pytest.importorskip("pandas")
    if not ADULT.exists():
        pytest.skip(f"{ADULT} is not here")
    return pd.read_csv(ADULT, nrows=2000, na_values="?")


def test_an_id_column_in_the_key_shows_no_id_and_rare_levels_merge(census: np.ndarray) -> None:
    ids = np.array([f"person-{i:03d}" for i in range(500)], dtype=object)
    x = census[:500]
    a = ma.assess(x, x, k=5, categorical={"id": (ids, ids)})
    html = a.to_html()
    assert not re.search(r"person-\d", html)
    rows = dict(frequency_rows(html))
    assert rows["500 levels held by fewer than 5 records each"][:2] == ["500", "500"]
    check_small_cells(html, 5)


def test_adults_rare_levels_and_sparse_bins_are_merged(adult: "pd.DataFrame") -> None:
    key = ["workclass", "education", "occupation"]
    release = ma.anonymize(adult, 5, columns=["age", "hours-per-week", *key], missing="fill")
    released = release.data if hasattr(release, "data") else release
    a = ma.assess(adult[["age", "hours-per-week"]], released[["age", "hours-per-week"]], k=5,
                  categorical={c: (adult[c], released[c]) for c in key})
    html = a.to_html()
    for level in ("Without-pay", "Preschool", "Armed-Forces"):
        assert level not in html
    assert "Private" in html and "HS-grad" in html  # the levels of many records stay
    check_small_cells(html, 5)
    raw = [c for h in a.histograms for c in (*h.original, *h.released)]
    assert any(0 < c < 5 for c in raw)  # the merging had something to do
    # the whole key is counted, and the missing cells as read (123 in each of two columns)
    assert a.key_attributes == ("age", "hours-per-week", *key) and a.to_dict()["n_key_attributes"] == 5
    assert a.missing_original == 246 and a.missing_released == 0
    assert "5 key attributes (numeric: age, hours-per-week; nominal: workclass, education, occupation)" in html


def test_without_k_the_rule_uses_three_records(census: np.ndarray) -> None:
    html = ma.assess(census, ma.microaggregate(census, 3).aggregated).to_html()
    check_small_cells(html, 3)


def test_sparse_bins_merge_into_their_neighbours() -> None:
    from microagg.report._small_cells import merge_sparse_bins

    edges, o, r = merge_sparse_bins([0, 1, 2, 3, 4, 5, 6], [1, 6, 0, 0, 5, 2], [0, 7, 0, 0, 5, 1], 3)
    assert (edges, o, r) == ([0.0, 2.0, 3.0, 4.0, 6.0], [7, 0, 0, 7], [7, 0, 0, 6])
    # a sparse run at the end joins bins before it until it is no longer sparse
    assert merge_sparse_bins([0, 1, 2, 3], [10, 0, 1], [0, 5, 2], 3) == ([0.0, 3.0], [11], [7])
    assert merge_sparse_bins([0, 1], [2], [2], 3) == ([0.0, 1.0], [2], [2])  # fewer than k in all


def test_a_t_close_release_has_its_t_closeness_section(census: np.ndarray) -> None:
    income = census[:, 0].copy()
    key = census[:, 1:]
    res = ma.t_close_microaggregate(key, 5, sensitive=income, t=0.3)
    met = ma.assess(key, res.aggregated, k=5, sensitive={"income": income}, t=0.3)
    assert met.meets_t is True and met.to_dict()["t_requested"] == 0.3
    html = met.to_html()
    assert 'id="t-closeness"' in html and "MEETS t = 0.3" in html
    for key_, value, shown in parse(html).cells:
        check_cell(key_, value, shown, resolve(key_, met.to_dict()))
    missed = ma.assess(key, res.aggregated, k=5, sensitive={"income": income}, t=0.01)
    assert missed.meets_t is False and "MISSES t = 0.01" in missed.to_html()
    with pytest.raises(ValueError, match="t needs sensitive"):
        ma.assess(key, res.aggregated, t=0.3)
    with pytest.raises(ValueError, match="t must be in"):
        ma.assess(key, res.aggregated, sensitive={"income": income}, t=1.5)


def test_columns_with_a_value_per_record_are_flagged_as_identifiers(census: np.ndarray) -> None:
    pd = pytest.importorskip("pandas")
    names = [f"v{j}" for j in range(census.shape[1])]
    original = pd.DataFrame(census, columns=names).assign(name=[f"n{i}" for i in range(len(census))], region=1)
    released = original.copy()
    released[names] = ma.microaggregate(census, 5).aggregated
    a = ma.assess(original, released, columns=names, k=5)
    assert a.identifiers == ("name",)  # region repeats a value: not flagged
    html = a.to_html()
    assert 'id="identifiers"' in html and "Possible direct identifiers copied as read: name." in html
    assert 'id="identifiers"' not in ma.assess(census, ma.microaggregate(census, 5).aggregated, k=5).to_html()


def test_the_report_package_does_not_import_the_assessment() -> None:
    import ast

    package = Path(ma.__file__).parent / "report"
    for source in package.glob("*.py"):
        for node in ast.walk(ast.parse(source.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom):
                assert "_assessment" not in (node.module or ""), source.name
