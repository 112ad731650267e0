"""The disclosure-control workflow (docs/workflow.md, issue 11): strata as parallel jobs.

8 strata of 25 000 x 15 Gaussian records (each stratum its own centre), MDAV with k = 5:
one thread against two (goal: >= 1.6x, same labels), and the same 200 000 records
grouped without strata (MDAV is quadratic in the records it sees: 8 strata cost about an
eighth). Also the price of the weighted, robust aggregations on the stratified run.

    python benches/workflow.py                      # 8 x 25 000 x 15, threads 1 and 2
    python benches/workflow.py --threads 1 2 4 --repeat 3

Times are the best of --repeat runs. The load average of the machine is printed and
written with the table (timings are only comparable on a quiet machine).
Writes bench-results/workflow.md. Measures and prints; asserts nothing.
"""

from __future__ import annotations

import argparse
import os
import platform
import threading
import time
from typing import Any, Callable

import numpy as np
from bench_common import timed, write

import microagg as ma


def thread_cpu(fn: Callable[[], Any]) -> list[float]:
    """CPU seconds each thread of this process spent while ``fn`` ran (Linux /proc; the pool's
    threads end with the call, so they are sampled while it runs). On a machine whose other
    cores are busy, this shows how the work was split when the wall time cannot."""
    def per_thread() -> dict[str, float]:
        out = {}
        for t in os.listdir("/proc/self/task"):
            try:
                with open(f"/proc/self/task/{t}/stat") as f:
                    fields = f.read().rsplit(")", 1)[1].split()
            except OSError:
                continue
            out[t] = (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
        return out

    start, seen, done = per_thread(), {}, threading.Event()

    def sample() -> None:
        while not done.is_set():
            for t, v in per_thread().items():
                seen[t] = max(seen.get(t, 0.0), v)
            time.sleep(0.02)

    sampler = threading.Thread(target=sample)
    sampler.start()
    fn()
    done.set()
    sampler.join()
    return sorted((v - start.get(t, 0.0) for t, v in seen.items() if v - start.get(t, 0.0) > 0.05), reverse=True)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--strata", type=int, default=8)
    ap.add_argument("--size", type=int, default=25_000, help="records per stratum")
    ap.add_argument("--d", type=int, default=15)
    ap.add_argument("-k", type=int, default=5)
    ap.add_argument("--threads", type=int, nargs="+", default=[1, 2])
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    rng = np.random.default_rng(0)
    n = args.strata * args.size
    by = np.repeat(np.array([f"s{i}" for i in range(args.strata)]), args.size)
    X = rng.normal(size=(n, args.d)) + rng.normal(scale=3.0, size=(args.strata, args.d))[np.repeat(np.arange(args.strata), args.size)]
    perm = rng.permutation(n)  # strata interleaved in the file, as in real data
    X, by = X[perm], by[perm]
    load_before = os.getloadavg()
    cores = os.cpu_count()
    print(f"{n:,} records x {args.d}, {args.strata} strata, k = {args.k}; {cores} cores, load {load_before[0]:.2f}", flush=True)

    lines = [
        "# Workflow: strata as parallel jobs",
        "",
        f"{args.strata} strata of {args.size:,} x {args.d} (Gaussian, one centre per stratum, rows interleaved), "
        f"MDAV, k = {args.k}, float64; best of {args.repeat} runs. Machine: {platform.machine()}, "
        f"{cores} cores, load average {load_before[0]:.2f} / {load_before[1]:.2f} / {load_before[2]:.2f} "
        "(1 / 5 / 15 min) at the start.",
        "",
        "| run | threads | time (s) | speedup vs 1 thread | IL (%) | same labels as 1 thread |",
        "|---|---:|---:|---:|---:|---|",
    ]
    base_time, base = None, None
    for t in args.threads:
        sec, res = timed(lambda: ma.microaggregate(X, args.k, "mdav", by=by, n_jobs=t), args.repeat)
        if base is None:
            base_time, base = sec, res
        same = bool(np.array_equal(res.labels, base.labels))
        lines.append(f"| stratified | {t} | {sec:.3f} | {base_time / sec:.2f}x | {100 * res.information_loss:.4f} | {same} |")
        print(lines[-1], flush=True)
    if os.path.isdir("/proc/self/task"):
        for t in args.threads[1:]:
            split = thread_cpu(lambda: ma.microaggregate(X, args.k, "mdav", by=by, n_jobs=t))
            lines += ["", f"CPU seconds per thread, stratified run on {t} threads (the calling thread included, "
                      f"sampled every 20 ms): {', '.join(f'{c:.2f}' for c in split)}."]
            print(lines[-1], flush=True)
        lines += [""]
    for t in args.threads:
        sec, res = timed(lambda: ma.microaggregate(X, args.k, "mdav", n_jobs=t), 1)
        lines.append(f"| unstratified, same {n:,} records | {t} | {sec:.3f} | {base_time / sec:.2f}x | {100 * res.information_loss:.4f} | - |")
        print(lines[-1], flush=True)

    lines += ["", "## Weighted, robust group values (stratified, 1 thread)", "",
              "| aggregation | weights | time (s) | IL (%) |", "|---|---|---:|---:|"]
    w = rng.uniform(1, 500, size=n)
    for how, trim in [("mean", None), ("median", None), ("trim", 0.2), ("onestep", None)]:
        for weights in (None, w):
            sec, res = timed(lambda: ma.microaggregate(X, args.k, "mdav", by=by, weights=weights, aggregation=how, trim=trim), 1)
            name = how if trim is None else f"{how}, trim={trim}"
            lines.append(f"| {name} | {'yes' if weights is not None else 'no'} | {sec:.3f} | {100 * res.information_loss:.4f} |")
            print(lines[-1], flush=True)
    load_after = os.getloadavg()
    lines += ["", f"Load average at the end: {load_after[0]:.2f} / {load_after[1]:.2f} / {load_after[2]:.2f}."]
    write("workflow.md", lines)


if __name__ == "__main__":
    main()
