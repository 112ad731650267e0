//! The hot loops: distance scores, argmax, and selection of the nearest records.
//!
//! Scores are computed for blocks of [`BLOCK`] consecutive positions of the column-major
//! working copy: the block stays in L1 while each attribute column streams past it, so the
//! inner loop is a plain `out[i] -= r * x[i]` that LLVM vectorizes across records. The few
//! hot kernels are compiled three times (portable SSE2, AVX2, AVX-512) and chosen at run time;
//! no floating-point contraction is used, so every path gives bit-identical results.
//!
//! Tie rule (docs/architecture.md#the-cores-rules): among equal scores the record with the lowest
//! original id wins, both for "farthest" and for "nearest". Keys `(score, id)` are therefore
//! totally ordered, which makes every selection independent of memory order and of the thread
//! count.

use crate::dataset::WorkingSet;
use crate::float::{Float, order_bits};
use crate::parallel::{Exec, merge_options};
use std::cmp::Ordering;

/// Positions per score block (fits L1 together with one column chunk).
pub const BLOCK: usize = 64;

/// A block buffer on the stack, starting on a cache line. The kernels store whole vectors
/// into these buffers and read them back; without the alignment, where the buffer falls
/// depends on the caller's stack frame, and a change elsewhere in the crate could make every
/// 32-byte store straddle two cache lines: in one build of the Python extension the store of
/// the integer dots took 15% of `dots_avx2` and two-thread MDAV ran 7% slower.
#[repr(C, align(64))]
pub(crate) struct Aligned<A>(pub A);

/// How the distance from a record `x` to a reference `r` is scored. Both orderings agree:
/// larger score = farther.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Metric {
    /// F-MDAV §3.1: ½‖x‖² − ⟨x, r⟩ (= ½‖x − r‖² − ½‖r‖²), from precomputed ½‖x‖²; 2d flops.
    Algebraic,
    /// The traditional Σ (x_j − r_j)²; 3d flops.
    Direct,
}

/// Scores kept in registers across all attributes (one AVX-512 register of f32).
const LANES: usize = 16;

/// Scores of the `L` positions from `start`, each computed as ((h − r₀x₀) − r₁x₁) − … or
/// ((x₀−r₀)² + (x₁−r₁)²) + … in attribute order: the same operations in the same order for
/// any `L`, so the lane path and the tail path give bit-identical scores.
#[inline(always)]
fn score_lanes<T: Float, const L: usize>(
    ws: &WorkingSet<T>,
    start: usize,
    reference: &[T],
    metric: Metric,
    out: &mut [T; L],
) {
    let col =
        |j: usize| -> &[T; L] { ws.column(j)[start..start + L].try_into().expect("L positions") };
    let mut acc = [T::zero(); L];
    match metric {
        Metric::Algebraic => {
            let h: &[T; L] = ws.half_norms()[start..start + L].try_into().expect("L positions");
            let (r0, x0) = (reference[0], col(0));
            for l in 0..L {
                acc[l] = h[l] - r0 * x0[l];
            }
            for (j, &r) in reference.iter().enumerate().skip(1) {
                let x = col(j);
                for l in 0..L {
                    acc[l] -= r * x[l];
                }
            }
        }
        Metric::Direct => {
            for (j, &r) in reference.iter().enumerate() {
                let x = col(j);
                for l in 0..L {
                    let t = x[l] - r;
                    acc[l] = if j == 0 { t * t } else { acc[l] + t * t };
                }
            }
        }
    }
    *out = acc;
}

#[inline(always)]
fn fill_scores_generic<T: Float>(
    ws: &WorkingSet<T>,
    lo: usize,
    reference: &[T],
    metric: Metric,
    out: &mut [T],
) {
    let mut lanes = out.chunks_exact_mut(LANES);
    let mut start = lo;
    for o in &mut lanes {
        score_lanes::<T, LANES>(ws, start, reference, metric, o.try_into().expect("LANES"));
        start += LANES;
    }
    for o in lanes.into_remainder() {
        let mut one = [T::zero()];
        score_lanes::<T, 1>(ws, start, reference, metric, &mut one);
        *o = one[0];
        start += 1;
    }
}

/// Consumes the scores of consecutive blocks of positions during a [`scan`]. Chunks of a
/// parallel scan get their own visitor; `merge` must be exact and order-independent.
pub trait ScoreVisitor<T>: Send + Sized {
    /// Sees the scores of positions `offset..offset + scores.len()`.
    fn visit(&mut self, scores: &[T], ids: &[u32], offset: usize);
    /// Combines the results of two chunks.
    fn merge(self, other: Self) -> Self;
}

/// How a scan scores a block of consecutive positions against its reference (the kernels of
/// [`Complete`], or a caller's own). Implementations are `#[inline(always)]`, so each is
/// compiled into every instruction-set variant of the scan.
pub trait BlockScorer<T>: Sync {
    /// Score rows one [`Self::fill`] writes: `out` holds `ROWS` rows of equal length, the
    /// scores of the same positions (one row per reference, as [`TwoReferences`] does).
    const ROWS: usize = 1;
    /// Writes the scores of positions `start..start + out.len() / ROWS` to `out`.
    fn fill(&self, ws: &WorkingSet<T>, start: usize, out: &mut [T]);
    /// Writes this scorer's scores of positions `start..start + len` to `outs[0]` and
    /// `other`'s to `outs[1]` (both `len` long): two fills, unless a scorer shares the two
    /// fills' reads of the data (the compact copy's dot products, `algorithms/mdav/compact/`).
    #[inline(always)]
    fn fill_pair(&self, other: &Self, ws: &WorkingSet<T>, start: usize, outs: [&mut [T]; 2]) {
        let [out, other_out] = outs;
        self.fill(ws, start, out);
        other.fill(ws, start, other_out);
    }
    /// Bytes of the working data read per scored record (for `Progress::bytes_scanned`).
    fn bytes_per_record(&self, ws: &WorkingSet<T>) -> usize;
}

/// The complete-data scores of [`Metric`] against a reference with every attribute.
#[derive(Debug, Clone, Copy)]
pub struct Complete<'a, T> {
    /// The reference point (length d).
    pub reference: &'a [T],
    /// How distances are scored.
    pub metric: Metric,
}

impl<T: Float> BlockScorer<T> for Complete<'_, T> {
    #[inline(always)]
    fn fill(&self, ws: &WorkingSet<T>, start: usize, out: &mut [T]) {
        fill_scores_generic(ws, start, self.reference, self.metric, out)
    }

    fn bytes_per_record(&self, ws: &WorkingSet<T>) -> usize {
        (ws.d() + usize::from(self.metric == Metric::Algebraic)) * size_of::<T>()
    }
}

#[inline(always)]
fn scan_generic<T: Float, S: BlockScorer<T>, V: ScoreVisitor<T>>(
    ws: &WorkingSet<T>,
    lo: usize,
    hi: usize,
    scorer: &S,
    visitor: &mut V,
) {
    let mut buf = Aligned([T::zero(); 2 * BLOCK]);
    assert!((1..=2).contains(&S::ROWS), "a scorer writes one or two rows");
    let mut start = lo;
    while start < hi {
        let len = BLOCK.min(hi - start);
        scorer.fill(ws, start, &mut buf.0[..len * S::ROWS]);
        visitor.visit(&buf.0[..len * S::ROWS], ws.ids(), start);
        start += len;
    }
}

/// `scan_generic` compiled for one more instruction set (chosen at run time by `scan_range`).
macro_rules! scan_with_target_feature {
    ($name:ident, $feature:literal) => {
        #[cfg(target_arch = "x86_64")]
        #[target_feature(enable = $feature)]
        fn $name<T: Float, S: BlockScorer<T>, V: ScoreVisitor<T>>(
            ws: &WorkingSet<T>,
            lo: usize,
            hi: usize,
            s: &S,
            v: &mut V,
        ) {
            scan_generic(ws, lo, hi, s, v)
        }
    };
}
scan_with_target_feature!(scan_avx2, "avx2");
scan_with_target_feature!(scan_avx512, "avx512f");

/// Scores positions `lo..hi` with `scorer` block by block (each block stays in L1) and hands
/// every block to `visitor`, on the best instruction set this CPU has.
pub fn scan_range<T: Float, S: BlockScorer<T>, V: ScoreVisitor<T>>(
    ws: &WorkingSet<T>,
    lo: usize,
    hi: usize,
    scorer: &S,
    visitor: &mut V,
) {
    debug_assert!(hi <= ws.n());
    #[cfg(target_arch = "x86_64")]
    {
        if std::arch::is_x86_feature_detected!("avx512f") {
            // SAFETY: the CPU supports AVX-512F (checked just above).
            return unsafe { scan_avx512(ws, lo, hi, scorer, visitor) };
        }
        if std::arch::is_x86_feature_detected!("avx2") {
            // SAFETY: the CPU supports AVX2 (checked just above).
            return unsafe { scan_avx2(ws, lo, hi, scorer, visitor) };
        }
    }
    scan_generic(ws, lo, hi, scorer, visitor)
}

/// Scans positions `0..m` against `reference` with the complete kernels of `metric` (see
/// `scan_with`).
pub fn scan<T: Float, V: ScoreVisitor<T>>(
    exec: Exec,
    ws: &WorkingSet<T>,
    m: usize,
    reference: &[T],
    metric: Metric,
    make: impl Fn() -> V + Sync,
) -> V {
    debug_assert_eq!(reference.len(), ws.d());
    scan_with(exec, ws, m, &Complete { reference, metric }, make)
}

/// Scans positions `0..m` with `scorer` (in parallel chunks where `exec` allows) with a fresh
/// visitor per chunk from `make`, and merges the chunk results.
pub fn scan_with<T: Float, S: BlockScorer<T>, V: ScoreVisitor<T>>(
    exec: Exec,
    ws: &WorkingSet<T>,
    m: usize,
    scorer: &S,
    make: impl Fn() -> V + Sync,
) -> V {
    exec.map_range(
        m,
        |lo, hi| {
            let mut v = make();
            scan_range(ws, lo, hi, scorer, &mut v);
            v
        },
        V::merge,
    )
    .unwrap_or_else(make)
}

mod select;
pub use select::*;

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
        fill_scores_generic(&ws, 0, &r, Metric::Algebraic, &mut a);
        fill_scores_generic(&ws, 0, &r, Metric::Direct, &mut d);
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

    /// Feeds `values` (as scores of positions 0..) to a visitor in two chunks, merged.
    fn feed<V: ScoreVisitor<f64>>(values: &[f64], ids: &[u32], make: impl Fn() -> V) -> V {
        let half = values.len() / 2;
        let mut a = make();
        a.visit(&values[..half], ids, 0);
        let mut b = make();
        b.visit(&values[half..], ids, half);
        a.merge(b)
    }

    proptest! {
        #[test]
        fn selections_agree_with_a_full_sort(
            values in prop::collection::vec(0u8..20, 1..400),
            count in 0usize..30,
            exclude in 0usize..400,
        ) {
            let values: Vec<f64> = values.iter().map(|&v| v as f64).collect();
            let ids: Vec<u32> = (0..values.len() as u32).rev().collect();
            let count = count.min(values.len().saturating_sub(1));
            let sorted = feed(&values, &ids, || Nearest::new(Selection::FullSort, count, exclude));
            let partial = feed(&values, &ids, || Nearest::new(Selection::Partial, count, exclude));
            let want = sorted.clone().into_positions();
            prop_assert_eq!(want.len(), count);
            prop_assert_eq!(partial.clone().into_positions(), want.clone());
            // The keys carry the ids of those positions.
            let want_ids: Vec<u32> = want.iter().map(|&p| ids[p]).collect();
            prop_assert_eq!(sorted.into_ids(), want_ids.clone());
            prop_assert_eq!(partial.into_ids(), want_ids.clone());
            // Offered in three lots, settled on their own and merged (a pass's threads).
            let lots: Vec<Nearest<f64>> = (0..3).map(|lot| {
                let mut sel = Nearest::new(Selection::Partial, count, exclude);
                for p in (lot..values.len()).step_by(3).filter(|&p| p != exclude) {
                    sel.offer(Pick { score: values[p], id: ids[p], pos: p });
                }
                sel.settle();
                sel
            }).collect();
            let merged = lots.into_iter().reduce(|a, b| a.merge(b)).expect("three lots");
            prop_assert_eq!(merged.into_ids(), want_ids.clone());
            // The same lots offered at once (a re-check's picks, packed integer keys), for
            // the nearest and the farthest.
            for far in [false, true] {
                let make = || if far { Ranked::farthest(count, exclude) } else {
                    Ranked::nearest(count, exclude)
                };
                let lots: Vec<Ranked<f64>> = (0..3).map(|lot| {
                    let mut sel = make();
                    let picks: Vec<Pick<f64>> = (lot..values.len()).step_by(3)
                        .filter(|&p| p != exclude)
                        .map(|p| Pick { score: values[p], id: ids[p], pos: p }).collect();
                    sel.offer_all(&picks, &mut Vec::new());
                    sel
                }).collect();
                let merged = lots.into_iter().reduce(|a, b| a.merge(b)).expect("three lots");
                prop_assert_eq!(merged.into_ids(), feed(&values, &ids, make).into_ids());
            }
            // Farthest = nearest of the negated scores.
            let negated: Vec<f64> = values.iter().map(|v| -v).collect();
            let far = feed(&values, &ids, || Ranked::farthest(count, exclude)).into_positions();
            let near_neg = feed(&negated, &ids, || Ranked::nearest(count, exclude)).into_positions();
            prop_assert_eq!(far, near_neg);
            // The first farthest equals the argmax.
            let kept: Vec<f64> = values.iter().enumerate()
                .map(|(p, &v)| if p == exclude { f64::NEG_INFINITY } else { v }).collect();
            if let Some(p) = feed(&kept, &ids, || Farthest(None)).0 {
                let top = feed(&values, &ids, || Ranked::farthest(1, exclude)).into_positions();
                prop_assert_eq!(top.first().copied(), Some(p.pos));
            }
        }
    }
}
