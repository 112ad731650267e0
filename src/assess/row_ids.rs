//! The distinct rows of a table in one hashing pass: each record's row id, each id's first
//! record and its count.
//!
//! The class counting of the assessment (docs/assessment.md#population-risk) groups the
//! records of a release by their whole key row, then by missingness pattern and projection
//! (`python/microagg/_kanonymity.py`): every step asks for the distinct rows of a table. One
//! pass over the records with a hash map keyed by the row's values takes O(n · d) expected
//! time, where sorting the rows takes O(n · d · log n). Values compare as in
//! [`super::distinct`]: numerically, −0.0 = 0.0, every NaN equal to every NaN (a missing
//! cell).

use super::distinct::value_key;
use crate::float::Float;
use ndarray::ArrayView2;
use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};

/// The distinct rows of an n × d table, numbered in the order of their first record.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RowIds {
    /// The row id of each record (0-based).
    pub of_record: Vec<usize>,
    /// The first record of each row id.
    pub first: Vec<usize>,
    /// The records of each row id.
    pub counts: Vec<usize>,
}

impl RowIds {
    /// Numbers the distinct rows of `x` (any memory order).
    pub fn new<T: Float>(x: ArrayView2<T>) -> Self {
        let (n, d) = x.dim();
        let keys: Vec<u64> =
            x.rows().into_iter().flat_map(|r| r.into_iter().map(|&v| value_key(v))).collect();
        let mut ids: HashMap<&[u64], usize, BuildHasherDefault<RowHasher>> =
            HashMap::with_capacity_and_hasher(n.min(1 << 20), BuildHasherDefault::default());
        let mut out =
            RowIds { of_record: Vec::with_capacity(n), first: Vec::new(), counts: Vec::new() };
        for i in 0..n {
            let row = &keys[i * d..(i + 1) * d];
            let next = out.first.len();
            let id = *ids.entry(row).or_insert(next);
            if id == next {
                out.first.push(i);
                out.counts.push(0);
            }
            out.counts[id] += 1;
            out.of_record.push(id);
        }
        out
    }
}

/// A multiplicative hash of 64-bit words (the row keys hash as their bytes), much faster than
/// the default SipHash for short rows of integers; the inputs are the caller's own data, so
/// no resistance to crafted collisions is needed.
#[derive(Default)]
struct RowHasher(u64);

/// An odd 64-bit constant (2^64 / golden ratio) for multiplicative hashing.
const MULTIPLIER: u64 = 0x9E37_79B9_7F4A_7C15;

impl RowHasher {
    #[inline]
    fn mix(&mut self, word: u64) {
        self.0 = (self.0.rotate_left(26) ^ word).wrapping_mul(MULTIPLIER);
    }
}

impl Hasher for RowHasher {
    #[inline]
    fn write(&mut self, bytes: &[u8]) {
        let mut chunks = bytes.chunks_exact(8);
        for c in &mut chunks {
            self.mix(u64::from_le_bytes(c.try_into().expect("8 bytes")));
        }
        let rest = chunks.remainder();
        if !rest.is_empty() {
            let mut last = [0u8; 8];
            last[..rest.len()].copy_from_slice(rest);
            self.mix(u64::from_le_bytes(last) ^ ((rest.len() as u64) << 56));
        }
    }

    #[inline]
    fn write_usize(&mut self, i: usize) {
        self.mix(i as u64);
    }

    #[inline]
    fn finish(&self) -> u64 {
        self.0 ^ (self.0 >> 29)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ndarray::{Array2, array};

    #[test]
    fn numbers_rows_by_first_record_with_signed_zero_and_nan() {
        let x = array![[1.0, f64::NAN], [0.0, 2.0], [1.0, f64::NAN], [-0.0, 2.0], [0.0, 3.0]];
        let r = RowIds::new(x.view());
        assert_eq!(r.of_record, vec![0, 1, 0, 1, 2]);
        assert_eq!(r.first, vec![0, 1, 4]);
        assert_eq!(r.counts, vec![2, 2, 1]);
        let fortran = x.t().as_standard_layout().into_owned().reversed_axes();
        assert_eq!(RowIds::new(fortran.view()), r);
    }

    #[test]
    fn agrees_with_the_sorted_distinct_rows() {
        use crate::assess::distinct::DistinctRows;
        use crate::parallel::Exec;
        let x = Array2::from_shape_fn((500, 3), |(i, j)| ((i * 7 + j * 3) % 11 % (j + 2)) as f64);
        let (h, s) = (RowIds::new(x.view()), DistinctRows::new(x.view(), Exec::SEQUENTIAL));
        assert_eq!(h.first.len(), s.len());
        for i in 0..500 {
            for k in 0..500 {
                let same_h = h.of_record[i] == h.of_record[k];
                assert_eq!(same_h, s.of_record[i] == s.of_record[k], "records {i} and {k}");
            }
        }
        let total: usize = h.counts.iter().sum();
        assert_eq!(total, 500);
    }

    #[test]
    fn no_attributes_is_one_row_and_no_records_none() {
        let r = RowIds::new(Array2::<f64>::zeros((3, 0)).view());
        assert_eq!((r.of_record, r.first, r.counts), (vec![0, 0, 0], vec![0], vec![3]));
        let r = RowIds::new(Array2::<f64>::zeros((0, 2)).view());
        assert!(r.first.is_empty() && r.of_record.is_empty());
    }
}
