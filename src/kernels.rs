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
use crate::float::{Float, order_bits};
use crate::parallel::{Exec, merge_options};
use std::cmp::Ordering;

/// Positions per score block (fits L1 together with one column chunk).
pub const BLOCK: usize = 64;

/// A block buffer on the stack, starting on a cache line. The kernels store whole vectors
/// into these buffers and read them back; without the alignment, where the buffer falls
/// depends on the caller's stack frame, and a change elsewhere in the crate could make every
/// 32-byte store straddle two cache lines: in one build of the Python extension the store of
/// the integer dots took 15% of `dots_avx2` and two-thread MDAV ran 7% slower (session 9).
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

/// How a scan scores a block of consecutive positions against its reference: the complete
/// kernels ([`Complete`]) or the masked ones for missing values
/// (`crate::kernels_masked::Partial`). Implementations are `#[inline(always)]`, so each is
/// compiled into every instruction-set variant of the scan.
pub trait BlockScorer<T>: Sync {
    /// Score rows one [`Self::fill`] writes: `out` holds `ROWS` rows of equal length, the
    /// scores of the same positions (one row per reference, as [`TwoReferences`] does).
    const ROWS: usize = 1;
    /// Writes the scores of positions `start..start + out.len() / ROWS` to `out`.
    fn fill(&self, ws: &WorkingSet<T>, start: usize, out: &mut [T]);
    /// Writes this scorer's scores of positions `start..start + out.len()` to `out` and
    /// `other`'s to `other_out` (as long): two fills, unless a scorer shares the two fills'
    /// reads of the data (the compact copy's dot products, `algorithms/compact.rs`).
    #[inline(always)]
    fn fill_pair(
        &self,
        other: &Self,
        ws: &WorkingSet<T>,
        start: usize,
        out: &mut [T],
        other_out: &mut [T],
    ) {
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
/// [`scan_with`]).
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

/// A selection that also takes single records with their exact scores (the re-check of
/// candidates found by an approximate pass, `algorithms/compact.rs`) and says what it keeps.
pub trait Offer<T: Clone> {
    /// Takes one record (never an excluded position).
    fn offer(&mut self, pick: Pick<T>);
    /// What it keeps: how many records, whether the farthest (else the nearest), and the
    /// positions it skips.
    fn wants(&self) -> (usize, bool, Exclude);
    /// Called after the last offer, on the thread that offered: a selection may finish its
    /// own work there (see [`Ranked::settle`]) instead of in the merge on the caller.
    fn settle(&mut self) {}
    /// Offers every pick of a re-check, then settles: a selection that knows all of its
    /// candidates at once may select them in one step ([`Ranked`]'s override), with the
    /// last argument as its buffer (the caller's, reused for every band of a re-check).
    fn offer_all(&mut self, picks: &[Pick<T>], _keys: &mut Vec<u128>) {
        for p in picks {
            self.offer(p.clone());
        }
        self.settle();
    }
}

/// Largest value of a slice (8 independent lanes so it vectorizes to max instructions).
#[inline(always)]
pub(crate) fn max_value<T: Float>(values: &[T]) -> T {
    extreme(values, T::neg_infinity(), |v, m| v > m)
}

/// Smallest value of a slice (like [`max_value`]).
#[inline(always)]
pub(crate) fn min_value<T: Float>(values: &[T]) -> T {
    extreme(values, T::infinity(), |v, m| v < m)
}

/// The value of `values` that `before` ranks first (`init` when empty), in 8 independent
/// lanes.
#[inline(always)]
fn extreme<T: Float>(values: &[T], init: T, before: impl Fn(T, T) -> bool) -> T {
    let pick = |m: T, v: T| if before(v, m) { v } else { m };
    let mut lanes = [init; 8];
    let mut chunks = values.chunks_exact(8);
    for c in &mut chunks {
        for (l, &v) in lanes.iter_mut().zip(c) {
            *l = pick(*l, v);
        }
    }
    lanes.into_iter().chain(chunks.remainder().iter().copied()).fold(init, pick)
}

/// The farthest record among `values` (scores of positions `offset..`): the largest score,
/// ties to the lowest id. `None` for an empty slice.
#[inline(always)]
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
    Some(Pick { score: best, id, pos: offset + i })
}

/// The farthest record of a scan (`None` before any record is seen).
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct Farthest<T>(pub Option<Pick<T>>);

impl<T: Float> ScoreVisitor<T> for Farthest<T> {
    #[inline(always)]
    fn visit(&mut self, scores: &[T], ids: &[u32], offset: usize) {
        // Most blocks hold nothing as far as the best so far: one vectorized max decides.
        if self.0.is_some_and(|b| max_value(scores) < b.score) {
            return;
        }
        if let Some(p) = farthest(scores, ids, offset) {
            self.0 = Some(self.0.map_or(p, |q| q.farther(p)));
        }
    }

    fn merge(self, other: Self) -> Self {
        match (self.0, other.0) {
            (Some(a), Some(b)) => Farthest(Some(a.farther(b))),
            (a, b) => Farthest(a.or(b)),
        }
    }
}

impl<T: Float> Offer<T> for Farthest<T> {
    fn offer(&mut self, pick: Pick<T>) {
        self.0 = Some(self.0.map_or(pick, |q| q.farther(pick)));
    }

    fn wants(&self) -> (usize, bool, Exclude) {
        (1, true, Exclude::NONE)
    }
}

/// A selection key: (signed score, original id, position). Keys are totally ordered by
/// score then id; ids are unique, so every selection is independent of memory order.
type Key<T> = (T, u32, u32);

/// Scores compare as integers ([`order_bits`]: the numeric order, −0 and +0 tied): a sort
/// of 20 keys of 39 took 0.43 µs instead of 0.58 µs with `partial_cmp` (f32, this machine).
#[inline]
fn key_cmp<T: Float>(a: &Key<T>, b: &Key<T>) -> Ordering {
    let score = |k: &Key<T>| order_bits(k.0.as_f64());
    score(a).cmp(&score(b)).then(a.1.cmp(&b.1))
}

/// Up to two positions a selection must skip (the seed, and for MDAV*'s N2 also x̄).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Exclude([usize; 2]);

impl Exclude {
    /// Nothing excluded.
    pub const NONE: Exclude = Exclude([usize::MAX; 2]);

    /// Whether position `pos` is excluded.
    #[inline(always)]
    pub fn contains(self, pos: usize) -> bool {
        self.0[0] == pos || self.0[1] == pos
    }
}

impl From<usize> for Exclude {
    fn from(p: usize) -> Self {
        Exclude([p, p])
    }
}

impl From<[usize; 2]> for Exclude {
    fn from(p: [usize; 2]) -> Self {
        Exclude(p)
    }
}

/// How the nearest records are selected (F-MDAV §3.3).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Selection {
    /// Partial selection: quickselect on a stream pre-filtered by the current k-th key.
    Partial,
    /// The traditional full sort of every candidate.
    FullSort,
}

/// The `count` best records of a scan: the nearest (smallest score, ties to the lowest id)
/// or the farthest (largest score, ties to the lowest id), skipping one excluded position.
///
/// Candidates are appended while they beat the current threshold (the worst kept key); when
/// the buffer holds `2·count` of them, quickselect shrinks it back to `count`. On data in
/// random order almost every block is rejected by one vectorized comparison, so the cost is
/// one pass plus O(count · log n) selection work.
#[derive(Debug, Clone)]
pub struct Ranked<T> {
    count: usize,
    /// +1 ranks by ascending score (nearest), −1 by descending score (farthest); exact.
    sign: T,
    exclude: Exclude,
    keys: Vec<Key<T>>,
    threshold: Option<Key<T>>,
    /// The keys are the `count` best at most, best first ([`Self::settle`]).
    settled: bool,
}

impl<T: Float> Ranked<T> {
    /// The `count` nearest records, never the excluded ones.
    pub fn nearest(count: usize, exclude: impl Into<Exclude>) -> Self {
        Self::with_sign(count, exclude.into(), T::one())
    }

    /// The `count` farthest records, never the excluded ones.
    pub fn farthest(count: usize, exclude: impl Into<Exclude>) -> Self {
        Self::with_sign(count, exclude.into(), -T::one())
    }

    fn with_sign(count: usize, exclude: Exclude, sign: T) -> Self {
        let keys = Vec::with_capacity(2 * count.max(1));
        Ranked { count, sign, exclude, keys, threshold: None, settled: false }
    }

    #[inline(never)]
    fn push_key(&mut self, key: Key<T>) {
        if let Some(t) = self.threshold
            && key_cmp(&key, &t) != Ordering::Less
        {
            return;
        }
        self.keys.push(key);
        self.settled = false;
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

    /// Keeps only the `count` best keys, sorted best first. Two settled selections merge in
    /// one linear pass: the threads of a pass settle their own, and the caller's merge and
    /// its final list then cost a few ns per key instead of a quickselect and a sort (0.6 µs
    /// for 20 of 39 keys in f32, on the serial path between two passes).
    pub fn settle(&mut self) {
        if !self.settled {
            self.shrink();
            self.keys.sort_unstable_by(key_cmp);
            self.settled = true;
        }
    }

    /// The selected keys, best first.
    fn into_sorted(mut self) -> Vec<Key<T>> {
        self.settle();
        self.keys
    }

    /// The positions of the selected records, best first.
    pub fn into_positions(self) -> Vec<usize> {
        self.into_sorted().into_iter().map(|k| k.2 as usize).collect()
    }

    /// The original ids of the selected records, best first: the keys carry them, so a
    /// caller that keeps ids reads no table of the working set.
    pub fn into_ids(self) -> Vec<u32> {
        self.into_sorted().into_iter().map(|k| k.1).collect()
    }
}

impl<T: Float> ScoreVisitor<T> for Ranked<T> {
    #[inline(always)]
    fn visit(&mut self, scores: &[T], ids: &[u32], offset: usize) {
        if self.count == 0 {
            return;
        }
        let sign = self.sign;
        if let Some(t) = self.threshold
            && !scores.iter().fold(false, |acc, &v| acc | (sign * v <= t.0))
        {
            return;
        }
        for (i, &v) in scores.iter().enumerate() {
            let pos = offset + i;
            if !self.exclude.contains(pos) {
                self.push_key((sign * v, ids[pos], pos as u32));
            }
        }
    }

    fn merge(mut self, other: Self) -> Self {
        if self.settled && other.settled {
            self.keys = merge_sorted(&self.keys, &other.keys, self.count);
            self.threshold = self.keys.last().copied().filter(|_| self.keys.len() == self.count);
            return self;
        }
        for k in other.keys {
            self.push_key(k);
        }
        self
    }
}

/// The `count` best keys of two sorted lists, best first.
fn merge_sorted<T: Float>(a: &[Key<T>], b: &[Key<T>], count: usize) -> Vec<Key<T>> {
    let mut out = Vec::with_capacity(count.min(a.len() + b.len()));
    let (mut i, mut j) = (0, 0);
    while out.len() < count && (i < a.len() || j < b.len()) {
        let from_a = j == b.len() || (i < a.len() && key_cmp(&a[i], &b[j]) == Ordering::Less);
        if from_a {
            out.push(a[i]);
            i += 1;
        } else {
            out.push(b[j]);
            j += 1;
        }
    }
    out
}

impl<T: Float> Offer<T> for Ranked<T> {
    fn offer(&mut self, p: Pick<T>) {
        if self.count > 0 {
            self.push_key((self.sign * p.score, p.id, p.pos as u32));
        }
    }

    fn wants(&self) -> (usize, bool, Exclude) {
        (self.count, self.sign < T::zero(), self.exclude)
    }

    fn settle(&mut self) {
        Ranked::settle(self);
    }

    /// A fresh selection takes a re-check's picks in one step: their keys packed into
    /// integers in key order ([`order_bits`] of the signed score, then the id, then the
    /// pick's index), one quickselect and one sort of primitive integers. Offering the picks
    /// one by one and then settling compared floats in every step of two quickselects and a
    /// sort: at 200 000 × 15 (f32, 2 threads) the thread that re-checks the prepared lists
    /// spent 1.9 µs a round there, 0.8 µs this way. (Sorting the picks themselves by keys
    /// packed at each comparison, without the buffer, made a pass's re-checks 0.3 µs slower
    /// on one thread.)
    fn offer_all(&mut self, picks: &[Pick<T>], keys: &mut Vec<u128>) {
        if !self.keys.is_empty() || self.count == 0 || picks.len() > u32::MAX as usize {
            for &p in picks {
                self.offer(p);
            }
            return self.settle();
        }
        let sign = self.sign;
        let pack = |(i, p): (usize, &Pick<T>)| {
            let order = order_bits((sign * p.score).as_f64());
            (u128::from(order) << 64) | (u128::from(p.id) << 32) | i as u128
        };
        keys.clear();
        keys.extend(picks.iter().enumerate().map(pack));
        if keys.len() > self.count {
            keys.select_nth_unstable(self.count);
            keys.truncate(self.count);
        }
        keys.sort_unstable();
        let key = |&k: &u128| {
            let p = &picks[k as u32 as usize];
            (sign * p.score, p.id, p.pos as u32)
        };
        self.keys.extend(keys.iter().map(key));
        self.threshold = self.keys.last().copied().filter(|_| self.keys.len() == self.count);
        self.settled = true;
    }
}

/// Every key of a scan, for the traditional full sort (F-MDAV's baseline for §3.3).
#[derive(Debug, Clone)]
pub struct SortedNearest<T> {
    count: usize,
    exclude: Exclude,
    keys: Vec<Key<T>>,
}

impl<T: Float> SortedNearest<T> {
    /// Collects every record but the excluded ones; [`Nearest::into_positions`] sorts them all.
    pub fn new(count: usize, exclude: impl Into<Exclude>) -> Self {
        SortedNearest { count, exclude: exclude.into(), keys: Vec::new() }
    }

    /// The `count` nearest keys after a full sort.
    fn into_sorted(mut self) -> Vec<Key<T>> {
        self.keys.sort_by(key_cmp);
        self.keys.truncate(self.count);
        self.keys
    }
}

impl<T: Float> ScoreVisitor<T> for SortedNearest<T> {
    fn visit(&mut self, scores: &[T], ids: &[u32], offset: usize) {
        let exclude = self.exclude;
        self.keys.extend(
            scores
                .iter()
                .enumerate()
                .map(|(i, &v)| (v, ids[offset + i], (offset + i) as u32))
                .filter(|k| !exclude.contains(k.2 as usize)),
        );
    }

    fn merge(mut self, other: Self) -> Self {
        self.keys.extend(other.keys);
        self
    }
}

impl<T: Float> Offer<T> for SortedNearest<T> {
    fn offer(&mut self, p: Pick<T>) {
        self.keys.push((p.score, p.id, p.pos as u32));
    }

    fn wants(&self) -> (usize, bool, Exclude) {
        (self.count, false, self.exclude)
    }
}

/// The nearest records by either selection strategy.
#[derive(Debug, Clone)]
pub enum Nearest<T> {
    /// F-MDAV's partial selection.
    Partial(Ranked<T>),
    /// The traditional full sort.
    Sorted(SortedNearest<T>),
}

impl<T: Float> Nearest<T> {
    /// The `count` nearest records but the excluded ones, selected by `selection`.
    pub fn new(selection: Selection, count: usize, exclude: impl Into<Exclude>) -> Self {
        let exclude = exclude.into();
        match selection {
            Selection::Partial => Nearest::Partial(Ranked::nearest(count, exclude)),
            Selection::FullSort => Nearest::Sorted(SortedNearest::new(count, exclude)),
        }
    }

    fn into_sorted(self) -> Vec<Key<T>> {
        match self {
            Nearest::Partial(r) => r.into_sorted(),
            Nearest::Sorted(s) => s.into_sorted(),
        }
    }

    /// The selected positions, nearest first.
    pub fn into_positions(self) -> Vec<usize> {
        self.into_sorted().into_iter().map(|k| k.2 as usize).collect()
    }

    /// The selected original ids, nearest first (see [`Ranked::into_ids`]).
    pub fn into_ids(self) -> Vec<u32> {
        self.into_sorted().into_iter().map(|k| k.1).collect()
    }
}

impl<T: Float> ScoreVisitor<T> for Nearest<T> {
    #[inline(always)]
    fn visit(&mut self, scores: &[T], ids: &[u32], offset: usize) {
        match self {
            Nearest::Partial(r) => r.visit(scores, ids, offset),
            Nearest::Sorted(s) => s.visit(scores, ids, offset),
        }
    }

    fn merge(self, other: Self) -> Self {
        match (self, other) {
            (Nearest::Partial(a), Nearest::Partial(b)) => Nearest::Partial(a.merge(b)),
            (Nearest::Sorted(a), Nearest::Sorted(b)) => Nearest::Sorted(a.merge(b)),
            _ => unreachable!("chunks of one scan use one selection strategy"),
        }
    }
}

impl<T: Float> Offer<T> for Nearest<T> {
    fn offer(&mut self, pick: Pick<T>) {
        match self {
            Nearest::Partial(r) => r.offer(pick),
            Nearest::Sorted(s) => s.offer(pick),
        }
    }

    fn wants(&self) -> (usize, bool, Exclude) {
        match self {
            Nearest::Partial(r) => r.wants(),
            Nearest::Sorted(s) => s.wants(),
        }
    }

    fn settle(&mut self) {
        if let Nearest::Partial(r) = self {
            r.settle();
        }
    }

    fn offer_all(&mut self, picks: &[Pick<T>], keys: &mut Vec<u128>) {
        match self {
            Nearest::Partial(r) => r.offer_all(picks, keys),
            Nearest::Sorted(s) => s.offer_all(picks, keys),
        }
    }
}

/// Two visitors fed by one pass (F-MDAV §3.2: P's distances serve both P's group and Q).
impl<T: Float, A: ScoreVisitor<T>, B: ScoreVisitor<T>> ScoreVisitor<T> for (A, B) {
    #[inline(always)]
    fn visit(&mut self, scores: &[T], ids: &[u32], offset: usize) {
        self.0.visit(scores, ids, offset);
        self.1.visit(scores, ids, offset);
    }

    fn merge(self, other: Self) -> Self {
        (self.0.merge(other.0), self.1.merge(other.1))
    }
}

/// Two references scored in one pass over the data (exact MDAV's next-round speculation,
/// `algorithms/mdav.rs`): row 0 against `a`, row 1 against `b` (left as it is without
/// `b`), from one [`BlockScorer::fill_pair`] a block. Feeds a [`TwoRows`] visitor whose
/// second visitor is absent exactly when `b` is.
pub struct TwoReferences<'a, S> {
    /// The first reference's scorer.
    pub a: &'a S,
    /// The second reference's scorer, if the pass has one.
    pub b: Option<&'a S>,
}

impl<T, S: BlockScorer<T>> BlockScorer<T> for TwoReferences<'_, S> {
    const ROWS: usize = 2;

    #[inline(always)]
    fn fill(&self, ws: &WorkingSet<T>, start: usize, out: &mut [T]) {
        let (a, b) = out.split_at_mut(out.len() / 2);
        match self.b {
            Some(scorer) => self.a.fill_pair(scorer, ws, start, a, b),
            None => self.a.fill(ws, start, a),
        }
    }

    fn bytes_per_record(&self, ws: &WorkingSet<T>) -> usize {
        self.a.bytes_per_record(ws)
    }
}

/// Two visitors fed the two score rows of a [`TwoReferences`] scorer: the first row to
/// `.0`, the second to `.1`.
pub struct TwoRows<A, B>(pub A, pub B);

impl<T: Float, A: ScoreVisitor<T>, B: ScoreVisitor<T>> ScoreVisitor<T> for TwoRows<A, B> {
    #[inline(always)]
    fn visit(&mut self, scores: &[T], ids: &[u32], offset: usize) {
        let (a, b) = scores.split_at(scores.len() / 2);
        self.0.visit(a, ids, offset);
        self.1.visit(b, ids, offset);
    }

    fn merge(self, other: Self) -> Self {
        TwoRows(self.0.merge(other.0), self.1.merge(other.1))
    }
}

/// A visitor that may be absent: a pass's thread that never scans a part has none for it.
impl<T: Float, V: ScoreVisitor<T>> ScoreVisitor<T> for Option<V> {
    #[inline(always)]
    fn visit(&mut self, scores: &[T], ids: &[u32], offset: usize) {
        if let Some(v) = self {
            v.visit(scores, ids, offset);
        }
    }

    fn merge(self, other: Self) -> Self {
        merge_options(self, other, V::merge)
    }
}

/// A visitor that ignores everything (the unused half of a pair).
impl<T: Float> ScoreVisitor<T> for () {
    #[inline]
    fn visit(&mut self, _: &[T], _: &[u32], _: usize) {}
    fn merge(self, _: Self) -> Self {}
}

/// Asks the caches for the line holding `x`: a hint for scattered loads that are known
/// ahead (no effect where the target has no stable prefetch instruction).
#[inline(always)]
pub fn prefetch<V>(x: &V) {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: a prefetch never faults and reads nothing into the program; `x` is a valid
    // reference anyway. SSE is part of x86_64's baseline.
    unsafe {
        use std::arch::x86_64::{_MM_HINT_T0, _mm_prefetch};
        _mm_prefetch::<_MM_HINT_T0>((x as *const V).cast());
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = x;
}

/// Asks the caches for the line holding `x` ahead of a write to it (`prefetchw` where the
/// CPU has it, else [`prefetch`]). A line that another thread has read since (the data of
/// a pass, which exact MDAV's caller then changes between two passes) must be taken back
/// from that core's cache before it is written: asked for together, ahead of the writes,
/// those transfers overlap instead of queueing (numbers in `Remaining::prefetch_group`).
#[inline(always)]
pub fn prefetch_for_write<V>(x: &V) {
    #[cfg(target_arch = "x86_64")]
    if has_prefetchw() {
        // SAFETY: `prefetchw` (checked just above) never faults, writes nothing and reads
        // nothing into the program; `x` is a valid reference anyway.
        unsafe {
            std::arch::asm!(
                "prefetchw byte ptr [{0}]",
                in(reg) (x as *const V),
                options(nostack, preserves_flags, readonly)
            );
        }
        return;
    }
    prefetch(x);
}

/// Whether this CPU has `prefetchw` (CPUID 8000_0001h, ECX bit 8: every x86-64 AMD CPU,
/// Intel's since Broadwell), asked once.
#[cfg(target_arch = "x86_64")]
fn has_prefetchw() -> bool {
    static HAS: std::sync::LazyLock<bool> = std::sync::LazyLock::new(|| {
        use std::arch::x86_64::__cpuid;
        // The extended leaf exists when the largest extended leaf reaches it. `__cpuid` is
        // safe from Rust 1.87 on, unsafe before (this crate builds from 1.85).
        #[allow(unused_unsafe)]
        // SAFETY: CPUID exists on every x86-64 CPU.
        unsafe {
            __cpuid(0x8000_0000).eax >= 0x8000_0001 && __cpuid(0x8000_0001).ecx & (1 << 8) != 0
        }
    });
    *HAS
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
