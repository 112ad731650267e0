//! Counters a caller may poll from another thread while an algorithm runs (the CLI's
//! progress line): records assigned to groups, improvement rounds done (ONA, ONA*), and the
//! bytes the streaming passes of the MDAV family read (benchmarks: passes per round).
//! The hot loops only do a relaxed atomic add per group or per round; nothing calls back
//! into the caller.

use std::cell::Cell;
use std::sync::atomic::{AtomicUsize, Ordering};

/// Progress of one run: records assigned so far (n when the run ends) and improvement
/// rounds completed.
#[derive(Debug, Default)]
pub struct Progress {
    assigned: AtomicUsize,
    rounds: AtomicUsize,
    scanned: AtomicUsize,
}

impl Progress {
    /// Counters at zero.
    pub fn new() -> Self {
        Progress::default()
    }

    /// Records that `n` more records are assigned.
    #[inline]
    pub fn add(&self, n: usize) {
        self.assigned.fetch_add(n, Ordering::Relaxed);
    }

    /// Takes back `n` records counted by [`Self::add`] (a group put back).
    #[inline]
    pub fn take_back(&self, n: usize) {
        self.assigned.fetch_sub(n, Ordering::Relaxed);
    }

    /// Records that one more improvement round is done.
    #[inline]
    pub fn round_done(&self) {
        self.rounds.fetch_add(1, Ordering::Relaxed);
    }

    /// Records that a pass read `bytes` more bytes of working data: one read of the records
    /// it scores, even where threads split it by reference and read them once per
    /// reference (`Exec::map_parts`), so that passes per round mean the same on any
    /// number of threads.
    #[inline]
    pub fn scanned(&self, bytes: usize) {
        self.scanned.fetch_add(bytes, Ordering::Relaxed);
    }

    /// Bytes read by passes so far.
    pub fn bytes_scanned(&self) -> usize {
        self.scanned.load(Ordering::Relaxed)
    }

    /// Marks all `n` records assigned (the end of a run, whatever the method counted).
    pub fn finish(&self, n: usize) {
        self.assigned.store(n, Ordering::Relaxed);
    }

    /// Records assigned so far.
    pub fn get(&self) -> usize {
        self.assigned.load(Ordering::Relaxed)
    }

    /// Improvement rounds done so far.
    pub fn rounds(&self) -> usize {
        self.rounds.load(Ordering::Relaxed)
    }

    /// Back to zero (before a new run).
    pub fn reset(&self) {
        self.assigned.store(0, Ordering::Relaxed);
        self.rounds.store(0, Ordering::Relaxed);
        self.scanned.store(0, Ordering::Relaxed);
    }
}

/// One of `of` equal runs over the same records counted on a [`Progress`] (t-closeness's
/// `"auto"` builds three candidate partitions of every stratum): each record assigned counts
/// 1/`of`, so the counter still ends near n and moves through every run. One thread's.
#[derive(Debug)]
pub struct Share<'a> {
    progress: &'a Progress,
    of: usize,
    carried: Cell<usize>,
}

impl<'a> Share<'a> {
    /// Counts on `progress` the records of one of `of` runs (`of` ≥ 1).
    pub fn new(progress: &'a Progress, of: usize) -> Self {
        Share { progress, of: of.max(1), carried: Cell::new(0) }
    }

    /// Records that `n` more records of this run are assigned.
    pub fn add(&self, n: usize) {
        let c = self.carried.get() + n;
        self.progress.add(c / self.of);
        self.carried.set(c % self.of);
    }
}
