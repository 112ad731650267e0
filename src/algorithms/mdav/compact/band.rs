//! The candidates of an approximate pass and their exact re-check: a [`Band`] keeps every
//! record whose approximate score could still place it in the exact selection, and a
//! [`Recheck`] re-scores those with the exact kernel.

use crate::cache_line::CacheLine;
use crate::float::{Float, from_order_bits, order_bits};
use crate::kernels::{Exclude, Farthest, Nearest, Offer, Pick, Ranked, ScoreVisitor};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

/// The candidates of one selection in an approximate pass: every record whose signed
/// approximate score is at most the `count`-th smallest plus the margin 2B (sign +1 for
/// the nearest, −1 for the farthest), never the excluded positions.
///
/// The visitors of a pass (one per thread and reference, `claims.rs`) clone one band and
/// share its limit: a visitor's limit (its own `count`-th best + 2B) also bounds every record
/// of the whole pass's exact selection, whose exact scores are at most the `count`-th best
/// of any subset's, so each visitor keeps only the records within the tightest limit found
/// so far by any of them, and together they re-check about as many candidates as one
/// thread would.
#[derive(Debug, Clone)]
pub struct Band<T> {
    count: usize,
    sign: T,
    margin: f64,
    exclude: Exclude,
    /// (signed approximate score, position) packed as `order_bits(score) << 64 | position`:
    /// quickselect and the filter by the limit then compare integers (the narrowing of the
    /// prepared lists' two bands took 0.8 µs a round at 200 000 × 15, f32, 2 threads, when
    /// it compared floats with `partial_cmp`).
    keys: Vec<u128>,
    limit: Option<T>,
    /// The tightest limit found by the visitors of this band in this pass (f64 bits, +∞
    /// before the first), on its own line: the visitors of the pass's other bands, on
    /// other threads, read and lower theirs at the same time, and a shared line would
    /// travel between the cores at every candidate.
    shared: Arc<CacheLine<AtomicU64>>,
    /// Size of `keys` that triggers the next narrowing.
    cap: usize,
}

impl<T: Float> Band<T> {
    /// Candidates for the `count` best of `sign`·score within `margin`.
    pub fn new(count: usize, farthest: bool, margin: f64, exclude: Exclude) -> Self {
        let sign = if farthest { -T::one() } else { T::one() };
        Band {
            count,
            sign,
            margin,
            exclude,
            keys: Vec::new(),
            limit: None,
            shared: Arc::new(CacheLine(AtomicU64::new(f64::INFINITY.to_bits()))),
            cap: 2 * count + 64,
        }
    }

    /// Takes the shared limit when it is tighter than this chunk's own.
    fn adopt_shared(&mut self) {
        let shared = T::from_f64_lossy(f64::from_bits(self.shared.load(Ordering::Relaxed)));
        if shared < self.limit.unwrap_or(T::infinity()) {
            self.limit = Some(shared);
        }
    }

    /// Recomputes the limit from the `count`-th best key (or the shared one, if tighter),
    /// publishes it, and drops the keys above it.
    fn narrow(&mut self) {
        if self.count > 0 && self.keys.len() >= self.count {
            // Only the score bits decide the limit: comparing them alone, not the whole
            // u128 key, took the narrowings from 4.4% to 3.7% of a one-thread run (perf,
            // 200 000 × 15 f32).
            let score = |k: &u128| (k >> 64) as u64;
            let nth = from_order_bits(score(
                self.keys.select_nth_unstable_by_key(self.count - 1, score).1,
            ));
            // Rounded up, so that the limit in T is never below nth + margin.
            let limit = nth + self.margin;
            let limit = T::from_f64_lossy(limit + limit.abs() * 4.0 * T::epsilon().as_f64());
            fetch_min_f64(&self.shared, limit.as_f64());
            self.limit = Some(limit);
        }
        self.adopt_shared();
        if let Some(limit) = self.limit {
            let limit = order_bits(limit.as_f64());
            self.keys.retain(|&k| (k >> 64) as u64 <= limit);
        }
        self.cap = (2 * self.keys.len()).max(2 * self.count + 64);
    }

    /// Narrows the band to its candidates for the re-check (every visit done) and
    /// appends their positions to `to`.
    pub fn settle(&mut self, to: &mut Vec<usize>) {
        self.narrow();
        to.extend(self.positions());
    }

    /// The candidate positions, in no particular order: the band's keys as they are, so
    /// after [`Self::settle`] its candidates for the re-check.
    pub fn positions(&self) -> impl Iterator<Item = usize> + '_ {
        self.keys.iter().map(|&k| k as u32 as usize)
    }
}

/// Lowers the f64 kept as bits in `a` to `v` if `v` is smaller (an atomic minimum).
fn fetch_min_f64(a: &AtomicU64, v: f64) {
    let mut current = a.load(Ordering::Relaxed);
    while v < f64::from_bits(current) {
        match a.compare_exchange_weak(current, v.to_bits(), Ordering::Relaxed, Ordering::Relaxed) {
            Ok(_) => return,
            Err(now) => current = now,
        }
    }
}

impl<T: Float> ScoreVisitor<T> for Band<T> {
    #[inline(always)]
    fn visit(&mut self, scores: &[T], _: &[u32], offset: usize) {
        if self.count == 0 {
            return;
        }
        // Blocks have at most 64 scores: one bit each for those within the limit.
        debug_assert!(scores.len() <= 64);
        let (sign, limit) = (self.sign, self.limit.unwrap_or(T::infinity()));
        // Almost every block has no score within the limit: one vectorized test rejects it.
        // An "or" of the comparisons, not the block's extreme compared to the limit: the
        // extreme folds its lanes one after the other (16 dependent min instructions a
        // block), the comparisons are independent. Scans of 100 000 × 15 f32 took 2–14%
        // less time this way with one band, 13–14% with two (the Xeon VM of
        // docs/performance.md#machines).
        if !scores.iter().fold(false, |hit, &v| hit | (sign * v <= limit)) {
            return;
        }
        let mut within = 0u64;
        for (i, &v) in scores.iter().enumerate() {
            within |= u64::from(sign * v <= limit) << i;
        }
        if within != 0 {
            self.take(scores, offset, within);
        }
    }

    fn merge(mut self, other: Self) -> Self {
        self.keys.extend(other.keys);
        self.narrow();
        self
    }
}

impl<T: Float> Band<T> {
    #[inline(never)]
    fn take(&mut self, scores: &[T], offset: usize, mut within: u64) {
        self.adopt_shared();
        let limit = self.limit.unwrap_or(T::infinity());
        if self.keys.capacity() == 0 {
            // Clones of a pass's band start empty: one allocation for the first keys.
            self.keys.reserve(self.cap);
        }
        while within != 0 {
            let i = within.trailing_zeros() as usize;
            within &= within - 1;
            let key = self.sign * scores[i];
            if key <= limit && !self.exclude.contains(offset + i) {
                self.keys.push((u128::from(order_bits(key.as_f64())) << 64) | (offset + i) as u128);
            }
        }
        if self.keys.len() >= self.cap {
            self.narrow();
        }
    }
}

/// A selection that an approximate pass can stand in for: it names the [`Band`]s of its
/// candidates and takes their exact re-check.
pub trait Recheck<T: Float>: ScoreVisitor<T> + Sync {
    /// The candidates' visitor of an approximate pass.
    type Bands: ScoreVisitor<T> + Clone + Sync;
    /// Bands for this selection with the margin of the pass.
    fn bands(&self, margin: f64) -> Self::Bands;
    /// Narrows every band of `bands` to its candidates once its visits are done and appends
    /// their positions to `to`: the caller then asks the caches for the rows of every band
    /// at once, before any is re-checked.
    fn settle(bands: &mut Self::Bands, to: &mut Vec<usize>);
    /// Offers every candidate of `bands` (settled) with its exact score, `exact(position)`,
    /// in `buffers`.
    fn recheck(
        &mut self,
        bands: Self::Bands,
        exact: &impl Fn(usize) -> Pick<T>,
        buffers: &mut RecheckBuffers<T>,
    );
}

/// The buffers of one re-check, reused for each of its bands: the candidates' exact picks
/// and their packed keys ([`Offer::offer_all`]), so that a re-check allocates them once
/// instead of three times per band.
#[derive(Debug)]
pub struct RecheckBuffers<T> {
    picks: Vec<Pick<T>>,
    keys: Vec<u128>,
}

impl<T> RecheckBuffers<T> {
    /// Buffers for `candidates` candidates in all.
    pub fn with_capacity(candidates: usize) -> Self {
        RecheckBuffers {
            picks: Vec::with_capacity(candidates),
            keys: Vec::with_capacity(candidates),
        }
    }
}

/// One selection: its band, re-checked into it.
macro_rules! single_selection {
    ($($visitor:ident),*) => {$(
        impl<T: Float> Recheck<T> for $visitor<T> {
            type Bands = Band<T>;

            fn bands(&self, margin: f64) -> Band<T> {
                let (count, farthest, exclude) = self.wants();
                Band::new(count, farthest, margin, exclude)
            }

            fn settle(bands: &mut Band<T>, to: &mut Vec<usize>) {
                bands.settle(to);
            }

            fn recheck(
                &mut self,
                bands: Band<T>,
                exact: &impl Fn(usize) -> Pick<T>,
                buffers: &mut RecheckBuffers<T>,
            ) {
                buffers.picks.clear();
                buffers.picks.extend(bands.positions().map(exact));
                self.offer_all(&buffers.picks, &mut buffers.keys);
            }
        }
    )*};
}
single_selection!(Farthest, Ranked, Nearest);

/// No selection (the unused second reference of a pass).
impl<T: Float> Recheck<T> for () {
    type Bands = ();

    fn bands(&self, _: f64) {}

    fn settle(_: &mut (), _: &mut Vec<usize>) {}

    fn recheck(&mut self, _: (), _: &impl Fn(usize) -> Pick<T>, _: &mut RecheckBuffers<T>) {}
}

/// Two selections of one pass (F-MDAV §3.2: P's group and the next seed Q).
impl<T: Float, A: Recheck<T>, B: Recheck<T>> Recheck<T> for (A, B) {
    type Bands = (A::Bands, B::Bands);

    fn bands(&self, margin: f64) -> Self::Bands {
        (self.0.bands(margin), self.1.bands(margin))
    }

    fn settle(bands: &mut Self::Bands, to: &mut Vec<usize>) {
        A::settle(&mut bands.0, to);
        B::settle(&mut bands.1, to);
    }

    fn recheck(
        &mut self,
        bands: Self::Bands,
        exact: &impl Fn(usize) -> Pick<T>,
        buffers: &mut RecheckBuffers<T>,
    ) {
        self.0.recheck(bands.0, exact, buffers);
        self.1.recheck(bands.1, exact, buffers);
    }
}
