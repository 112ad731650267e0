//! `cargo bench --bench mondrian`: the Mondrian family's cuts on Gaussian data (10⁶ records,
//! d = 3 and d = 24), one thread, without the Python layer or the evaluation. Benchmarks
//! measure and print; they assert nothing.

use criterion::{BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};
use microagg::Progress;
use microagg::engine::Exec;
use microagg::engine::{CutRule, mondrian};
use microagg::engine::{Scaling, WorkingSet};
use ndarray::Array2;
use rand::SeedableRng;
use rand::rngs::StdRng;
use rand_distr::{Distribution, StandardNormal};

fn bench_rules(c: &mut Criterion) {
    let n = 1_000_000;
    let mut g = c.benchmark_group("mondrian_1e6");
    g.sample_size(10).throughput(Throughput::Elements(n as u64));
    for d in [3, 24] {
        let mut rng = StdRng::seed_from_u64(42);
        let x: Array2<f64> =
            Array2::from_shape_simple_fn((n, d), || StandardNormal.sample(&mut rng));
        let rows =
            WorkingSet::<f64>::new(x.view(), &Scaling::fit(x.view(), true)).unwrap().rows_by_id();
        for (name, rule) in [
            ("mondrian", CutRule::Range),
            ("mondrian-v", CutRule::Variance),
            ("mondrian-v2d", CutRule::Variance2D),
        ] {
            g.bench_function(BenchmarkId::new(name, format!("d{d}")), |b| {
                b.iter(|| mondrian(rows.clone(), d, 5, rule, Exec::SEQUENTIAL, &Progress::new()))
            });
        }
    }
    g.finish();
}

criterion_group!(benches, bench_rules);
criterion_main!(benches);
