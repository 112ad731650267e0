//! Who scans what in a pass made of several parts (issue #15, goal 3): the chunks of each
//! part, claimed so that every thread keeps to one part for as long as it can.
//!
//! A pass of exact MDAV often serves two references (the round's group and the next
//! round's prepared one, `algorithms/mdav.rs`). Its parts are "score every record against
//! reference r": the same records, different work. Thread (slot) `s` claims chunks from the
//! front of part `s mod parts`; when that part has none left, it claims from the back of
//! the other parts. A thread's visitor for a part thus sees a long run of the part's
//! records, so each selection's warm-up (its threshold, its band of candidates and their
//! exact re-check) is paid about once per part and thread instead of once per chunk, while
//! the small chunks still keep the threads busy until the pass ends. With more threads than
//! parts, the threads of one part share its front; the design does not depend on two.
//!
//! The last part starts closed, with no chunks, until [`Claims::open_last`]: the reference
//! it scores may still be being computed while the threads scan the other parts (exact MDAV
//! finds its next round's guessed seed meanwhile).

use std::sync::atomic::{AtomicU64, Ordering};

/// Records per chunk: a few µs of scanning, so the threads finish a pass within about that
/// of each other. A multiple of 64, so chunks start on kernel blocks.
pub const CHUNK: usize = 4096;

/// The unclaimed chunks `front..back` of one part (front in the low 32 bits), alone on its
/// cache line so that threads on different parts do not contend.
#[repr(align(128))]
struct Ends(AtomicU64);

/// The state of a part not opened yet: empty (front = back), and unlike any opened part's
/// (whose ends are at most its number of chunks, below 2³² − 1).
const CLOSED: u64 = u64::MAX;

/// The unclaimed chunks of every part of one pass.
pub struct Claims {
    parts: Vec<Ends>,
}

impl Claims {
    /// `chunks` chunks (`< 2³² − 1`) in each of `parts` parts, none claimed; the last part
    /// is closed until [`Self::open_last`].
    pub fn new(parts: usize, chunks: usize) -> Self {
        let chunks = u32::try_from(chunks).ok().filter(|&c| c < u32::MAX);
        let open = u64::from(chunks.expect("fewer than 2^32 - 1 chunks")) << 32;
        let state = |p: usize| if p + 1 == parts { CLOSED } else { open };
        Claims { parts: (0..parts).map(|p| Ends(AtomicU64::new(state(p)))).collect() }
    }

    /// Gives the last part `chunks` chunks (as many as the others, or none) if it is still
    /// closed; once opened, later calls change nothing.
    pub fn open_last(&self, chunks: usize) {
        let last = &self.parts.last().expect("a part").0;
        let opened = u64::from(u32::try_from(chunks).expect("fewer than 2^32 chunks")) << 32;
        // Only the first call finds it closed; the others fail and leave it as it is.
        let _ = last.compare_exchange(CLOSED, opened, Ordering::Relaxed, Ordering::Relaxed);
    }

    /// The next (part, chunk) for slot `slot`: from the front of its own part, else from the
    /// back of the next part that has one left; `None` when every chunk is claimed.
    pub fn next(&self, slot: usize) -> Option<(usize, usize)> {
        let n = self.parts.len();
        let own = slot % n;
        self.take(own, true).map(|c| (own, c)).or_else(|| {
            (1..n).map(|i| (own + i) % n).find_map(|p| self.take(p, false).map(|c| (p, c)))
        })
    }

    /// Claims the front (or back) chunk of `part`, if it has one left.
    fn take(&self, part: usize, front: bool) -> Option<usize> {
        let ends = &self.parts[part].0;
        let mut state = ends.load(Ordering::Relaxed);
        loop {
            let (lo, hi) = (state & u64::from(u32::MAX), state >> 32);
            if lo >= hi {
                return None;
            }
            let (next, chunk) = if front { (state + 1, lo) } else { (state - (1 << 32), hi - 1) };
            match ends.compare_exchange_weak(state, next, Ordering::Relaxed, Ordering::Relaxed) {
                Ok(_) => return Some(chunk as usize),
                Err(now) => state = now,
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_chunk_once_own_part_first() {
        let claims = Claims::new(2, 3);
        assert_eq!(claims.next(1), Some((0, 2)), "the last part is closed: slot 1 helps part 0");
        claims.open_last(3);
        claims.open_last(3);
        // Slot 1 keeps to part 1 from its front, then takes part 0 from its back.
        let order: Vec<_> = std::iter::from_fn(|| claims.next(1)).collect();
        assert_eq!(order, [(1, 0), (1, 1), (1, 2), (0, 1), (0, 0)]);
        assert_eq!(claims.next(0), None);
        claims.open_last(3);
        assert_eq!(claims.next(0), None, "an opened part is never opened again");
    }

    #[test]
    fn a_last_part_opened_empty_has_no_chunks() {
        let claims = Claims::new(2, 2);
        claims.open_last(0);
        claims.open_last(2);
        let order: Vec<_> = std::iter::from_fn(|| claims.next(1)).collect();
        assert_eq!(order, [(0, 1), (0, 0)]);
    }

    #[test]
    fn concurrent_claims_cover_every_chunk_once() {
        let (parts, chunks) = (3, 1000);
        let claims = Claims::new(parts, chunks);
        claims.open_last(chunks);
        let mut seen: Vec<(usize, usize)> = std::thread::scope(|s| {
            let workers: Vec<_> = (0..4)
                .map(|slot| {
                    let claims = &claims;
                    s.spawn(move || std::iter::from_fn(|| claims.next(slot)).collect::<Vec<_>>())
                })
                .collect();
            workers.into_iter().flat_map(|w| w.join().unwrap()).collect()
        });
        seen.sort_unstable();
        let all: Vec<_> = (0..parts).flat_map(|p| (0..chunks).map(move |c| (p, c))).collect();
        assert_eq!(seen, all);
    }
}
