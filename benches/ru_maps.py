"""R-U maps (docs/assessment.md#the-r-u-map): Census and EIA released by mdav, mdav-star,
ona-star, mondrian-v and mona for k = 2..10, each scored by ``ma.assess`` with its defaults
(sdcMicro 5.8.1's measures): information loss, record-linkage rate, interval disclosure,
IL1s, eigen; one R-U map PNG per data set and a Markdown table (bench-results/ru_maps.md).

    python benches/ru_maps.py
"""

from __future__ import annotations

from bench_common import OUT, load, write

import microagg as ma

METHODS = ("mdav", "mdav-star", "ona-star", "mondrian-v", "mona")


def ru_maps(datasets: list[str]) -> list[str]:
    lines = ["# R-U maps", "",
             "IL = SSE/SST (%), RL = nearest-record linkage rate (%), ID = interval disclosure at p = 0.05 (%), "
             "eigen and IL1s as sdcMicro's dUtility: `ma.assess` defaults, equal to sdcMicro 5.8.1 (a record counts "
             "for ID when every value lies within its interval; IL1s summed over the cells). "
             "Made by `python benches/ru_maps.py`.", ""]
    for name in datasets:
        X = load(name)
        rows = []
        for method in METHODS:
            for k in range(2, 11):
                res = ma.microaggregate(X, k, method)
                rows.append({"method": method, "k": k, **ma.assess(X, res.aggregated).to_dict()})
            print(f"{name} {method} done", flush=True)
        png = OUT / f"ru_map_{name}.png"
        OUT.mkdir(exist_ok=True)
        ma.plot.ru_map(rows, path=str(png), title=f"R-U map, {name} ({X.shape[0]} x {X.shape[1]})")
        lines += [f"## {name} ({X.shape[0]} records x {X.shape[1]} attributes)", "", f"![R-U map]({png.name})", "",
                  "| method | k | IL % | RL % | ID % | IL1s | eigen | min group |", "|---|---:|---:|---:|---:|---:|---:|---:|"]
        for r in rows:
            lines.append(f"| {r['method']} | {r['k']} | {100 * r['information_loss']:.2f} | "
                         f"{100 * r['record_linkage_rate']:.2f} | {100 * r['interval_disclosure']:.2f} | "
                         f"{r['il1s']:.6g} | {r['eigen']:.3f} | {r['min_group_size']} |")
        lines.append("")
    return lines


def main() -> None:
    write("ru_maps.md", ru_maps(["census", "eia"]))


if __name__ == "__main__":
    main()
