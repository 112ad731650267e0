"""t-closeness through microaggregation (Soria-Comas et al., TKDE 2015): quality on Census and
speed on Adult. Writes bench-results/t_closeness.md and bench-results/t_closeness.png.

- Quality: Census (1080 x 13), the last or the first attribute confidential (numerical, ordered
  EMD), the other 12 the keys; k in {2, 5, 10}, t in {0.25, 0.15, 0.05}: IL (SSE/SST of the
  keys, %) of "merge", "k-first", "t-first" and "auto" (the t-close partition of least SSE),
  next to plain MDAV's k-anonymous IL and the largest EMD of MDAV's classes.
- Speed: the complete Adult records (no "?"), 4 numeric keys, income nominal, k = 5,
  t = 0.05: every t_method against plain MDAV on the same keys (single thread, best of 3).
- t-first before verification: its largest class EMD as built on Census (the same grid), next
  to the bound of Proposition 3 that distinct values would give; from the Rust bench
  `cargo bench --bench t_first_bound` (run here, so cargo must be on PATH).
- Verification's merging loop at scale: `cargo bench --bench t_close_merge` (Gaussian keys,
  10^4 to 3*10^5 records, d = 3, 8, 15, a 4-valued confidential attribute, MDAV classes of 5,
  t = 0.05: nearly every class merges), one row per run. With T_CLOSE_MERGE_BEFORE set to the
  bench binary of another commit (built by `cargo bench --bench t_close_merge --no-run` there:
  cargo prints its path; T_CLOSE_MERGE_BEFORE_NAME says which commit), that binary runs each
  row just before this one and both times are shown.
- Picture: IL against t for k in {2, 5, 10} on Census (last attribute), auto, with plain
  MDAV's IL as a dashed line.

    MICROAGG_SHARED=/work/shared [T_CLOSE_MERGE_BEFORE=path] python benches/t_closeness.py
"""

from __future__ import annotations

import csv
import os
import subprocess

import numpy as np
from bench_common import OUT, SHARED, load, timed, write

import microagg as ma

ADULT_KEYS = ("age", "fnlwgt", "education-num", "hours-per-week")
PLAIN = ("merge", "k-first", "t-first")


def adult() -> tuple[np.ndarray, np.ndarray]:
    """The complete Adult records: 4 numeric keys and income."""
    with open(SHARED / "datasets" / "adult.csv", newline="") as f:
        rows = list(csv.reader(f))
    head, body = rows[0], [r for r in rows[1:] if r and not any(v.strip() == "?" for v in r)]
    X = np.array([[float(r[head.index(c)]) for c in ADULT_KEYS] for r in body])
    income = np.array([r[head.index("income")].strip().rstrip(".") for r in body], dtype=object)
    return X, income


def quality(census: np.ndarray, lines: list[str]) -> None:
    for which, col in (("last", census.shape[1] - 1), ("first", 0)):
        keys, s = np.delete(census, col, axis=1), census[:, col]
        lines += [
            f"### Census, {which} attribute confidential ({len(np.unique(s))} distinct values)",
            "",
            "| k | t | MDAV IL % | MDAV max EMD | merge | k-first | t-first | auto | auto picks | auto / best |",
            "|---|---|---|---|---|---|---|---|---|---|",
        ]
        for k in (2, 5, 10):
            plain = ma.microaggregate(keys, k)
            mdav_emd = ma.risk.t_closeness(plain.aggregated, s)["sensitive"]
            for t in (0.25, 0.15, 0.05):
                il = {}
                for m in (*PLAIN, "auto"):
                    res = ma.t_close_microaggregate(keys, k, sensitive=s, t=t, t_method=m)
                    assert res.group_sizes.min() >= k and res.max_emd["sensitive"] <= t + 1e-9
                    il[m] = (res.information_loss, res.chosen[0])
                best = min(il[m][0] for m in PLAIN)
                lines.append(
                    f"| {k} | {t} | {100 * plain.information_loss:.2f} | {mdav_emd:.3f} | "
                    + " | ".join(f"{100 * il[m][0]:.2f}" for m in (*PLAIN, "auto"))
                    + f" | {il['auto'][1]} | {il['auto'][0] / best:.3f} |"
                )
        lines.append("")


def speed(lines: list[str]) -> None:
    X, income = adult()
    k, t = 5, 0.05
    mdav_s, plain = timed(lambda: ma.microaggregate(X, k), repeat=3)
    lines += [
        f"### Adult, {len(X)} complete records, keys {', '.join(ADULT_KEYS)}, income nominal, k = {k}, t = {t}",
        "",
        f"Plain MDAV: {mdav_s:.3f} s, IL {100 * plain.information_loss:.2f} %, largest EMD of its classes "
        f"{ma.risk.t_closeness(plain.aggregated, income)['sensitive']:.3f}.",
        "",
        "| t_method | seconds | x MDAV | IL % | classes | largest EMD |",
        "|---|---|---|---|---|---|",
    ]
    ratio = {}
    for m in (*PLAIN, "auto"):
        s, res = timed(lambda: ma.t_close_microaggregate(X, k, sensitive=income, t=t, t_method=m), repeat=3)
        ratio[m] = s / mdav_s
        lines.append(
            f"| {m}{' (' + res.chosen[0] + ')' if m == 'auto' else ''} | {s:.3f} | {s / mdav_s:.1f} | "
            f"{100 * res.information_loss:.2f} | {res.n_groups} | {res.max_emd['sensitive']:.4f} |"
        )
    within = [m for m in ratio if ratio[m] <= 10]
    lines += [
        "",
        f"Within 10x plain MDAV (which answers its queries from a k-d tree here): {', '.join(within) or 'none'}; "
        f"beyond: {', '.join(m for m in ratio if m not in within) or 'none'}. k-first and t-first answer their "
        "queries from k-d trees of the remaining records (by run, and by kind of record for k-first); auto runs "
        "t-first, k-first, then merge, dropping a candidate once its classes cost more SSE than the best. "
        f"Load average during the run: {os.getloadavg()[0]:.1f} (2 cores); the ratios are timed in the same run.",
        "",
    ]


def before_merging(lines: list[str]) -> None:
    """t-first's largest class EMD before verification and merging (the Rust bench prints it)."""
    root = OUT.parent
    table = subprocess.run(
        ["cargo", "bench", "-q", "--bench", "t_first_bound"],
        cwd=root,
        env={**os.environ, "MICROAGG_SHARED": str(SHARED)},
        check=True,
        capture_output=True,
        text=True,
    ).stdout
    lines += [
        "### t-first before verification (Census)",
        "",
        "Largest class EMD of t-first as built, before verification merges the classes above t. With",
        "distinct confidential values every class would be within the bound (n - k')/(2k'(n - 1)) <= t",
        "(TKDE 2015, Proposition 3); tied values (Census has 311 and 1080 distinct values in 1080",
        "records) can exceed it.",
        "",
        *[line for line in table.splitlines() if line.startswith("|")],
        "",
    ]


def merge_scaling(lines: list[str]) -> None:
    """Seconds of verification's merging loop at growing n (the Rust bench prints a table row per
    run), with another commit's bench binary alongside when T_CLOSE_MERGE_BEFORE names one."""
    root, before = OUT.parent, os.environ.get("T_CLOSE_MERGE_BEFORE")
    before_name = os.environ.get("T_CLOSE_MERGE_BEFORE_NAME", "the bench built at another commit")
    env = {**os.environ, "MICROAGG_SHARED": str(SHARED)}

    def row(command: list[str]) -> list[str]:
        out = subprocess.run(command, cwd=root, env=env, check=True, capture_output=True, text=True).stdout
        return [c.strip() for c in out.splitlines()[-1].strip("|").split("|")]

    head = "| n | d | MDAV classes | merges | classes left | merging s |"
    if before:
        head = "| n | d | MDAV classes | merges before | merges | classes left | merging s before | merging s | speed-up |"
    lines += [
        "### Verification's merging loop at scale",
        "",
        "`cargo bench --bench t_close_merge`: Gaussian keys, one nominal confidential attribute of 4 values",
        "(shares 0.4, 0.3, 0.2, 0.1, independent of the keys), MDAV classes of k = 5, t = 0.05 (a class of 5",
        "such records is at least 0.1 from the file, so nearly every class merges); the seconds of",
        "`merge_until_close` alone, one run each."
        + (f" Before: {before_name}, run just before each row." if before else ""),
        "",
        head,
        "|" + "---:|" * (head.count("|") - 1),
    ]
    for n in (10_000, 100_000, 300_000):
        for d in (3, 8, 15):
            args = ["--", str(n), f"d{d}"]
            now = row(["cargo", "bench", "-q", "--bench", "t_close_merge", *args])
            if before:
                old = row([before, *args[1:]])
                speedup = float(old[5]) / float(now[5])
                lines.append(f"| {' | '.join(now[:3])} | {old[3]} | {' | '.join(now[3:5])} | {old[5]} | {now[5]} | {speedup:.1f}x |")
            else:
                lines.append(f"| {' | '.join(now)} |")
    lines += [
        "",
        "Which class merges next: the largest EMD, ties to the lowest label; into the class of nearest",
        "centroid, ties to the lowest label (`src/tcloseness/verify/next_merge.rs`). Up to d = 8 (from",
        "`centroid_table::auto_min_groups` classes) the nearest class comes from a k-d tree of the alive",
        "centroids, above from a scan of them, which stays quadratic in the classes.",
        f"Load average at the end: {os.getloadavg()[0]:.1f} (2 cores).",
        "",
    ]


def picture(census: np.ndarray) -> str:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    keys, s = census[:, :-1], census[:, -1]
    ts = [0.02, 0.04, 0.06, 0.08, 0.1, 0.15, 0.2, 0.25, 0.3, 0.4, 0.5]
    fig, ax = plt.subplots(figsize=(6, 4))
    for k, colour in zip((2, 5, 10), ("C0", "C1", "C2")):
        il = [100 * ma.t_close_microaggregate(keys, k, sensitive=s, t=t).information_loss for t in ts]
        ax.plot(ts, il, "o-", color=colour, label=f"k = {k}, t-close (auto)")
        ax.axhline(100 * ma.microaggregate(keys, k).information_loss, color=colour, ls="--", label=f"k = {k}, MDAV only")
    ax.set_xlabel("t (largest EMD of a class)")
    ax.set_ylabel("information loss of the keys (%)")
    ax.set_title("Census, last attribute confidential")
    ax.legend(fontsize=7)
    fig.tight_layout()
    OUT.mkdir(exist_ok=True)
    fig.savefig(OUT / "t_closeness.png", dpi=120)
    return "t_closeness.png"


def main() -> None:
    census = load("census")
    lines = [
        "# t-closeness through microaggregation",
        "",
        "Made by `benches/t_closeness.py`. IL = SSE/SST of the standardized keys in %; every run is",
        "checked to have classes of at least k records and EMD at most t. \"auto / best\" is auto's",
        "IL over the best of merge, k-first and t-first (the goal: at most 1.05).",
        "",
    ]
    quality(census, lines)
    before_merging(lines)
    speed(lines)
    merge_scaling(lines)
    lines += ["### IL against t", "", f"![IL against t]({picture(census)})", ""]
    write("t_closeness.md", lines)


if __name__ == "__main__":
    main()
