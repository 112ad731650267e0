"""``_core.pyi`` matches the compiled extension exactly (mypy's stubtest): every function,
class and signature the bindings expose is typed as the runtime has it."""

from __future__ import annotations

import subprocess
import sys

from conftest import optional


def test_stubtest_finds_no_difference() -> None:
    optional("mypy.stubtest")
    r = subprocess.run(
        [sys.executable, "-m", "mypy.stubtest", "microagg._core"],
        capture_output=True,
        text=True,
    )
    assert r.returncode == 0, r.stdout + r.stderr
    assert "Success" in r.stdout
