"""The release report's population-risk block (docs/assessment.md#population-risk): sdcMicro's
individual and global re-identification risk of the original and of the release on the same
key (before -> after), the records above the risk threshold, the histogram of individual risk
(bins of fewer than k records merged, the small-cell rule) and the l-diversity of the
sensitive attributes."""

from __future__ import annotations

from typing import Any

from ._html import p, table, td, th
from ._small_cells import merge_sparse_bins, threshold
from ._svg import bar_chart, label


def population_risk(d: dict[str, Any]) -> str:
    """The block for an assessment's ``to_dict()`` (empty when it holds no population risk)."""
    r = d.get("population_risk")
    if r is None:
        return ""
    model = ("the Benedetti-Franconi model of sdcMicro's measure_risk, the population class size estimated "
             "from the sampling weights" if r["weighted"] else "the sample view, 1 / the class size (no sampling weights)")
    if r["weights_ignored"]:
        model += "; the weights given are not sampling weights (some are below 1) and were not used"
    body = '<h3 id="population-risk">Re-identification risk in the population</h3>'
    body += p(f"Each record's individual risk by {model}, over the whole key of each file (classes as above). "
              "The global risk is their mean, the expected re-identifications their sum.")
    rows = [
        [th(name), td(r[f"{key}_original"], f"population_risk.{key}_original", style),
         td(r[f"{key}_released"], f"population_risk.{key}_released", style)]
        for name, key, style in (
            ("global risk (mean individual risk)", "global_risk", "pct"),
            ("expected re-identifications (sum of individual risks)", "expected_reidentifications", "g"),
            ("highest individual risk", "max_risk", "pct"),
            (f"records with individual risk above {r['threshold']:g}", "records_above", "g"),
        )
    ]
    for name in r["l_diversity_released"] or {}:
        rows.append([th(f"l-diversity of {name} (fewest distinct values in a class)"),
                     *(td(r[f"l_diversity_{when}"][name], f"population_risk.l_diversity_{when}.{name}")
                       for when in ("original", "released"))])
    body += table(("measure", "original", "release"), rows, "Population re-identification risk, before and after")
    k = threshold(d)
    h = r["histogram"]
    edges, original, released = merge_sparse_bins(h["edges"], h["original"], h["released"], k)
    every = -(-(len(edges) - 1) // 5)
    ticks = [(float(i), label(e)) for i, e in enumerate(edges) if i % every == 0 or i == len(edges) - 1]
    body += '<figure class="chart">' + bar_chart(
        len(edges) - 1, [("original", original), ("released", released)], ticks,
        title="Records by individual risk", x_label="individual risk") + "</figure>"
    return body + p(f"Histogram of individual risk: a bin holding fewer than {k} records of either file is merged "
                    "with its neighbours.")
