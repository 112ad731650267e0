//! Exact MDAV in low dimension: the three queries of a round (farthest from a point, the
//! k−1 nearest of a point, with deletions) answered by the k-d tree of `crate::index` in
//! about log n instead of a pass over the remaining records (issue #15, goal 1).
//!
//! Exactness: the final comparison of every candidate is the score the scan compares
//! ([`crate::kernels`]: ½‖x‖² − ⟨x, r⟩ from the stored half norm, or Σ(x − r)², in
//! precision `T`, same operations in the same order), with the same tie rule (equal
//! scores: lowest original id; docs/architecture.md#the-cores-rules). Boxes only prune, by bounds
//! of the score computed in f64 from the exact identity score = ½‖x − r‖² − ½‖r‖² (or ‖x − r‖²) and
//! widened by a rounding slack larger than the worst error of the computed score, so a
//! record that could win or tie is never skipped and the partition is bit-for-bit the
//! scan's.

use crate::dataset::WorkingSet;
use crate::float::Float;
use crate::index::IndexChoice;
use crate::index::kdtree::{BoxSearch, KdTree};
use crate::kernels::Metric;
use std::cmp::Ordering;

/// The exact accelerators of the farthest and nearest queries (issue #15), each chosen like
/// MDAV's options of the same names: the k-d tree in low d (this file) and the compact copy's
/// scans in high d (`mdav/compact/`). MDAV* and MDAV*+ take them together; the default is
/// `Auto` for both.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Accelerators {
    /// The k-d tree of the unassigned records (`spatial_index`).
    pub spatial_index: IndexChoice,
    /// The int8 copy scanned first (`compact_scan`); only where the k-d tree is not used.
    pub compact_scan: IndexChoice,
}

/// Records per leaf: small leaves keep the boxes on the shrinking hull tight, which is what
/// the farthest-point queries need (1e5 × 3: 8 beat 4 and 16 by 4–5%).
const LEAF: usize = 8;

/// The remaining records of a working set in a k-d tree, scored like the scans.
#[derive(Debug, Clone)]
pub struct SpatialIndex<T> {
    tree: KdTree<T>,
    /// ½‖x‖² of each point in tree order (the working set's values, bit for bit).
    half_norms: Vec<T>,
    /// max |x_j| over every record, per attribute (for the rounding slack).
    reach: Vec<f64>,
}

impl<T: Float> SpatialIndex<T> {
    /// Indexes every record of a complete working set (ids = original indices).
    pub fn new(ws: &WorkingSet<T>) -> Self {
        let by_id: Vec<T> = (0..ws.n() as u32).flat_map(|id| ws.row(ws.position_of(id))).collect();
        let mut tree = KdTree::with_leaf_size(&by_id, ws.d(), LEAF);
        let norms: Vec<T> =
            (0..ws.n() as u32).map(|id| ws.half_norms()[ws.position_of(id)]).collect();
        tree.set_keys(&norms);
        let half_norms = tree
            .ids_in_tree_order()
            .iter()
            .map(|&id| ws.half_norms()[ws.position_of(id)])
            .collect();
        let reach = (0..ws.d())
            .map(|j| ws.column(j).iter().fold(0.0f64, |a, v| a.max(v.as_f64().abs())))
            .collect();
        SpatialIndex { tree, half_norms, reach }
    }

    /// Removes record `id`.
    pub fn remove(&mut self, id: u32) {
        self.tree.remove(id);
    }

    /// Id of the remaining record farthest from `reference` by `metric` (largest score,
    /// ties to the lowest id); `None` when none remains.
    pub fn farthest(&self, reference: &[T], metric: Metric) -> Option<u32> {
        let mut s = Farthest { score: Scorer::new(self, reference, metric), best: None };
        self.tree.walk(&mut s);
        s.best.map(|(_, id)| id)
    }

    /// Ids of the `count` remaining records nearest to `reference` by `metric` but
    /// `exclude` (smallest score, ties to the lowest id), nearest first.
    pub fn nearest(&self, reference: &[T], metric: Metric, count: usize, exclude: u32) -> Vec<u32> {
        let score = Scorer::new(self, reference, metric);
        let mut s = Nearest { score, count, exclude, kept: vec![] };
        if count > 0 {
            self.tree.walk(&mut s);
        }
        s.kept.into_iter().map(|(_, id)| id).collect()
    }
}

/// The scan's score of a point and safe bounds of it over a box.
struct Scorer<'a, T> {
    index: &'a SpatialIndex<T>,
    reference: &'a [T],
    metric: Metric,
    /// ½‖r‖² (Algebraic) or 0 (Direct), and the factor of ‖x − r‖² in the score.
    offset: f64,
    scale: f64,
    /// Bounds the rounding error of any computed score (and of the f64 bounds).
    slack: f64,
}

impl<'a, T: Float> Scorer<'a, T> {
    fn new(index: &'a SpatialIndex<T>, reference: &'a [T], metric: Metric) -> Self {
        let norm2: f64 = reference.iter().map(|r| r.as_f64() * r.as_f64()).sum();
        // The computed score and the f64 bound each err by at most about (d + 3)·u·M, with
        // u the unit roundoff of T and M = Σ A_j² + Σ |r_j|·A_j + ‖r‖² for |x_j| ≤ A_j (the
        // extent of every record): 8× covers both; the absolute term covers products in
        // T's subnormal range.
        let reach = index.reach.iter().zip(reference);
        let magnitude: f64 = norm2 + reach.map(|(&a, r)| a * a + r.as_f64().abs() * a).sum::<f64>();
        let u = T::epsilon().as_f64() / 2.0;
        let slack = 8.0 * (reference.len() + 4) as f64 * u * magnitude
            + 4.0 * T::min_positive_value().as_f64();
        let (offset, scale) = match metric {
            Metric::Algebraic => (0.5 * norm2, 0.5),
            Metric::Direct => (0.0, 1.0),
        };
        Scorer { index, reference, metric, offset, scale, slack }
    }

    /// The score the scan computes (`kernels::score_lanes`, `WorkingSet::algebraic_score`):
    /// same operations, same order, no contraction.
    #[inline(always)]
    fn score(&self, pos: usize, x: &[T]) -> T {
        let r = self.reference;
        match self.metric {
            Metric::Algebraic => {
                let mut s = self.index.half_norms[pos];
                for (&xj, &rj) in x.iter().zip(r) {
                    s -= rj * xj;
                }
                s
            }
            Metric::Direct => {
                let t = x[0] - r[0];
                let mut s = t * t;
                for (&xj, &rj) in x.iter().zip(r).skip(1) {
                    let t = xj - rj;
                    s += t * t;
                }
                s
            }
        }
    }

    /// Lower bound of the computed score of any point in `[lo, hi]` (NaN on overflow).
    #[inline]
    fn lower(&self, lo: &[T], hi: &[T]) -> f64 {
        let mut near = 0.0;
        for ((&r, &l), &h) in self.reference.iter().zip(lo).zip(hi) {
            let (r, l, h) = (r.as_f64(), l.as_f64(), h.as_f64());
            let gap = (l - r).max(r - h).max(0.0);
            near += gap * gap;
        }
        self.scale * near - self.offset - self.slack
    }

    /// Upper bound of the computed score of any point in `[lo, hi]` whose stored ½‖x‖² is
    /// at most `half_norm_max` (NaN on overflow): the farthest corner, and for the algebraic
    /// score also max ½‖x‖² − min ⟨x, r⟩, much tighter near the origin (the centroid).
    #[inline]
    fn upper(&self, lo: &[T], hi: &[T], half_norm_max: Option<T>) -> f64 {
        let (mut far, mut dot) = (0.0, 0.0);
        for ((&r, &l), &h) in self.reference.iter().zip(lo).zip(hi) {
            let (r, l, h) = (r.as_f64(), l.as_f64(), h.as_f64());
            let reach = (r - l).max(h - r);
            far += reach * reach;
            dot += (r * l).min(r * h);
        }
        let corner = self.scale * far - self.offset;
        let by_norm = match (self.metric, half_norm_max) {
            (Metric::Algebraic, Some(m)) => m.as_f64() - dot,
            _ => f64::INFINITY,
        };
        corner.min(by_norm) + self.slack
    }
}

/// (score, id) keys ordered by score then id (scores are finite: complete data).
fn key_cmp<T: Float>(a: &(T, u32), b: &(T, u32)) -> Ordering {
    a.0.partial_cmp(&b.0).unwrap_or(Ordering::Equal).then(a.1.cmp(&b.1))
}

/// The farthest point: largest score, ties to the lowest id.
struct Farthest<'a, T> {
    score: Scorer<'a, T>,
    best: Option<(T, u32)>,
}

impl<T: Float> BoxSearch<T> for Farthest<'_, T> {
    #[inline]
    fn bound(&self, lo: &[T], hi: &[T], half_norm_max: Option<T>) -> f64 {
        self.score.upper(lo, hi, half_norm_max)
    }

    #[inline]
    fn worth(&self, upper: f64) -> bool {
        // Not below the best: a box that may hold an equal score (a tie) is kept, NaN too.
        let keep = |(b, _): (T, u32)| upper.partial_cmp(&b.as_f64()) != Some(Ordering::Less);
        self.best.is_none_or(keep)
    }

    #[inline]
    fn offer(&mut self, pos: usize, id: u32, coords: &[T]) {
        let key = (self.score.score(pos, coords), id);
        // Farther: larger score, or equal score and lower id.
        let better = |b: &(T, u32)| key.0 > b.0 || (key.0 == b.0 && key.1 < b.1);
        if self.best.as_ref().is_none_or(better) {
            self.best = Some(key);
        }
    }
}

/// The `count` nearest points but one: smallest (score, id) keys, kept sorted.
struct Nearest<'a, T> {
    score: Scorer<'a, T>,
    count: usize,
    exclude: u32,
    kept: Vec<(T, u32)>,
}

impl<T: Float> BoxSearch<T> for Nearest<'_, T> {
    #[inline]
    fn bound(&self, lo: &[T], hi: &[T], _: Option<T>) -> f64 {
        -self.score.lower(lo, hi)
    }

    #[inline]
    fn worth(&self, bound: f64) -> bool {
        // Not above the worst kept: a box that may hold an equal score (a tie) is kept, NaN
        // too.
        let worst = || self.kept[self.count - 1].0.as_f64();
        self.kept.len() < self.count || (-bound).partial_cmp(&worst()) != Some(Ordering::Greater)
    }

    #[inline]
    fn offer(&mut self, pos: usize, id: u32, coords: &[T]) {
        if id == self.exclude {
            return;
        }
        let key = (self.score.score(pos, coords), id);
        if self.kept.len() == self.count {
            if key_cmp(&key, &self.kept[self.count - 1]) != Ordering::Less {
                return;
            }
            self.kept.pop();
        }
        let at = self.kept.partition_point(|k| key_cmp(k, &key) == Ordering::Less);
        self.kept.insert(at, key);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dataset::Scaling;
    use crate::kernels::{self, Ranked, Selected};
    use crate::parallel::Exec;
    use ndarray::Array2;
    use proptest::prelude::*;

    /// The scan's answers over the records not in `gone` (ids), for comparison.
    fn scan_farthest<T: Float>(ws: &WorkingSet<T>, gone: &[bool], r: &[T], m: Metric) -> u32 {
        let far: Ranked<T> = kernels::scan(Exec::SEQUENTIAL, ws, ws.n(), r, m, || {
            Ranked::farthest(ws.n(), usize::MAX)
        });
        far.into_ids().into_iter().find(|&id| !gone[id as usize]).expect("a live record")
    }

    fn scan_nearest<T: Float>(
        ws: &WorkingSet<T>,
        gone: &[bool],
        r: &[T],
        m: Metric,
        count: usize,
        ex: u32,
    ) -> Vec<u32> {
        let near: Ranked<T> = kernels::scan(Exec::SEQUENTIAL, ws, ws.n(), r, m, || {
            Ranked::nearest(ws.n(), usize::MAX)
        });
        near.into_ids()
            .into_iter()
            .filter(|&id| !gone[id as usize] && id != ex)
            .take(count)
            .collect()
    }

    fn check<T: Float>(x: &Array2<f64>, removed: &[u32], metric: Metric) {
        let ws = WorkingSet::<T>::new(x.view(), &Scaling::fit(x.view(), true)).unwrap();
        let mut index = SpatialIndex::new(&ws);
        let n = ws.n();
        let mut gone = vec![false; n];
        for &r in removed {
            let id = r % n as u32;
            if !gone[id as usize] && gone.iter().filter(|g| !**g).count() > 1 {
                index.remove(id);
                gone[id as usize] = true;
            }
        }
        for q in (0..n).step_by(n / 7 + 1) {
            let r = ws.row(q);
            assert_eq!(index.farthest(&r, metric), Some(scan_farthest(&ws, &gone, &r, metric)));
            let ex = ws.ids()[q];
            let want = scan_nearest(&ws, &gone, &r, metric, 9, ex);
            assert_eq!(index.nearest(&r, metric, 9, ex), want);
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(60))]
        #[test]
        fn queries_equal_the_scan(
            d in 1usize..6,
            raw in prop::collection::vec(-3i32..4, 2..1200),
            removed in prop::collection::vec(any::<u32>(), 0..150),
            spread in 0u8..3,
        ) {
            // Integers (many exact ties), or scaled to spread the values over magnitudes.
            let n = raw.len() / d;
            prop_assume!(n >= 2);
            let x = Array2::from_shape_fn((n, d), |(i, j)| {
                let v = raw[i * d + j] as f64;
                match spread { 0 => v, 1 => v.exp() * 1e3, _ => v * 0.1 + (i as f64).sin() }
            });
            for metric in [Metric::Algebraic, Metric::Direct] {
                check::<f64>(&x, &removed, metric);
                check::<f32>(&x, &removed, metric);
            }
        }
    }
}
