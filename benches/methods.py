"""Information loss and time per method on Census, Tarragona, EIA and Adult (3 attributes),
k = 2, 3, 4, 5, 7, 10, next to the figures the papers print (ona-mona Tables 1 and 6,
mhm Table 5).

    python benches/methods.py                    # all methods; ONA best of 10 and 100 except on Adult
    python benches/methods.py --ona-on-adult     # also ONA on Adult (about 12 s per run)
    python benches/methods.py --methods md cbfs vmdav npn-mhm md-mhm mdav-mhm cbfs-mhm \
        --ks 3 5 10 --no-ona --name data_oriented  # the mhm paper's family, Table 5

Writes bench-results/methods.md. One thread unless --jobs is given. Measures and prints.
"""

from __future__ import annotations

import argparse

from bench_common import load, published, timed, write

import microagg as ma

METHODS = ["mdav", "mdav-star", "ona-star", "mondrian", "mondrian-v", "mondrian-v2d", "mona", "mona-2d"]
DATA_ORIENTED = ["md", "cbfs", "vmdav", "npn-mhm", "md-mhm", "mdav-mhm", "cbfs-mhm"]
KS = [2, 3, 4, 5, 7, 10]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--datasets", nargs="+", default=["census", "tarragona", "eia", "adult"])
    ap.add_argument("--ona-on-adult", action="store_true")
    ap.add_argument("--jobs", type=int, default=1)
    ap.add_argument("--methods", nargs="+", default=METHODS, help=f"also: {' '.join(DATA_ORIENTED)}")
    ap.add_argument("--ks", type=int, nargs="+", default=KS)
    ap.add_argument("--no-ona", action="store_true", help="skip the ONA rows")
    ap.add_argument("--name", default="methods", help="output file stem in bench-results/")
    args = ap.parse_args()
    pub_mhm = published("data-oriented")
    pub = published()
    lines = [
        "# Information loss (%) and time per method",
        "",
        f"Each cell: ours / published (time). n_jobs={args.jobs}. ONA: best of n runs (seeds 0..n-1).",
    ]
    for ds in args.datasets:
        X = load(ds)
        lines += ["", f"## {ds} ({X.shape[0]} x {X.shape[1]})", "",
                  "| method | " + " | ".join(f"k={k}" for k in args.ks) + " |", "|---|" + "---|" * len(args.ks)]
        variants = [(m, m, {}) for m in args.methods]
        if not args.no_ona and (ds != "adult" or args.ona_on_adult):
            variants += [("ona (best of 10)", "ona", {"n_init": 10}), ("ona (best of 100)", "ona", {"n_init": 100})]
        for label, method, params in variants:
            cells = []
            for k in args.ks:
                t, res = timed(lambda: ma.microaggregate(X, k, method, n_jobs=args.jobs, **params))
                ref = pub.get((ds, method, k), pub_mhm.get((ds, method, k), "-"))
                cells.append(f"{100 * res.information_loss:.2f} / {ref} ({t:.2f} s)")
            lines.append(f"| {label} | " + " | ".join(cells) + " |")
            print(lines[-1], flush=True)
    write(f"{args.name}.md", lines)


if __name__ == "__main__":
    main()
