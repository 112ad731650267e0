//! Partitioned runs (docs/scaling.md#partitioned-runs): Mondrian-V cuts until every part has at
//! most `max_part` records, so that any method can then run on each part independently (MONA
//! generalised).
//!
//! A part of m > `max_part` records is cut on the attribute with the largest sum of squared
//! deviations of its standardized values (scores within a relative 1e-9 of the best are
//! ties, won by the lowest attribute), at position ⌊m/2⌋ of the order (value, row index):
//! the left part has the ⌊m/2⌋ records that come first. Missing values (NaN) are left out of
//! the scores and come after every observed value in the order. Ties are broken by the row
//! index, never by the order records happen to be in, so a distributed engine that computes
//! the same sums and selects the same (value, row) pair reproduces the parts exactly (the
//! tie tolerance absorbs the rounding of sums taken in another order).
//!
//! With `max_part ≥ 2k` both halves of a cut have at least k records. Cost: O(n·d) per level,
//! ⌈log₂(n / max_part)⌉ levels; the two halves of a cut run on the rayon pool and the parts
//! are listed left to right, so the result does not depend on the thread count.

use crate::dataset::Scaling;
use crate::float::{Float, order_bits};
use crate::parallel::Exec;
use ndarray::ArrayView2;

/// Mantissa bits [`shared_scale`] clears (of 52).
const SCALE_DROPPED_BITS: u32 = 21;

/// The standard deviation `sd` with its last 21 mantissa bits cleared: the scale every part
/// of a partitioned run is grouped in. Two engines that sum the file in different orders
/// (this crate, the Dask reductions) get standard deviations that differ in the last bits,
/// and on tie-heavy data such a difference can flip a tie between two distances; cut to 31
/// mantissa bits (relative change below 5e-10) they agree unless the exact value lies within
/// rounding of a multiple of 2^-31, so both engines group every part alike.
pub fn shared_scale(sd: f64) -> f64 {
    f64::from_bits(sd.to_bits() & !((1u64 << SCALE_DROPPED_BITS) - 1))
}

/// Relative tolerance under which two attributes' scores are a tie.
const TIE: f64 = 1e-9;

/// Parts at least this large split their two halves across threads.
const PARALLEL_PART: usize = 1 << 14;

/// Cuts the records `ids` (row indices of `x`) into parts of at most `max_part` records,
/// listed left to right; each part's ids are in increasing order. `max_part ≥ 1`.
pub fn cut_into_parts<S: Float>(
    x: ArrayView2<S>,
    scaling: &Scaling,
    ids: Vec<u32>,
    max_part: usize,
    exec: Exec,
) -> Vec<Vec<u32>> {
    assert!(max_part >= 1, "max_part must be positive");
    let cutter = Cutter { x, scaling, max_part, exec };
    let mut ids = ids;
    let mut parts = Vec::new();
    cutter.cut(&mut ids, &mut parts);
    parts
}

/// The fixed inputs of one partitioning.
struct Cutter<'a, S> {
    x: ArrayView2<'a, S>,
    scaling: &'a Scaling,
    max_part: usize,
    exec: Exec,
}

impl<S: Float> Cutter<'_, S> {
    /// Standardized value of attribute `j` of record `id` (NaN stays NaN).
    #[inline]
    fn value(&self, id: u32, j: usize) -> f64 {
        self.scaling.apply(j, self.x[[id as usize, j]].as_f64())
    }

    /// Appends the parts of `ids` to `out`, left to right.
    fn cut(&self, ids: &mut [u32], out: &mut Vec<Vec<u32>>) {
        let m = ids.len();
        if m <= self.max_part {
            let mut part = ids.to_vec();
            part.sort_unstable();
            out.push(part);
            return;
        }
        let j = self.direction(ids);
        let half = m / 2;
        let key = |id: u32| {
            let v = self.value(id, j);
            (if v.is_nan() { u64::MAX } else { order_bits(v) }, id)
        };
        ids.select_nth_unstable_by_key(half, |&id| key(id));
        let (left, right) = ids.split_at_mut(half);
        if self.exec.is_parallel() && m >= PARALLEL_PART {
            let (mut l, mut r) = (Vec::new(), Vec::new());
            rayon::join(|| self.cut(left, &mut l), || self.cut(right, &mut r));
            out.append(&mut l);
            out.append(&mut r);
        } else {
            self.cut(left, out);
            self.cut(right, out);
        }
    }

    /// The attribute whose observed standardized values have the largest sum of squared
    /// deviations in the part (two passes: mean, then deviations).
    fn direction(&self, ids: &[u32]) -> usize {
        let scores: Vec<f64> = (0..self.x.ncols())
            .map(|j| {
                let (mut sum, mut count) = (0.0, 0usize);
                for &id in ids {
                    let v = self.value(id, j);
                    if !v.is_nan() {
                        sum += v;
                        count += 1;
                    }
                }
                if count == 0 {
                    return 0.0;
                }
                let mean = sum / count as f64;
                ids.iter()
                    .map(|&id| self.value(id, j) - mean)
                    .filter(|dv| !dv.is_nan())
                    .map(|dv| dv * dv)
                    .sum()
            })
            .collect();
        first_best(&scores)
    }
}

/// The index of the first score within a relative `TIE` of the largest.
fn first_best(scores: &[f64]) -> usize {
    let best = scores.iter().copied().fold(0.0, f64::max);
    scores.iter().position(|&s| s >= best * (1.0 - TIE)).unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::parallel::Parallelism;
    use ndarray::Array2;
    use proptest::prelude::*;

    fn parts_of(x: &Array2<f64>, max_part: usize, n_jobs: i64) -> Vec<Vec<u32>> {
        parts_scaled(x, &Scaling::fit(x.view(), true), max_part, n_jobs)
    }

    fn parts_scaled(
        x: &Array2<f64>,
        scaling: &Scaling,
        max_part: usize,
        n_jobs: i64,
    ) -> Vec<Vec<u32>> {
        let ids = (0..x.nrows() as u32).collect();
        Parallelism::from_n_jobs(n_jobs)
            .unwrap()
            .install(|exec| cut_into_parts(x.view(), scaling, ids, max_part, exec))
            .unwrap()
    }

    /// A direct reference: full sort by (value, id) of the highest-variance attribute.
    fn reference(x: &Array2<f64>, ids: Vec<u32>, max_part: usize, out: &mut Vec<Vec<u32>>) {
        let scaling = Scaling::fit(x.view(), true);
        let z = |id: u32, j: usize| scaling.apply(j, x[[id as usize, j]]);
        if ids.len() <= max_part {
            let mut p = ids;
            p.sort_unstable();
            out.push(p);
            return;
        }
        let scores: Vec<f64> = (0..x.ncols())
            .map(|j| {
                let mean = ids.iter().map(|&i| z(i, j)).sum::<f64>() / ids.len() as f64;
                ids.iter().map(|&i| (z(i, j) - mean).powi(2)).sum()
            })
            .collect();
        let j = first_best(&scores);
        let mut sorted = ids;
        sorted.sort_by(|&a, &b| z(a, j).total_cmp(&z(b, j)).then(a.cmp(&b)));
        let right = sorted.split_off(sorted.len() / 2);
        reference(x, sorted, max_part, out);
        reference(x, right, max_part, out);
    }

    #[test]
    fn shared_scale_drops_the_last_bits_only() {
        let sd = 1.712_832_559_680_017_4;
        let (a, b) = (shared_scale(sd), shared_scale(f64::from_bits(sd.to_bits() + 3)));
        assert_eq!(a, b);
        assert!(a <= sd && (sd - a) / sd < 5e-10);
        assert_eq!(shared_scale(1.0), 1.0);
    }

    #[test]
    fn parts_respect_the_bound_and_cover_every_record() {
        let x =
            Array2::from_shape_fn((50_000, 3), |(i, j)| ((i * 7919 + j * 104_729) % 1000) as f64);
        let parts = parts_of(&x, 1000, 1);
        let mut seen: Vec<u32> = parts.iter().flatten().copied().collect();
        assert!(parts.iter().all(|p| !p.is_empty() && p.len() <= 1000));
        seen.sort_unstable();
        assert_eq!(seen, (0..50_000).collect::<Vec<u32>>());
        assert_eq!(parts, parts_of(&x, 1000, 2), "thread count changed the parts");
    }

    #[test]
    fn missing_values_come_last_and_leave_scores_alone() {
        // Attribute 1 varies most; its NaN records sort after every observed value.
        let mut x =
            Array2::from_shape_fn((8, 2), |(i, j)| if j == 0 { i as f64 * 0.1 } else { i as f64 });
        x[[0, 1]] = f64::NAN;
        x[[1, 1]] = f64::NAN;
        let identity = Scaling { mean: vec![0.0; 2], scale: vec![1.0; 2] };
        let parts = parts_scaled(&x, &identity, 4, 1);
        assert_eq!(parts, vec![vec![2, 3, 4, 5], vec![0, 1, 6, 7]]);
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(48))]
        #[test]
        fn equals_the_sorting_reference(
            n in 1usize..400, d in 1usize..5, levels in 1u32..6, max_part in 1usize..60, seed in 0u64..1000
        ) {
            // Small integer values: many exact ties, broken by the row index.
            let x = Array2::from_shape_fn((n, d), |(i, j)| {
                ((i as u64 * 2_654_435_761 + j as u64 * 40_503 + seed) % (levels as u64 * 3)) as f64
            });
            let mut expected = Vec::new();
            reference(&x, (0..n as u32).collect(), max_part, &mut expected);
            prop_assert_eq!(parts_of(&x, max_part, 1), expected);
        }
    }
}
