"""The command line's mixed-key flags read into the arguments of :func:`microagg._mixed.release`.

``--ordinal "education=HS<BSc<MSc"`` gives a column's levels in increasing order (a level
holding ``<`` writes it ``\\<``, a backslash ``\\\\``) and ``--attribute-weight sex=2`` a
column's weight; both may repeat, once per column.
"""

from __future__ import annotations

import math
import re
from typing import Any, Callable, Sequence

MAX_ATTRIBUTE_WEIGHT = 1e6
"""The largest ``--attribute-weight``: a weight multiplies the column's standardized
distance, and at 1e6 every other column is already irrelevant; far beyond it the embedding
overflows."""


def _split(text: str, flag: str, example: str) -> tuple[str, str]:
    name, sep, value = text.partition("=")
    if not sep or not name.strip() or not value.strip():
        raise ValueError(f"{flag} takes COLUMN=VALUE, e.g. {flag} {example}; got {text!r}")
    return name.strip(), value.strip()


def parse_ordinal(text: str) -> tuple[str, list[str]]:
    """``"education=HS<BSc<MSc"`` as ``("education", ["HS", "BSc", "MSc"])``; ``"age=\\<18<18-65"``
    as ``("age", ["<18", "18-65"])`` (``\\<`` is a ``<`` inside a level, ``\\\\`` a backslash)."""
    name, value = _split(text, "--ordinal", '"education=HS<BSc<MSc"')
    levels = [""]
    for token in re.findall(r"\\.?|<|[^\\<]+", value):
        if token == "\\":
            raise ValueError(f"--ordinal {text!r}: a trailing backslash (write a backslash as \\\\)")
        if token == "<":
            levels.append("")
        else:
            levels[-1] += token[1:] if token.startswith("\\") else token
    levels = [v.strip() for v in levels]
    if any(not v for v in levels):
        raise ValueError(f"--ordinal {text!r}: an empty level (levels are separated by '<'; a '<' in a level is \\<)")
    if len(set(levels)) != len(levels):
        raise ValueError(f"--ordinal {text!r}: a level repeats")
    return name, levels


def parse_attribute_weight(text: str) -> tuple[str, float]:
    """``"sex=2"`` as ``("sex", 2.0)``; the weight must be a positive number, at most
    :data:`MAX_ATTRIBUTE_WEIGHT`."""
    name, value = _split(text, "--attribute-weight", "sex=2")
    try:
        weight = float(value)
    except ValueError:
        raise ValueError(f"--attribute-weight {text!r}: {value!r} is not a number") from None
    if not (math.isfinite(weight) and weight > 0):
        raise ValueError(f"--attribute-weight {text!r}: the weight must be finite and positive")
    if weight > MAX_ATTRIBUTE_WEIGHT:
        raise ValueError(
            f"--attribute-weight {text!r}: the weight is too large (at most {MAX_ATTRIBUTE_WEIGHT:g}; at that "
            "weight the other columns no longer count)"
        )
    return name, weight


def by_column(parse: Callable[[str], tuple[str, Any]], texts: Sequence[str], flag: str) -> dict[str, Any]:
    """Each repeated flag's ``COLUMN=VALUE`` read by ``parse``, by column; a column named
    twice is a ``ValueError`` (the second would silently replace the first)."""
    out: dict[str, Any] = {}
    for text in texts:
        name, value = parse(text)
        if name in out:
            raise ValueError(f"{flag} names column {name!r} twice; give it once")
        out[name] = value
    return out
