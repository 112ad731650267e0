//! The hot loops: distance scores, argmax, and selection of the nearest records.
//!
//! Scores are computed for blocks of [`BLOCK`] consecutive positions of the column-major
//! working copy: the block stays in L1 while each attribute column streams past it, so the
//! inner loop is a plain `out[i] -= r * x[i]` that LLVM vectorizes across records. The few
//! hot kernels are compiled three times (portable SSE2, AVX2, AVX-512) and chosen at run time;
//! no floating-point contraction is used, so every path gives bit-identical results.
//!
//! Tie rule (DESIGN §3): among equal scores the record with the lowest original id wins,
//! both for "farthest" and for "nearest". Keys `(score, id)` are therefore totally ordered,
//! which makes every selection independent of memory order and of the thread count.

use crate::dataset::WorkingSet;
use crate::float::Float;
use std::cmp::Ordering;

/// Positions per score block (fits L1 together with one column chunk).
pub const BLOCK: usize = 64;

/// How the distance from a record `x` to a reference `r` is scored. Both orderings agree:
/// larger score = farther.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Metric {
    /// F-MDAV §3.1: ½‖x‖² − ⟨x, r⟩ (= ½‖x − r‖² − ½‖r‖²), from precomputed ½‖x‖²; 2d flops.
    Algebraic,
    /// The traditional Σ (x_j − r_j)²; 3d flops.
    Direct,
}

#[inline(always)]
fn fill_scores_generic<T: Float>(
    ws: &WorkingSet<T>,
    lo: usize,
    reference: &[T],
    metric: Metric,
    out: &mut [T],
) {
    for (b, blk) in out.chunks_mut(BLOCK).enumerate() {
        let start = lo + b * BLOCK;
        let end = start + blk.len();
        match metric {
            Metric::Algebraic => {
                blk.copy_from_slice(&ws.half_norms()[start..end]);
                for (j, &r) in reference.iter().enumerate() {
                    for (o, &x) in blk.iter_mut().zip(&ws.column(j)[start..end]) {
                        *o -= r * x;
                    }
                }
            }
            Metric::Direct => {
                blk.fill(T::zero());
                for (j, &r) in reference.iter().enumerate() {
                    for (o, &x) in blk.iter_mut().zip(&ws.column(j)[start..end]) {
                        let t = x - r;
                        *o += t * t;
                    }
                }
            }
        }
    }
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
fn fill_scores_avx2<T: Float>(ws: &WorkingSet<T>, lo: usize, r: &[T], m: Metric, out: &mut [T]) {
    fill_scores_generic(ws, lo, r, m, out)
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f")]
fn fill_scores_avx512<T: Float>(ws: &WorkingSet<T>, lo: usize, r: &[T], m: Metric, out: &mut [T]) {
    fill_scores_generic(ws, lo, r, m, out)
}

/// Writes into `out[i]` the score of the record at position `lo + i` against `reference`.
pub fn fill_scores<T: Float>(
    ws: &WorkingSet<T>,
    lo: usize,
    reference: &[T],
    metric: Metric,
    out: &mut [T],
) {
    debug_assert_eq!(reference.len(), ws.d());
    debug_assert!(lo + out.len() <= ws.n());
    #[cfg(target_arch = "x86_64")]
    {
        if std::arch::is_x86_feature_detected!("avx512f") {
            // SAFETY: the CPU supports AVX-512F (checked just above).
            return unsafe { fill_scores_avx512(ws, lo, reference, metric, out) };
        }
        if std::arch::is_x86_feature_detected!("avx2") {
            // SAFETY: the CPU supports AVX2 (checked just above).
            return unsafe { fill_scores_avx2(ws, lo, reference, metric, out) };
        }
    }
    fill_scores_generic(ws, lo, reference, metric, out)
}

/// A record chosen by a scan: its score, original id and current position.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Pick<T> {
    /// The record's score.
    pub score: T,
    /// Its original index (the tie-breaker).
    pub id: u32,
    /// Its position in the working set.
    pub pos: usize,
}

impl<T: Float> Pick<T> {
    /// The farther of two picks: larger score, then lower id.
    #[inline]
    pub fn farther(self, other: Self) -> Self {
        if other.score > self.score || (other.score == self.score && other.id < self.id) {
            other
        } else {
            self
        }
    }
}

/// Largest value of a slice (8 independent lanes so it vectorizes to max instructions).
#[inline(always)]
fn max_value<T: Float>(values: &[T]) -> T {
    let mut lanes = [T::neg_infinity(); 8];
    let mut chunks = values.chunks_exact(8);
    for c in &mut chunks {
        for (l, &v) in lanes.iter_mut().zip(c) {
            *l = if v > *l { v } else { *l };
        }
    }
    let mut m = chunks
        .remainder()
        .iter()
        .fold(T::neg_infinity(), |a, &v| if v > a { v } else { a });
    for l in lanes {
        m = if l > m { l } else { m };
    }
    m
}

/// The farthest record among `values` (scores of positions `offset..`): the largest score,
/// ties to the lowest id. `None` for an empty slice.
pub fn farthest<T: Float>(values: &[T], ids: &[u32], offset: usize) -> Option<Pick<T>> {
    if values.is_empty() {
        return None;
    }
    let best = max_value(values);
    let ids = &ids[offset..offset + values.len()];
    let (i, &id) = values
        .iter()
        .zip(ids)
        .enumerate()
        .filter(|(_, (v, _))| **v == best)
        .map(|(i, (_, id))| (i, id))
        .min_by_key(|(_, id)| **id)?;
    Some(Pick {
        score: best,
        id,
        pos: offset + i,
    })
}

/// Total order of selection keys: score, then original id.
#[inline]
fn key_cmp<T: Float>(a: &(T, u32, u32), b: &(T, u32, u32)) -> Ordering {
    a.0.partial_cmp(&b.0)
        .unwrap_or(Ordering::Equal)
        .then(a.1.cmp(&b.1))
}

/// How the nearest records are selected (F-MDAV §3.3).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Selection {
    /// Partial selection: quickselect on a stream pre-filtered by the current k-th key.
    Partial,
    /// The traditional full sort of every candidate.
    FullSort,
}

/// The `count` smallest `(score, id)` keys seen so far (a bounded candidate buffer).
///
/// Candidates are appended while they beat the current threshold (the largest kept key);
/// when the buffer holds `2·count` of them, quickselect shrinks it back to `count`. On data
/// in random order almost every record is rejected by one comparison, so the cost is one
/// vectorized pass plus O(count · log(n)) selections.
#[derive(Debug, Clone)]
pub struct Nearest<T> {
    count: usize,
    keys: Vec<(T, u32, u32)>,
    threshold: Option<(T, u32, u32)>,
}

impl<T: Float> Nearest<T> {
    /// An empty selection of `count` keys.
    pub fn new(count: usize) -> Self {
        Nearest {
            count,
            keys: Vec::with_capacity(2 * count.max(1)),
            threshold: None,
        }
    }

    #[inline]
    fn offer(&mut self, key: (T, u32, u32)) {
        if let Some(t) = self.threshold {
            if key_cmp(&key, &t) != Ordering::Less {
                return;
            }
        }
        self.keys.push(key);
        if self.keys.len() >= 2 * self.count {
            self.shrink();
        }
    }

    fn shrink(&mut self) {
        if self.keys.len() > self.count {
            self.keys.select_nth_unstable_by(self.count, key_cmp);
            self.keys.truncate(self.count);
        }
        if self.keys.len() == self.count {
            self.threshold = self.keys.iter().copied().max_by(key_cmp);
        }
    }

    /// Offers the scores of positions `offset..` (skipping position `exclude`).
    pub fn scan(&mut self, values: &[T], ids: &[u32], offset: usize, exclude: usize) {
        if self.count == 0 {
            return;
        }
        for (b, blk) in values.chunks(BLOCK).enumerate() {
            let start = offset + b * BLOCK;
            if let Some(t) = self.threshold {
                if !blk.iter().fold(false, |acc, &v| acc | (v <= t.0)) {
                    continue;
                }
            }
            for (i, &v) in blk.iter().enumerate() {
                let pos = start + i;
                if pos != exclude {
                    self.offer((v, ids[pos], pos as u32));
                }
            }
        }
    }

    /// Merges another selection (for chunked parallel scans).
    pub fn merge(mut self, other: Self) -> Self {
        for k in other.keys {
            self.offer(k);
        }
        self
    }

    /// The positions of the selected records, nearest first.
    pub fn into_positions(mut self) -> Vec<usize> {
        self.shrink();
        self.keys.sort_unstable_by(key_cmp);
        self.keys.into_iter().map(|k| k.2 as usize).collect()
    }
}

/// The `count` nearest positions among `values` (scores of positions `0..`), excluding
/// `exclude`, by a full sort of all candidates (the traditional MDAV step).
pub fn nearest_by_sort<T: Float>(
    values: &[T],
    ids: &[u32],
    exclude: usize,
    count: usize,
) -> Vec<usize> {
    let mut keys: Vec<(T, u32, u32)> = values
        .iter()
        .enumerate()
        .filter(|&(p, _)| p != exclude)
        .map(|(p, &v)| (v, ids[p], p as u32))
        .collect();
    keys.sort_by(key_cmp);
    keys.iter().take(count).map(|k| k.2 as usize).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dataset::{Scaling, WorkingSet};
    use ndarray::Array2;
    use proptest::prelude::*;

    fn working_set(rows: &[Vec<f64>]) -> WorkingSet<f64> {
        let d = rows[0].len();
        let x = Array2::from_shape_vec((rows.len(), d), rows.concat()).unwrap();
        WorkingSet::new(x.view(), &Scaling::fit(x.view(), false)).unwrap()
    }

    #[test]
    fn algebraic_and_direct_scores_agree_up_to_the_constant() {
        let rows: Vec<Vec<f64>> = (0..150)
            .map(|i| vec![(i as f64).sin(), (i as f64 * 0.7).cos(), i as f64 / 50.0])
            .collect();
        let ws = working_set(&rows);
        let r = ws.row(17);
        let (mut a, mut d) = (vec![0.0; 150], vec![0.0; 150]);
        fill_scores(&ws, 0, &r, Metric::Algebraic, &mut a);
        fill_scores(&ws, 0, &r, Metric::Direct, &mut d);
        let half_r: f64 = r.iter().map(|v| v * v).sum::<f64>() / 2.0;
        for (x, y) in a.iter().zip(&d) {
            assert!((x - (y / 2.0 - half_r)).abs() < 1e-12);
        }
        assert!(d[17].abs() < 1e-15);
    }

    #[test]
    fn farthest_breaks_ties_to_lowest_id() {
        let values = [1.0, 3.0, 2.0, 3.0];
        let ids = [9, 7, 1, 4];
        let p = farthest(&values, &ids, 0).unwrap();
        assert_eq!((p.pos, p.id), (3, 4));
        assert!(farthest::<f64>(&[], &ids, 0).is_none());
    }

    proptest! {
        #[test]
        fn partial_selection_equals_full_sort(
            values in prop::collection::vec(0u8..20, 1..400),
            count in 0usize..30,
            exclude in 0usize..400,
        ) {
            let values: Vec<f64> = values.iter().map(|&v| v as f64).collect();
            let ids: Vec<u32> = (0..values.len() as u32).rev().collect();
            let count = count.min(values.len().saturating_sub(1));
            let mut sel = Nearest::new(count);
            let half = values.len() / 2;
            sel.scan(&values[..half], &ids, 0, exclude);
            let mut other = Nearest::new(count);
            other.scan(&values[half..], &ids, half, exclude);
            let got = sel.merge(other).into_positions();
            let want = nearest_by_sort(&values, &ids, exclude, count);
            prop_assert_eq!(got.len(), count);
            prop_assert_eq!(got, want);
        }
    }
}
