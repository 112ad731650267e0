//! The distance of record linkage over a mixed key (docs/assessment.md#risk).
//!
//! A row holds the key's numeric columns (numbers and ordinal ranks, already scaled) and
//! then its nominal columns as level codes (whole numbers stored in `T`). Two rows are
//! `Σ numeric Δ² + Σ nominal cost·[codes differ]` apart: the squared distance of the mixed
//! key's one-hot embedding (docs/algorithms.md#mixed-keys), where a nominal column of weight
//! w, one-hot × w/√2, puts a mismatch at cost w². Computed from the codes, never from
//! one-hot columns: O(attributes) per distance. Without nominal columns it is
//! [`squared_distance`] bit for bit.

use crate::float::Float;
use crate::index::{box_lower_bound, squared_distance};

/// The mixed distance of a row layout: `numeric` columns, then one code column per cost.
#[derive(Debug, Clone, PartialEq)]
pub struct MixedMetric<T> {
    numeric: usize,
    costs: Vec<T>,
}

impl<T: Float> MixedMetric<T> {
    /// `numeric` numeric columns followed by `costs.len()` nominal code columns, a mismatch
    /// on nominal column j costing `costs[j]` (w² for attribute weight w).
    pub fn new(numeric: usize, costs: Vec<T>) -> Self {
        MixedMetric { numeric, costs }
    }

    /// Columns of a row.
    pub fn dim(&self) -> usize {
        self.numeric + self.costs.len()
    }

    /// The distance of two complete rows: the numeric part summed as [`squared_distance`]
    /// sums, plus the mismatch costs summed in column order. Each part is a sum of
    /// non-negative terms, so [`Self::box_lower_bound`] never exceeds it under rounding.
    #[inline]
    pub fn distance(&self, a: &[T], b: &[T]) -> T {
        let p = self.numeric;
        squared_distance(&a[..p], &b[..p]) + self.mismatch(&a[p..], &b[p..], |x, y| x != y)
    }

    /// Σ costs[j] over the nominal columns where `differ(a_j, b_j)`, in column order.
    #[inline(always)]
    fn mismatch(&self, a: &[T], b: &[T], differ: impl Fn(T, T) -> bool) -> T {
        let mut acc = T::zero();
        for ((&x, &y), &c) in a.iter().zip(b).zip(&self.costs) {
            if differ(x, y) {
                acc += c;
            }
        }
        acc
    }

    /// Lower bound of [`Self::distance`] from `query` to any row in the box `[lo, hi]`:
    /// the numeric part's [`box_lower_bound`] plus the costs of the nominal columns whose
    /// code range excludes the query's code (every row in the box mismatches there).
    #[inline]
    pub fn box_lower_bound(&self, query: &[T], lo: &[T], hi: &[T]) -> T {
        let p = self.numeric;
        let numeric = box_lower_bound(&query[..p], &lo[..p], &hi[..p]);
        let mut acc = T::zero();
        for (j, &c) in self.costs.iter().enumerate() {
            let q = query[p + j];
            if q < lo[p + j] || q > hi[p + j] {
                acc += c;
            }
        }
        numeric + acc
    }

    /// The partial distance of rows with missing cells (NaN): the terms of
    /// [`Self::distance`] over the columns observed in both, times `dim / their number`;
    /// +∞ when no column is observed in both.
    pub fn partial(&self, a: &[T], b: &[T]) -> T {
        let p = self.numeric;
        let (mut numeric, mut m) = (T::zero(), 0usize);
        for (&x, &y) in a[..p].iter().zip(&b[..p]) {
            if !(x.is_nan() || y.is_nan()) {
                let t = x - y;
                numeric += t * t;
                m += 1;
            }
        }
        let observed = |x: T, y: T| !(x.is_nan() || y.is_nan());
        m += a[p..].iter().zip(&b[p..]).filter(|&(&x, &y)| observed(x, y)).count();
        let nominal = self.mismatch(&a[p..], &b[p..], |x, y| observed(x, y) && x != y);
        if m == 0 {
            T::infinity()
        } else {
            (numeric + nominal) * T::from_f64_lossy(self.dim() as f64 / m as f64)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numeric_rows_keep_the_squared_distance() {
        let m = MixedMetric::new(3, vec![]);
        let (a, b): ([f64; 3], [f64; 3]) = ([0.1, -2.0, 7.5], [1.3, 0.25, -1.0]);
        assert_eq!(m.distance(&a, &b).to_bits(), squared_distance(&a, &b).to_bits());
        assert_eq!(m.partial(&[f64::NAN, 1.0, 2.0], &[5.0, 3.0, 2.0]), 4.0 * 3.0 / 2.0);
    }

    #[test]
    fn a_mismatch_costs_its_weight_squared() {
        let m = MixedMetric::new(1, vec![1.0, 2.0]);
        assert_eq!(m.distance(&[0.5, 3.0, 1.0], &[1.5, 3.0, 1.0]), 1.0);
        assert_eq!(m.distance(&[0.5, 3.0, 1.0], &[1.5, 4.0, 0.0]), 4.0);
        // Only the observed pairs count, scaled by 3 columns / 2 observed.
        assert_eq!(m.partial(&[0.5, f64::NAN, 1.0], &[1.5, 4.0, 0.0]), (1.0 + 2.0) * 1.5);
        assert_eq!(m.partial(&[f64::NAN, f64::NAN, 1.0], &[1.5, 4.0, f64::NAN]), f64::INFINITY);
    }

    #[test]
    fn the_box_bound_counts_codes_outside_the_range() {
        let m = MixedMetric::new(1, vec![1.0, 1.0]);
        let (lo, hi) = ([0.0, 2.0, 0.0], [1.0, 5.0, 9.0]);
        assert_eq!(m.box_lower_bound(&[3.0, 1.0, 4.0], &lo, &hi), 4.0 + 1.0);
        for row in [[0.0, 2.0, 4.0], [1.0, 5.0, 0.0], [0.5, 3.0, 9.0]] {
            assert!(
                m.box_lower_bound(&[3.0, 1.0, 4.0], &lo, &hi) <= m.distance(&[3.0, 1.0, 4.0], &row)
            );
        }
    }
}
