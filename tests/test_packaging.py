"""The extension is built for CPython's stable ABI (one abi3 wheel serves Python 3.9+)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from microagg import _core


@pytest.mark.skipif(sys.platform == "win32", reason="Windows names abi3 modules plain _core.pyd")
def test_extension_uses_the_stable_abi() -> None:
    assert Path(_core.__file__).name == "_core.abi3.so"
