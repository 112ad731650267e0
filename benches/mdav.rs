//! `cargo bench`: the scan kernels (f32/f64, algebraic/direct), a memory-bandwidth probe
//! (the floor a memory-bound pass can reach on this machine), and MDAV's variants
//! (traditional, each F-MDAV strategy alone, all of them, microagg's default).
//! Benchmarks measure and print; they assert nothing.

use criterion::{BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};
use microagg::engine::Exec;
use microagg::engine::{self, Farthest, Metric};
use microagg::engine::{MdavOptions, mdav};
use microagg::engine::{Scaling, WorkingSet};
use microagg::{Float, Progress};
use ndarray::Array2;
use rand::SeedableRng;
use rand::rngs::StdRng;
use rand_distr::{Distribution, StandardNormal};
use std::hint::black_box;

fn gaussian(n: usize, d: usize) -> Array2<f64> {
    let mut rng = StdRng::seed_from_u64(42);
    Array2::from_shape_simple_fn((n, d), || StandardNormal.sample(&mut rng))
}

fn working_set<T: Float>(x: &Array2<f64>) -> WorkingSet<T> {
    WorkingSet::new(x.view(), &Scaling::fit(x.view(), true)).unwrap()
}

fn bench_scan(c: &mut Criterion) {
    let (n, d) = (200_000, 15);
    let x = gaussian(n, d);
    let mut g = c.benchmark_group("scan_farthest_200k_x15");
    fn one<T: Float>(
        g: &mut criterion::BenchmarkGroup<'_, criterion::measurement::WallTime>,
        x: &Array2<f64>,
        metric: Metric,
    ) {
        let ws = working_set::<T>(x);
        let r = ws.row(7);
        g.throughput(Throughput::Bytes(((ws.d() + 1) * ws.n() * size_of::<T>()) as u64));
        g.bench_function(BenchmarkId::new(T::NAME, format!("{metric:?}")), |b| {
            b.iter(|| {
                engine::scan(
                    Exec::SEQUENTIAL,
                    &ws,
                    ws.n(),
                    black_box(&r),
                    metric,
                    Farthest::default,
                )
            })
        });
    }
    for metric in [Metric::Algebraic, Metric::Direct] {
        one::<f32>(&mut g, &x, metric);
        one::<f64>(&mut g, &x, metric);
    }
    g.finish();
}

/// Streaming read of 512 MiB: what one thread can pull from memory (the floor of a
/// memory-bound pass), for comparison with the scans above.
fn bench_bandwidth(c: &mut Criterion) {
    let v = vec![1.0f32; 128 << 20];
    let mut g = c.benchmark_group("memory_read");
    g.sample_size(10);
    g.throughput(Throughput::Bytes((v.len() * 4) as u64));
    g.bench_function("sum_512MiB_f32", |b| {
        b.iter(|| {
            let mut lanes = [0.0f32; 16];
            for ch in black_box(&v).chunks_exact(16) {
                for (l, x) in lanes.iter_mut().zip(ch) {
                    *l += x;
                }
            }
            lanes.iter().sum::<f32>()
        })
    });
    g.finish();
}

fn bench_mdav(c: &mut Criterion) {
    let (n, d, k) = (10_000, 15, 10);
    let x = gaussian(n, d);
    let t = MdavOptions::TRADITIONAL;
    let variants: [(&str, MdavOptions); 7] = [
        ("traditional", t),
        ("algebraic_distance", MdavOptions { algebraic_distance: true, ..t }),
        ("distance_reuse", MdavOptions { distance_reuse: true, ..t }),
        ("partial_sort", MdavOptions { partial_sort: true, ..t }),
        ("centroid_by_subtraction", MdavOptions { centroid_by_subtraction: true, ..t }),
        ("all_four", MdavOptions::default()),
        ("all_four_and_norm_pruning", MdavOptions { norm_pruning: true, ..MdavOptions::default() }),
    ];
    let mut g = c.benchmark_group("mdav_10k_x15_k10");
    g.sample_size(10);
    for (name, opts) in variants {
        let ws64 = working_set::<f64>(&x);
        g.bench_function(BenchmarkId::new("float64", name), |b| {
            b.iter(|| mdav(ws64.clone(), k, opts, Exec::SEQUENTIAL, &Progress::new()))
        });
    }
    let ws32 = working_set::<f32>(&x);
    for (name, opts) in [
        ("single_precision", t),
        ("all_five", MdavOptions::default()),
        ("all_five_and_norm_pruning", MdavOptions { norm_pruning: true, ..MdavOptions::default() }),
    ] {
        g.bench_function(BenchmarkId::new("float32", name), |b| {
            b.iter(|| mdav(ws32.clone(), k, opts, Exec::SEQUENTIAL, &Progress::new()))
        });
    }
    g.finish();
}

criterion_group!(benches, bench_scan, bench_bandwidth, bench_mdav);
criterion_main!(benches);
