//! The unassigned records of a fixed-size algorithm (MDAV and its relatives), kept as a
//! contiguous prefix `0..m` of the working set (docs/performance.md#principles).
//!
//! When a group is formed its records are swapped to the end of the prefix and the prefix
//! shrinks, so every scan is a straight pass over contiguous memory with no index
//! indirection. Scans are fused with their consumers (argmax, selection of the nearest,
//! candidates for the next seed), so no distance is ever written to memory.
//!
//! With a [`SpatialIndex`] (exact MDAV in low d, `spatial.rs`) the farthest and nearest
//! queries ask the index instead of scanning (same answers), and removed records leave it.
//! With a [`CompactCopy`] (high d, `mdav/compact/`) every algebraic scan reads the int8 copy
//! and re-checks its few candidates exactly (same answers).

use super::compact::{CompactCopy, CompactQuery, Recheck, RecheckBuffers};
use super::norm_order::{NormOrder, Query};
use crate::algorithms::spatial::SpatialIndex;
use crate::dataset::{WorkingSet, means};
use crate::float::Float;
use crate::kernels::{
    self, BlockScorer, Complete, Farthest, Metric, Nearest, Pick, Ranked, ScoreVisitor, Selected,
    Selection, TwoReferences, TwoRows,
};
use crate::parallel::claims::Opening;
use crate::parallel::{Exec, Parts, PartsOutcome};
use crate::partition::Partition;
use crate::prefetch::{prefetch, prefetch_for_write};
use crate::progress::Progress;
use std::sync::LazyLock;
use std::sync::atomic::{AtomicUsize, Ordering};

/// Compact passes over at least this many records are split by records when split among
/// threads: each thread scores its records against both references in one read (its
/// share of the copy then stays in its own core's caches, `claims.rs`), and the next
/// round's seed is checked first. Smaller passes are split by reference, so that one thread
/// checks the seed while the others scan. At 200 000 × 15 on 2 threads (Intel Xeon VM, six
/// alternated runs, same labels), splitting every pass by records took f32 1.425 → 1.159 s
/// (best; pair median 0.83×) and f64 1.448 → 1.220 s (0.96×); splitting by records only
/// from this size was faster again: f32 1.014 → 1.007 s (0.97×), f64 1.309 → 1.183 s
/// (0.93×).
const BY_RECORDS_MIN: usize = 50_000;

/// A group prepared one pass ahead (exact MDAV's speculation, `mdav/mod.rs`): the ids of the
/// `2·size − 1` records nearest to `seed` and of the `2·size` farthest, in key order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Prepared {
    /// Original id of the prepared seed.
    pub seed: u32,
    near: Vec<u32>,
    far: Vec<u32>,
}

/// A check made inside a pass found the pass pointless (exact MDAV's prepared group taken
/// on trust was not the round's: `mdav/mod.rs`); nothing of the pass was kept.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Mismatch;

/// The state [`Remaining::restore`] puts back: the prefix length, the running sums and the
/// number of groups before some groups left.
#[derive(Debug, Clone)]
pub struct Checkpoint {
    m: usize,
    sum: Vec<f64>,
    n_groups: u32,
}

/// The compact copy is dropped when its passes re-check more than one record in this many
/// (`Remaining::leave_compact_if_poor`): a re-check costs about 70 ns (a scattered row,
/// its band's selection), a record scanned from the copy instead of the exact values saves
/// about 1 ns. On log-normal data the int8 steps are coarse where most records lie:
/// 100 000 × 9 re-checked 2 466 records a pass (5.5%) and took 2.5 s on one thread with the
/// copy against 1.3 s without; Gaussian data re-checks about 0.1%.
const RECHECK_LIMIT: usize = 64;

/// How many passes' worth of the unassigned records the compact copy scans between two
/// looks at its re-check rate.
const RECHECK_WINDOW: usize = 16;

/// No look below this many unassigned records: their rows stay in the caches, so a
/// re-check costs far less than the 70 ns above, while the rate rises as the selections'
/// own `count` records weigh more, and more on threads (each thread's bands warm up on
/// their own). From 4 096, Gaussian 200 000 × 15 (k = 10) dropped the copy at 4 400
/// records left on one thread and at 6 600 on two, and the rounds below 8 192 records
/// ran faster with the copy kept (f32, one thread: 10.0 → 7.7 ms; f64, two threads:
/// 13.2–14.0 → 9.4–9.6 ms).
const RECHECK_MIN_M: usize = 16384;

/// The state shared by prefix-shrinking algorithms.
pub struct Remaining<'a, T> {
    ws: WorkingSet<T>,
    m: usize,
    labels: Vec<u32>,
    n_groups: u32,
    sum: Vec<f64>,
    /// The unassigned records in a k-d tree, when the caller asked for one.
    index: Option<SpatialIndex<T>>,
    /// The unassigned records quantized to int8, when the caller asked for it (until it
    /// proves slower than the exact scans).
    compact: Option<CompactCopy<T>>,
    /// Records the compact copy's passes re-checked and scanned since the last look.
    rechecked: AtomicUsize,
    scanned: AtomicUsize,
    exec: Exec,
    progress: &'a Progress,
}

impl<'a, T: Float> Remaining<'a, T> {
    /// All records of `ws`, none assigned.
    pub fn new(ws: WorkingSet<T>, exec: Exec, progress: &'a Progress) -> Self {
        let n = ws.n();
        let sum = ws.column_sums(n, exec);
        Remaining {
            ws,
            m: n,
            labels: vec![0; n],
            n_groups: 0,
            sum,
            index: None,
            compact: None,
            rechecked: AtomicUsize::new(0),
            scanned: AtomicUsize::new(0),
            exec,
            progress,
        }
    }

    /// Answers the farthest and nearest queries from a spatial index of the unassigned
    /// records from now on (complete data only; same answers as the scans).
    pub fn use_spatial_index(&mut self) {
        let mut index = SpatialIndex::new(&self.ws);
        for p in self.m..self.ws.n() {
            index.remove(self.ws.ids()[p]);
        }
        self.index = Some(index);
    }

    /// Scans a compact int8 copy first and re-checks the candidates exactly from now on
    /// (complete data only; same answers as the exact scans). Every scan must then use the
    /// algebraic metric: the working set's values stay where they are while records leave
    /// (`WorkingSet::swap_keys`), and values are read by id from the copy's rows.
    pub fn use_compact_copy(&mut self) {
        self.compact = Some(CompactCopy::new(&self.ws, self.exec));
    }

    /// Whether scans read the compact copy (see [`Self::use_compact_copy`]).
    #[cfg(test)]
    pub fn scans_compact_copy(&self) -> bool {
        self.compact.is_some()
    }

    /// Drops the compact copy, exactly, when its passes re-checked more than one record in
    /// [`RECHECK_LIMIT`] over the last [`RECHECK_WINDOW`] passes' worth of records while at
    /// least [`RECHECK_MIN_M`] are unassigned (the exact scans are then faster); the working
    /// set's values, left in place by the removals, are put back at their positions first.
    fn leave_compact_if_poor(&mut self) {
        let scanned = *self.scanned.get_mut();
        if self.compact.is_none() || self.m < RECHECK_MIN_M || scanned < RECHECK_WINDOW * self.m {
            return;
        }
        let rechecked = std::mem::take(self.rechecked.get_mut());
        *self.scanned.get_mut() = 0;
        if rechecked * RECHECK_LIMIT > scanned {
            self.leave_compact();
        }
    }

    /// Drops the compact copy, putting the working set's values back at their positions
    /// first (all of them: a group that left since a checkpoint may come back, see
    /// [`Self::restore`]).
    fn leave_compact(&mut self) {
        if let Some(copy) = self.compact.take() {
            self.ws.place_rows(|id| copy.row(id));
        }
    }

    /// Number of unassigned records.
    #[inline]
    pub fn len(&self) -> usize {
        self.m
    }

    /// True when every record is assigned.
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.m == 0
    }

    /// The record at position `p`.
    pub fn row(&self, p: usize) -> Vec<T> {
        match &self.compact {
            Some(copy) => copy.row(self.id(p)).to_vec(),
            None => self.ws.row(p),
        }
    }

    /// Centroid of the unassigned records: from the running sum (F-MDAV §3.4, "centroid by
    /// subtraction"), or recomputed from scratch (the traditional way).
    pub fn centroid(&self, by_subtraction: bool) -> Vec<T> {
        if by_subtraction {
            means(&self.sum, self.m)
        } else {
            match &self.compact {
                Some(copy) => {
                    let mut sums = vec![0.0; self.ws.d()];
                    for p in 0..self.m {
                        sums.iter_mut()
                            .zip(copy.row(self.id(p)))
                            .for_each(|(s, v)| *s += v.as_f64());
                    }
                    means(&sums, self.m)
                }
                None => self.ws.prefix_means(self.m),
            }
        }
    }

    /// A prediction of the centroid once the group of a seed (values `seed`, `size`
    /// records) has left, for speculation: the group's mean is taken to sit `pull` from the
    /// seed on the line to `center`, the centroid of the unassigned records
    /// ([`Self::centroid_f64`]; `pull` 0: at the seed). A seed is an extreme record, so its
    /// nearest records lie mostly inwards; `mdav/mod.rs` learns `pull` from the groups that left
    /// ([`Self::pull_of_group`], which takes the same `seed` and `center`).
    pub fn centroid_without(&self, seed: &[f64], center: &[f64], size: usize, pull: f64) -> Vec<T> {
        let inwards = unit_towards(seed, center);
        let left = (self.m - size) as f64;
        let mean = seed.iter().zip(&inwards).map(|(x, u)| x + pull * u);
        let sums = self.sum.iter().zip(mean).map(|(s, g)| s - size as f64 * g);
        sums.map(|s| T::from_f64_lossy(s / left)).collect()
    }

    /// How far the mean of the group that just left (`size` records, seed values `seed`)
    /// sat from its seed on the line to `center`, the centroid before it left: the `pull`
    /// of [`Self::centroid_without`], measured.
    pub fn pull_of_group(&self, seed: &[f64], center: &[f64], size: usize) -> f64 {
        let before = (self.m + size) as f64;
        let mean = self.sum.iter().zip(center).map(|(s, c)| (before * c - s) / size as f64);
        let offset = mean.zip(seed).map(|(g, x)| g - x);
        offset.zip(unit_towards(seed, center)).map(|(o, u)| o * u).sum()
    }

    /// The centroid of the unassigned records in f64, from the running sum.
    pub fn centroid_f64(&self) -> Vec<f64> {
        self.sum.iter().map(|s| s / self.m as f64).collect()
    }

    fn scan<V: Recheck<T>>(
        &self,
        reference: &[T],
        metric: Metric,
        make: impl Fn() -> V + Sync,
    ) -> V {
        let found = self.scan_two(reference, || Ok(None), metric, make, |_| ());
        found.expect("a pass without a check is never dropped").0
    }

    /// One pass over the unassigned records serving `make_a`'s selection against `a` and,
    /// when `find_b` names a record (its position), `make_b`'s against that record: the
    /// exact kernels, or the compact copy with exact
    /// re-checks (same answers). With the compact copy and a pass split by reference among
    /// threads (below [`BY_RECORDS_MIN`] records), one thread runs `find_b` while the others
    /// start scoring `a` (`Exec::map_parts`); elsewhere it runs first. When `find_b` reports
    /// a [`Mismatch`], the pass stops where it is (or never starts) and its results are
    /// dropped.
    fn scan_two<A: Recheck<T>, B: Recheck<T>>(
        &self,
        a: &[T],
        find_b: impl FnOnce() -> Result<Option<usize>, Mismatch> + Send,
        metric: Metric,
        make_a: impl Fn() -> A + Sync,
        make_b: impl Fn(usize) -> B + Sync,
    ) -> Result<(A, Option<(usize, B)>), Mismatch> {
        let Some(copy) = &self.compact else {
            let b = find_b()?.map(|p| (p, self.row(p)));
            let at = b.as_ref().map(|(p, _)| *p);
            let make_b = || make_b(at.expect("a visitor of the second reference"));
            let as_is = |a, b| (a, b);
            let complete = |reference| Complete { reference, metric };
            let cb = b.as_ref().map(|(_, row)| complete(row));
            let fused =
                self.pass(&complete(a), &|| cb.as_ref(), Shape::Fused, make_a, make_b, as_is);
            let (sel_a, sel_b) = fused.expect("a fused pass has no part that can abort");
            return Ok((sel_a, at.zip(sel_b)));
        };
        debug_assert_eq!(metric, Metric::Algebraic, "the compact copy scores algebraically");
        self.scanned.fetch_add(self.m, Ordering::Relaxed);
        let qa = copy.query(a);
        let band_a = make_a().bands(qa.margin());
        // Found (and quantized) by the first thread that needs it; at once, on this thread,
        // when the pass is not split by reference (a mismatch then costs no scan).
        let second = LazyLock::new(|| {
            find_b().map(|found| {
                found.map(|pos| {
                    let row = self.row(pos);
                    let query = copy.query(&row);
                    let band = make_b(pos).bands(query.margin());
                    Second { pos, row, query, band }
                })
            })
        });
        let by_records = self.m >= BY_RECORDS_MIN;
        if by_records || !self.exec.splits_parts(self.m) {
            LazyLock::force(&second).as_ref().map_err(|&mismatch| mismatch)?;
        }
        let found = || LazyLock::force(&second).as_ref().ok().and_then(Option::as_ref);
        let ids = self.ws.ids();
        let exact = |reference: &[T], pos: usize| Pick {
            score: copy.exact_score(ids[pos], reference),
            id: ids[pos],
            pos,
        };
        // Each thread re-checks its own candidates (its visitors of both parts, combined):
        // their bands hold every record of the exact selections among the records it saw
        // (the module doc of `mdav/compact/`, with those records for the data), and merging
        // the threads' exact selections gives the whole pass's.
        let recheck = |mut band_a: A::Bands, mut band_b: Option<B::Bands>| {
            // Every candidate's row is requested before any is scored: the rows are spread
            // over the whole copy, and the loads then overlap instead of queueing (1.6×
            // faster re-checks at 200 000 × 15 than row by row), and for every band at
            // once, the ids first: a pass's re-checks took 2.9–3.2 µs band by band and
            // 2.8 µs so (200 000 × 15, f32, one thread, builds run alternately).
            let mut candidates = Vec::new();
            A::settle(&mut band_a, &mut candidates);
            if let Some(band) = band_b.as_mut() {
                B::settle(band, &mut candidates);
            }
            self.rechecked.fetch_add(candidates.len(), Ordering::Relaxed);
            candidates.iter().for_each(|&pos| prefetch(&ids[pos]));
            candidates.iter().for_each(|&pos| copy.prefetch_row(ids[pos]));
            let mut buffers = RecheckBuffers::with_capacity(candidates.len());
            let mut sel_a = make_a();
            sel_a.recheck(band_a, &|pos| exact(a, pos), &mut buffers);
            let sel_b = band_b.map(|band| {
                let b = found().expect("a band of the second reference");
                let mut sel_b = make_b(b.pos);
                sel_b.recheck(band, &|pos| exact(&b.row, pos), &mut buffers);
                sel_b
            });
            (sel_a, sel_b)
        };
        let query_b = || found().map(|b| &b.query);
        let band_b = || found().expect("a visitor of the second reference").band.clone();
        let opening = || match LazyLock::force(&second) {
            Err(Mismatch) => Opening::Abort,
            Ok(Some(_)) => Opening::Records,
            Ok(None) => Opening::Empty,
        };
        let shape = if by_records { Shape::Fused } else { Shape::ByReference(&opening) };
        // Aborted when `find_b` reported a mismatch (found at once above when not split).
        let passed = self.pass(&qa, &query_b, shape, || band_a.clone(), band_b, recheck);
        let (sel_a, sel_b) = passed.ok_or(Mismatch)?;
        Ok((sel_a, found().map(|b| b.pos).zip(sel_b)))
    }

    /// Positions `0..m` scored by `score_a` (and by `score_b()`, if that gives a scorer)
    /// into fresh visitors, split among the threads where `exec` allows (`Exec::map_parts`);
    /// each thread's visitors (of both parts) are combined and turned into one result by
    /// `finish` on that thread, and the results are merged. The second selection's result
    /// is `None` without `score_b()`.
    ///
    /// [`Shape::ByReference`] gives the pass one part per reference, so a thread mostly
    /// scores one reference over all the records, and each selection warms up once per
    /// thread instead of once per chunk: for a compact copy that stays in the caches (a
    /// second read costs little). The second part opens as its `Opening` says (once
    /// `score_b()` has answered), which the thread that owns it asks first: the others start
    /// on the first part meanwhile. [`Shape::Fused`] scores every chunk against both
    /// references in one read of the data ([`TwoReferences`]: the compact copy's dot
    /// products of both from one load of the codes), the threads claiming from both ends
    /// of the records, or of regions of them on more than two threads (`claims.rs`). On
    /// one thread both references share one read.
    ///
    /// `None` when the second part opened as [`Opening::Abort`]: no visitor was finished.
    fn pass<'b, S, VA, VB, A, B>(
        &self,
        score_a: &S,
        score_b: &(impl Fn() -> Option<&'b S> + Sync),
        shape: Shape<'_>,
        make_a: impl Fn() -> VA + Sync,
        make_b: impl Fn() -> VB + Sync,
        finish: impl Fn(VA, Option<VB>) -> (A, Option<B>) + Sync,
    ) -> Option<(A, Option<B>)>
    where
        S: BlockScorer<T> + 'b,
        VA: ScoreVisitor<T>,
        VB: ScoreVisitor<T>,
        A: ScoreVisitor<T>,
        B: ScoreVisitor<T>,
    {
        self.progress.scanned(self.m * score_a.bytes_per_record(&self.ws));
        let by_reference = matches!(shape, Shape::ByReference(_));
        // A part's visitors: the first reference's, and the second's where this part scores
        // it (every part when fused, only part 1 when split).
        let start = |fused: bool, part: usize| {
            let b = if fused || part == 1 { score_b() } else { None };
            TwoRows(make_a(), b.map(|_| make_b()))
        };
        let end = |v: TwoRows<VA, Option<VB>>| finish(v.0, v.1);
        // Both references in one read of the data (the second visitor and scorer are there
        // together or not at all: both come from `score_b()`).
        let fused = |v: &mut TwoRows<VA, Option<VB>>, lo: usize, hi: usize| {
            kernels::scan_range(&self.ws, lo, hi, &TwoReferences { a: score_a, b: score_b() }, v)
        };
        // Part 1 (split only) scores the second reference; part 0 the first, and also the
        // second in one read when not split.
        let scan = |v: &mut TwoRows<VA, Option<VB>>, part: usize, lo: usize, hi: usize| match part {
            1 => {
                let b = score_b().expect("part 1 opens with a second reference");
                kernels::scan_range(&self.ws, lo, hi, b, &mut v.1)
            }
            _ if by_reference => kernels::scan_range(&self.ws, lo, hi, score_a, &mut v.0),
            _ => fused(v, lo, hi),
        };
        let merge = |x: (A, Option<B>), y: (A, Option<B>)| (x.0.merge(y.0), x.1.merge(y.1));
        let parts = if by_reference { 2 } else { 1 };
        let ready = || match shape {
            Shape::ByReference(opening) => opening(),
            Shape::Fused => Opening::Records,
        };
        let split = |part| start(!by_reference, part);
        let parts = Parts { count: parts, len: self.m, last_ready: ready };
        // A thread's visitors of both parts: one re-check of both references' candidates.
        let combine = ScoreVisitor::merge;
        match self.exec.map_parts(parts, split, scan, combine, end, merge) {
            PartsOutcome::Done(merged) => Some(merged),
            PartsOutcome::Aborted => None,
            PartsOutcome::NotSplit => {
                let mut both = start(true, 0);
                fused(&mut both, 0, self.m);
                Some(end(both))
            }
        }
    }

    /// Position of the unassigned record farthest from `reference` (ties to the lowest id).
    pub fn farthest_from(&self, reference: &[T], metric: Metric) -> usize {
        if let Some(index) = &self.index {
            let id = index.farthest(reference, metric).expect("no unassigned record");
            return self.ws.position_of(id);
        }
        let far: Farthest<T> = self.scan(reference, metric, Farthest::default);
        far.0.map(|p: Pick<T>| p.pos).expect("no unassigned record")
    }

    /// The unassigned record farthest from `c`, the centroid of the unassigned records, by
    /// the pruned search of `order` when given (same result) or a streaming scan. Two records
    /// are always equidistant from their centroid: that exact tie goes to the lower id
    /// (docs/architecture.md#the-cores-rules) instead of to rounding noise.
    pub fn farthest_from_centroid(
        &self,
        c: &[T],
        metric: Metric,
        order: Option<&mut NormOrder>,
    ) -> usize {
        if self.m == 2 {
            return (0..2).min_by_key(|&p| self.ws.ids()[p]).expect("two records");
        }
        match order {
            Some(order) if self.index.is_none() => self.farthest_by_norm_order(Some(order), c),
            _ => self.farthest_from(c, metric),
        }
    }

    /// The unassigned record farthest from `c` (the centroid of the unassigned records) if
    /// `order`'s pruned search proves it within its budget, else `None`: a cheap guess of
    /// the next round's seed.
    pub fn guess_farthest_from_centroid(&self, c: &[T], order: &mut NormOrder) -> Option<usize> {
        // Not while backing off: a guess may be left out, so it does not use up one of the
        // skipped searches. Without this, on data where the bound does not bite, every
        // round's guess spent its whole budget of visits: log-normal 100 000 × 9, k = 5, one
        // thread, 2.5 s against 1.6 s with `norm_pruning` off.
        if order.backing_off() {
            return None;
        }
        order.farthest(self.norm_query(self.m, c)).flatten().map(|p| p.pos)
    }

    /// Whether the record `seed` (an original id) is the one [`Self::farthest_from_centroid`]
    /// named when the records unassigned at `back` were left, `c` being their centroid
    /// then, by `order`'s pruned search (the same answer; `false` when it gives up). The
    /// records that left since sit at positions `len()..`, where passes do not read them.
    /// Exact MDAV checks this way, inside the next pass, the seed of a group it took on trust.
    pub fn was_farthest_from_centroid(
        &self,
        c: &[T],
        back: &Checkpoint,
        seed: u32,
        order: &mut NormOrder,
    ) -> bool {
        debug_assert!(self.index.is_none() && back.m >= 3 && back.m >= self.m);
        let found = order.farthest(self.norm_query(back.m, c));
        found.flatten().is_some_and(|p| p.id == seed)
    }

    /// The state [`Self::restore`] can go back to.
    pub fn checkpoint(&self) -> Checkpoint {
        Checkpoint { m: self.m, sum: self.sum.clone(), n_groups: self.n_groups }
    }

    /// Puts back, unassigned, every record that left since `back` was taken (removals leave
    /// them at positions `len()..back.m`, and only removals may have happened since), with
    /// the running sums bit for bit as they were and their group labels free again. Not with
    /// a spatial index, whose removals are not undone.
    pub fn restore(&mut self, back: Checkpoint) {
        debug_assert!(self.index.is_none() && back.m >= self.m);
        self.progress.take_back(back.m - self.m);
        self.m = back.m;
        self.sum = back.sum;
        self.n_groups = back.n_groups;
    }

    /// How many records a pruned search may visit before the streaming scan is cheaper: a
    /// visit gathers d values from d columns, hundreds of times the cost of a streamed
    /// record (1/512 of them), or reads one row of the compact copy's row-major values
    /// (1/64 of them).
    fn visit_budget(&self, m: usize) -> usize {
        m / if self.compact.is_some() { 64 } else { 512 } + 32
    }

    /// [`NormOrder`]'s question about the first `m` positions and the point `c`, within the
    /// visit budget, each record scored exactly from the compact copy's rows when there is
    /// one (same bits).
    fn norm_query<'s>(
        &'s self,
        m: usize,
        c: &'s [T],
    ) -> Query<'s, T, impl Fn(usize, u32) -> T + 's> {
        let score = move |p, id| match &self.compact {
            Some(copy) => copy.exact_score(id, c),
            None => self.ws.algebraic_score(p, c),
        };
        Query { ws: &self.ws, m, c, budget: self.visit_budget(m), score }
    }

    /// Like [`Self::farthest_from`] with F-MDAV's algebraic score, by the pruned search of
    /// [`NormOrder`] when given (same result); falls back to the streaming scan without one
    /// or past its visit budget (1/512 of the records, 1/64 with the compact copy).
    pub fn farthest_by_norm_order(&self, order: Option<&mut NormOrder>, reference: &[T]) -> usize {
        match order.and_then(|o| o.farthest(self.norm_query(self.m, reference))) {
            Some(found) => found.expect("no unassigned record").pos,
            None => self.farthest_from(reference, Metric::Algebraic),
        }
    }

    /// The record at position `p`, widened to f64.
    pub fn row_f64(&self, p: usize) -> Vec<f64> {
        self.row(p).into_iter().map(Float::as_f64).collect()
    }

    /// Current position of the record with original id `id`.
    #[inline]
    pub fn position_of(&self, id: u32) -> usize {
        self.ws.position_of(id)
    }

    /// Original id of the record at position `p`.
    #[inline]
    pub fn id(&self, p: usize) -> u32 {
        self.ws.ids()[p]
    }

    /// The positions of the `count` unassigned records nearest to the one at `seed` (ties to
    /// the lowest id), nearest first, never the seed nor `also_exclude`.
    pub fn nearest(&self, seed: usize, count: usize, also_exclude: Option<usize>) -> Vec<usize> {
        let reference = self.row(seed);
        let exclude = [seed, also_exclude.unwrap_or(seed)];
        let near: Nearest<T> = self.scan(&reference, Metric::Algebraic, || {
            Nearest::new(Selection::Partial, count, exclude)
        });
        near.into_positions()
    }

    /// Removes the records at `positions`, labelling them as group `label` (an existing one)
    /// or, with `None`, as a new group; returns the label used.
    pub fn remove_into(&mut self, positions: &[usize], label: Option<u32>) -> u32 {
        let label = label.unwrap_or_else(|| self.new_label());
        self.remove_group(positions, None, label);
        label
    }

    /// Forms a group of the record at `seed` and its `size − 1` nearest unassigned records
    /// (ties to the lowest id), labels it and removes it from the prefix.
    ///
    /// With `next_farthest`, the same pass also returns the position (after the removal)
    /// of the remaining record farthest from the seed (F-MDAV §3.2, distance reuse): the
    /// `size` farthest records of the pass are kept, and at most `size − 1` of them can join
    /// the group, so the first one left is exactly the farthest remaining record.
    pub fn take_group(
        &mut self,
        seed: usize,
        size: usize,
        metric: Metric,
        selection: Selection,
        next_farthest: bool,
    ) -> Option<usize> {
        let reference = self.row(seed);
        if let Some(index) = &self.index {
            let near = index.nearest(&reference, metric, size - 1, self.ws.ids()[seed]);
            let mut members: Vec<usize> = near.into_iter().map(|id| self.position_of(id)).collect();
            members.push(seed);
            let label = self.new_label();
            self.remove_group(&members, None, label);
            return (next_farthest && self.m > 0).then(|| self.farthest_from(&reference, metric));
        }
        let far_count = if next_farthest { size } else { 0 };
        let (near, far) = self.scan(&reference, metric, || {
            (Nearest::new(selection, size - 1, seed), Ranked::farthest(far_count, seed))
        });
        let mut members = near.into_positions();
        members.push(seed);
        let next = far.into_positions().into_iter().find(|p| !members.contains(p));
        let label = self.new_label();
        self.remove_group(&members, next, label)
    }

    /// Forms the group of the record at `seed` like [`Self::take_group`] (without the next
    /// farthest) and, in the same pass, prepares the next round's group around the record
    /// `find_next` names (if any, never `seed`) and the record farthest from it
    /// ([`Prepared`]): one read of the data for two references. Its lists are long enough to
    /// stay exact after this group leaves. `find_next` sees the records before this group
    /// leaves; on a team it runs on one thread while the others start on `seed`'s scores.
    /// When it reports a [`Mismatch`], the pass is dropped and no group is formed.
    pub fn take_group_preparing(
        &mut self,
        seed: usize,
        find_next: impl FnOnce(&Self) -> Result<Option<usize>, Mismatch> + Send,
        size: usize,
        metric: Metric,
        selection: Selection,
    ) -> Result<Option<Prepared>, Mismatch> {
        let reference = self.row(seed);
        // This group removes at most `size` records of `next`'s lists; its own group at most
        // `size − 1` more of the farthest list.
        let (near, ahead) = self.scan_two(
            &reference,
            || find_next(self).map(|next| next.filter(|&next| next != seed)),
            metric,
            || Nearest::new(selection, size - 1, seed),
            |next| (Nearest::new(selection, 2 * size - 1, next), Ranked::farthest(2 * size, next)),
        )?;
        let prepared = ahead.map(|(next, (near, far))| Prepared {
            seed: self.id(next),
            near: near.into_ids(),
            far: far.into_ids(),
        });
        let mut members = near.into_positions();
        members.push(seed);
        let label = self.new_label();
        self.remove_group(&members, None, label);
        Ok(prepared)
    }

    /// Forms a prepared group of `size` records (its seed must be unassigned) and returns
    /// the position of the remaining record farthest from the seed, as
    /// `take_group(seed, size, .., true)` would: the prepared lists are in key order, so the
    /// first entries still unassigned are exactly the nearest and the farthest.
    pub fn take_prepared(&mut self, prepared: &Prepared, size: usize) -> Option<usize> {
        // The lists' ids sit anywhere in the positions table: load them all at once.
        for &id in prepared.near.iter().chain(&prepared.far) {
            self.ws.prefetch_position(id);
        }
        let unassigned = |id: &u32| self.position_of(*id) < self.m;
        let mut members: Vec<usize> = prepared
            .near
            .iter()
            .filter(|id| unassigned(id))
            .take(size - 1)
            .map(|&id| self.position_of(id))
            .collect();
        members.push(self.position_of(prepared.seed));
        let next = prepared
            .far
            .iter()
            .filter(|id| unassigned(id))
            .map(|&id| self.position_of(id))
            .find(|p| !members.contains(p));
        let label = self.new_label();
        self.remove_group(&members, next, label)
    }

    /// Labels every unassigned record as one last group.
    pub fn take_rest(&mut self) {
        let all: Vec<usize> = (0..self.m).collect();
        let label = self.new_label();
        self.remove_group(&all, None, label);
    }

    fn new_label(&mut self) -> u32 {
        self.n_groups += 1;
        self.n_groups - 1
    }

    /// Asks the caches for everything [`Self::remove_group`] touches of the records at
    /// `positions` and of those at the tail of the prefix, which take their places: they are
    /// spread over the whole working set, and the loads then overlap instead of queueing one
    /// member after the other. What it writes is asked for writing: the threads of the last
    /// pass have read it (`prefetch::prefetch_for_write`). At 200 000 × 15 on two threads, a
    /// round's two removals took 2.7–3.0 µs with read prefetches and 2.0–2.2 µs so in this
    /// VM's spells when a transfer between its cores was slow, 0.85–1.15 µs either way in
    /// the others.
    fn prefetch_group(&self, positions: &[usize]) {
        let ids = self.ws.ids();
        let touched = || positions.iter().copied().chain(self.m - positions.len()..self.m);
        for p in touched() {
            self.ws.prefetch_keys(p);
            if let Some(copy) = &self.compact {
                copy.prefetch_codes(p);
            }
        }
        // The members come first in `touched`: their labels are written, their rows read.
        for (i, p) in touched().enumerate() {
            let id = ids[p];
            self.ws.prefetch_position_for_write(id);
            if i < positions.len() {
                prefetch_for_write(&self.labels[id as usize]);
                if let Some(copy) = &self.compact {
                    copy.prefetch_row(id);
                }
            }
        }
    }

    /// Labels the records at `positions` as group `label` and swaps them to the tail of the
    /// prefix, which then shrinks by their number. Returns where the record at `track` (not
    /// a member) is afterwards.
    fn remove_group(
        &mut self,
        positions: &[usize],
        mut track: Option<usize>,
        label: u32,
    ) -> Option<usize> {
        self.prefetch_group(positions);
        let g = positions.len();
        let tail = self.m - g;
        let mut in_tail = vec![false; g];
        let mut outside = Vec::with_capacity(g);
        for &p in positions {
            if p >= tail {
                in_tail[p - tail] = true;
            } else {
                outside.push(p);
            }
        }
        let holes = in_tail.iter().enumerate().filter(|(_, t)| !**t).map(|(i, _)| tail + i);
        for (p, h) in outside.into_iter().zip(holes) {
            match &mut self.compact {
                Some(copy) => {
                    self.ws.swap_keys(p, h);
                    copy.swap(p, h);
                }
                None => self.ws.swap(p, h),
            }
            if track == Some(h) {
                track = Some(p);
            }
        }
        for p in tail..self.m {
            self.labels[self.ws.ids()[p] as usize] = label;
            match &self.compact {
                Some(copy) => {
                    let row = copy.row(self.ws.ids()[p]);
                    self.sum.iter_mut().zip(row).for_each(|(s, v)| *s -= v.as_f64());
                }
                None => self.ws.subtract_row_from(p, &mut self.sum),
            }
            if let Some(index) = &mut self.index {
                index.remove(self.ws.ids()[p]);
            }
        }
        self.m = tail;
        self.progress.add(g);
        self.leave_compact_if_poor();
        track
    }

    /// The finished partition (all records must be assigned).
    pub fn into_partition(self) -> Partition {
        debug_assert_eq!(self.m, 0);
        Partition::new_unchecked(self.labels, self.n_groups as usize)
    }
}

/// How a pass over two references splits among threads ([`Remaining::pass`]).
#[derive(Clone, Copy)]
enum Shape<'o> {
    /// Every chunk scored against both references in one read of the data.
    Fused,
    /// One part per reference; the second part opens as the function says.
    ByReference(&'o (dyn Fn() -> Opening + Sync)),
}

/// The second reference of a pass over the compact copy, found while the first is scanned:
/// its position and values, its approximate scorer and the band its visitors clone.
struct Second<'c, T, Bands> {
    pos: usize,
    row: Vec<T>,
    query: CompactQuery<'c, T>,
    band: Bands,
}

/// The unit vector from `from` towards `to` (zero when they coincide).
fn unit_towards(from: &[f64], to: &[f64]) -> Vec<f64> {
    let d: Vec<f64> = to.iter().zip(from).map(|(t, f)| t - f).collect();
    let norm = d.iter().map(|v| v * v).sum::<f64>().sqrt();
    d.into_iter().map(|v| if norm > 0.0 { v / norm } else { 0.0 }).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dataset::Scaling;
    use ndarray::array;

    #[test]
    fn a_compact_copy_that_rechecks_too_much_is_left_exactly() {
        // Heavy-tailed columns (exp of 3 standard normals): the int8 steps are coarse where
        // most records lie, so the passes re-check many records and the copy is dropped;
        // Gaussian ones keep it. The groups are those of the exact scans either way.
        use crate::algorithms::test_shapes::shaped;
        let groups = |shape: u8, compact: bool| {
            let x = shaped(18_000, 9, 0, 3).mapv(|g| if shape == 1 { (3.0 * g).exp() } else { g });
            let ws = WorkingSet::<f64>::new(x.view(), &Scaling::fit(x.view(), true)).unwrap();
            let progress = Progress::new();
            let mut rest = Remaining::new(ws, Exec::SEQUENTIAL, &progress);
            if compact {
                rest.use_compact_copy();
            }
            let mut kept = Vec::new();
            while rest.len() >= 10 {
                let c = rest.centroid(true);
                let p = rest.farthest_from_centroid(&c, Metric::Algebraic, None);
                let q = rest.take_group(p, 5, Metric::Algebraic, Selection::Partial, true);
                let q = q.expect("records left");
                rest.take_group(q, 5, Metric::Algebraic, Selection::Partial, false);
                kept.push(rest.scans_compact_copy());
            }
            rest.take_rest();
            (rest.into_partition(), kept)
        };
        for (shape, dropped) in [(1, true), (0, false)] {
            let (exact, _) = groups(shape, false);
            let (with_copy, kept) = groups(shape, true);
            assert_eq!(with_copy, exact, "shape {shape}");
            assert!(kept[0], "shape {shape}: the copy is scanned at first");
            assert_eq!(kept.last() == Some(&false), dropped, "shape {shape}: {kept:?}");
        }
    }

    #[test]
    fn a_group_put_back_after_the_copy_is_dropped_reads_its_own_values() {
        // A group taken after a checkpoint may be put back (exact MDAV's prepared group,
        // when the next pass's check fails); if the compact copy was dropped in between,
        // that group's values must be in place too.
        use crate::algorithms::test_shapes::shaped;
        let x = shaped(3000, 9, 0, 3);
        let ws = WorkingSet::<f64>::new(x.view(), &Scaling::fit(x.view(), true)).unwrap();
        let progress = Progress::new();
        let mut rest = Remaining::new(ws, Exec::SEQUENTIAL, &progress);
        rest.use_compact_copy();
        let rows: Vec<(u32, Vec<f64>)> =
            (0..rest.len()).map(|q| (rest.id(q), rest.row_f64(q))).collect();
        for _ in 0..3 {
            let c = rest.centroid(true);
            let p = rest.farthest_from_centroid(&c, Metric::Algebraic, None);
            rest.take_group(p, 5, Metric::Algebraic, Selection::Partial, false);
        }
        let c = rest.centroid(true);
        let p = rest.farthest_from_centroid(&c, Metric::Algebraic, None);
        let back = rest.checkpoint();
        rest.take_group(p, 5, Metric::Algebraic, Selection::Partial, false);
        rest.leave_compact();
        rest.restore(back);
        assert!(!rest.scans_compact_copy());
        let unassigned = rows.iter().filter(|(id, _)| rest.position_of(*id) < rest.len());
        for (id, row) in unassigned {
            assert_eq!(&rest.row_f64(rest.position_of(*id)), row, "record {id}");
        }
    }

    #[test]
    fn pull_measured_on_a_group_predicts_the_centroid() {
        // 1-D: 0 1 2 | 10 11 12 | 20, centroid 8. The group {0, 1, 2} of seed 0 has mean 1:
        // 1 from its seed towards the centroid, and then the centroid is 53 / 4.
        let x = array![[0.0], [1.0], [2.0], [10.0], [11.0], [12.0], [20.0]];
        let ws = WorkingSet::<f64>::new(x.view(), &Scaling::fit(x.view(), false)).unwrap();
        let progress = Progress::new();
        let mut rest = Remaining::new(ws, Exec::SEQUENTIAL, &progress);
        // Not standardized: the working copy is only centered, which moves no distance.
        let (seed, center) = (rest.row_f64(0), rest.centroid_f64());
        let guessed =
            |rest: &Remaining<f64>, pull| rest.centroid_without(&seed, &center, 3, pull)[0];
        let (at_seed, pulled) = (guessed(&rest, 0.0), guessed(&rest, 1.0));
        let members: Vec<usize> = [0, 1, 2].map(|id| rest.position_of(id)).to_vec();
        rest.remove_into(&members, None);
        let pull = rest.pull_of_group(&seed, &center, 3);
        assert!((pull - 1.0).abs() < 1e-12, "{pull}");
        let actual = rest.centroid(true)[0];
        assert!((pulled - actual).abs() < 1e-12 && (at_seed - actual).abs() > 0.1);
    }
}
