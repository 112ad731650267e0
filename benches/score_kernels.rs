//! `cargo bench --bench score_kernels [-- CANDIDATES D]`: the linkage scan's f32 score
//! kernels (`src/assess/scores*.rs`) alone, each one this CPU runs: portable, AVX2 + FMA,
//! AVX-512. Every tile of 12 queries against every panel of 16 candidates (10 000 × 10 000
//! at d = 15 unless given: the distinct rows of a 10⁵-record release at k = 10), thresholds
//! that admit no lane, so only the scoring is timed (hits are rare in a real scan). Prints
//! the best of three passes in seconds and in 10⁹ FMAs a second; asserts nothing (the
//! kernels' equal scores are `every_kernel_gives_the_portable_scores`'s).

use microagg::engine::{PanelRun, Panels, ScoreKernel, TILE};
use rand::{RngExt, SeedableRng};
use std::time::Instant;

fn main() {
    let args: Vec<usize> = std::env::args().skip(1).filter_map(|a| a.parse().ok()).collect();
    let count = args.first().copied().unwrap_or(10_000);
    let dim = args.get(1).copied().unwrap_or(15);
    let mut rng = rand::rngs::StdRng::seed_from_u64(1);
    let rows: Vec<f32> = (0..count * dim).map(|_| rng.random_range(-2.0..2.0)).collect();
    let panels =
        Panels::new(dim, count, |id, out| out.copy_from_slice(&rows[id * dim..(id + 1) * dim]));
    let tiles: Vec<Vec<f32>> = (0..count.div_ceil(TILE))
        .map(|_| (0..dim * TILE).map(|_| rng.random_range(-4.0..4.0)).collect())
        .collect();
    let mut kernels = vec![ScoreKernel::Portable];
    #[cfg(target_arch = "x86_64")]
    if std::arch::is_x86_feature_detected!("avx2") && std::arch::is_x86_feature_detected!("fma") {
        kernels.push(ScoreKernel::Avx2);
    }
    if ScoreKernel::detect() == ScoreKernel::Avx512 {
        kernels.push(ScoreKernel::Avx512);
    }
    let fmas = (tiles.len() * TILE) as f64 * count as f64 * dim as f64;
    println!("{count} candidates × {} queries, d = {dim}", tiles.len() * TILE);
    println!("| kernel | seconds | 10⁹ FMA/s |");
    println!("|---|---:|---:|");
    for kernel in kernels {
        let mut best = f64::INFINITY;
        for _ in 0..3 {
            let start = Instant::now();
            for tile in &tiles {
                let mut thresholds = [f32::NEG_INFINITY; TILE];
                let run = PanelRun { panels: panels.data(), dim, first: 0 };
                kernel.scan(run, tile, &mut thresholds, &mut |_, _, s| s);
            }
            best = best.min(start.elapsed().as_secs_f64());
        }
        println!("| {kernel:?} | {best:.3} | {:.1} |", fmas / best / 1e9);
    }
}
