"""The scalable family: the ona-mona paper's Figure 2(a) (information loss vs rho for MONA
and MONA-2D on Adult, k = 10) as a PNG, and time vs n for Mondrian-V and MONA (rho = 0.5)
on Gaussian data with d = 3 and d = 24.

    python benches/scalable.py                  # n up to 10^7 for d = 3, 10^6 for d = 24
                                                # (MONA up to 10^6: ~n^0.5 ONA* runs)
    python benches/scalable.py --max-n 1000000

Writes bench-results/scalable.md and bench-results/mona_rho.png. Measures and prints.
"""

from __future__ import annotations

import argparse

import numpy as np
from bench_common import OUT, load, timed, write

import microagg as ma


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--max-n", type=int, default=10_000_000)
    ap.add_argument("--jobs", type=int, default=1)
    args = ap.parse_args()
    lines = ["# Scalable family", "", "## Figure 2(a): Adult, k = 10, information loss (%) vs rho", "",
             "| rho | MONA | MONA-2D |", "|---:|---:|---:|"]
    A = load("adult")
    rhos = [round(0.1 * i, 1) for i in range(11)]
    curves: dict[str, list[float]] = {"mona": [], "mona-2d": []}
    for rho in rhos:
        for m in curves:
            curves[m].append(100 * ma.microaggregate(A, 10, m, rho=rho, n_jobs=args.jobs).information_loss)
        lines.append(f"| {rho} | {curves['mona'][-1]:.3f} | {curves['mona-2d'][-1]:.3f} |")
        print(lines[-1], flush=True)
    refs = {m: 100 * ma.microaggregate(A, 10, m).information_loss for m in ("mondrian-v", "mondrian-v2d")}

    lines += ["", f"## Time vs n (Gaussian, k = 5, n_jobs = {args.jobs})", "",
              "| d | n | method | time (s) | IL (%) |", "|---:|---:|---|---:|---:|"]
    for d, top in ((3, args.max_n), (24, min(args.max_n, 1_000_000))):
        n = 10_000
        while n <= top:
            X = np.random.default_rng(0).normal(size=(n, d))
            for m in ("mondrian-v", "mona") if n <= 1_000_000 else ("mondrian-v",):
                t, res = timed(lambda: ma.microaggregate(X, 5, m, n_jobs=args.jobs))
                lines.append(f"| {d} | {n:,} | {m} | {t:.2f} | {100 * res.information_loss:.3f} |")
                print(lines[-1], flush=True)
            n *= 10
    write("scalable.md", lines)
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("matplotlib not installed: no PNG")
        return
    fig, ax = plt.subplots(figsize=(7, 4.5))
    ax.plot(rhos, curves["mona"], "o-", label="MONA")
    ax.plot(rhos, curves["mona-2d"], "s-", label="MONA-2D")
    ax.axhline(refs["mondrian-v"], ls="--", c="gray", label="Mondrian-V")
    ax.axhline(refs["mondrian-v2d"], ls=":", c="gray", label="Mondrian-V2D")
    ax.axhline(curves["mona"][-1], ls="-.", c="k", label="ONA* (rho = 1)")
    ax.set_xlabel("split limit exponent rho")
    ax.set_ylabel("information loss (%)")
    ax.set_title("Adult, n = 48842, d = 3, k = 10 (cf. ona-mona Fig. 2a)")
    ax.legend()
    fig.tight_layout()
    fig.savefig(OUT / "mona_rho.png", dpi=120)
    print(f"wrote {OUT / 'mona_rho.png'}")


if __name__ == "__main__":
    main()
