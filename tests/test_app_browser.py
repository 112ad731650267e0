"""``microagg app`` end to end in a real browser: headless Chromium (Debian ``chromium`` and
``chromium-driver``) driven by selenium opens a file with a nominal and an ordinal key
column and missing cells, sets the key, k = 5 and runs; the verdict and the figures on the
page equal :func:`microagg.assess` of the release, the downloaded release is byte-identical
to the command line's, the downloaded command gives that same file, a failed run and a bad
file show the command line's message in the page, the server survives them, and the console
stays clean. With ``MICROAGG_APP_SCREENSHOT=docs/app.png`` it also writes the README's
screenshot. Skipped locally without the browser or Shiny; a failure in CI (.ci/run)."""

from __future__ import annotations

import os
import shlex
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import Any, Iterator

import numpy as np
import pytest

import microagg as ma
from conftest import optional
from test_report_browser import _executable

WAIT = 180  # seconds: generous, for a loaded 2-core machine
KEY = ["age", "income", "sex", "edu"]


def _env() -> dict[str, str]:
    env = dict(os.environ)
    # the microagg this test imports (an install or the editable source), never a bare source tree
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(Path(ma.__file__).parent.parent), env.get("PYTHONPATH")]))
    return env


def _port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


def _reachable(host: str, port: int) -> bool:
    try:
        with socket.create_connection((host, port), timeout=5):
            return True
    except OSError:
        return False


@pytest.fixture(scope="module")
def people(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A CSV file: an identifier, two numeric, a nominal and an ordinal column, missing cells."""
    pd = optional("pandas")
    rng = np.random.default_rng(7)
    n = 300
    df = pd.DataFrame({
        "id": np.arange(1000, 1000 + n),
        "age": rng.integers(18, 90, n).astype(float),
        "income": rng.normal(40000, 9000, n).round(0),
        "sex": rng.choice(["F", "M"], n),
        "edu": rng.choice(["low", "mid", "high"], n),
    })
    df.loc[::13, "age"] = np.nan
    df.loc[::29, "sex"] = None
    path = tmp_path_factory.mktemp("people") / "people.csv"
    df.to_csv(path, index=False)
    return path


@pytest.fixture(scope="module")
def server(people: Path) -> Iterator[str]:
    """``microagg app people.csv`` on a free port, stopped at the end whatever happens."""
    optional("shiny")
    port = _port()
    proc = subprocess.Popen([sys.executable, "-m", "microagg", "app", str(people), "--port", str(port), "--no-browser"],
                            env=_env(), stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    try:
        deadline = time.monotonic() + WAIT
        while not _reachable("127.0.0.1", port):
            if proc.poll() is not None or time.monotonic() > deadline:
                out = proc.stdout.read().decode() if proc.stdout else ""
                pytest.fail(f"the app did not start: {out}")
            time.sleep(0.2)
        yield f"http://127.0.0.1:{port}/"
    finally:
        proc.terminate()
        try:
            proc.wait(30)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


@pytest.fixture(scope="module")
def browser(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Any, Path]]:
    webdriver = optional("selenium.webdriver")
    binary, driver_path = _executable("chromium", "chromium-browser"), _executable("chromedriver")
    downloads = tmp_path_factory.mktemp("downloads")
    options = webdriver.ChromeOptions()
    options.binary_location = binary
    for flag in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                 "--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE 127.0.0.1", "--window-size=1280,1800"):
        options.add_argument(flag)
    options.add_experimental_option("prefs", {"download.default_directory": str(downloads),
                                              "download.prompt_for_download": False})
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    driver = webdriver.Chrome(options=options, service=webdriver.ChromeService(executable_path=driver_path))
    driver.execute_cdp_cmd("Page.setDownloadBehavior", {"behavior": "allow", "downloadPath": str(downloads)})
    try:
        yield driver, downloads
    finally:
        driver.quit()


def _wait(driver: Any, css: str, text: str = "") -> Any:
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support import expected_conditions as EC
    from selenium.webdriver.support.ui import WebDriverWait

    if text:
        WebDriverWait(driver, WAIT).until(EC.text_to_be_present_in_element((By.CSS_SELECTOR, css), text))
    return WebDriverWait(driver, WAIT).until(EC.visibility_of_element_located((By.CSS_SELECTOR, css)))


def _select(driver: Any, element_id: str, value: str) -> None:
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import Select

    Select(driver.find_element(By.ID, element_id)).select_by_value(value)


def _download(driver: Any, folder: Path, button: str) -> Path:
    from selenium.webdriver.common.by import By

    before = set(folder.iterdir())
    driver.find_element(By.ID, button).click()
    deadline = time.monotonic() + WAIT
    while time.monotonic() < deadline:
        new = [p for p in set(folder.iterdir()) - before if not p.name.endswith(".crdownload")]
        if new:
            time.sleep(0.5)  # the file is renamed once complete; let it settle
            return new[0]
        time.sleep(0.2)
    pytest.fail(f"{button}: no download")


def _column(driver: Any, name: str) -> int:
    from selenium.webdriver.common.by import By

    names = [td.text for td in driver.find_elements(By.CSS_SELECTOR, "#columns-table td.column-name")]
    return names.index(name)


def _run(driver: Any, k: str) -> None:
    from selenium.webdriver.common.by import By
    from selenium.webdriver.common.keys import Keys

    box = driver.find_element(By.ID, "ks")
    box.clear()
    box.send_keys(k, Keys.TAB)  # sent on blur, before the click
    driver.find_element(By.ID, "run").click()


def _set_key(driver: Any) -> None:
    from selenium.webdriver.common.by import By
    from selenium.webdriver.common.keys import Keys

    _wait(driver, "#columns-table")
    for name in KEY:
        _select(driver, f"role_{_column(driver, name)}", "key")
    edu = _column(driver, "edu")
    _select(driver, f"type_{edu}", "ordinal")
    levels = driver.find_element(By.ID, f"levels_{edu}")
    levels.clear()
    levels.send_keys("low<mid<high", Keys.TAB)
    _select(driver, "missing", "fill")


def test_app_release_matches_assess_and_cli(server: str, browser: tuple[Any, Path], people: Path,
                                            tmp_path: Path) -> None:
    pd = optional("pandas")
    from selenium.webdriver.common.by import By

    driver, downloads = browser
    driver.get(server)
    _set_key(driver)
    # the identifier is flagged and left out of the key
    assert "identifier" in driver.find_elements(By.CSS_SELECTOR, "#columns-table td.flag")[_column(driver, "id")].text

    # a failed run: the command line's message in the page, and the server goes on
    _run(driver, "100000")
    shown = _wait(driver, "#error-message").text
    assert "microagg: error:" in shown and "Traceback" not in shown
    _run(driver, "5")
    verdict = _wait(driver, "#verdict", "achieved")

    command = driver.find_element(By.ID, "command").text
    argv = shlex.split(command)[1:]
    released = _download(driver, downloads, "download_release")
    assert released.name == argv[argv.index("-o") + 1]

    # the command line, with the same settings, writes the same bytes
    cli = tmp_path / "cli.csv"
    run = subprocess.run([sys.executable, "-m", "microagg", *argv[:-1], str(cli)], env=_env(),
                         capture_output=True, text=True, timeout=WAIT)
    assert run.returncode == 0, run.stderr
    assert cli.read_bytes() == released.read_bytes()

    # the downloaded command, run in a folder, gives that same file
    script = _download(driver, downloads, "download_command")
    batch = tmp_path / "batch"
    batch.mkdir()
    shell = subprocess.run(["sh", str(script)], cwd=batch, env={**_env(), "PATH": f"{Path(sys.executable).parent}:{os.environ['PATH']}"},
                           capture_output=True, text=True, timeout=WAIT)
    assert shell.returncode == 0, shell.stderr
    assert (batch / released.name).read_bytes() == released.read_bytes()
    snippet = _download(driver, downloads, "download_python")
    assert subprocess.run([sys.executable, str(snippet)], cwd=tmp_path, env=_env(), timeout=WAIT).returncode == 0
    assert (tmp_path / released.name).read_bytes() == released.read_bytes()

    # the verdict and the figures are assess()'s on the release
    na = {"keep_default_na": False, "na_values": ["", "NA", "nan"]}
    d = ma.assess(pd.read_csv(people, **na), pd.read_csv(released, **na), columns=KEY, categorical=["sex"],
                  ordinal={"edu": ["low", "mid", "high"]}, k=5).to_dict()
    assert verdict.get_attribute("data-meets-k") == str(d["meets_k"])
    for key in ("information_loss", "record_linkage_rate", "interval_disclosure", "min_group_size", "records_below_k"):
        assert driver.find_element(By.ID, f"figure-{key}").get_attribute("data-value") == repr(d[key]), key
    report = _download(driver, downloads, "download_report")
    assert "Release report" in report.read_text(encoding="utf-8")

    if os.environ.get("MICROAGG_APP_SCREENSHOT"):
        driver.execute_script("window.scrollTo(0, 0)")
        driver.save_screenshot(os.environ["MICROAGG_APP_SCREENSHOT"])

    # a bad file: the command line's message, in the page
    bad = tmp_path / "bad.csv"
    bad.write_text("a,b\n1,2\n3\n")
    expected = subprocess.run([sys.executable, "-m", "microagg", "anonymize", "bad.csv", "-k", "5"], cwd=tmp_path,
                              env=_env(), capture_output=True, text=True, timeout=WAIT).stderr.strip()
    driver.find_element(By.ID, "upload").send_keys(str(bad))
    assert _wait(driver, "#error-message", "line 3").text == expected

    errors = [e for e in driver.get_log("browser") if e["level"] == "SEVERE"]
    assert errors == [], errors


def test_two_sessions_see_only_their_own_data(server: str, browser: tuple[Any, Path], tmp_path: Path) -> None:
    from selenium.webdriver.common.by import By

    driver, _ = browser
    driver.get(server)
    other = tmp_path / "other.csv"
    other.write_text("x,y\n" + "".join(f"{i},{i * 2}\n" for i in range(20)))
    _wait(driver, "#columns-table")
    driver.find_element(By.ID, "upload").send_keys(str(other))
    _wait(driver, "#opened-name", "other.csv")
    driver.switch_to.new_window("tab")
    try:
        driver.get(server)
        assert "people.csv" in _wait(driver, "#opened-name").text
    finally:
        driver.close()
        driver.switch_to.window(driver.window_handles[0])


def _addresses() -> set[str]:
    """This machine's addresses other than 127.0.0.1 (127.0.0.2 at least: loopback, but not
    the one the app binds)."""
    found = {"127.0.0.2"}
    for info in socket.getaddrinfo(socket.gethostname(), None, socket.AF_INET):
        found.add(str(info[4][0]))
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        try:
            s.connect(("192.0.2.1", 9))  # no packet is sent: it picks the outgoing interface
            found.add(s.getsockname()[0])
        except OSError:
            pass
    return found - {"127.0.0.1", "0.0.0.0"}


def test_server_listens_on_loopback_only(server: str) -> None:
    port = int(server.rstrip("/").rsplit(":", 1)[1])
    assert _reachable("127.0.0.1", port)
    for address in _addresses():
        assert not _reachable(address, port), address
    # a page asked for under another host name (DNS rebinding) is refused; this one has the policy
    import http.client

    for host, status in ((f"127.0.0.1:{port}", 200), (f"attacker.example:{port}", 403)):
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=WAIT)
        conn.request("GET", "/", headers={"Host": host})
        response = conn.getresponse()
        assert response.status == status, host
        if status == 200:
            assert "default-src 'self'" in response.getheader("content-security-policy", "")
        conn.close()


def test_library_and_cli_never_import_the_app() -> None:
    code = "import sys, microagg, microagg.cli; print(sorted(m for m in sys.modules if m.split('.')[0] in ('shiny', 'uvicorn', 'starlette') or m.startswith('microagg.app')))"
    out = subprocess.run([sys.executable, "-c", code], env=_env(), capture_output=True, text=True, timeout=WAIT)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "[]"


def test_candidates_on_the_ru_map_and_the_picked_release(server: str, browser: tuple[Any, Path]) -> None:
    from selenium.common.exceptions import StaleElementReferenceException
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import WebDriverWait

    driver, downloads = browser
    driver.get(server)
    _set_key(driver)
    driver.execute_script("$('#methods')[0].selectize.setValue(['mdav', 'vmdav'])")
    _run(driver, "3,5")
    _wait(driver, "#verdict")
    options = driver.find_elements(By.CSS_SELECTOR, "#release input[type=radio]")
    assert len(options) == 4  # 2 methods x 2 k
    assert "R-U map" in driver.find_element(By.ID, "report").get_attribute("srcdoc")
    options[3].click()  # vmdav, k = 5
    WebDriverWait(driver, WAIT, ignored_exceptions=[StaleElementReferenceException]).until(
        lambda d: "vmdav" in d.find_element(By.ID, "command").text)
    assert _download(driver, downloads, "download_release").name == "people_k5_vmdav.csv"


def test_progress_moves_and_cancel_stops_the_run(server: str, browser: tuple[Any, Path], tmp_path: Path) -> None:
    from selenium.common.exceptions import StaleElementReferenceException
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import WebDriverWait

    driver, _ = browser
    driver.get(server)
    _wait(driver, "#columns-table")
    big = tmp_path / "big.csv"
    x = np.random.default_rng(3).normal(size=(60000, 3)).round(4)
    big.write_text("a,b,c\n" + "\n".join(f"{u},{v},{w}" for u, v, w in x) + "\n")
    driver.find_element(By.ID, "upload").send_keys(str(big))
    _wait(driver, "#opened-name", "big.csv")
    driver.execute_script("$('#methods')[0].selectize.setValue(['ona'])")  # slow: O(n^2) improvement rounds
    _run(driver, "5")
    _wait(driver, "#progress-bar")
    # the command line's progress line (after 5 s), then a later one: the report moves
    seen: list[str] = []

    def moved(d: Any) -> bool:  # the box is re-drawn as it moves: read afresh each time
        text = d.find_element(By.ID, "progress-text").text
        if "improvement rounds" in text and text not in seen:
            seen.append(text)
        return len(seen) >= 2

    WebDriverWait(driver, WAIT, ignored_exceptions=[StaleElementReferenceException]).until(moved)
    assert "run 1 of 1 (ona, k = 5)" in seen[-1]
    driver.find_element(By.ID, "cancel").click()
    assert "run cancelled" in _wait(driver, "#error-message", "cancelled").text
    assert driver.find_elements(By.ID, "progress-bar") == []
    # the server goes on: the next run works
    driver.execute_script("$('#methods')[0].selectize.setValue(['mdav'])")
    _run(driver, "5")
    _wait(driver, "#verdict", "achieved")


def test_missing_value_codes_read_the_file_again(server: str, browser: tuple[Any, Path], tmp_path: Path) -> None:
    from selenium.webdriver.common.by import By
    from selenium.webdriver.common.keys import Keys
    from selenium.webdriver.support.ui import WebDriverWait

    driver, _ = browser
    driver.get(server)
    _wait(driver, "#columns-table")
    coded = tmp_path / "coded.csv"
    coded.write_text("age,town\n" + "".join(f"{'?' if i % 7 == 0 else 20 + i},t{i % 3}\n" for i in range(40)))
    driver.find_element(By.ID, "upload").send_keys(str(coded))
    _wait(driver, "#opened-name", "coded.csv")
    assert "declare them missing" in driver.find_elements(By.CSS_SELECTOR, "#columns-table td.flag")[0].text
    driver.find_element(By.ID, "na_values").send_keys("?", Keys.TAB)
    WebDriverWait(driver, WAIT).until(
        lambda d: d.execute_script("return document.querySelector('#role_0') && document.querySelector('#role_0').value")
        == "key")


def test_another_address_needs_the_flag_and_is_warned_about() -> None:
    optional("shiny")
    port = _port()
    proc = subprocess.Popen([sys.executable, "-m", "microagg", "app", "--host", "127.0.0.2", "--port", str(port),
                             "--no-browser"], env=_env(), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + WAIT
        while not _reachable("127.0.0.2", port) and proc.poll() is None and time.monotonic() < deadline:
            time.sleep(0.2)
        assert _reachable("127.0.0.2", port)
        assert not _reachable("127.0.0.1", port)
    finally:
        proc.terminate()
        _, err = proc.communicate(timeout=60)
    assert "warning: serving on 127.0.0.2, not only on this machine" in err
