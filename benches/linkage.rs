//! `cargo bench --bench linkage [-- N D ROUNDS]`: nearest-record linkage next to the MDAV
//! run it assesses (issue #42 §3): Gaussian N × D data (100 000 × 15 unless given),
//! microaggregated by MDAV (k = 10, f64, one thread, what `ma.microaggregate` runs), then
//! every original record linked to the release (`link_nearest`, both scaled by the
//! original's population sd, as `ma.risk.record_linkage` does) on one thread and on two;
//! best of ROUNDS (3) linkage runs, one MDAV run. Wall seconds, and for the one-thread runs
//! the process's CPU seconds too (`/proc/self/stat`, Linux; steadier when other jobs share
//! the cores). Prints; asserts nothing but that every thread count gives the same links.
//! Uses mimalloc, the allocator of the Python extension.

use microagg::Parallelism;
use microagg::link_nearest;
use microagg::{Method, Options, Progress, microaggregate};
use ndarray::{Array2, Axis};
use rand::SeedableRng;
use rand::rngs::StdRng;
use rand_distr::{Distribution, StandardNormal};
use std::time::Instant;

// With the `python` feature the library installs this allocator itself.
#[cfg(not(feature = "python"))]
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// CPU seconds of this process so far (user + system, from `/proc/self/stat`; 0 elsewhere).
fn cpu_seconds() -> f64 {
    let stat = std::fs::read_to_string("/proc/self/stat").unwrap_or_default();
    let after_name = stat.rsplit(')').next().unwrap_or("");
    let fields: Vec<f64> = after_name.split_whitespace().filter_map(|f| f.parse().ok()).collect();
    // utime and stime are fields 14 and 15 of the line, 11 and 12 after the name, in ticks
    // of 1/100 s (USER_HZ).
    fields.get(10..12).map_or(0.0, |t| (t[0] + t[1]) / 100.0)
}

fn main() {
    let args: Vec<usize> = std::env::args().skip(1).filter_map(|a| a.parse().ok()).collect();
    let n = args.first().copied().unwrap_or(100_000);
    let d = args.get(1).copied().unwrap_or(15);
    let rounds = args.get(2).copied().unwrap_or(3);
    let mut rng = StdRng::seed_from_u64((n + d) as u64);
    let x = Array2::from_shape_fn((n, d), |_| StandardNormal.sample(&mut rng));
    let method = Method::parse("mdav", &[]).unwrap();
    let (t0, c0) = (Instant::now(), cpu_seconds());
    let out =
        microaggregate::<f64, f64>(x.view(), 10, &method, &Options::default(), &Progress::new())
            .unwrap();
    let (t_mdav, c_mdav) = (t0.elapsed().as_secs_f64(), cpu_seconds() - c0);
    let centroids = &out.evaluation.centroids;
    let release =
        Array2::from_shape_fn((n, d), |(i, j)| centroids[[out.partition.labels()[i] as usize, j]]);
    // Scaled by the original's population mean and sd, as `record_linkage` does.
    let mean = x.mean_axis(Axis(0)).unwrap();
    let sd = x.std_axis(Axis(0), 0.0);
    let (z, zm) = ((&x - &mean) / &sd, (&release - &mean) / &sd);
    println!(
        "{n} x {d}, {} groups: MDAV {t_mdav:.3} s, CPU {c_mdav:.2} s",
        out.partition.n_groups()
    );
    let mut first = None;
    for jobs in [1, 2] {
        let par = Parallelism::from_n_jobs(jobs).unwrap();
        let (mut best, mut best_cpu) = (f64::INFINITY, f64::INFINITY);
        for _ in 0..rounds {
            let (t0, c0) = (Instant::now(), cpu_seconds());
            let links = link_nearest(z.view(), zm.view(), par).unwrap();
            best = best.min(t0.elapsed().as_secs_f64());
            best_cpu = best_cpu.min(cpu_seconds() - c0);
            match &first {
                None => first = Some(links),
                Some(f) => assert_eq!(f, &links, "every thread count gives the same links"),
            }
        }
        let rate = first.as_ref().unwrap().expected_correct() / n as f64;
        println!(
            "linkage {jobs} thread(s): {best:.3} s, CPU {best_cpu:.2} s (best of {rounds}), \
             rate {:.4}%",
            100.0 * rate
        );
    }
}
