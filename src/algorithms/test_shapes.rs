//! Test data of several shapes for the exactness tests of the accelerated paths (MDAV,
//! MDAV*, MD, the incremental fold): the k-d tree and the compact copy give the scans' answers.

use ndarray::Array2;
use rand::SeedableRng;
use rand::rngs::StdRng;
use rand_distr::{Distribution, StandardNormal};

/// n × d values of one of four shapes: Gaussian (`shape` 0), log-normal (1), seven
/// clusters (2), small integers with many exact distance ties (3).
pub fn shaped(n: usize, d: usize, shape: u8, seed: u64) -> Array2<f64> {
    let mut rng = StdRng::seed_from_u64(seed);
    let mut normal = move || -> f64 { StandardNormal.sample(&mut rng) };
    let centres: Vec<f64> = (0..7 * d).map(|_| 20.0 * normal()).collect();
    Array2::from_shape_fn((n, d), |(i, j)| {
        let g = normal();
        match shape {
            0 => g,
            1 => g.exp(),
            2 => centres[(i % 7) * d + j] + g,
            _ => (g.abs() * 2.0).floor().min(4.0),
        }
    })
}
