//! Points in blocks of [`BLOCK`] with their bounding boxes: the nearest-neighbour index for
//! higher dimensions.
//!
//! From about 4 dimensions on a k-d tree's internal nodes rarely prune, while a flat list of
//! small, spatially coherent blocks (the leaves of a k-d tree of leaf size [`BLOCK`]) does:
//! a query computes the lower bounds of the boxes of groups of [`GROUP`] blocks, then of the
//! blocks of each group it cannot skip (one vectorized pass per attribute), and skips each
//! block whose bound exceeds the best distance known by the time it is reached (a caller
//! who starts from a good bound, such as the distance to a known candidate, skips most
//! blocks from the start; visiting blocks nearest first was measured slower: its sort costs
//! more than it saves).
//!
//! A visited block is scored in single precision, as the compact MDAV scan does
//! (`algorithms/compact.rs`): the algebraic score ŝ = ½‖x‖² − ⟨q, x⟩ of the kernels
//! (`kernels.rs`, [`Metric::Algebraic`]) from an f32 copy of the points, 2d flops on 16
//! lanes where the exact distance takes 3d on 8. ŝ differs from the exact computed
//! [`squared_distance`]'s ½D − ½‖q‖² by at most a rigorous bound B ([`BlockIndex::bound`]),
//! so every point at the minimum D is among the points within 2B of the smallest ŝ (a
//! [`Band`] of one); those candidates are re-checked with [`squared_distance`] and offered
//! to the [`Ties`]: the answer is a brute force scan's, bit for bit. Points or queries too
//! large for f32 are searched exactly instead.

use super::kdtree::KdTree;
use super::{NearestIndex, Ties, squared_distance};
use crate::algorithms::compact::Band;
use crate::dataset::{Scaling, WorkingSet};
use crate::float::Float;
use crate::kernels::{Exclude, LANES, ScoreVisitor, algebraic_lanes, min_value};
use ndarray::ArrayView2;

/// Blocks per group (the first level of pruning).
pub const GROUP: usize = 32;

/// Points per block (at d = 15, 10⁵ records: 32 took 2.0 CPU s, 64 2.3 s, 16 2.0 s, when
/// blocks were scored exactly).
pub const BLOCK: usize = 32;

/// The block index of a fixed point set (see the module docs).
#[derive(Debug, Clone)]
pub struct BlockIndex<T> {
    dim: usize,
    /// The points row-major in block order, for the exact re-check: block `b` is positions
    /// `starts[b]..starts[b + 1]`, its `lens[b]` points padded to whole runs of [`LANES`].
    rows: Vec<T>,
    /// The id of the point at each position (`u32::MAX` for padding).
    ids: Vec<u32>,
    /// The position of each point.
    positions: Vec<u32>,
    starts: Vec<usize>,
    lens: Vec<usize>,
    /// The blocks' boxes.
    blocks: Boxes<T>,
    /// The boxes of runs of [`GROUP`] consecutive blocks (a second level of pruning).
    groups: Boxes<T>,
    /// The f32 copy by position (values and ½‖x‖²), unless a point is too large for f32.
    single: Option<WorkingSet<f32>>,
    /// The largest ‖x‖ of a point (for the bound).
    max_norm: f64,
}

/// Largest ‖x‖ and ‖q‖ scored in f32: every product and ½‖x‖² stays far inside f32's range.
const SINGLE_MAX_NORM: f64 = 1e15;

impl<T: Float> BlockIndex<T> {
    /// Indexes the rows of the row-major `points` (ids 0..n; no NaN). Panics if `dim == 0`
    /// or the length is not a multiple of `dim`.
    pub fn new(points: &[T], dim: usize) -> Self {
        let tree = KdTree::with_leaf_size(points, dim, BLOCK);
        let (mut rows, mut ids, mut starts, mut lens, mut corners) =
            (Vec::with_capacity(points.len()), Vec::new(), vec![0], Vec::new(), Vec::new());
        for (leaf_ids, coords) in tree.leaves() {
            for (block_ids, coords) in leaf_ids.chunks(BLOCK).zip(coords.chunks(BLOCK * dim)) {
                let mut lo = coords[..dim].to_vec();
                let mut hi = lo.clone();
                for p in coords.chunks_exact(dim) {
                    for (j, &v) in p.iter().enumerate() {
                        lo[j] = if v < lo[j] { v } else { lo[j] };
                        hi[j] = if v > hi[j] { v } else { hi[j] };
                    }
                }
                corners.extend_from_slice(&lo);
                corners.extend_from_slice(&hi);
                rows.extend_from_slice(coords);
                ids.extend_from_slice(block_ids);
                // Padded to whole runs of the kernel's lanes with copies of the first point
                // (scored, never read): a block of 20 points took as long as 32 when its
                // last 4 were scored one by one.
                let padded = block_ids.len().next_multiple_of(LANES);
                for _ in block_ids.len()..padded {
                    rows.extend_from_slice(&coords[..dim]);
                }
                ids.resize(ids.len() + padded - block_ids.len(), u32::MAX);
                lens.push(block_ids.len());
                starts.push(ids.len());
            }
        }
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
        let norm = |p: &[T]| p.iter().map(|v| v.as_f64() * v.as_f64()).sum::<f64>().sqrt();
        let max_norm = rows.chunks_exact(dim).map(norm).fold(0.0, f64::max);
        let single = (max_norm <= SINGLE_MAX_NORM).then(|| {
            let view = ArrayView2::from_shape((ids.len(), dim), &rows[..]).expect("n x dim rows");
            let identity = Scaling { mean: vec![0.0; dim], scale: vec![1.0; dim] };
            WorkingSet::new(view, &identity).expect("values far inside f32's range")
        });
        let mut positions = vec![0; points.len() / dim];
        for (p, &id) in ids.iter().enumerate().filter(|(_, id)| **id != u32::MAX) {
            positions[id as usize] = p as u32;
        }
        BlockIndex {
            dim,
            rows,
            positions,
            ids,
            starts,
            lens,
            blocks: Boxes::new(&corners, dim),
            groups: Boxes::new(&merged, dim),
            single,
            max_norm,
        }
    }

    /// Number of blocks.
    pub fn n_blocks(&self) -> usize {
        self.starts.len() - 1
    }

    /// The bound B on |ŝ − (½D − ½‖q‖²)| for a query of norm `query_norm`, for every point
    /// (ŝ its f32 algebraic score, D its computed [`squared_distance`], ‖q‖² computed in
    /// f64), with room for the f64 roundings of the limits derived from it. With u the unit
    /// roundoff of f32 and R the largest point norm: rounding the values and ½‖x‖² to f32
    /// and the d products and d + 1 subtractions of ŝ move it by at most
    /// (d + 4)·u·(½R² + ‖q‖R); D errs by at most (d + 3)·u₆₄·(‖q‖ + R)² and ‖q‖² by
    /// d·u₆₄·‖q‖² (Higham, Accuracy and Stability of Numerical Algorithms, §3.1). Doubled,
    /// plus a term for f32's underflow (2⁻¹⁵⁰ per operation).
    pub fn bound(&self, query_norm: f64) -> f64 {
        let (d, q, r) = (self.dim as f64, query_norm, self.max_norm);
        let single = (d + 4.0) * f64::from(f32::EPSILON) / 2.0 * (0.5 * r * r + q * r);
        let double = (d + 8.0) * f64::EPSILON * (q + r) * (q + r);
        2.0 * (single + double) + (d + 4.0) * f64::from(f32::MIN_POSITIVE) * (1.0 + q + r)
    }

    /// The exact answer by a scan of every point (points or a query too large for f32).
    fn search_exact(&self, query: &[T], ties: &mut Ties<T>) {
        for (&id, p) in self.ids.iter().zip(self.rows.chunks_exact(self.dim)) {
            if id != u32::MAX {
                ties.offer(id, squared_distance(query, p));
            }
        }
    }

    /// Searches `R` queries together (see the module docs): a block is scored for all of
    /// them when one of them cannot skip it, each column value read once for the `R`
    /// ([`algebraic_lanes`]); a query's extra scores only add candidates to its re-check.
    #[inline(always)]
    fn search_generic<const R: usize>(&self, queries: [&[T]; R], ties: [&mut Ties<T>; R]) {
        let qq = queries.map(|q| q.iter().map(|v| v.as_f64() * v.as_f64()).sum::<f64>());
        let single =
            self.single.as_ref().filter(|_| qq.iter().all(|q| q.sqrt() <= SINGLE_MAX_NORM));
        let Some(single) = single else {
            return queries.iter().zip(ties).for_each(|(q, t)| self.search_exact(q, t));
        };
        let bound = qq.map(|q| self.bound(q.sqrt()));
        let references = queries.map(|q| q.iter().map(|v| v.as_f64() as f32).collect::<Vec<_>>());
        let mut upper: [f64; R] = std::array::from_fn(|i| ties[i].best().as_f64());
        let mut bands: [Band<f32>; R] = std::array::from_fn(|i| {
            // Every point at the minimum D ≤ U has ŝ ≤ ½U − ½‖q‖² + B.
            let limit = rounded_up(0.5 * (upper[i] - qq[i]) + bound[i]);
            let mut band = Band::new(1, false, 2.0 * bound[i], Exclude::NONE);
            band.restart(2.0 * bound[i], limit);
            band
        });
        let mut best = [f32::INFINITY; R];
        let mut scores = [[0f32; LANES]; R];
        let mut block_scores = [[0f32; BLOCK]; R];
        let group_bounds = queries.map(|q| {
            let mut out = vec![T::zero(); self.groups.len];
            self.groups.bounds(q, 0..self.groups.len, &mut out);
            out
        });
        let mut bounds = [[T::zero(); GROUP]; R];
        for g in 0..self.groups.len {
            if (0..R).all(|i| group_bounds[i][g].as_f64() > upper[i]) {
                continue;
            }
            let blocks = g * GROUP..((g + 1) * GROUP).min(self.n_blocks());
            for (q, out) in queries.iter().zip(&mut bounds) {
                self.blocks.bounds(q, blocks.clone(), &mut out[..blocks.len()]);
            }
            for (at, b) in blocks.enumerate() {
                if (0..R).all(|i| bounds[i][at].as_f64() > upper[i]) {
                    continue;
                }
                let (start, end) = (self.starts[b], self.starts[b + 1]);
                for lane in (start..end).step_by(LANES) {
                    let refs = std::array::from_fn(|i| &references[i][..]);
                    algebraic_lanes::<f32, R, LANES>(single, lane, refs, &mut scores);
                    for (to, from) in block_scores.iter_mut().zip(&scores) {
                        to[lane - start..lane - start + LANES].copy_from_slice(from);
                    }
                }
                for i in 0..R {
                    let scores = &block_scores[i][..self.lens[b]];
                    bands[i].visit(scores, &[], start);
                    let least = min_value(scores);
                    if least < best[i] {
                        // The point at ŝ = `least` has D ≤ 2(ŝ + B) + ‖q‖².
                        best[i] = least;
                        upper[i] = upper[i].min(2.0 * (f64::from(least) + bound[i]) + qq[i]);
                    }
                }
            }
        }
        let mut candidates = Vec::new();
        for i in 0..R {
            candidates.clear();
            bands[i].settle(&mut candidates);
            for &p in &candidates {
                let row = &self.rows[p * self.dim..(p + 1) * self.dim];
                ties[i].offer(self.ids[p], squared_distance(queries[i], row));
            }
        }
    }
}

/// `x` in f32, rounded up (a limit that must not fall below `x`).
fn rounded_up(x: f64) -> f32 {
    let y = x as f32;
    if f64::from(y) < x { y.next_up() } else { y }
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

/// Queries searched together by [`NearestIndex::search_many`].
pub const BATCH: usize = 8;

/// `search_generic` for one query and for a batch, compiled for more instruction sets
/// (chosen at run time).
macro_rules! search_with_target_feature {
    ($one:ident, $many:ident, $feature:literal) => {
        #[cfg(target_arch = "x86_64")]
        #[target_feature(enable = $feature)]
        fn $one<T: Float>(index: &BlockIndex<T>, query: &[T], ties: &mut Ties<T>) {
            index.search_generic([query], [ties])
        }

        #[cfg(target_arch = "x86_64")]
        #[target_feature(enable = $feature)]
        fn $many<T: Float>(
            index: &BlockIndex<T>,
            queries: [&[T]; BATCH],
            ties: [&mut Ties<T>; BATCH],
        ) {
            index.search_generic(queries, ties)
        }
    };
}
search_with_target_feature!(search_avx2, search_many_avx2, "avx2");
search_with_target_feature!(search_avx512, search_many_avx512, "avx512f");

impl<T: Float> NearestIndex<T> for BlockIndex<T> {
    fn dim(&self) -> usize {
        self.dim
    }

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
        self.search_generic([query], [ties])
    }

    /// The point's position in block order (neighbouring blocks are neighbouring leaves of
    /// the k-d tree).
    fn order_key(&self, id: u32) -> usize {
        self.positions[id as usize] as usize
    }

    /// Batches of [`BATCH`] queries, the rest one by one.
    fn search_many(&self, queries: &[&[T]], ties: &mut [Ties<T>]) {
        let mut batches = queries.chunks_exact(BATCH).zip(ties.chunks_exact_mut(BATCH));
        for (q, t) in &mut batches {
            let q: [&[T]; BATCH] = q.try_into().expect("BATCH queries");
            let t: [&mut Ties<T>; BATCH] =
                t.iter_mut().collect::<Vec<_>>().try_into().expect("BATCH");
            #[cfg(target_arch = "x86_64")]
            {
                if std::arch::is_x86_feature_detected!("avx512f") {
                    // SAFETY: the CPU supports AVX-512F (checked just above).
                    unsafe { search_many_avx512(self, q, t) };
                    continue;
                }
                if std::arch::is_x86_feature_detected!("avx2") {
                    // SAFETY: the CPU supports AVX2 (checked just above).
                    unsafe { search_many_avx2(self, q, t) };
                    continue;
                }
            }
            self.search_generic(q, t);
        }
        let rest = queries.len() / BATCH * BATCH;
        for (q, t) in queries[rest..].iter().zip(&mut ties[rest..]) {
            self.search(q, t);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::brute_force;
    use super::*;
    use crate::kernels::{BlockScorer, Complete, Metric};
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
                // Searched with the others in batches.
                let all: Vec<Vec<f64>> =
                    queries.chunks_exact(d).map(|q| q.iter().map(|&v| v as f64 * 1.5).collect()).collect();
                let refs: Vec<&[f64]> = all.iter().map(|q| &q[..]).collect();
                let mut many = vec![Ties::within(f64::INFINITY); refs.len()];
                index.search_many(&refs, &mut many);
                let at = all.iter().position(|a| a == &q).expect("this query");
                prop_assert_eq!(many[at].sorted(), b.sorted());
                // From a known point's distance (record linkage starts from its own release).
                let known = squared_distance(&q, &points[..d]);
                let (mut a, mut b) = (Ties::within(known), Ties::within(known));
                index.search(&q, &mut a);
                brute_force(&points, d, &q, &mut b);
                prop_assert_eq!(a.sorted(), b.sorted());
            }
        }

        /// Every single-precision score is within B of the exact ½D − ½‖q‖², for points and
        /// queries of any magnitude (down to f32's subnormals).
        #[test]
        fn single_scores_stay_within_the_bound(
            d in 1usize..24,
            raw in prop::collection::vec(-1.0f64..1.0, 1..800),
            magnitude in prop::sample::select(vec![1e-42, 1e-20, 1e-3, 1.0, 3.0, 1e4, 1e12]),
            offset in -2.0f64..2.0,
        ) {
            let n = raw.len() / d;
            prop_assume!(n > 1);
            let points: Vec<f64> = raw[..n * d].iter().map(|v| (v + offset) * magnitude).collect();
            let index = BlockIndex::new(&points, d);
            let single = index.single.as_ref().expect("in f32's range");
            for q in points.chunks_exact(d).take(8) {
                let q: Vec<f64> = q.iter().map(|v| v * 0.75 - offset * magnitude).collect();
                let qq: f64 = q.iter().map(|v| v * v).sum();
                let bound = index.bound(qq.sqrt());
                let reference: Vec<f32> = q.iter().map(|&v| v as f32).collect();
                let scorer = Complete { reference: &reference[..], metric: Metric::Algebraic };
                let mut scores = vec![0f32; index.ids.len()];
                scorer.fill(single, 0, &mut scores);
                for (p, &s) in scores.iter().enumerate() {
                    let exact = 0.5 * squared_distance(&q, &index.rows[p * d..(p + 1) * d]) - 0.5 * qq;
                    let gap = (f64::from(s) - exact).abs();
                    prop_assert!(gap <= bound, "|ŝ − s| = {} > B = {}", gap, bound);
                }
            }
        }
    }

    #[test]
    fn points_too_large_for_single_precision_are_searched_exactly() {
        let points: Vec<f64> = (0..300).map(|i| ((i * 37) % 11) as f64 * 1e16).collect();
        let index = BlockIndex::new(&points, 6);
        assert!(index.single.is_none());
        let q = vec![3e16; 6];
        let (mut a, mut b) = (Ties::within(f64::INFINITY), Ties::within(f64::INFINITY));
        index.search(&q, &mut a);
        brute_force(&points, 6, &q, &mut b);
        assert_eq!(a.sorted(), b.sorted());
        assert!(a.ids().len() > 1, "the test wants ties");
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
