"""The sections of the release report, in the order a review board reads them: summary,
provenance, privacy, utility, and the R-U map when candidates were compared. Each builder
takes the assessment's ``to_dict()`` (``d``) and returns one ``<section>``; every figure
shown is an aggregate (a measure, a count, a mean), never a record's value."""

from __future__ import annotations

from typing import Any, Optional, Sequence

from ._html import esc, p, section, table, td, th
from ._population_risk import population_risk
from ._small_cells import merge_sparse_bins, rare_levels, sparse, threshold
from ._svg import bar_chart, label, scatter_chart

#: Levels listed one by one in a frequency table; the rest share one row.
FREQUENCY_ROWS = 25


RISKS = (("record_linkage_rate", "record linkage (nearest)"), ("interval_disclosure", "interval disclosure"))
"""Risk measures an R-U map can plot, as ``Assessment.to_dict()`` names them."""


def _verdict(ok: Optional[bool]) -> str:
    if ok is None:
        return "<td>no request</td>"
    return '<td class="ok">meets</td>' if ok else '<td class="miss">MISSES</td>'


def key_kinds(d: dict[str, Any], prov: dict[str, Any]) -> dict[str, str]:
    """The whole key, each attribute with its type: as the run recorded it (``prov["key"]``),
    else numeric for the numeric attributes and nominal for the categorical ones."""
    given = prov.get("key") or {}
    kinds = {a: "numeric" for a in d["attributes"]} | {a: "nominal" for a in d["categorical"]}
    return {a: str(given.get(a, kinds.get(a, "numeric"))) for a in [*kinds, *given]}


def summary(d: dict[str, Any], prov: dict[str, Any]) -> str:
    """k (and t) requested and achieved over the whole key, the records in classes below k,
    the headline risk and utility figures, each marked against the request where there is
    one, and the columns flagged as possible direct identifiers."""
    k, within = d["k_requested"], "" if d["n_strata"] is None else f" within {d['n_strata']} strata"
    if k is None:
        lead = (f"No k was requested. Every record shares its key values{within} with at least "
                f"{d['min_group_size']} released records (itself included).")
    elif d["meets_k"]:
        lead = f"The release MEETS k = {k}: every record is in a class of at least {k} records over the whole key{within}."
    else:
        lead = (f"The release MISSES k = {k}: {d['records_below_k']} of {d['n_records']} records are in classes "
                f"of fewer than {k} records over the whole key{within} (smallest class: {d['min_group_size']}).")
    rows = [
        [th("k achieved (smallest class)"), td(d["min_group_size"], "min_group_size"), td(k, "k_requested"), _verdict(d["meets_k"])],
        [th("records in classes below k"), td(d["records_below_k"], "records_below_k"), td(None if k is None else 0),
         _verdict(d["meets_k"])],
        [th("re-identification risk, highest (1 / smallest class)"),
         td(d["reidentification_risk_max"], "reidentification_risk_max", "pct"), td("-"), _verdict(None)],
        [th(f"interval disclosure (p = {d['p']:g})"), td(d["interval_disclosure"], "interval_disclosure", "pct"), td("-"), _verdict(None)],
        [th("record linkage, nearest"), td(d["record_linkage_rate"], "record_linkage_rate", "pct"), td("-"), _verdict(None)],
        [th("numeric information loss (SSE/SST on the numeric key columns)"),
         td(d["information_loss"], "information_loss", "pct"), td("-"), _verdict(None)],
        *([th(f"t-closeness of {name} (largest class EMD)"), td(v, f"max_emd.{name}"), td(d.get("t_requested"), "t_requested"),
           _verdict(None if d.get("t_requested") is None else v <= d["t_requested"])]
          for name, v in (d.get("max_emd") or {}).items()),
        [th("IL1s"), td(d["il1s"], "il1s"), td("-"), _verdict(None)],
        [th("eigen"), td(d["eigen"], "eigen"), td("-"), _verdict(None)],
    ]
    if d.get("meets_t") is not None:
        lead += (f" It MEETS t = {d['t_requested']:g}: every class is t-close in every sensitive attribute."
                 if d["meets_t"] else f" It MISSES t = {d['t_requested']:g}: a class is farther than t from the "
                 "file in a sensitive attribute.")
    ok = [v for v in (d["meets_k"], d.get("meets_t")) if v is not None]
    verdict_class = "" if not ok else (' class="ok"' if all(ok) else ' class="miss"')
    body = f'<p id="verdict"{verdict_class}>{esc(lead)}</p>'
    kinds = key_kinds(d, prov)
    by_kind = "; ".join(f"{kind}: {', '.join(a for a, t in kinds.items() if t == kind)}"
                        for kind in dict.fromkeys(kinds.values()))
    body += (f'<p id="key-count">{d["n_records"]:,} records, {len(kinds)} key attributes '
             f"({esc(by_kind)}).</p>")
    if d.get("identifiers"):
        body += (f'<p id="identifiers" class="miss">Possible direct identifiers copied as read: '
                 f"{esc(', '.join(d['identifiers']))}. Each holds a distinct value per record of the release "
                 "outside the key; publish it only if it identifies nobody.</p>")
    body += table(("measure", "value", "requested", "verdict"), rows, "Headline figures")
    return section("summary", "Summary", body)


def provenance(d: dict[str, Any], prov: dict[str, Any]) -> str:
    """Files (name, size, SHA-256), records and attributes, date, version, the key with its
    types and every parameter of the run, as the caller recorded them in ``prov``."""
    files = [(role, prov[role]) for role in ("original", "released") if prov.get(role)]
    body = ""
    if files:
        rows = [[th(role), td(f.get("name", "")), td(f.get("size")), f'<td class="hash">{esc(f.get("sha256", ""))}</td>']
                for role, f in files]
        body += table(("file", "name", "size (bytes)", "SHA-256"), rows, "Files")
    else:
        body += p("No file was named: the assessment was made from data in memory.")
    run = [("records", d["n_records"]), ("key attributes", d["n_key_attributes"]),
           ("missing cells of the key, original (as read)", d["missing_original"]),
           ("missing cells of the key, release", d["missing_released"])]
    run += [(k, v) for k, v in prov.items() if k not in ("original", "released", "key", "parameters")]
    body += table(("", "value"), ([th(k), td(v)] for k, v in run), "Run")
    key = key_kinds(d, prov)
    body += table(("key attribute", "type"), ([th(a), td(t)] for a, t in key.items()), "Key (quasi-identifiers)")
    params = prov.get("parameters")
    if params:
        body += table(("parameter", "value"), ([th(k), td(_param(v))] for k, v in params.items()), "Parameters")
    else:
        body += p("No parameters of a run were given.")
    return section("provenance", "Provenance", body)


def _param(value: Any) -> Any:
    """A parameter as the table shows it: None as "none", sequences joined by commas."""
    if value is None:
        return "none"
    if isinstance(value, (list, tuple)):
        return ", ".join(str(v) for v in value)
    return value


def privacy(d: dict[str, Any]) -> str:
    """Class sizes over the whole key, interval disclosure, record linkage, t-closeness when
    sensitive attributes were assessed, and strata merges."""
    k = d["k_requested"]
    dist = d["class_size_records"]
    rows = []
    for i, (size, records) in enumerate(dist):
        flag = "miss" if k is not None and size < k else ""
        rows.append([th(size), td(records, f"class_size_records.{i}.1", flag=flag),
                     td(records / d["n_records"], style="pct", flag=flag)])
    within = "" if d["n_strata"] is None else f", within {d['n_strata']} strata"
    body = "<h3>Class sizes over the whole key</h3>"
    body += p(f"A record's class is the set of released records that agree with it on every key attribute"
              f" observed in both{within}: a missing value matches any value, sdcMicro's convention"
              f" (as microagg.risk.class_sizes counts them). Missing cells: {d['missing_original']:,} in the "
              f"original, {d['missing_released']:,} in the release.")
    body += table(("class size", "records", "share of records"), rows, "Records by the size of their class")
    body += '<figure class="chart">' + bar_chart(
        len(dist), [("records", [r for _, r in dist])], [(i + 0.5, str(s)) for i, (s, _) in enumerate(dist)],
        title="Records by class size", x_label="class size") + "</figure>"
    body += table(("j", "records in classes of fewer than j records"),
                  ([th(j), td(r, f"records_violating.{j}", flag="miss" if r else "")] for j, r in d["records_violating"].items()),
                  "Records violating j-anonymity")
    body += "<h3>Disclosure risk</h3>"
    risk_rows = [
        [th("re-identification risk, highest: 1 / the smallest class (prosecutor model)"),
         td(d["reidentification_risk_max"], "reidentification_risk_max", "pct")],
        [th("re-identification risk, average over records of 1 / their class size"),
         td(d["reidentification_risk_mean"], "reidentification_risk_mean", "pct")],
        [th(f"interval disclosure (p = {d['p']:g}): records whose every original value lies within p released sd"),
         td(d["interval_disclosure"], "interval_disclosure", "pct")],
        [th("record linkage, nearest: expected share of records linked to their own release"),
         td(d["record_linkage_rate"], "record_linkage_rate", "pct")],
        [th("record linkage, nearest: expected number of correct links"),
         td(d["record_linkage_expected_correct"], "record_linkage_expected_correct")],
        [th("record linkage, global (one-to-one matching of least total distance)"),
         td(d["record_linkage_global_rate"], "record_linkage_global_rate", "pct")],
    ]
    body += table(("measure", "value"), risk_rows)
    body += population_risk(d)
    if d.get("max_emd") is not None:
        body += t_closeness(d)
    body += "<h3>Strata</h3>"
    if d["n_strata"] is None:
        body += p("No strata: classes are counted over the whole file.")
    else:
        body += p(f"{d['n_strata']} strata as published.")
    if d["merges"]:
        body += p("A merged stratum held fewer than k records: by the small-cell rule its label is not shown.")
        body += table(("stratum", "merged into", "records"),
                      ([td("a stratum of fewer than k records"), td(m["into"]), td(m["size"], f"merges.{i}.size")]
                       for i, m in enumerate(d["merges"])),
                      "Strata merged for having fewer than k records")
    else:
        body += p("No stratum was merged.")
    return section("privacy", "Privacy", body)


def t_closeness(d: dict[str, Any]) -> str:
    """Per sensitive attribute, the largest EMD of a class from the whole file's
    distribution against the requested t, met or missed (Soria-Comas et al. 2015)."""
    t = d.get("t_requested")
    rows = [[th(name), td(v, f"max_emd.{name}"), td(t, "t_requested"), _verdict(None if t is None else v <= t)]
            for name, v in d["max_emd"].items()]
    body = '<h3 id="t-closeness">t-closeness of the sensitive attributes</h3>'
    body += p("A class is t-close when the distribution of each sensitive attribute within it is within t of its "
              "distribution over the whole file (earth mover's distance: ordered for numbers, half the L1 "
              "distance for categories); the release is t-close when its farthest class is.")
    return body + table(("sensitive attribute", "largest class EMD", "t requested", "verdict"), rows, "t-closeness")


def utility(d: dict[str, Any]) -> str:
    """IL, IL1s and eigen, then per numeric attribute its moments and histograms."""
    rows = [
        [th("numeric information loss: SSE/SST on the standardized numeric key columns"),
         td(d["information_loss"], "information_loss", "pct")],
        [th("IL1s (sdcMicro dUtility): sum of |x - x'| / (sqrt 2 sd)"), td(d["il1s"], "il1s")],
        [th("eigen (sdcMicro dUtility): relative change of the correlation eigenvalues"), td(d["eigen"], "eigen")],
    ]
    body = table(("measure", "value"), rows, "Overall")
    body += "<h3>Numeric attributes</h3>"
    body += numeric_attributes(d)
    if d["categorical"]:
        body += "<h3>Categorical attributes</h3>"
        body += categorical_attributes(d)
    return section("utility", "Utility", body)


def categorical_attributes(d: dict[str, Any]) -> str:
    """Per categorical key attribute: the share of its cells the release changed and the
    total variation distance between its original and released frequencies, then each
    attribute's frequency table."""
    rows = [[th(name), td(c["cells_changed"], f"categorical.{name}.cells_changed", "pct"),
             td(c["total_variation"], f"categorical.{name}.total_variation")]
            for name, c in d["categorical"].items()]
    weighting = "weighted by the survey weights" if d["weighted"] else "unweighted"
    out = table(("attribute", "cells changed", "total variation distance"), rows, f"Categories ({weighting})")
    k = threshold(d)
    return out + "".join(frequency_table(name, c, d["weighted"], k) for name, c in d["categorical"].items())


def frequency_table(name: str, c: dict[str, Any], weighted: bool, k: int) -> str:
    """One categorical attribute's frequency table: observed cells per level in the original
    and the release and their difference, the most frequent levels first. By the small-cell
    rule, the levels held by fewer than ``k`` records of either file share one unnamed row
    (with no count when they hold fewer than ``k`` records together); past
    :data:`FREQUENCY_ROWS` levels the rest are summed in one row."""
    before, after = c["original_frequencies"], c["released_frequencies"]
    rare = rare_levels(c["original_records"], c["released_records"], k)
    order = sorted((i for i in range(len(c["levels"])) if not rare[i]),
                   key=lambda i: (-before[i], -after[i], c["levels"][i]))
    style = "g" if weighted else "int"
    shown, rest = order[:FREQUENCY_ROWS], order[FREQUENCY_ROWS:]
    rows = [[th(c["levels"][i]), td(before[i], f"categorical.{name}.original_frequencies.{i}", style),
             td(after[i], f"categorical.{name}.released_frequencies.{i}", style), td(after[i] - before[i], style=style)]
            for i in shown]
    if rest:
        rows.append([th(f"{len(rest)} other levels"), td(sum(before[i] for i in rest), style=style),
                     td(sum(after[i] for i in rest), style=style),
                     td(sum(after[i] - before[i] for i in rest), style=style)])
    small = [i for i in range(len(rare)) if rare[i]]
    if small:
        few = [sparse(sum(c[f"{f}_records"][i] for i in small), k) for f in ("original", "released")]
        cells = [td(f"fewer than {k}") if hide else td(sum(freq[i] for i in small), style=style)
                 for hide, freq in zip(few, (before, after))]
        change = td("-") if any(few) else td(sum(after[i] - before[i] for i in small), style=style)
        rows.append([th(f"{len(small)} {'level' if len(small) == 1 else 'levels'} held by fewer than {k} records each"),
                     *cells, change])
    return table(("level", "original", "released", "change"), rows,
                 f"{name}: observed cells per level ({'weighted' if weighted else 'records'})")


def numeric_attributes(d: dict[str, Any]) -> str:
    """Per numeric attribute: mean and sd before and after, variance ratio, largest
    correlation change; then one original-vs-released histogram each."""
    cols = ("mean_original", "mean_released", "mean_change", "sd_original", "sd_released", "variance_ratio",
            "max_correlation_change")
    rows = [[th(a), *(td(d[c][j], f"{c}.{j}") for c in cols)] for j, a in enumerate(d["attributes"])]
    out = table(("attribute", "mean, original", "mean, released", "mean change", "sd, original", "sd, released",
                 "variance ratio", "largest correlation change"), rows,
                f"Moments ({'weighted by the survey weights' if d['weighted'] else 'unweighted'}; sd with divisor n)", "wide")
    figures = []
    k = threshold(d)
    for a, h in zip(d["attributes"], d["histograms"]):
        edges, original, released = merge_sparse_bins(h["edges"], h["original"], h["released"], k)
        every = -(-(len(edges) - 1) // 5)  # about five labelled edges
        ticks = [(float(i), label(e)) for i, e in enumerate(edges) if i % every == 0 or i == len(edges) - 1]
        figures.append('<figure class="chart">' + bar_chart(
            len(edges) - 1, [("original", original), ("released", released)], ticks,
            title=a, x_label=a) + "</figure>")
    out += p(f"Histograms: records per bin of the original and the release, over shared bins with round edges; "
             f"a bin holding fewer than {k} records of either file is merged with its neighbours, so bins may differ "
             "in width (read the edges).")
    return out + '<div class="grid">' + "".join(figures) + "</div>"


def ru_map(candidates: Sequence[dict[str, Any]]) -> str:
    """The R-U map of the candidates compared: each risk against the information loss, one
    labelled point per method and k, and their table."""
    figures = []
    for key, name in RISKS:
        if all(key in c for c in candidates):
            methods = list(dict.fromkeys(str(c["method"]) for c in candidates))
            series = [(m, sorted((100 * float(c["information_loss"]), 100 * float(c[key]), f"k={c['k']}")
                                 for c in candidates if str(c["method"]) == m)) for m in methods]
            figures.append('<figure class="chart">' + scatter_chart(
                series, title=f"{name} against information loss", x_label="information loss (SSE/SST, %)",
                y_label=f"{name} (%)") + "</figure>")
    measures = [c for c in ("information_loss", "interval_disclosure", "record_linkage_rate", "min_group_size")
                if all(c in r for r in candidates)]
    rows = [[td(c["method"]), td(int(c["k"]), f"candidates.{i}.k"),
             *(td(int(c[m]), f"candidates.{i}.{m}") if m == "min_group_size"
               else td(float(c[m]), f"candidates.{i}.{m}", "pct") for m in measures)]
            for i, c in enumerate(candidates)]
    body = '<div class="grid">' + "".join(figures) + "</div>"
    body += table(("method", "k", *(m.replace("_", " ") for m in measures)), rows, "Candidates compared")
    return section("ru-map", "R-U map", body)

