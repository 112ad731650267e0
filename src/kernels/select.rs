//! What a scan selects from its scores: the farthest record ([`Farthest`]), the `count`
//! nearest or farthest ([`Ranked`], [`SortedNearest`], [`Nearest`]), and the combinators that
//! let one pass serve two selections; each merges per-thread results exactly (ties to the
//! lowest id), so every thread count gives the same picks.

use super::*;

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
/// candidates found by an approximate pass, `algorithms/mdav/compact/`) and says what it keeps.
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

/// The records a selection kept ([`Ranked`], [`SortedNearest`], [`Nearest`]), best first.
pub trait Selected<T>: Sized {
    /// The selected keys (score, id, position), best first.
    fn into_sorted(self) -> Vec<Key<T>>;

    /// The positions of the selected records, best first.
    fn into_positions(self) -> Vec<usize> {
        self.into_sorted().into_iter().map(|k| k.2 as usize).collect()
    }

    /// The original ids of the selected records, best first: the keys carry them, so a
    /// caller that keeps ids reads no table of the working set.
    fn into_ids(self) -> Vec<u32> {
        self.into_sorted().into_iter().map(|k| k.1).collect()
    }
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
}

impl<T: Float> Selected<T> for Ranked<T> {
    fn into_sorted(mut self) -> Vec<Key<T>> {
        self.settle();
        self.keys
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
    /// Collects every record but the excluded ones; [`Selected::into_positions`] sorts them all.
    pub fn new(count: usize, exclude: impl Into<Exclude>) -> Self {
        SortedNearest { count, exclude: exclude.into(), keys: Vec::new() }
    }
}

impl<T: Float> Selected<T> for SortedNearest<T> {
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
}

impl<T: Float> Selected<T> for Nearest<T> {
    fn into_sorted(self) -> Vec<Key<T>> {
        match self {
            Nearest::Partial(r) => r.into_sorted(),
            Nearest::Sorted(s) => s.into_sorted(),
        }
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
            Some(scorer) => self.a.fill_pair(scorer, ws, start, [a, b]),
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
