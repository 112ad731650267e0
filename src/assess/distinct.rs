//! The distinct rows of a table and how often each occurs.
//!
//! A microaggregated release holds one distinct row per group (k or more copies each), so
//! an index over its distinct rows is k times smaller than one over its records. Rows are
//! equal when every value is equal, with −0.0 equal to 0.0 and NaN equal to NaN (a missing
//! cell left missing by `missing="keep"`).

use crate::float::{Float, order_bits};
use crate::parallel::Exec;
use ndarray::ArrayView2;
use std::cmp::Ordering;

/// The distinct rows of an n × d table (see the module docs).
#[derive(Debug, Clone, PartialEq)]
pub struct DistinctRows<T> {
    /// Number of attributes.
    pub dim: usize,
    /// The distinct rows, row-major, in the order of the total order of [`value_key`].
    pub rows: Vec<T>,
    /// Records equal to each distinct row.
    pub counts: Vec<u32>,
    /// The distinct row of each record.
    pub of_record: Vec<u32>,
}

/// Total order key of a value: numeric order, −0.0 = 0.0, every NaN equal and last.
#[inline]
pub fn value_key<T: Float>(v: T) -> u64 {
    if v.is_nan() { u64::MAX } else { order_bits(v.as_f64()) }
}

fn compare_rows<T: Float>(a: &[T], b: &[T]) -> Ordering {
    a.iter()
        .zip(b)
        .map(|(&x, &y)| value_key(x).cmp(&value_key(y)))
        .find(|o| o.is_ne())
        .unwrap_or(Ordering::Equal)
}

/// The rows of `x` copied row-major (reads any memory order).
pub fn row_major<T: Float>(x: ArrayView2<T>) -> Vec<T> {
    x.rows().into_iter().flat_map(|r| r.into_iter().copied()).collect()
}

impl<T: Float> DistinctRows<T> {
    /// Finds the distinct rows of `x` by sorting the records on their rows (in parallel where
    /// `exec` allows; the result does not depend on it).
    pub fn new(x: ArrayView2<T>, exec: Exec) -> Self {
        let (n, d) = x.dim();
        let data = row_major(x);
        let row = |i: u32| &data[i as usize * d..(i as usize + 1) * d];
        let mut order: Vec<u32> = (0..n as u32).collect();
        let cmp = |a: &u32, b: &u32| compare_rows(row(*a), row(*b));
        exec.sort_unstable_by(&mut order, cmp);
        let mut out =
            DistinctRows { dim: d, rows: Vec::new(), counts: Vec::new(), of_record: vec![0; n] };
        for (pos, &i) in order.iter().enumerate() {
            if pos == 0 || compare_rows(row(order[pos - 1]), row(i)).is_ne() {
                out.rows.extend_from_slice(row(i));
                out.counts.push(0);
            }
            let id = out.counts.len() - 1;
            out.counts[id] += 1;
            out.of_record[i as usize] = id as u32;
        }
        out
    }

    /// Number of distinct rows.
    pub fn len(&self) -> usize {
        self.counts.len()
    }

    /// Distinct row `id`.
    pub fn row(&self, id: u32) -> &[T] {
        &self.rows[id as usize * self.dim..(id as usize + 1) * self.dim]
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ndarray::array;

    #[test]
    fn groups_equal_rows_with_signed_zero_and_nan() {
        let x = array![[1.0, f64::NAN], [0.0, 2.0], [1.0, f64::NAN], [-0.0, 2.0], [0.0, 3.0]];
        let seq = DistinctRows::new(x.view(), Exec::SEQUENTIAL);
        assert_eq!(seq.len(), 3);
        let r = &seq.of_record;
        assert_eq!((r[0] == r[2], r[1] == r[3], r[1] == r[4]), (true, true, false));
        assert_eq!(seq.counts.iter().sum::<u32>(), 5);
        assert_eq!(seq.counts[r[0] as usize], 2);
        let fortran = x.t().as_standard_layout().into_owned().reversed_axes();
        let f = DistinctRows::new(fortran.view(), Exec::SEQUENTIAL);
        assert_eq!((&f.counts, &f.of_record), (&seq.counts, &seq.of_record));
        let bits = |r: &[f64]| r.iter().map(|v| v.to_bits()).collect::<Vec<_>>();
        assert_eq!(bits(&f.rows), bits(&seq.rows));
    }
}
