"""The release report in a real browser: headless Chromium (Debian ``chromium`` and
``chromium-driver``) driven by selenium opens the file offline and finds no console error,
no request beyond the file itself, every section, every figure drawn with a size, and every
number equal to ``Assessment.to_dict()``. Skipped locally without the browser; a failure
in CI, which installs it (.ci/run)."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path
from typing import Any, Iterator

import numpy as np
import pytest

import microagg as ma
from conftest import optional
from report_checks import SECTIONS, bar_counts, check_cell, check_small_cells, frequency_rows, resolve


def _executable(*names: str) -> str:
    for name in names:
        found = shutil.which(name)
        if found:
            return found
    message = f"{' or '.join(names)} is not installed (apt-get install chromium chromium-driver)"
    if os.environ.get("CI"):
        pytest.fail(f"{message}: CI installs it in .ci/run, so the browser test must run")
    pytest.skip(message)


@pytest.fixture(scope="module")
def chromium() -> Iterator[Any]:
    webdriver = optional("selenium.webdriver")
    binary, driver_path = _executable("chromium", "chromium-browser"), _executable("chromedriver")
    options = webdriver.ChromeOptions()
    options.binary_location = binary
    for flag in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                 "--host-resolver-rules=MAP * ~NOTFOUND", "--window-size=1280,1600"):
        options.add_argument(flag)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL", "performance": "ALL"})
    driver = webdriver.Chrome(options=options, service=webdriver.ChromeService(executable_path=driver_path))
    try:
        yield driver
    finally:
        driver.quit()


@pytest.fixture(scope="module")
def report(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, Any], list[dict[str, Any]]]:
    census = ma.datasets.load_census()
    candidates = [{"method": m, "k": k, **ma.assess(census, ma.microaggregate(census, k, m).aggregated).to_dict()}
                  for m in ("mdav", "vmdav") for k in (3, 5, 10)]
    x = census.copy()
    x[::11, 3] = np.nan
    strata = np.arange(len(x)) % 2
    release = ma.microaggregate(x, 5, by=strata, missing="fill").aggregated
    # a categorical key attribute (a banding of the first attribute) for the frequency tables
    bands = {name: np.where(np.isnan(v), None, np.array(["low", "mid", "high"], dtype=object)[np.digitize(v, [-0.5, 0.5])])
             for name, v in (("original", (x[:, 0] - x[:, 0].mean()) / x[:, 0].std()),
                             ("released", (release[:, 0] - x[:, 0].mean()) / x[:, 0].std()))}
    a = ma.assess(x, release, k=5, by=strata, global_linkage=True, categorical={"band": (bands["original"], bands["released"])})
    path = tmp_path_factory.mktemp("report") / "report.html"
    a.to_html(path, candidates=candidates, provenance={"parameters": {"k": 5, "method": "mdav", "by": "parity", "missing": "fill"}})
    return path, a.to_dict(), candidates


def test_report_renders_offline_with_every_section_figure_and_number(chromium: Any, report: tuple) -> None:
    from selenium.webdriver.common.by import By

    path, d, candidates = report
    chromium.get(path.as_uri())
    assert chromium.title.startswith("Release report")
    errors = [e for e in chromium.get_log("browser") if e["level"] in ("SEVERE", "WARNING")]
    assert errors == [], errors
    requests = [json.loads(e["message"])["message"] for e in chromium.get_log("performance")]
    urls = {m["params"]["request"]["url"] for m in requests if m["method"] == "Network.requestWillBeSent"}
    assert urls == {path.as_uri()}, urls
    sections = [s.get_attribute("id") for s in chromium.find_elements(By.TAG_NAME, "section")]
    assert sections == list(SECTIONS)
    for ident in SECTIONS:
        assert chromium.find_element(By.ID, ident).is_displayed()
    figures = chromium.find_elements(By.CSS_SELECTOR, "svg")
    assert len(figures) == 2 + d["n_attributes"] + 2  # class sizes, individual risk, histograms, R-U map
    for svg in figures:
        assert svg.size["width"] > 100 and svg.size["height"] > 100, svg.get_attribute("aria-label")
        assert svg.find_elements(By.CSS_SELECTOR, "rect, circle"), "a figure with nothing drawn"
    cells = chromium.find_elements(By.CSS_SELECTOR, "[data-key]")
    assert len(cells) > 5 * d["n_attributes"]
    assert {c.get_attribute("data-key") for c in cells} >= {f"categorical.band.{m}.{i}" for i in range(3)
                                                            for m in ("original_frequencies", "released_frequencies")}
    assert {c.get_attribute("data-key") for c in cells} >= {f"population_risk.{m}_{when}" for when in ("original", "released")
                                                            for m in ("global_risk", "expected_reidentifications")}
    for cell in cells:
        key = cell.get_attribute("data-key")
        check_cell(key, cell.get_attribute("data-value"), cell.text, resolve(key, d, candidates))
    assert chromium.find_element(By.ID, "verdict").text.startswith("The release MEETS k = 5")


ADULT = Path(__file__).resolve().parents[1] / ".." / "shared" / "datasets" / "adult.csv"


@pytest.fixture(scope="module")
def adult_report(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, Any]]:
    """Adult's first 2 000 records (rare levels: Without-pay 1 record, Preschool 2), a mixed
    key released at k = 5 and t-close in income: the report of the small-cell rule."""
    pd = optional("pandas")
    if not ADULT.exists():
        pytest.skip(f"{ADULT} is not here")
    adult = pd.read_csv(ADULT, nrows=2000, na_values="?")
    numeric, nominal = ["age", "hours-per-week"], ["workclass", "education", "occupation"]
    released = ma.anonymize(adult, 5, columns=[*numeric, *nominal], missing="fill")
    a = ma.assess(adult[numeric], released[numeric], k=5, categorical={c: (adult[c], released[c]) for c in nominal},
                  sensitive={"income": adult["income"].to_numpy()}, t=0.5)
    path = tmp_path_factory.mktemp("adult") / "adult.html"
    a.to_html(path)
    return path, a.to_dict()


def test_the_small_cell_rule_holds_on_the_page_the_browser_shows(chromium: Any, adult_report: tuple) -> None:
    from selenium.webdriver.common.by import By

    path, d = adult_report
    chromium.get(path.as_uri())
    assert [e for e in chromium.get_log("browser") if e["level"] in ("SEVERE", "WARNING")] == []
    text = chromium.find_element(By.TAG_NAME, "body").text
    for level in ("Without-pay", "Preschool", "Armed-Forces"):
        assert level not in text
    assert "levels held by fewer than 5 records each" in text or "level held by fewer than 5 records each" in text
    assert chromium.find_element(By.ID, "small-cell-rule").is_displayed()
    assert chromium.find_element(By.ID, "t-closeness").is_displayed()
    assert "5 key attributes" in chromium.find_element(By.ID, "key-count").text
    for svg in chromium.find_elements(By.CSS_SELECTOR, "svg"):
        assert svg.size["width"] > 100 and svg.size["height"] > 100, svg.get_attribute("aria-label")
    for cell in chromium.find_elements(By.CSS_SELECTOR, "[data-key]"):
        key = cell.get_attribute("data-key")
        check_cell(key, cell.get_attribute("data-value"), cell.text, resolve(key, d))
    source = chromium.page_source
    assert bar_counts(source) and len(frequency_rows(source)) > 20  # the checks below see the bars and tables
    check_small_cells(source, 5)
