"""The release report: one self-contained HTML page from which a disclosure review board
signs off on a release, as sdcMicro's ``report()``, µ-Argus's HTML report and ARX's
certificate do, for microaggregation.

Sections, in order: summary (k requested and achieved, records in classes below k, the
headline risk and utility figures), provenance (files with size and SHA-256, version, date,
the key and every parameter), privacy (class sizes, interval disclosure, record linkage,
strata merges), utility (IL, IL1s, eigen, per-attribute moments and histograms) and, when
candidates were compared, the R-U map. Aggregates only, by a rule the page states: no
record of either file and no level, histogram bin or table cell describing fewer than k
records of either file (rare levels and sparse bins are merged first).

>>> import microagg as ma
>>> X = ma.datasets.load_census()
>>> a = ma.assess(X, ma.microaggregate(X, 5).aggregated, k=5)
>>> html = a.to_html()  # or ma.report.write_report("report.html", a, provenance=...)
"""

from ._page import render_report, write_report
from ._provenance import file_provenance

__all__ = ["file_provenance", "render_report", "write_report"]
