"""The ``microagg`` console script's entry point (the tool itself is :mod:`microagg._cli`)."""

from ._cli.main import main

__all__ = ["main"]
