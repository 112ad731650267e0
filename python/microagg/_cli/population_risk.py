"""The CLI's population-risk lines and option (docs/assessment.md#population-risk): what
``microagg assess`` prints of sdcMicro's individual and global risk, before -> after."""

from __future__ import annotations

import argparse
from typing import Any

from .._risk_change import DEFAULT_RISK_THRESHOLD

__all__ = ["DEFAULT_RISK_THRESHOLD", "add_risk_threshold", "population_risk_lines"]


def add_risk_threshold(parser: argparse.ArgumentParser) -> None:
    """The ``--risk-threshold`` option."""
    parser.add_argument("--risk-threshold", type=float, default=DEFAULT_RISK_THRESHOLD, metavar="R",
                        help="individual re-identification risk above which a record counts as at risk "
                        f"(default {DEFAULT_RISK_THRESHOLD:g})")


def population_risk_lines(d: dict[str, Any]) -> list[str]:
    """Lines for an assessment's ``to_dict()``: global risk, expected re-identifications and
    records above the threshold of the original -> the release, and the l-diversity."""
    r = d["population_risk"]
    model = "weighted (Benedetti-Franconi)" if r["weighted"] else "unweighted (1 / class size)"
    if r["weights_ignored"]:
        model += "; weights below 1 are not sampling weights, not used"
    lines = [
        f"population risk, {model}, original -> release:",
        f"  global risk {100 * r['global_risk_original']:.4f}% -> {100 * r['global_risk_released']:.4f}%",
        f"  expected re-identifications {r['expected_reidentifications_original']:.2f} -> "
        f"{r['expected_reidentifications_released']:.2f}",
        f"  records with risk above {r['threshold']:g}: {r['records_above_original']} -> {r['records_above_released']}",
    ]
    for name, l in (r["l_diversity_released"] or {}).items():
        lines.append(f"  l-diversity of {name}: {r['l_diversity_original'][name]} -> {l}")
    return lines
