//! A counter of assigned records that a caller may poll from another thread while an
//! algorithm runs (the CLI's progress line). The hot loops only do a relaxed atomic add per
//! group; nothing calls back into the caller.

use std::sync::atomic::{AtomicUsize, Ordering};

/// Number of records assigned to groups so far.
#[derive(Debug, Default)]
pub struct Progress(AtomicUsize);

impl Progress {
    /// A counter at zero.
    pub fn new() -> Self {
        Progress(AtomicUsize::new(0))
    }

    /// Records that `n` more records are assigned.
    #[inline]
    pub fn add(&self, n: usize) {
        self.0.fetch_add(n, Ordering::Relaxed);
    }

    /// Records assigned so far.
    pub fn get(&self) -> usize {
        self.0.load(Ordering::Relaxed)
    }

    /// Back to zero (before a new run).
    pub fn reset(&self) {
        self.0.store(0, Ordering::Relaxed);
    }
}
