//! `cargo bench --bench mdav_threads [-- N D ROUNDS]`: exact MDAV (microagg's defaults,
//! k = 10) on Gaussian N × D data (200 000 × 15 unless given; N ≥ 10) on one and two threads,
//! alternating, best of ROUNDS (5), for f32 and f64, with the speed-up and whether the
//! labels are the same (issue #15, goal 3), and the time of one empty pass of a team of two
//! threads (the synchronisation every round pays), before and after. The speed-up of each
//! alternating pair of runs is printed too, with its median: on a VM the best one-thread and
//! the best two-thread run can come from different spells (the empty pass took 0.12 µs in
//! some spells and 0.27–0.37 µs in others, and two-thread runs were up to 13% slower in the
//! slow ones). Two timings: `mdav` itself, and the whole
//! `microaggregate` (checks, scaling, working set, `mdav`, centroids and information loss:
//! what the Python `microaggregate` runs, without the conversion of its arguments).
//! Then, from ROUNDS more pairs of `mdav` runs, the speed-up in each tenth of the run (by
//! records assigned, most records left first): a thread polls the run's progress every
//! 0.2 ms, in runs apart from the timed ones, since on two vCPUs it takes a little of a
//! two-thread run's time. Comparing one- and two-thread runs made seconds apart, tenth by
//! tenth, shows where a two-thread run loses, which the totals of a VM's changing spells
//! hide (at 200 000 × 15 on the Intel VM, f32: 1.6–1.7× in the first tenths, 1.0–1.1× in
//! the last, `bench-results/mdav_threads_rust.md`).
//! Prints; asserts nothing. Uses mimalloc, the allocator of the Python extension
//! (`src/python/mod.rs`).

use microagg::Parallelism;
use microagg::engine::Exec;
use microagg::engine::{MdavOptions, mdav};
use microagg::engine::{Scaling, WorkingSet};
use microagg::{Float, Method, Options, Progress, microaggregate};
use ndarray::Array2;
use rand::SeedableRng;
use rand::rngs::StdRng;
use rand_distr::{Distribution, StandardNormal};
use std::hint::black_box;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

// With the `python` feature the library installs this allocator itself.
#[cfg(not(feature = "python"))]
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// Seconds and labels of one run on `jobs` threads.
type Timed = (f64, Vec<u32>);

/// The working set of `x` (scaled) and a thread pool of `jobs` threads: what an `mdav` run
/// needs, made before its clock starts.
fn prepared<T: Float>(x: &Array2<T>, jobs: i64) -> (WorkingSet<T>, Parallelism) {
    let ws = WorkingSet::<T>::new(x.view(), &Scaling::fit(x.view(), true)).unwrap();
    (ws, Parallelism::from_n_jobs(jobs).unwrap())
}

/// `mdav` alone (the working set and the thread pool are made before the clock starts).
fn mdav_only<T: Float>(x: &Array2<T>, jobs: i64) -> Timed {
    let (ws, par) = prepared(x, jobs);
    let (seconds, p) = par
        .install(|e| {
            let t0 = Instant::now();
            let p = mdav(ws, 10, MdavOptions::default(), e, &Progress::new());
            (t0.elapsed().as_secs_f64(), p)
        })
        .unwrap();
    (seconds, p.labels().to_vec())
}

/// Parts of a run that [`tenths`] times.
const TENTHS: usize = 10;

/// Seconds of each tenth of an `mdav` run on `jobs` threads: tenth `i` runs from when `i`
/// tenths of the records were in groups to when `i + 1` were (polled every 0.2 ms, so each
/// bound may be late by that much).
fn tenths<T: Float>(x: &Array2<T>, jobs: i64) -> [f64; TENTHS] {
    let n = x.nrows();
    let (ws, par) = prepared(x, jobs);
    let (progress, done) = (Progress::new(), AtomicBool::new(false));
    let mut ends = [0.0; TENTHS];
    let run = |e: Exec| {
        let t0 = Instant::now();
        std::thread::scope(|s| {
            s.spawn(|| {
                // The tenths completed so far (all of them once the run has returned).
                let mut next = 0;
                while next < TENTHS {
                    let finished = done.load(Ordering::Relaxed);
                    let assigned = if finished { n } else { progress.get().min(n) };
                    let reached = (assigned * TENTHS / n).max(next);
                    ends[next..reached].fill(t0.elapsed().as_secs_f64());
                    next = reached;
                    std::thread::sleep(Duration::from_micros(200));
                }
            });
            black_box(mdav(ws, 10, MdavOptions::default(), e, &progress));
            done.store(true, Ordering::Relaxed);
        });
    };
    par.install(run).unwrap();
    std::array::from_fn(|i| ends[i] - if i == 0 { 0.0 } else { ends[i - 1] })
}

/// The two-thread speed-up in each tenth of `mdav` runs, from `rounds` pairs of runs.
fn speedup_by_tenth<T: Float>(x: &Array2<T>, rounds: usize) {
    let (mut one, mut two) = ([0.0; TENTHS], [0.0; TENTHS]);
    let add = |sum: &mut [f64; TENTHS], t: [f64; TENTHS]| {
        sum.iter_mut().zip(t).for_each(|(s, t)| *s += t);
    };
    for _ in 0..rounds {
        add(&mut one, tenths(x, 1));
        add(&mut two, tenths(x, 2));
    }
    // A tenth shorter than a poll on either thread count (small N) has no ratio: it would
    // print 0.00 or inf.
    let ratio = |(a, b): (&f64, &f64)| {
        if *a > 0.0 && *b > 0.0 { format!("{:.2}", a / b) } else { "-".into() }
    };
    let ratios: Vec<String> = one.iter().zip(&two).map(ratio).collect();
    let (one, two) = (one.iter().sum::<f64>(), two.iter().sum::<f64>());
    println!(
        "{:<14} {} in tenths of the run (most records left first), {rounds} pairs, {one:.3} s → \
         {two:.3} s in all ({:.3}x): {}",
        "mdav",
        T::NAME,
        one / two,
        ratios.join(" ")
    );
}

/// The whole `microaggregate` with method "mdav" (its thread pool included).
fn whole<T: Float>(x: &Array2<T>, jobs: i64) -> Timed {
    let method = Method::parse("mdav", &[]).unwrap();
    let parallelism = Parallelism::from_n_jobs(jobs).unwrap();
    let options = Options { parallelism, ..Options::default() };
    let t0 = Instant::now();
    let out = microaggregate::<T, T>(x.view(), 10, &method, &options, &Progress::new()).unwrap();
    (t0.elapsed().as_secs_f64(), out.partition.labels().to_vec())
}

/// Best of `rounds` alternating one- and two-thread runs of `run`, printed, then the
/// speed-up of each pair (one run on one thread, the next on two) and their median.
fn compare<T: Float>(what: &str, x: &Array2<T>, rounds: usize, run: fn(&Array2<T>, i64) -> Timed) {
    let (mut one, mut two) = (f64::INFINITY, f64::INFINITY);
    let mut same = true;
    let mut pairs = Vec::with_capacity(rounds);
    for _ in 0..rounds {
        let (t1, l1) = run(x, 1);
        let (t2, l2) = run(x, 2);
        (one, two, same) = (one.min(t1), two.min(t2), same && l1 == l2);
        pairs.push(t1 / t2);
    }
    let (n, d) = x.dim();
    println!(
        "{what:<14} {} {n} x {d}: 1 thread {one:.3} s, 2 threads {two:.3} s, {:.3}x, same labels: {same}",
        T::NAME,
        one / two
    );
    let listed: Vec<String> = pairs.iter().map(|r| format!("{r:.3}")).collect();
    pairs.sort_by(f64::total_cmp);
    let mid = pairs.len() / 2;
    let median =
        if pairs.len() % 2 == 1 { pairs[mid] } else { (pairs[mid - 1] + pairs[mid]) / 2.0 };
    println!("{:<14} pairs {}, median {median:.3}x", "", listed.join(" "));
}

/// Best mean µs per pass of a team of two threads over passes of no work (a chunk per
/// thread that returns at once): publishing the pass, the helper's claim, and the caller
/// seeing its result, which every round of exact MDAV pays at least once.
fn team_round_trip() -> f64 {
    let passes = 200_000;
    let per_pass = |e: Exec| {
        let t0 = Instant::now();
        for i in 0..passes {
            let sum = e.map_range(1 << 20, |lo, hi| black_box(lo ^ hi ^ i), |a, b| a ^ b);
            black_box(sum);
        }
        t0.elapsed().as_secs_f64() * 1e6 / passes as f64
    };
    let par = Parallelism::from_n_jobs(2).unwrap();
    let best =
        |e: Exec| e.with_team(1 << 20, || (0..5).map(|_| per_pass(e)).fold(f64::MAX, f64::min));
    par.install(best).unwrap()
}

fn main() {
    // `cargo bench` passes `--bench`; the numbers are the positional arguments.
    let args: Vec<usize> = std::env::args().skip(1).filter_map(|a| a.parse().ok()).collect();
    let arg = |i: usize, default: usize| args.get(i).copied().unwrap_or(default);
    let (n, d, rounds) = (arg(0, 200_000).max(10), arg(1, 15), arg(2, 5).max(1));
    let mut rng = StdRng::seed_from_u64(42);
    let x = Array2::<f64>::from_shape_simple_fn((n, d), || StandardNormal.sample(&mut rng));
    let x32 = x.mapv(|v| v as f32);
    println!("team of 2 threads: {:.3} us per empty pass (before)", team_round_trip());
    compare("mdav", &x32, rounds, mdav_only::<f32>);
    compare("mdav", &x, rounds, mdav_only::<f64>);
    compare("microaggregate", &x32, rounds, whole::<f32>);
    compare("microaggregate", &x, rounds, whole::<f64>);
    speedup_by_tenth(&x32, rounds);
    speedup_by_tenth(&x, rounds);
    println!("team of 2 threads: {:.3} us per empty pass (after)", team_round_trip());
}
