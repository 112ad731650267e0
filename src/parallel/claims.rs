//! Who scans what in a pass made of several parts (issue #15, goal 3): the chunks of each
//! part, claimed so that every thread keeps to one part for as long as it can and the
//! threads leave the pass together.
//!
//! A pass of exact MDAV often serves two references (the round's group and the next
//! round's prepared one, `algorithms/mdav.rs`). Its parts are "score every record against
//! reference r": the same records, different work. Thread (slot) `s` claims chunks from
//! part `s mod parts` (from its own region of it, below); when those are used up, it claims
//! from the back of the others. A thread's visitor for a part thus sees a long run of the
//! part's records, so each selection's warm-up (its threshold, its band of candidates and
//! their exact re-check) is paid about once per part and thread instead of once per chunk,
//! while the small chunks still keep the threads busy until the pass ends.
//!
//! Each part is split into regions of whole kernel blocks, one for every two of its
//! threads: the `i`-th thread of a part claims from the front of region `i / 2` for `i`
//! even and from its back for `i` odd, the two meeting wherever their speeds put them;
//! a thread whose region is used up claims from the back of the regions after it, round
//! all the parts (the rest of its own part first, except for the regions before its own,
//! which come last). A pass of one part (both references scored in one read,
//! `algorithms/remaining.rs`) on two threads thus has one region, one thread claiming from
//! its front and the other from its back; on 16 threads, eight regions. The slot is the
//! thread's index in its team (`parallel/mod.rs`), so each thread scans about the same records
//! pass after pass (half a region) and finds them in its own core's caches instead of
//! streaming the whole data from the shared cache (with every thread of a part on its two
//! ends, each would claim different records from pass to pass). Only two threads could be
//! measured, and on two threads the regions change nothing.
//!
//! A claim takes a quarter of what is left of its region ([`CHUNK`] at most,
//! [`CHUNK_MIN`] at least: guided self-scheduling), so the last claims of a pass are short
//! wherever the front and the back of a region meet, and the threads leave the pass within a
//! fraction of a µs of each other instead of up to one whole chunk apart (at 200 000 × 15,
//! f32, 2 threads: with fixed chunks of 4 096 records, 2.3 µs of scanning, the thread that
//! left a pass last did so 0.9 µs after the mean of the two at 20 000 to 100 000 records
//! left, and 1.0 µs below 20 000; with guided claims 0.08 and 0.13 µs). The first claims are
//! large (each claim costs an atomic and a visitor's restart), except while the last part
//! is closed: an abort can come then, and nobody should be deep in a long chunk.
//!
//! The last part starts closed, with no chunks, until [`Claims::open`]: the reference
//! it scores may still be being computed while the threads scan the other parts (exact MDAV
//! finds its next round's guessed seed meanwhile).

use crate::cache_line::CacheLine;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

/// Largest claim: about 10 µs of scanning. At 200 000 × 15 on 2 threads, passes ran 1–2%
/// faster than with claims of at most 4 096 records, and no faster with 32 768 or 65 536.
const CHUNK: usize = 16_384;

/// Smallest claim (except a region's last records), and the unit of every claim's size: a
/// multiple of 64, so that chunks start on kernel blocks.
const CHUNK_MIN: usize = 512;

/// Largest claim while the last part is still closed: about 1 µs of scanning, the time
/// the thread that opens it takes to find its reference or to find the whole pass
/// pointless ([`Opening::Abort`]). A thread that claimed a whole [`CHUNK`] before an abort
/// scanned it for nothing while the pass waited (at 200 000 × 15 on 2 threads, about 5%
/// of exact MDAV's passes abort).
const CHUNK_UNOPENED: usize = 2048;

/// The state of a part not opened yet: empty (front = back), and unlike any opened part's
/// (whose ends are at most its number of records, below 2³² − 1).
const CLOSED: u64 = u64::MAX;

/// What the late last part of a pass turns out to be ([`Claims::open`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Opening {
    /// The part scans the pass's records.
    Records,
    /// The part has no records.
    Empty,
    /// The whole pass is pointless (speculative work found wrong): no part hands out
    /// another chunk, and the pass's results are discarded.
    Abort,
}

/// A claim takes what is left of its region divided by this: a region has at most two
/// owners, one at each end, and each takes a quarter of what is left.
const SHARE: usize = 4;

/// The unclaimed records of every part of one pass, each part split into regions.
pub struct Claims {
    /// Per part, then per region of it, its unclaimed records `front..back` (front in the
    /// low 32 bits), each on its own line so that threads on different regions do not
    /// contend.
    ends: Vec<CacheLine<AtomicU64>>,
    /// Regions per part: ⌈threads / parts / 2⌉, so that each region has two owners (one
    /// with an odd number of threads in a part).
    regions: usize,
    /// Whether the pass was aborted ([`Opening::Abort`]).
    aborted: AtomicBool,
}

impl Claims {
    /// `len` records (`< 2³² − 1`) in each of `parts` parts, none claimed, for `threads`
    /// threads; the last part is closed until [`Self::open`].
    pub fn new(parts: usize, len: usize, threads: usize) -> Self {
        let regions = threads.div_ceil(parts.max(1)).div_ceil(2).max(1);
        let state = |i: usize| match i / regions + 1 == parts {
            true => CLOSED,
            false => region(len, regions, i % regions),
        };
        let ends = (0..parts * regions).map(|i| CacheLine(AtomicU64::new(state(i)))).collect();
        Claims { ends, regions, aborted: AtomicBool::new(false) }
    }

    /// Opens the last part as `opening` says (`len` records for [`Opening::Records`]), or
    /// empties every part for [`Opening::Abort`]; once opened, later calls change nothing
    /// but another abort.
    pub fn open(&self, opening: Opening, len: usize) {
        match opening {
            Opening::Records => self.open_last(len),
            Opening::Empty => self.open_last(0),
            Opening::Abort => {
                self.aborted.store(true, Ordering::Relaxed);
                // Front = back = 0: every claim from now on finds nothing (a claim racing
                // this store fails its exchange, reloads and finds nothing either).
                self.ends.iter().for_each(|e| e.store(0, Ordering::Relaxed));
            }
        }
    }

    /// Gives the last part `len` records (as many as the others, or none) if it is still
    /// closed; once opened, later calls change nothing.
    fn open_last(&self, len: usize) {
        for (r, ends) in self.last_part().iter().enumerate() {
            // Only the first call finds it closed; the others fail and leave it as it is.
            let opened = region(len, self.regions, r);
            let _ = ends.compare_exchange(CLOSED, opened, Ordering::Relaxed, Ordering::Relaxed);
        }
    }

    /// Whether [`Self::open`] was told to abort the pass (seen by every slot once its
    /// claims run out, since the abort also empties every part).
    pub fn aborted(&self) -> bool {
        self.aborted.load(Ordering::Relaxed)
    }

    /// The next chunk `(part, lo, hi)` for slot `slot`: from its own end of its own region
    /// (part `slot mod parts`; the `i`-th slot of a part, `i = slot / parts`, owns region
    /// `i / 2`, from the front for `i` even and from the back for odd), else from the back
    /// of the first region after its own, round all the parts, that has records left;
    /// `None` when all are claimed.
    pub fn next(&self, slot: usize) -> Option<(usize, usize, usize)> {
        let (n, parts) = (self.ends.len(), self.ends.len() / self.regions);
        let (part, i) = (slot % parts, slot / parts);
        let own = part * self.regions + (i / 2) % self.regions;
        let of = |e: usize| move |(lo, hi)| (e / self.regions, lo, hi);
        self.take(own, i.is_multiple_of(2))
            .map(of(own))
            .or_else(|| (1..n).map(|k| (own + k) % n).find_map(|e| self.take(e, false).map(of(e))))
    }

    /// The regions of the last part (which may open late).
    fn last_part(&self) -> &[CacheLine<AtomicU64>] {
        &self.ends[self.ends.len() - self.regions..]
    }

    /// Claims a chunk at the front (or back) of region `e` (an index into `ends`), if it
    /// has records left: 1/[`SHARE`] of them, a multiple of [`CHUNK_MIN`] between that and
    /// [`CHUNK`] ([`CHUNK_UNOPENED`] while the last part is closed), or all that is left.
    fn take(&self, e: usize, front: bool) -> Option<(usize, usize)> {
        let ends = &self.ends[e];
        let most = if self.last_part()[0].load(Ordering::Relaxed) == CLOSED {
            CHUNK_UNOPENED
        } else {
            CHUNK
        };
        let mut state = ends.load(Ordering::Relaxed);
        loop {
            let (lo, hi) = ((state & u64::from(u32::MAX)) as usize, (state >> 32) as usize);
            if lo >= hi {
                return None;
            }
            let size = ((hi - lo) / SHARE / CHUNK_MIN * CHUNK_MIN).clamp(CHUNK_MIN, most);
            // Fronts advance by whole claims from a block; backs are rounded down to one.
            let (lo2, hi2) = if front {
                ((lo + size).min(hi), hi)
            } else {
                (lo, (hi.saturating_sub(size) / 64 * 64).max(lo))
            };
            let next = (lo2 as u64) | ((hi2 as u64) << 32);
            match ends.compare_exchange_weak(state, next, Ordering::Relaxed, Ordering::Relaxed) {
                Ok(_) => return Some(if front { (lo, lo2) } else { (hi2, hi) }),
                Err(now) => state = now,
            }
        }
    }
}

/// Region `r` of `regions` of a part of `len` records, packed as unclaimed ends: the
/// boundaries fall on kernel blocks (multiples of 64), the last region ends at `len`.
fn region(len: usize, regions: usize, r: usize) -> u64 {
    let bound = |r: usize| if r == regions { len } else { r * len / regions / 64 * 64 };
    u64::from(records(bound(r))) | (u64::from(records(bound(r + 1))) << 32)
}

/// `len` as a part's end, below [`CLOSED`]'s halves.
fn records(len: usize) -> u32 {
    u32::try_from(len).ok().filter(|&l| l < u32::MAX).expect("fewer than 2^32 - 1 records")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_chunk_once_own_part_first() {
        let claims = Claims::new(2, 3 * CHUNK_MIN, 2);
        let help = claims.next(1);
        assert_eq!(help, Some((0, 1024, 1536)), "the last part is closed: slot 1 helps part 0");
        claims.open_last(3 * CHUNK_MIN);
        claims.open_last(3 * CHUNK_MIN);
        // Slot 1 keeps to part 1 from its front, then takes part 0 from its back.
        let order: Vec<_> = std::iter::from_fn(|| claims.next(1)).collect();
        let want = [(1, 0, 512), (1, 512, 1024), (1, 1024, 1536), (0, 512, 1024), (0, 0, 512)];
        assert_eq!(order, want);
        assert_eq!(claims.next(0), None);
        claims.open_last(3 * CHUNK_MIN);
        assert_eq!(claims.next(0), None, "an opened part is never opened again");
    }

    #[test]
    fn an_aborted_pass_hands_out_nothing_more() {
        let claims = Claims::new(2, 100_000, 2);
        assert!(claims.next(0).is_some(), "part 0 is open");
        assert!(!claims.aborted());
        claims.open(Opening::Abort, 100_000);
        assert!(claims.aborted());
        assert_eq!(claims.next(0), None);
        assert_eq!(claims.next(1), None);
        claims.open(Opening::Records, 100_000);
        assert_eq!(claims.next(1), None, "the last part stays closed after an abort");
    }

    #[test]
    fn a_last_part_opened_empty_has_no_chunks() {
        let claims = Claims::new(2, 2 * CHUNK_MIN, 2);
        claims.open_last(0);
        claims.open_last(2 * CHUNK_MIN);
        let order: Vec<_> = std::iter::from_fn(|| claims.next(1)).collect();
        assert_eq!(order, [(0, 512, 1024), (0, 0, 512)]);
    }

    #[test]
    fn one_part_is_claimed_from_both_ends_of_its_regions() {
        // A fused pass on three threads: two regions; slot 0 from the front of the first,
        // slot 1 from its back, slot 2 from the front of the second, whose back the others
        // take when theirs is used up. Together they claim every record once.
        let len = 100_003;
        let claims = Claims::new(1, len, 3);
        claims.open_last(len);
        let middle = len / 2 / 64 * 64;
        let first: Vec<_> = (0..3).map(|s| claims.next(s).expect("records left")).collect();
        assert_eq!(first[0].1, 0, "slot 0 starts at the front");
        assert_eq!(first[1].2, middle, "slot 1 starts at the back of the first region");
        assert_eq!(first[2].1, middle, "slot 2 starts at the front of the second region");
        let mut all = first;
        for s in (0..3).cycle() {
            match claims.next(s) {
                Some(c) => all.push(c),
                None => break,
            }
        }
        all.sort_unstable();
        assert!(all.windows(2).all(|w| w[0].2 == w[1].1), "no gap, no overlap: {all:?}");
        assert_eq!((all[0].1, all.last().expect("a chunk").2), (0, len));
    }

    #[test]
    fn two_threads_of_a_fused_pass_share_one_region() {
        // Slot 0 from the front, slot 1 from the back of all the records, as without regions.
        let len = 200_000;
        let claims = Claims::new(1, len, 2);
        claims.open_last(len);
        assert_eq!(claims.next(0), Some((0, 0, CHUNK)));
        let back = claims.next(1).expect("records left");
        assert_eq!((back.1 % 64, back.2), (0, len));
    }

    #[test]
    fn sixteen_threads_keep_to_their_regions_first() {
        // One part: eight regions of two threads each; two parts: four regions a part.
        for (parts, len) in [(1, 1_000_003), (2, 700_001)] {
            let claims = Claims::new(parts, len, 16);
            claims.open_last(len);
            let regions = 8 / parts;
            for slot in 0..16 {
                let (part, lo, hi) = claims.next(slot).expect("records left");
                let i = slot / parts;
                let r = i / 2;
                let (start, end) = (r * len / regions / 64 * 64, (r + 1) * len / regions / 64 * 64);
                let end = if r + 1 == regions { len } else { end };
                assert_eq!(part, slot % parts, "slot {slot}");
                if i % 2 == 0 {
                    assert_eq!(lo, start, "slot {slot} at the front of region {r}");
                } else {
                    assert_eq!(hi, end, "slot {slot} at the back of region {r}");
                }
            }
        }
    }

    #[test]
    fn claims_take_a_share_of_what_is_left_from_either_end() {
        // Two parts on two or three threads: one region a part.
        let cases = [(1, 0, 2), (100, 1, 2), (4097, 0, 2), (200_003, 0, 2), (200_003, 1, 3)];
        for (len, slot, threads) in cases {
            let claims = Claims::new(2, len, threads);
            claims.open_last(0);
            // Slot 0 claims part 0 from the front, slot 1 from the back.
            let chunks: Vec<_> = std::iter::from_fn(|| claims.next(slot)).collect();
            let mut left = len;
            for &(part, lo, hi) in &chunks {
                assert_eq!(part, 0);
                assert_eq!(lo % 64, 0, "chunks start on kernel blocks");
                let want = (left / SHARE / CHUNK_MIN * CHUNK_MIN).clamp(CHUNK_MIN, CHUNK);
                let (size, ragged) = (hi - lo, len % 64 != 0 && hi == len && slot == 1);
                // A back claim is rounded down to a block, a last claim takes what is left.
                assert!(size == want.min(left) || ragged || size == left, "{len}: {chunks:?}");
                left -= size;
            }
            assert_eq!(left, 0);
            let last = chunks.last().expect("a chunk");
            assert!(last.2 - last.1 <= CHUNK_MIN);
        }
    }

    #[test]
    fn claims_stay_short_until_the_last_part_opens() {
        // An abort may come at any time before the last part opens: nobody should be
        // scanning a long chunk then.
        let claims = Claims::new(2, 200_000, 2);
        let before: Vec<_> = (0..3).map(|_| claims.next(0).expect("records left")).collect();
        assert!(before.iter().all(|c| c.2 - c.1 == CHUNK_UNOPENED), "{before:?}");
        claims.open_last(200_000);
        let after = claims.next(0).expect("records left");
        assert_eq!((after.1, after.2 - after.1), (3 * CHUNK_UNOPENED, CHUNK));
    }

    #[test]
    fn concurrent_claims_cover_every_record_once() {
        for (parts, len, threads) in [(3, 100_003, 4), (1, 100_003, 16), (2, 1000, 16)] {
            let claims = Claims::new(parts, len, threads);
            claims.open_last(len);
            let mut seen: Vec<(usize, usize, usize)> = std::thread::scope(|s| {
                let workers: Vec<_> = (0..threads)
                    .map(|slot| {
                        let claims = &claims;
                        let mine = move || claims.next(slot);
                        s.spawn(move || std::iter::from_fn(mine).collect::<Vec<_>>())
                    })
                    .collect();
                workers.into_iter().flat_map(|w| w.join().unwrap()).collect()
            });
            seen.sort_unstable();
            for p in 0..parts {
                let ranges: Vec<_> = seen.iter().filter(|c| c.0 == p).map(|c| (c.1, c.2)).collect();
                assert_eq!(ranges.first().map(|r| r.0), Some(0));
                assert_eq!(ranges.last().map(|r| r.1), Some(len));
                assert!(ranges.windows(2).all(|w| w[0].1 == w[1].0), "part {p} is tiled");
            }
        }
    }
}
