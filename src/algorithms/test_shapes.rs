//! Test data of several shapes for the exactness tests of the accelerated paths (MDAV,
//! MDAV*, MD, the incremental fold): the k-d tree and the compact copy give the scans' answers.

use ndarray::Array2;
use proptest::prelude::*;
use rand::SeedableRng;
use rand::rngs::StdRng;
use rand_distr::{Distribution, StandardNormal};
use std::ops::Range;

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

/// One generated test case: `n` × `d` values of `shape` from `seed`, grouped with `k`
/// (printed as these five numbers when a property fails, not as the data).
#[derive(Debug, Clone, Copy)]
pub struct Case {
    pub n: usize,
    pub d: usize,
    pub k: usize,
    pub shape: u8,
    pub seed: u64,
}

impl Case {
    /// The case's data: [`shaped`] with at least `k` records.
    pub fn data(&self) -> Array2<f64> {
        shaped(self.n.max(self.k), self.d, self.shape, self.seed)
    }
}

/// Cases with `n < max_n`, `d < max_d`, `min_k ≤ k ≤ 10` and the first `shapes` shapes:
/// the inputs of the exactness properties (an accelerated path equals the scan).
pub fn cases(max_n: usize, max_d: usize, min_k: usize, shapes: u8) -> impl Strategy<Value = Case> {
    (1..max_n, 1..max_d, min_k..11, 0..shapes, any::<u64>())
        .prop_map(|(n, d, k, shape, seed)| Case { n, d, k, shape, seed })
}

/// Small integers (many exact ties): an n × d table of `values` with `k ≤ n`, where
/// `1 ≤ k < max_k`, `1 ≤ d < max_d` and at most `max_cells` cells; and its k.
pub fn small_integers(
    values: Range<i8>,
    max_cells: usize,
    max_k: usize,
    max_d: usize,
) -> impl Strategy<Value = (Array2<f64>, usize)> {
    (1..max_k, 1..max_d)
        .prop_flat_map(move |(k, d)| {
            (
                prop::collection::vec(values.clone(), k * d..max_cells.max(k * d + 1)),
                Just(k),
                Just(d),
            )
        })
        .prop_map(|(v, k, d)| {
            (Array2::from_shape_fn((v.len() / d, d), |(i, j)| f64::from(v[i * d + j])), k)
        })
}
