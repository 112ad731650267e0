//! Points in blocks of [`BLOCK`], each stored column by column with its bounding box: the
//! nearest-neighbour index for higher dimensions.
//!
//! From about 4 dimensions on a k-d tree's internal nodes rarely prune, while a flat list of
//! small, spatially coherent blocks (the leaves of a k-d tree of leaf size [`BLOCK`]) does:
//! a query computes the lower bounds of the boxes of groups of [`GROUP`] blocks, then of the
//! blocks of each group it cannot skip (one vectorized pass per attribute), skips each block whose
//! bound exceeds the best distance found by the time it is reached (a caller who starts from a good
//! bound, such as the distance to a known candidate, skips most blocks from the start; visiting
//! blocks nearest first was measured slower: its sort costs more than it saves), and computes a
//! visited block's [`BLOCK`] distances in one pass over its columns (the inner loop runs across
//! points, which LLVM vectorizes). Each distance is the sum of
//! [`squared_distance`](super::squared_distance) in the same order, bit for bit.

use super::kdtree::KdTree;
use super::{NearestIndex, Ties};
use crate::float::Float;

/// Blocks per group (the first level of pruning).
pub const GROUP: usize = 32;

/// Points per block (at d = 15, 10⁵ records: 32 took 2.0 CPU s, 64 2.3 s, 16 2.0 s).
pub const BLOCK: usize = 32;

/// The block index of a fixed point set (see the module docs).
#[derive(Debug, Clone)]
pub struct BlockIndex<T> {
    dim: usize,
    /// Per block, `dim` columns of [`BLOCK`] values (unused lanes hold zeros).
    columns: Vec<T>,
    /// Per block, `dim` lower then `dim` upper corners (while building).
    corners: Vec<T>,
    /// The blocks' boxes.
    blocks: Boxes<T>,
    /// The boxes of runs of [`GROUP`] consecutive blocks (a second level of pruning).
    groups: Boxes<T>,
    /// Per block, the ids of its points (`lens[b]` of them, padded to [`BLOCK`]).
    ids: Vec<u32>,
    lens: Vec<usize>,
}

impl<T: Float> BlockIndex<T> {
    /// Indexes the rows of the row-major `points` (ids 0..n; no NaN). Panics if `dim == 0`
    /// or the length is not a multiple of `dim`.
    pub fn new(points: &[T], dim: usize) -> Self {
        let tree = KdTree::with_leaf_size(points, dim, BLOCK);
        let mut index = BlockIndex {
            dim,
            columns: Vec::new(),
            corners: Vec::new(),
            blocks: Boxes::default(),
            groups: Boxes::default(),
            ids: Vec::new(),
            lens: Vec::new(),
        };
        for (ids, coords) in tree.leaves() {
            for (ids, coords) in ids.chunks(BLOCK).zip(coords.chunks(BLOCK * dim)) {
                index.push_block(ids, coords);
            }
        }
        let corners = std::mem::take(&mut index.corners);
        index.blocks = Boxes::new(&corners, dim);
        let mut merged = Vec::new();
        for run in corners.chunks(2 * dim * GROUP) {
            let mut lo_hi = run[..2 * dim].to_vec();
            for c in run.chunks_exact(2 * dim).skip(1) {
                for j in 0..dim {
                    lo_hi[j] = if c[j] < lo_hi[j] { c[j] } else { lo_hi[j] };
                    lo_hi[dim + j] =
                        if c[dim + j] > lo_hi[dim + j] { c[dim + j] } else { lo_hi[dim + j] };
                }
            }
            merged.extend_from_slice(&lo_hi);
        }
        index.groups = Boxes::new(&merged, dim);
        index
    }

    fn push_block(&mut self, ids: &[u32], coords: &[T]) {
        let d = self.dim;
        let base = self.columns.len();
        self.columns.resize(base + d * BLOCK, T::zero());
        let mut lo = coords[..d].to_vec();
        let mut hi = lo.clone();
        for (l, p) in coords.chunks_exact(d).enumerate() {
            for (j, &v) in p.iter().enumerate() {
                self.columns[base + j * BLOCK + l] = v;
                lo[j] = if v < lo[j] { v } else { lo[j] };
                hi[j] = if v > hi[j] { v } else { hi[j] };
            }
        }
        self.corners.extend_from_slice(&lo);
        self.corners.extend_from_slice(&hi);
        self.ids.extend_from_slice(ids);
        self.ids.resize(self.ids.len() + BLOCK - ids.len(), u32::MAX);
        self.lens.push(ids.len());
    }

    /// Number of blocks.
    pub fn n_blocks(&self) -> usize {
        self.lens.len()
    }

    /// Offers the points of block `b` to `ties`.
    #[inline(always)]
    fn scan_block(&self, b: usize, query: &[T], ties: &mut Ties<T>) {
        let cols = &self.columns[b * self.dim * BLOCK..(b + 1) * self.dim * BLOCK];
        let mut acc = [T::zero(); BLOCK];
        for (col, &q) in cols.chunks_exact(BLOCK).zip(query) {
            let col: &[T; BLOCK] = col.try_into().expect("BLOCK values");
            for l in 0..BLOCK {
                let t = q - col[l];
                acc[l] += t * t;
            }
        }
        let ids = &self.ids[b * BLOCK..b * BLOCK + self.lens[b]];
        for (&id, &dist) in ids.iter().zip(&acc) {
            ties.offer(id, dist);
        }
    }

    #[inline(always)]
    fn search_generic(&self, query: &[T], ties: &mut Ties<T>) {
        let mut group_bounds = vec![T::zero(); self.groups.len];
        self.groups.bounds(query, 0..self.groups.len, &mut group_bounds);
        let mut bounds = [T::zero(); GROUP];
        for (g, &group_bound) in group_bounds.iter().enumerate() {
            if group_bound > ties.best() {
                continue;
            }
            let blocks = g * GROUP..((g + 1) * GROUP).min(self.n_blocks());
            let bounds = &mut bounds[..blocks.len()];
            self.blocks.bounds(query, blocks.clone(), bounds);
            for (b, &bound) in blocks.zip(bounds.iter()) {
                if bound <= ties.best() {
                    self.scan_block(b, query, ties);
                }
            }
        }
    }
}

/// Boxes stored attribute by attribute (`lower[j * len + i]`), so that the bounds of many
/// boxes take one vectorized pass per attribute.
#[derive(Debug, Clone, Default)]
struct Boxes<T> {
    len: usize,
    lower: Vec<T>,
    upper: Vec<T>,
}

impl<T: Float> Boxes<T> {
    /// From per-box corners (`dim` lower then `dim` upper values per box).
    fn new(corners: &[T], dim: usize) -> Self {
        let len = corners.len() / (2 * dim);
        let corner = |i: usize, j: usize| corners[2 * dim * i + j];
        Boxes {
            len,
            lower: (0..dim * len).map(|x| corner(x % len, x / len)).collect(),
            upper: (0..dim * len).map(|x| corner(x % len, dim + x / len)).collect(),
        }
    }

    /// Lower bounds of the distance from `query` to the boxes `range`:
    /// Σ_j max(lo_j − q_j, q_j − hi_j, 0)², safe under rounding like
    /// [`box_lower_bound`](super::box_lower_bound).
    #[inline(always)]
    fn bounds(&self, query: &[T], range: std::ops::Range<usize>, out: &mut [T]) {
        out.fill(T::zero());
        for (j, &q) in query.iter().enumerate() {
            let at = j * self.len;
            let (lo, hi) = (
                &self.lower[at + range.start..at + range.end],
                &self.upper[at + range.start..at + range.end],
            );
            for ((o, &l), &h) in out.iter_mut().zip(lo).zip(hi) {
                let (below, above) = (l - q, q - h);
                let gap = if below > above { below } else { above };
                let gap = if gap > T::zero() { gap } else { T::zero() };
                *o += gap * gap;
            }
        }
    }
}

/// `search_generic` compiled for more instruction sets (chosen at run time).
macro_rules! search_with_target_feature {
    ($name:ident, $feature:literal) => {
        #[cfg(target_arch = "x86_64")]
        #[target_feature(enable = $feature)]
        fn $name<T: Float>(index: &BlockIndex<T>, query: &[T], ties: &mut Ties<T>) {
            index.search_generic(query, ties)
        }
    };
}
search_with_target_feature!(search_avx2, "avx2");
search_with_target_feature!(search_avx512, "avx512f");

impl<T: Float> NearestIndex<T> for BlockIndex<T> {
    /// Same answer on every instruction set: no contraction, same operation order.
    fn search(&self, query: &[T], ties: &mut Ties<T>) {
        debug_assert_eq!(query.len(), self.dim);
        #[cfg(target_arch = "x86_64")]
        {
            if std::arch::is_x86_feature_detected!("avx512f") {
                // SAFETY: the CPU supports AVX-512F (checked just above).
                return unsafe { search_avx512(self, query, ties) };
            }
            if std::arch::is_x86_feature_detected!("avx2") {
                // SAFETY: the CPU supports AVX2 (checked just above).
                return unsafe { search_avx2(self, query, ties) };
            }
        }
        self.search_generic(query, ties)
    }
}

#[cfg(test)]
mod tests {
    use super::super::brute_force;
    use super::*;
    use proptest::prelude::*;

    proptest! {
        #[test]
        fn equals_brute_force_with_ties(
            d in 1usize..18,
            raw in prop::collection::vec(-3i32..3, 1..3000),
            queries in prop::collection::vec(-4i32..4, 18..200),
            continuous in any::<bool>(),
        ) {
            let n = raw.len() / d;
            prop_assume!(n > 0);
            let scale = if continuous { 0.37 } else { 1.0 };
            let points: Vec<f64> =
                raw[..n * d].iter().enumerate().map(|(i, &v)| v as f64 + scale * ((i * 7919) % 13) as f64).collect();
            let index = BlockIndex::new(&points, d);
            for q in queries.chunks_exact(d) {
                let q: Vec<f64> = q.iter().map(|&v| v as f64 * 1.5).collect();
                let (mut a, mut b) = (Ties::within(f64::INFINITY), Ties::within(f64::INFINITY));
                index.search(&q, &mut a);
                brute_force(&points, d, &q, &mut b);
                prop_assert_eq!(a.sorted(), b.sorted());
            }
        }
    }

    #[test]
    fn f32_points_too() {
        let points: Vec<f32> = (0..600).map(|i| ((i * 37) % 11) as f32 * 0.25).collect();
        let index = BlockIndex::new(&points, 12);
        let q = vec![0.5f32; 12];
        let (mut a, mut b) = (Ties::within(f32::INFINITY), Ties::within(f32::INFINITY));
        index.search(&q, &mut a);
        brute_force(&points, 12, &q, &mut b);
        assert_eq!(a.best(), b.best());
        assert_eq!(a.ids().len(), b.ids().len());
    }
}
