"""The command line's mixed-key flags read into the arguments of :func:`microagg._mixed.release`.

``--ordinal "education=HS<BSc<MSc"`` gives a column's levels in increasing order and
``--attribute-weight sex=2`` a column's weight; both may repeat.
"""

from __future__ import annotations

import math


def _split(text: str, flag: str, example: str) -> tuple[str, str]:
    name, sep, value = text.partition("=")
    if not sep or not name.strip() or not value.strip():
        raise ValueError(f"{flag} takes COLUMN=VALUE, e.g. {flag} {example}; got {text!r}")
    return name.strip(), value.strip()


def parse_ordinal(text: str) -> tuple[str, list[str]]:
    """``"education=HS<BSc<MSc"`` as ``("education", ["HS", "BSc", "MSc"])``."""
    name, value = _split(text, "--ordinal", '"education=HS<BSc<MSc"')
    levels = [v.strip() for v in value.split("<")]
    if any(not v for v in levels):
        raise ValueError(f"--ordinal {text!r}: an empty level (levels are separated by '<')")
    if len(set(levels)) != len(levels):
        raise ValueError(f"--ordinal {text!r}: a level repeats")
    return name, levels


def parse_attribute_weight(text: str) -> tuple[str, float]:
    """``"sex=2"`` as ``("sex", 2.0)``; the weight must be a finite positive number."""
    name, value = _split(text, "--attribute-weight", "sex=2")
    try:
        weight = float(value)
    except ValueError:
        raise ValueError(f"--attribute-weight {text!r}: {value!r} is not a number") from None
    if not (math.isfinite(weight) and weight > 0):
        raise ValueError(f"--attribute-weight {text!r}: the weight must be finite and positive")
    return name, weight
