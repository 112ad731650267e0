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
    Cutter { x, scaling, nominal: None, max_part, exec }.parts(ids)
}

/// The nominal columns of a mixed key as the cuts see them (docs/scaling.md#partitioned-runs):
/// a code per record and column (0..L−1) and each column's weight w.
#[derive(Debug, Clone, Copy)]
pub struct LevelColumns<'a> {
    /// n × c codes, each in 0..L−1.
    pub codes: ArrayView2<'a, i64>,
    /// The weight w of each column (its one-hot block scaled by w/√2).
    pub weights: &'a [f64],
}

/// [`cut_into_parts`] on a mixed key: the numeric columns of `x` and the nominal `levels`,
/// cut in the geometry of the key's one-hot embedding without building it. A level l of a
/// column of weight w stands for its one-hot column, whose sum of squared deviations over a
/// part of m records, c of which hold l, is (w²/2)·(c − c²/m); a cut on it puts the m − c
/// records without l before the c with it (each side by row index). The attributes compete
/// in the order numeric columns, then each nominal column's levels 0..L−1, so the parts are
/// those of the embedding whose columns come in that order.
pub fn cut_mixed_into_parts<'a, S: Float>(
    x: ArrayView2<'a, S>,
    scaling: &'a Scaling,
    levels: LevelColumns<'a>,
    ids: Vec<u32>,
    max_part: usize,
    exec: Exec,
) -> Vec<Vec<u32>> {
    let counts = levels
        .codes
        .columns()
        .into_iter()
        .map(|c| c.iter().map(|&v| v.max(0) as usize + 1).max().unwrap_or(0))
        .collect();
    let nominal = Some(Nominal { levels, counts });
    Cutter { x, scaling, nominal, max_part, exec }.parts(ids)
}

/// Nominal columns with the number of levels of each (largest code + 1).
struct Nominal<'a> {
    levels: LevelColumns<'a>,
    counts: Vec<usize>,
}

/// The attribute a part is cut on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Direction {
    /// A numeric column of `x`.
    Numeric(usize),
    /// Level `level` of nominal column `column` (its one-hot column).
    Level { column: usize, level: i64 },
}

/// The fixed inputs of one partitioning.
struct Cutter<'a, S> {
    x: ArrayView2<'a, S>,
    scaling: &'a Scaling,
    nominal: Option<Nominal<'a>>,
    max_part: usize,
    exec: Exec,
}

impl<S: Float> Cutter<'_, S> {
    /// The parts of `ids`, left to right.
    fn parts(&self, mut ids: Vec<u32>) -> Vec<Vec<u32>> {
        assert!(self.max_part >= 1, "max_part must be positive");
        let mut parts = Vec::new();
        self.cut(&mut ids, &mut parts);
        parts
    }

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
        let half = m / 2;
        match self.direction(ids) {
            Direction::Numeric(j) => {
                let key = |id: u32| {
                    let v = self.value(id, j);
                    (if v.is_nan() { u64::MAX } else { order_bits(v) }, id)
                };
                ids.select_nth_unstable_by_key(half, |&id| key(id));
            }
            Direction::Level { column, level } => {
                let codes = self.nominal.as_ref().expect("a level cut has levels").levels.codes;
                ids.select_nth_unstable_by_key(half, |&id| {
                    (codes[[id as usize, column]] == level, id)
                });
            }
        }
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

    /// The attribute with the largest sum of squared deviations in the part: each numeric
    /// column's observed standardized values (two passes: mean, then deviations), then each
    /// nominal level's one-hot column.
    fn direction(&self, ids: &[u32]) -> Direction {
        let mut scores: Vec<f64> = (0..self.x.ncols()).map(|j| self.spread(ids, j)).collect();
        let mut at = Vec::new();
        if let Some(nominal) = &self.nominal {
            let m = ids.len() as f64;
            for (column, (&levels, &w)) in
                nominal.counts.iter().zip(nominal.levels.weights).enumerate()
            {
                let mut held = vec![0usize; levels];
                for &id in ids {
                    held[nominal.levels.codes[[id as usize, column]] as usize] += 1;
                }
                at.push(scores.len());
                scores.extend(held.iter().map(|&c| w * w / 2.0 * (c as f64 - (c * c) as f64 / m)));
            }
        }
        let best = first_best(&scores);
        match at.iter().rposition(|&start| start <= best) {
            None => Direction::Numeric(best),
            Some(column) => Direction::Level { column, level: (best - at[column]) as i64 },
        }
    }

    /// The sum of squared deviations of numeric column `j`'s observed standardized values.
    fn spread(&self, ids: &[u32], j: usize) -> f64 {
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

    /// The one-hot embedding of `codes` beside `x` (levels 0..L−1 of each column, with
    /// L its largest code + 1) and its scaling: `x`'s own, then √2/w for a level's column.
    fn embedding(x: &Array2<f64>, codes: &Array2<i64>, weights: &[f64]) -> (Array2<f64>, Scaling) {
        let mut columns: Vec<Vec<f64>> = x.columns().into_iter().map(|c| c.to_vec()).collect();
        let mut scale = Scaling::fit(x.view(), true).scale;
        for (c, &w) in codes.columns().into_iter().zip(weights) {
            for level in 0..=*c.iter().max().unwrap() {
                columns.push(c.iter().map(|&v| f64::from(u8::from(v == level))).collect());
                scale.push(2f64.sqrt() / w);
            }
        }
        let dense = Array2::from_shape_fn((x.nrows(), columns.len()), |(i, j)| columns[j][i]);
        let mean = Scaling::fit(dense.view(), false).mean;
        (dense, Scaling { mean, scale })
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(48))]
        #[test]
        fn mixed_parts_are_the_embeddings(
            n in 1usize..300, d in 1usize..3, levels in 1i64..9, many in 2i64..40,
            max_part in 1usize..50, heavy in 0.5f64..3.0, seed in 0u64..1000
        ) {
            // Few distinct values and levels: ties between columns, levels and records.
            let x = Array2::from_shape_fn((n, d), |(i, j)| {
                ((i as u64 * 2_654_435_761 + j as u64 * 40_503 + seed) % 4) as f64
            });
            let codes = Array2::from_shape_fn((n, 2), |(i, j)| {
                let h = (i as u64 * 11_400_714_819 + j as u64 * 97 + seed) % 1009;
                (h as i64) % if j == 0 { levels } else { many }
            });
            let weights = [heavy, 1.0];
            let (dense, dense_scaling) = embedding(&x, &codes, &weights);
            let expected = Parallelism::Sequential.install(|exec| {
                cut_into_parts(dense.view(), &dense_scaling, (0..n as u32).collect(), max_part, exec)
            }).unwrap();
            let scaling = Scaling::fit(x.view(), true);
            let levels = LevelColumns { codes: codes.view(), weights: &weights };
            for n_jobs in [1, 2] {
                let parts = Parallelism::from_n_jobs(n_jobs).unwrap().install(|exec| {
                    cut_mixed_into_parts(x.view(), &scaling, levels, (0..n as u32).collect(), max_part, exec)
                }).unwrap();
                prop_assert!(parts.iter().all(|p| p.len() <= max_part));
                prop_assert_eq!(&parts, &expected);
            }
        }


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
