"""microagg's exact MDAV against sdcMicro's MDAV (R), same data, same machine, one thread.

Gaussian data (NumPy seed fixed), n x d, k = 10 by default; plus a check on the bundled
Tarragona file (834 x 13) at k = 3. Each data set is written to a temporary CSV and timed in
R through ``Rscript`` (``system.time(...)["elapsed"]``, best of --repeat runs, after reading
the CSV; the released matrix comes back through a binary file); then microagg times
``ma.microaggregate(X, k, n_jobs=1)`` in float64 and float32 (best of --repeat).

IL = SSE / SST on the data z-scored with the population sd (microagg's definition,
``ma.utility.information_loss``), the same function for every release: sdcMicro's
released group means, and microagg's ``aggregated``. The table also gives the smallest
group of sdcMicro's release and how many of its groups microagg (float64) forms too, and the
CPU seconds of both sides (steadier than wall time when another job shares the machine).

The R side must be named, this script contains none of sdcMicro's code:

* ``--sdcmicro installed``: ``library(sdcMicro)`` and
  ``microaggregation(df, variables = colnames(df), method = "mdav", aggr = k)`` (the real
  package, where it is installed);
* ``--mdav-source DIR``: DIR holds ``mdav.R`` (sdcMicro's R wrapper ``mdav()``) and one
  ``.cpp`` file (sdcMicro's ``Mdav`` routine with the headers it includes), compiled with
  ``Rcpp::sourceCpp`` (R's default compiler flags, as a CRAN install) before the timing;
  ``mdav(df, variables = NULL, weights = NULL, K = k, missing = -999)`` is timed, the call
  ``microaggregation(method = "mdav")`` makes. A ``PROVENANCE.md`` in DIR is copied into
  the output. The R code ``microaggregation()`` runs around ``mdav()`` is not timed.

A timing waits (up to --max-wait seconds) until the 1-minute load average is at most
--max-load; the load before and after each timing goes into the output.

    python benches/sdcmicro_compare.py --mdav-source /tmp/sdcmicro_mdav
    python benches/sdcmicro_compare.py --sdcmicro installed --ns 10000 --repeat 5
    python benches/sdcmicro_compare.py --mdav-source DIR --ns 100000 --no-tarragona --name sdcmicro_1e5

Writes bench-results/sdcmicro.md (--name).
"""

from __future__ import annotations

import argparse
import os
import platform
import shlex
import shutil
import subprocess
import sys
import tempfile
import time
from functools import partial
from pathlib import Path
from typing import Any

import numpy as np
from bench_common import SHARED, timed, write

import microagg as ma

R_SCRIPT = r"""
args <- commandArgs(trailingOnly = TRUE)
mode <- args[1]; src <- args[2]; infile <- args[3]; outfile <- args[4]
k <- as.integer(args[5]); reps <- as.integer(args[6]); cache <- args[7]
cat("R_VERSION", R.version.string, "\n")
if (mode == "installed") {
  if (!requireNamespace("sdcMicro", quietly = TRUE)) {
    cat("sdcMicro is not installed in this R\n"); quit(status = 3)
  }
  suppressPackageStartupMessages(library(sdcMicro))
  cat("SDCMICRO_VERSION", as.character(packageVersion("sdcMicro")), "\n")
  run <- function(df) {
    r <- microaggregation(df, variables = colnames(df), method = "mdav", aggr = k)
    if (is.list(r) && !is.null(r$mx)) r$mx else r
  }
} else {
  if (!requireNamespace("Rcpp", quietly = TRUE)) {
    cat("Rcpp is not installed in this R\n"); quit(status = 3)
  }
  cpp <- list.files(src, pattern = "[.]cpp$", full.names = TRUE)
  if (length(cpp) != 1 || !file.exists(file.path(src, "mdav.R"))) {
    cat("DIR must hold mdav.R and exactly one .cpp file\n"); quit(status = 3)
  }
  source(file.path(src, "mdav.R"))
  Rcpp::sourceCpp(cpp, cacheDir = cache)
  run <- function(df) mdav(df, variables = NULL, weights = NULL, K = k, missing = -999)
}
cat("RCPP_VERSION", as.character(packageVersion("Rcpp")), "\n")
df <- read.csv(infile)
best <- Inf; res <- NULL
for (r in seq_len(reps)) {
  res <- NULL; gc()
  st <- system.time(res <- run(df))
  t <- st[["elapsed"]]
  cat("RUN", t, st[["user.self"]] + st[["sys.self"]], "\n")
  best <- min(best, t)
}
m <- as.matrix(res)
storage.mode(m) <- "double"
writeBin(as.vector(m), outfile)
cat("BEST", best, "\n")
"""


def load1() -> float:
    return os.getloadavg()[0]


def wait_quiet(max_load: float, max_wait: float) -> float:
    """Waits until the 1-minute load is at most max_load (at most max_wait s); returns it."""
    t0 = time.monotonic()
    while load1() > max_load and time.monotonic() - t0 < max_wait:
        print(f"  load {load1():.2f} > {max_load}: waiting", flush=True)
        time.sleep(20)
    return load1()


def r_side(args: argparse.Namespace) -> tuple[str, str]:
    """(mode, source dir) or exits with a message."""
    if shutil.which("Rscript") is None:
        sys.exit("Rscript not found: install R (and sdcMicro, or Rcpp with --mdav-source)")
    if args.sdcmicro:
        return "installed", ""
    src = Path(args.mdav_source)
    if not (src / "mdav.R").is_file() or len(list(src.glob("*.cpp"))) != 1:
        sys.exit(f"--mdav-source {src}: needs mdav.R and exactly one .cpp file in that folder")
    return "source", str(src.resolve())


def run_r(X: np.ndarray, k: int, reps: int, mode: str, src: str, tmp: Path) -> tuple[float, np.ndarray, dict[str, Any]]:
    """Best elapsed seconds of sdcMicro's MDAV in R, its release, and what R printed."""
    csv, out, script = tmp / "x.csv", tmp / "release.bin", tmp / "run.R"
    np.savetxt(csv, X, delimiter=",", fmt="%.17g", header=",".join(f"V{j + 1}" for j in range(X.shape[1])),
               comments="")
    script.write_text(R_SCRIPT)
    cache = tmp / "rcpp-cache"
    cache.mkdir(exist_ok=True)
    p = subprocess.run(["Rscript", str(script), mode, src, str(csv), str(out), str(k), str(reps), str(cache)],
                       capture_output=True, text=True)
    if p.returncode == 3:  # the R script's own refusal: sdcMicro / Rcpp missing, bad folder
        sys.exit(f"{p.stdout.strip().splitlines()[-1]}: use --sdcmicro installed where the sdcMicro package is "
                 "installed, or --mdav-source DIR (a folder with its mdav.R and Mdav .cpp) with Rcpp")
    if p.returncode != 0:
        sys.exit(f"the R side failed (exit {p.returncode}):\n{p.stdout}\n{p.stderr}")
    info: dict[str, Any] = {"runs": []}
    for line in p.stdout.splitlines():
        key, _, rest = line.partition(" ")
        if key == "RUN":
            wall, cpu = map(float, rest.split())
            info["runs"].append(wall)
            info.setdefault("cpu", []).append(cpu)
        elif key in ("BEST", "R_VERSION", "RCPP_VERSION", "SDCMICRO_VERSION"):
            info[key] = rest.strip()
    release = np.fromfile(out, dtype=np.float64).reshape(X.shape[1], X.shape[0]).T
    return float(info["BEST"]), release, info


def groups_of(labels: np.ndarray) -> set[frozenset[int]]:
    order = np.argsort(labels, kind="stable")
    cuts = np.flatnonzero(np.diff(labels[order])) + 1
    return {frozenset(g.tolist()) for g in np.split(order, cuts)}


def compare(
    X: np.ndarray, k: int, reps: int, mode: str, src: str, tmp: Path, args: argparse.Namespace
) -> dict[str, Any]:
    row: dict[str, Any] = {"n": X.shape[0], "d": X.shape[1], "k": k, "reps": reps}
    row["load_r"] = wait_quiet(args.max_load, args.max_wait)
    t_r, release, info = run_r(X, k, reps, mode, src, tmp)
    row["load_r_end"] = load1()
    row.update(t_r=t_r, r_runs=info["runs"], cpu_r=min(info["cpu"]), info=info)
    _, lab_r, sizes = np.unique(release, axis=0, return_inverse=True, return_counts=True)
    lab_r = lab_r.ravel()
    row["il_r"] = ma.utility.information_loss(X, release)
    row["il_r_labels"] = ma.information_loss(X, lab_r)
    row["min_r"] = int(sizes.min())
    row["groups_r"] = len(sizes)
    row["load_ma"] = wait_quiet(args.max_load, args.max_wait)
    for dt in ("float64", "float32"):
        c0 = time.process_time()
        t, res = timed(partial(ma.microaggregate, X, k, n_jobs=1, dtype=dt), reps)
        row[f"t_{dt}"] = t
        row[f"cpu_{dt}"] = (time.process_time() - c0) / reps
        row[f"il_{dt}"] = ma.utility.information_loss(X, res.aggregated)
        row[f"min_{dt}"] = int(res.group_sizes.min())
        if dt == "float64":
            common = groups_of(lab_r) & groups_of(res.labels)
            row["same_groups"] = len(common) / len(sizes)
    row["load_ma_end"] = load1()
    return row


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    side = ap.add_mutually_exclusive_group(required=True)
    side.add_argument("--sdcmicro", choices=["installed"], help="time the installed R package")
    side.add_argument("--mdav-source", metavar="DIR", help="folder with mdav.R and the Mdav .cpp file")
    ap.add_argument("--ns", type=int, nargs="+", default=[10_000, 50_000, 100_000])
    ap.add_argument("--d", type=int, default=15)
    ap.add_argument("--k", type=int, default=10)
    ap.add_argument("--seed", type=int, default=20240515, help="NumPy seed of the Gaussian data")
    ap.add_argument("--repeat", type=int, default=None,
                    help="best of this many runs per side (default 3 up to n = 50 000, 2 above)")
    ap.add_argument("--tarragona-k", type=int, default=3)
    ap.add_argument("--no-tarragona", action="store_true")
    ap.add_argument("--max-load", type=float, default=1.5, help="wait for this 1-minute load before a timing")
    ap.add_argument("--max-wait", type=float, default=300.0, help="seconds to wait for --max-load at most")
    ap.add_argument("--name", default="sdcmicro", help="output file stem in bench-results/")
    ap.add_argument("--build-note", default="", help="what the imported microagg was built from (for the output)")
    args = ap.parse_args()
    mode, src = r_side(args)

    rows = []
    with tempfile.TemporaryDirectory(prefix="sdcmicro_compare_") as tmpdir:
        tmp = Path(tmpdir)
        for n in args.ns:
            reps = args.repeat if args.repeat is not None else (3 if n <= 50_000 else 2)
            X = np.random.default_rng(args.seed).normal(size=(n, args.d))
            rows.append(compare(X, args.k, reps, mode, src, tmp, args))
            rows[-1]["data"] = "Gaussian"
            print_row(rows[-1])
        if not args.no_tarragona:
            X = np.loadtxt(SHARED / "datasets" / "tarragona.csv", delimiter=",", skiprows=1)
            if mode == "source" and (X == -999).any():
                print("note: Tarragona holds -999, which sdcMicro's mdav() treats as missing")
            rows.append(compare(X, args.tarragona_k, args.repeat or 3, mode, src, tmp, args))
            rows[-1]["data"] = "Tarragona"
            print_row(rows[-1])
    write(f"{args.name}.md", report(rows, mode, src, args))


def print_row(r: dict[str, Any]) -> None:
    print(f"{r['data']} n={r['n']} d={r['d']} k={r['k']}: sdcMicro {r['t_r']:.3f} s (runs {r['r_runs']}), "
          f"microagg f64 {r['t_float64']:.3f} s, f32 {r['t_float32']:.3f} s; "
          f"IL sdcMicro {100 * r['il_r']:.4f}% (by labels {100 * r['il_r_labels']:.4f}%, smallest group "
          f"{r['min_r']}), microagg f64 {100 * r['il_float64']:.4f}%, f32 {100 * r['il_float32']:.4f}%; "
          f"same groups {100 * r['same_groups']:.1f}%; load {r['load_r']:.2f}->{r['load_r_end']:.2f} (R), "
          f"{r['load_ma']:.2f}->{r['load_ma_end']:.2f} (microagg)", flush=True)


def command(*argv: str) -> str:
    try:
        return subprocess.run(list(argv), capture_output=True, text=True, check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "?"


def report(rows: list[dict[str, Any]], mode: str, src: str, args: argparse.Namespace) -> list[str]:
    info = rows[0]["info"]
    cpu = next((ln.split(":", 1)[1].strip() for ln in command("lscpu").splitlines() if ln.startswith("Model name")),
               platform.processor())
    side = (f"sdcMicro {info.get('SDCMICRO_VERSION', '?')} (installed), `microaggregation(method = \"mdav\")`"
            if mode == "installed" else f"`mdav()` + `Mdav` C++ from `{src}` compiled by `Rcpp::sourceCpp`")
    lines = [
        "# microagg's exact MDAV vs sdcMicro's MDAV",
        "",
        f"Machine: {cpu}, {os.cpu_count()} cores. {info.get('R_VERSION', '?')}, Rcpp {info.get('RCPP_VERSION', '?')}; "
        f"compiler `{command('R', 'CMD', 'config', 'CXX')}` with R's default CXXFLAGS "
        f"`{command('R', 'CMD', 'config', 'CXXFLAGS')}`. microagg {ma.__version__} imported from "
        f"`{Path(ma.__file__).parent}`{' (' + args.build_note + ')' if args.build_note else ''}, "
        f"Python {platform.python_version()}, NumPy {np.__version__}.",
        "",
        f"R side: {side}. Elapsed seconds (`system.time`) of the call only: reading the CSV and compiling "
        "come before it. microagg: `ma.microaggregate(X, k, n_jobs=1, dtype=...)`, wall seconds "
        "(`time.perf_counter`), default parameters (the exact MDAV partition). One thread on both "
        f"sides. Best of the runs given in the table. Gaussian data: `numpy.random.default_rng({args.seed})"
        ".normal(size=(n, d))`.",
        "",
        "IL = 100 SSE / SST on the z-scored data (population sd), `ma.utility.information_loss` "
        "of each release. \"same groups\": share of sdcMicro's groups that microagg (float64) forms too.",
        "",
        "| data | n | d | k | runs | sdcMicro (s) | microagg f64 (s) | microagg f32 (s) | ratio f64 | ratio f32 "
        "| IL sdcMicro (%) | IL microagg f64 (%) | IL microagg f32 (%) | smallest group sdcMicro | same groups "
        "| load 1 min (R / microagg, before -> after) |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|",
    ]
    for r in rows:
        lines.append(
            f"| {r['data']} | {r['n']:,} | {r['d']} | {r['k']} | {r['reps']} | {r['t_r']:.3f} | {r['t_float64']:.3f} | "
            f"{r['t_float32']:.3f} | {r['t_r'] / r['t_float64']:.1f}x | {r['t_r'] / r['t_float32']:.1f}x | "
            f"{100 * r['il_r']:.4f} | {100 * r['il_float64']:.4f} | {100 * r['il_float32']:.4f} | {r['min_r']} | "
            f"{100 * r['same_groups']:.1f}% | {r['load_r']:.2f} -> {r['load_r_end']:.2f} / "
            f"{r['load_ma']:.2f} -> {r['load_ma_end']:.2f} |"
        )
    lines += ["", "CPU seconds (steadier than wall time if another job shares the cores): sdcMicro's "
              "fastest run (user + system), microagg's mean over its runs.", "",
              "| data | n | sdcMicro CPU (s) | microagg f64 CPU (s) | microagg f32 CPU (s) | ratio f64 | ratio f32 |",
              "|---|---:|---:|---:|---:|---:|---:|"]
    for r in rows:
        c64, c32 = r["cpu_float64"], r["cpu_float32"]
        lines.append(f"| {r['data']} | {r['n']:,} | {r['cpu_r']:.3f} | {c64:.3f} | {c32:.3f} | "
                     f"{r['cpu_r'] / c64:.1f}x | {r['cpu_r'] / c32:.1f}x |")
    lines += ["", "sdcMicro's runs, wall (s): " + "; ".join(
        f"{r['data']} n = {r['n']:,}: {', '.join(f'{t:.2f}' for t in r['r_runs'])}" for r in rows) + "."]
    prov = Path(src) / "PROVENANCE.md" if mode == "source" else None
    if prov is not None and prov.is_file():
        lines += ["", "## What was compiled (from the source folder's PROVENANCE.md)", "", prov.read_text().strip()]
    lines += ["", "Command: `python " + shlex.join([Path(sys.argv[0]).as_posix(), *sys.argv[1:]]) + "`"]
    return lines


if __name__ == "__main__":
    main()
