"""The incremental-microaggregation thesis' experiments (its §5, Figs. 5.2-5.10): relative time
of the incremental step tau+ = t+/t and relative distortion delta = IL_T/IL - 1 against a
one-shot MDAV on all the data, as a function of the incremental fraction nu, for 2MDAV,
NN, NN split-mid and NN split-end, with and without inertia.

Data: Gaussian 50 000 x 15 with k = 10 and k = 100, and Adult (3 attributes) with k = 10.
The data is standardized once up front, so every IL is on the same scale.

    python benches/incremental.py

Writes bench-results/incremental.md and bench-results/incremental.png. Measures and prints.
"""

from __future__ import annotations

import numpy as np
from bench_common import OUT, load, pyplot, timed, write

import microagg as ma

NUS = [0.01, 0.02, 0.05, 0.1, 0.2, 0.3, 0.5]
VARIANTS = [("2MDAV", "two-step", False)] + [
    (f"{name}{' inertial' if inertial else ''}", strategy, inertial)
    for name, strategy in (("NN", "nn"), ("NN split-mid", "nn-split-mid"), ("NN split-end", "nn-split-end"))
    for inertial in (False, True)
]


def main() -> None:
    rng = np.random.default_rng(0)
    cases = [
        ("gaussian 50000x15, k=10", rng.normal(size=(50_000, 15)), 10),
        ("gaussian 50000x15, k=100", rng.normal(size=(50_000, 15)), 100),
        ("adult, k=10", load("adult"), 10),
    ]
    lines = ["# Incremental microaggregation: tau+ and delta vs nu", ""]
    curves: dict[str, dict[str, tuple[list[float], list[float]]]] = {}
    for title, X, k in cases:
        X = (X - X.mean(axis=0)) / X.std(axis=0)
        X = X[np.random.default_rng(1).permutation(len(X))]  # arrivals in random order
        t, one = timed(lambda: ma.microaggregate(X, k, standardize=False))
        lines += [f"## {title}: one-shot MDAV {t:.2f} s, IL {100 * one.information_loss:.3f} %", "",
                  "| variant | " + " | ".join(f"nu={nu}" for nu in NUS) + " |", "|---|" + "---|" * len(NUS)]
        curves[title] = {}
        for name, strategy, inertial in VARIANTS:
            taus, deltas, cells = [], [], []
            for nu in NUS:
                n0 = int(round((1 - nu) * len(X)))
                est = ma.IncrementalMicroaggregator(k, strategy=strategy, inertial=inertial, standardize=False)
                est.fit(X[:n0])
                t_plus, _ = timed(lambda: est.extend(X[n0:]))
                il = ma.information_loss(X, est.labels_, standardize=False)
                taus.append(t_plus / t)
                deltas.append(il / one.information_loss - 1)
                cells.append(f"{taus[-1]:.4f} / {100 * deltas[-1]:.1f}%")
            curves[title][name] = (taus, deltas)
            lines.append(f"| {name} | " + " | ".join(cells) + " |")
            print(title, lines[-1], flush=True)
        lines.append("")
    lines.append("Each cell: tau+ (incremental step time / one-shot MDAV time) / delta (relative extra IL).")
    write("incremental.md", lines)
    plt = pyplot()
    if plt is None:
        return
    fig, axes = plt.subplots(len(cases), 2, figsize=(11, 3.4 * len(cases)))
    for row, (title, _, _) in zip(axes, cases):
        for name, (taus, deltas) in curves[title].items():
            row[0].plot(NUS, taus, marker="o", label=name)
            row[1].plot(NUS, [100 * d for d in deltas], marker="o", label=name)
        row[0].set(title=f"{title}: tau+", xlabel="nu", ylabel="t+ / t (log)", yscale="log")
        row[1].set(title=f"{title}: delta", xlabel="nu", ylabel="relative distortion (%)")
    axes[0][1].legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(OUT / "incremental.png", dpi=110)
    print(f"wrote {OUT / 'incremental.png'}")


if __name__ == "__main__":
    main()
