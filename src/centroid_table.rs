//! Centroids of a set of groups, for nearest-group queries (incremental microaggregation
//! folds thousands of records into thousands of groups, one record at a time).
//!
//! A query asks for the non-empty group minimizing the squared distance Σ_j (y_j − c_gj)²
//! (summed in attribute order, [`squared_distance`]), optionally weighted by n_g/(n_g + 1)
//! (the SSE increase, thesis §3.2.6); ties go to the lowest group id.
//!
//! Brute force scores every group, column by column in blocks that stay in L1 (a
//! row-at-a-time scan with a division per element was slower than re-running F-MDAV).
//! In low dimension, with many groups, a k-d tree over the centroids answers instead
//! ([`KdTree::update`] follows each centroid as its group grows; the groups created since the
//! tree was built, by splits, are scanned until there are enough of them to rebuild it).
//! Each node keeps the largest −n_g/(n_g + 1) of its groups, so w_min·(box distance) bounds
//! every weighted score in it; IEEE rounding is monotone and the bound uses the same
//! operations on smaller operands, so it never exceeds a computed score and the answer is
//! bit for bit the brute force's.

use crate::index::IndexChoice;
use crate::index::kdtree::{BoxSearch, KdTree};
use crate::index::{box_lower_bound, squared_distance};

/// Group centroids, one contiguous slice per attribute, plus group sizes.
#[derive(Debug, Clone)]
pub struct CentroidTable {
    d: usize,
    cols: Vec<Vec<f64>>,
    sizes: Vec<f64>,
    choice: IndexChoice,
    /// Groups `0..indexed` in a k-d tree (when `choice` picks it); later ones are scanned.
    tree: Option<KdTree<f64>>,
    indexed: usize,
}

const BLOCK: usize = 64;

/// Centroids per k-d tree leaf.
const LEAF: usize = 8;

/// Smallest number of groups where `Auto` uses the tree in dimension `d` (`None`: never),
/// from bench-results/index_family.md (folding 10^5 Gaussian records, k = 10, "nn", tree
/// vs brute force): d = 3 300 groups 0.8×, 500 1.8×, 10^4 19×; d = 5 500 0.7×, 1 000 1.3×,
/// 10^4 4.8×; d = 8 3 000 0.6×, 10^4 1.3×; d = 15 10^4 0.3×.
pub fn auto_min_groups(d: usize) -> Option<usize> {
    match d {
        0..=3 => Some(500),
        4..=5 => Some(1_000),
        6..=8 => Some(10_000),
        _ => None,
    }
}

/// A group's score: the squared distance, or with `inertial` its SSE increase.
#[inline(always)]
fn score(size: f64, dist: f64, inertial: bool) -> f64 {
    if inertial { weight(size) * dist } else { dist }
}

/// n/(n + 1), the weight of the inertial score.
#[inline(always)]
fn weight(size: f64) -> f64 {
    size / (size + 1.0)
}

/// (score, group) pairs: the smaller score, then the lower id, is better.
fn better(a: (f64, usize), b: Option<(f64, usize)>) -> bool {
    b.is_none_or(|b| a.0 < b.0 || (a.0 == b.0 && a.1 < b.1))
}

impl CentroidTable {
    /// An empty table for `d` attributes; `choice` decides on the k-d tree (`Auto`: by
    /// [`auto_min_groups`]).
    pub fn new(d: usize, choice: IndexChoice) -> Self {
        CentroidTable {
            d,
            cols: vec![Vec::new(); d],
            sizes: Vec::new(),
            choice,
            tree: None,
            indexed: 0,
        }
    }

    /// Sets group `g`'s centroid and size (growing the table as needed).
    pub fn set(&mut self, g: usize, centroid: &[f64], size: usize) {
        if g >= self.sizes.len() {
            self.sizes.resize(g + 1, 0.0);
            for c in &mut self.cols {
                c.resize(g + 1, 0.0);
            }
        }
        for (c, &v) in self.cols.iter_mut().zip(centroid) {
            c[g] = v;
        }
        self.sizes[g] = size as f64;
        match &mut self.tree {
            Some(tree) if g < self.indexed && size == 0 => {
                tree.remove(g as u32);
            }
            Some(tree) if g < self.indexed => {
                tree.update(g as u32, centroid, Some(-weight(size as f64)));
            }
            _ => {}
        }
    }

    /// The non-empty group minimizing ‖y − c_g‖² (or, `inertial`, n_g/(n_g+1)·‖y − c_g‖²),
    /// ties to the lowest id. Builds or rebuilds the k-d tree first when it is due.
    pub fn nearest(&mut self, y: &[f64], inertial: bool) -> Option<usize> {
        debug_assert_eq!(y.len(), self.d);
        let groups = self.sizes.len();
        let pending = groups - self.indexed;
        let auto = auto_min_groups(self.d).is_some_and(|min| groups >= min);
        // Rebuilds after 1/8 more groups: MDAV* adds a group every few queries, and at 1/64
        // the rebuilds took a fifth of its time (10^5 x 2).
        if pending > 16 + self.indexed / 8 && self.choice.picks(auto) {
            self.build();
        }
        let mut best = None;
        if let Some(tree) = &self.tree {
            let mut search = Search { y, inertial, sizes: &self.sizes, best: None };
            tree.walk(&mut search);
            best = search.best;
        }
        self.scan(y, inertial, self.indexed, best).map(|(_, g)| g)
    }

    /// Indexes every group in a new k-d tree.
    fn build(&mut self) {
        let groups = self.sizes.len();
        let rows: Vec<f64> =
            (0..groups).flat_map(|g| self.cols.iter().map(move |c| c[g])).collect();
        let mut tree = KdTree::with_leaf_size(&rows, self.d, LEAF);
        let keys: Vec<f64> = self.sizes.iter().map(|&n| -weight(n)).collect();
        tree.set_keys(&keys);
        for g in (0..groups).filter(|&g| self.sizes[g] == 0.0) {
            tree.remove(g as u32);
        }
        self.tree = Some(tree);
        self.indexed = groups;
    }

    /// Brute force over the groups from `start` on, improving on `best`.
    fn scan(
        &self,
        y: &[f64],
        inertial: bool,
        mut start: usize,
        mut best: Option<(f64, usize)>,
    ) -> Option<(f64, usize)> {
        let mut buf = [0.0f64; BLOCK];
        let g_count = self.sizes.len();
        while start < g_count {
            let len = BLOCK.min(g_count - start);
            let out = &mut buf[..len];
            out.fill(0.0);
            for (col, &v) in self.cols.iter().zip(y) {
                for (o, &c) in out.iter_mut().zip(&col[start..start + len]) {
                    let t = v - c;
                    *o += t * t;
                }
            }
            for (i, &dist) in out.iter().enumerate() {
                let n = self.sizes[start + i];
                let candidate = (score(n, dist, inertial), start + i);
                if n != 0.0 && better(candidate, best) {
                    best = Some(candidate);
                }
            }
            start += len;
        }
        best
    }
}

/// The best-scoring indexed group, pruned by w_min·(box distance).
struct Search<'a> {
    y: &'a [f64],
    inertial: bool,
    sizes: &'a [f64],
    best: Option<(f64, usize)>,
}

impl BoxSearch<f64> for Search<'_> {
    #[inline]
    fn bound(&self, lo: &[f64], hi: &[f64], neg_weight_max: Option<f64>) -> f64 {
        let near = box_lower_bound(self.y, lo, hi);
        let w_min = -neg_weight_max.expect("keyed tree");
        -(if self.inertial { w_min * near } else { near })
    }

    #[inline]
    fn worth(&self, bound: f64) -> bool {
        // Not above the best: a box that may hold an equal score (a tie) is visited.
        self.best.is_none_or(|(b, _)| -bound <= b)
    }

    #[inline]
    fn offer(&mut self, _: usize, id: u32, coords: &[f64]) {
        let g = id as usize;
        let candidate = (score(self.sizes[g], squared_distance(self.y, coords), self.inertial), g);
        if better(candidate, self.best) {
            self.best = Some(candidate);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn nearest_and_inertial_choices() {
        for choice in [IndexChoice::Off, IndexChoice::On] {
            let mut t = CentroidTable::new(2, choice);
            t.set(0, &[0.0, 0.0], 1);
            t.set(1, &[3.0, 0.0], 100);
            t.set(2, &[9.0, 9.0], 0); // empty: never chosen
            let y = [1.6, 0.0];
            assert_eq!(t.nearest(&y, false), Some(1)); // 1.96 < 2.56
            assert_eq!(t.nearest(&y, true), Some(0)); // 0.5 * 2.56 = 1.28 < 0.99 * 1.96
            t.set(1, &[-1.6, 0.0], 5); // a tie at distance 1.6 goes to the lower id
            assert_eq!(t.nearest(&[0.0, 0.0], false), Some(0));
            assert_eq!(t.nearest(&[-0.8, 0.0], false), Some(0));
            assert_eq!(CentroidTable::new(2, choice).nearest(&y, false), None);
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(64))]
        /// Groups appear, move, grow, empty and refill (as in the fold and its splits); the
        /// tree answers every query as the brute force does, ties included.
        #[test]
        fn the_tree_equals_the_brute_force(
            d in 1usize..6,
            steps in prop::collection::vec((0usize..400, -6i32..6, 0usize..12, -6i32..6), 1..600),
            inertial: bool,
        ) {
            let (mut on, mut off) =
                (CentroidTable::new(d, IndexChoice::On), CentroidTable::new(d, IndexChoice::Off));
            for (i, &(g, a, size, q)) in steps.iter().enumerate() {
                // Small multiples of 1/4: many exact ties, in distances and in weighted scores.
                let c: Vec<f64> = (0..d).map(|j| (a + (i + j) as i32 % 3) as f64 * 0.25).collect();
                let g = g.min(on.sizes.len() + 8);
                on.set(g, &c, size);
                off.set(g, &c, size);
                let y: Vec<f64> = (0..d).map(|j| (q - (j as i32 % 2)) as f64 * 0.25).collect();
                prop_assert_eq!(on.nearest(&y, inertial), off.nearest(&y, inertial));
            }
            prop_assert!(on.tree.is_some() || on.sizes.len() <= 16);
        }
    }
}
