//! Thread control: the sequential "fair" mode the papers measure, or a local rayon pool.
//!
//! Kernels split a pass into one chunk per thread and combine the chunk results with exact,
//! order-independent reductions (argmax with ties to the lowest id, top-k on a total key
//! order), so every thread count gives the same partition. One chunk per thread (rather
//! than many small ones) keeps the per-chunk warm-up of top-k thresholds to a minimum.
//! Below [`PARALLEL_MIN`] records a pass stays on the calling thread: spawning costs more
//! than it saves there. Algorithms that make thousands of short passes (exact MDAV) run
//! them on a [`team`] of threads kept awake between passes
//! ([`Exec::with_team`]) instead of a rayon fork-join per pass, and split a pass that
//! serves two references by reference first ([`Exec::map_parts`], `claims.rs`); on a team
//! such a pass costs one atomic store, so it is split from [`TEAM_MIN`] records.

pub(crate) mod claims;
pub(crate) mod team;

use crate::error::{Error, Result};
use claims::{Claims, Opening};
use rayon::prelude::*;
use std::num::NonZeroUsize;

/// Passes over fewer records than this run sequentially.
pub const PARALLEL_MIN: usize = 1 << 14;

/// Passes split by reference ([`Exec::map_parts`]) on a team stay on the calling thread
/// below this many records (elsewhere below [`PARALLEL_MIN`]). At 200 000 × 15 (exact MDAV,
/// f32, 2 threads) the passes below 16 384 records took 0.013 s instead of 0.019 s.
pub const TEAM_MIN: usize = 1 << 12;

/// The fewest threads `n_jobs` is capped at, whatever the cores: a few threads more than a
/// small machine's cores cost little, and let tests of the thread split run the uneven
/// counts (3, 4) they ask for on two cores.
pub const MIN_THREAD_CAP: i64 = 8;

/// How many threads a call may use (`n_jobs` in the Python API).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Parallelism {
    /// One thread, no pool: the fair mode for comparisons with the papers.
    #[default]
    Sequential,
    /// A rayon pool of this many threads, built for the call and dropped after it.
    Threads(NonZeroUsize),
}

impl Parallelism {
    /// scikit-learn's `n_jobs` convention: 1 = sequential, n > 1 = n threads, -1 = all cores,
    /// -2 = all but one, and so on. 0 and values below -(cores) are errors. A count above
    /// the cores available is capped at them, or at `MIN_THREAD_CAP` on a machine with
    /// fewer cores: more threads cannot help, results are the same on every thread count,
    /// and `n_jobs=100000` must not start 100 000 threads.
    pub fn from_n_jobs(n_jobs: i64) -> Result<Self> {
        let cores = std::thread::available_parallelism().map_or(1, |c| c.get()) as i64;
        let cap = cores.max(MIN_THREAD_CAP);
        let threads = if n_jobs < 0 { cores + 1 + n_jobs } else { n_jobs.min(cap) };
        if n_jobs == 0 || threads < 1 {
            return Err(Error::InvalidParameter {
                name: "n_jobs".into(),
                reason: format!(
                    "must be a positive thread count or a negative count from the number of \
                     cores (-1 = all {cores}), got {n_jobs}"
                ),
            });
        }
        Ok(match NonZeroUsize::new(threads as usize) {
            Some(t) if t.get() > 1 => Parallelism::Threads(t),
            _ => Parallelism::Sequential,
        })
    }

    /// Runs `f` on this many threads and hands it the matching [`Exec`].
    pub fn install<R: Send>(self, f: impl FnOnce(Exec) -> R + Send) -> Result<R> {
        match self {
            Parallelism::Sequential => Ok(f(Exec::SEQUENTIAL)),
            Parallelism::Threads(t) => {
                let pool =
                    rayon::ThreadPoolBuilder::new().num_threads(t.get()).build().map_err(|e| {
                        Error::InvalidParameter {
                            name: "n_jobs".into(),
                            reason: format!("cannot start {t} threads: {e}"),
                        }
                    })?;
                Ok(pool.install(|| f(Exec { threads: t.get() })))
            }
        }
    }
}

/// `a` and `b` merged by `merge` when both are there, else whichever is (partial results
/// of a split pass: a slot or a chunk may have seen nothing).
pub fn merge_options<R>(a: Option<R>, b: Option<R>, merge: impl FnOnce(R, R) -> R) -> Option<R> {
    match (a, b) {
        (Some(a), Some(b)) => Some(merge(a, b)),
        (a, b) => a.or(b),
    }
}

/// The shape of a pass for [`Exec::map_parts`]: `count` parts over the same `len` records,
/// the last of which opens as `last_ready()` says.
pub struct Parts<F> {
    /// How many parts (one per reference the pass serves).
    pub count: usize,
    /// Records in each part.
    pub len: usize,
    /// What the last part turns out to be, once known (see [`Exec::map_parts`]).
    pub last_ready: F,
}

/// How a pass given to [`Exec::map_parts`] ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PartsOutcome<R> {
    /// Not split among threads: the caller makes one fused pass itself.
    NotSplit,
    /// Its last part opened as [`Opening::Abort`]: no visitor was finished.
    Aborted,
    /// The slots' results, merged.
    Done(R),
}

/// What a kernel may use while it runs: the current rayon pool, or only this thread.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Exec {
    threads: usize,
}

impl Exec {
    /// The sequential context (for tests and single-threaded callers).
    pub const SEQUENTIAL: Exec = Exec { threads: 1 };

    /// True when work may be spread over a pool (recursive algorithms use `rayon::join`).
    pub fn is_parallel(self) -> bool {
        self.threads > 1
    }

    /// Threads of the pool (1 when sequential).
    pub fn threads(self) -> usize {
        self.threads
    }

    fn splits(self, len: usize) -> bool {
        self.threads > 1 && len >= PARALLEL_MIN
    }

    /// Whether [`Self::map_parts`] splits a pass over `len` records among threads (on this
    /// thread's team from `TEAM_MIN` records, elsewhere from `PARALLEL_MIN`); when it
    /// does not, the caller makes one fused pass on this thread.
    pub fn splits_parts(self, len: usize) -> bool {
        let min = if team::has_current(self.threads) { TEAM_MIN } else { PARALLEL_MIN };
        self.threads > 1 && len >= min
    }

    /// `f(i)` for every `i < len`, collected in order: on the pool when parallel, else on
    /// this thread. The one "maybe parallel" branch of the set-up loops (per attribute, per
    /// chunk of groups), whose results must not depend on the thread count.
    pub fn map_indices<R, C>(self, len: usize, f: impl Fn(usize) -> R + Sync + Send) -> C
    where
        R: Send,
        C: FromIterator<R> + FromParallelIterator<R>,
    {
        if self.is_parallel() {
            (0..len).into_par_iter().map(f).collect()
        } else {
            (0..len).map(f).collect()
        }
    }

    /// `map(i, chunk)` for the `i`-th chunk of `size` elements of `data` (the last may be
    /// shorter), reduced by `reduce` from `identity()`: on the pool when parallel, else on
    /// this thread in chunk order. `reduce` must be associative and `identity()` neutral
    /// for it, so that every thread count gives the same result.
    pub fn map_reduce_chunks_mut<E: Send, R: Send>(
        self,
        data: &mut [E],
        size: usize,
        map: impl Fn(usize, &mut [E]) -> R + Sync + Send,
        identity: impl Fn() -> R + Sync + Send,
        reduce: impl Fn(R, R) -> R + Sync + Send,
    ) -> R {
        let map = |(i, chunk): (usize, &mut [E])| map(i, chunk);
        if self.is_parallel() {
            data.par_chunks_mut(size).enumerate().map(map).reduce(identity, reduce)
        } else {
            data.chunks_mut(size).enumerate().map(map).fold(identity(), reduce)
        }
    }

    /// `f(i, chunk)` for the `i`-th chunk of `size` elements of `data` (the last may be
    /// shorter), on the pool when parallel.
    pub fn for_each_chunk_mut<E: Send>(
        self,
        data: &mut [E],
        size: usize,
        f: impl Fn(usize, &mut [E]) + Sync + Send,
    ) {
        self.map_reduce_chunks_mut(data, size, f, || (), |(), ()| ());
    }

    /// Sorts `v` by `cmp` (unstable): with rayon's parallel sort when parallel.
    pub fn sort_unstable_by<E: Send>(
        self,
        v: &mut [E],
        cmp: impl Fn(&E, &E) -> std::cmp::Ordering + Sync,
    ) {
        if self.is_parallel() {
            v.par_sort_unstable_by(cmp);
        } else {
            v.sort_unstable_by(cmp);
        }
    }

    /// Runs `f` with a `team` of this many threads for the passes it makes
    /// on this thread, when passes over `len` records would be split at all; plain `f()`
    /// otherwise. For loops of many short passes: one synchronisation per pass instead of
    /// a rayon fork-join.
    pub fn with_team<R>(self, len: usize, f: impl FnOnce() -> R) -> R {
        if self.splits(len) { team::with_team(self.threads, f) } else { f() }
    }

    /// Applies `f(lo, hi)` to chunks of `0..len` and reduces the results (`None` if empty),
    /// on this thread's team if it has one ([`Self::with_team`]), else on the rayon pool.
    pub fn map_range<R: Send>(
        self,
        len: usize,
        f: impl Fn(usize, usize) -> R + Sync,
        reduce: impl Fn(R, R) -> R + Sync + Send,
    ) -> Option<R> {
        if len == 0 {
            None
        } else if self.splits(len) {
            // Chunks start at multiples of 64 records: block-aligned for the kernels.
            let chunk = len.div_ceil(self.threads).next_multiple_of(64);
            let chunks = len.div_ceil(chunk);
            let part = |c: usize| f(c * chunk, ((c + 1) * chunk).min(len));
            team::map_on_current(self.threads, chunks, &part, &reduce)
                .unwrap_or_else(|| (0..chunks).into_par_iter().map(part).reduce_with(reduce))
        } else {
            Some(f(0, len))
        }
    }

    /// A pass made of `parts.count` parts over the same `parts.len` records (one per
    /// reference it serves), split among this thread's team (or the rayon pool) by
    /// `Claims`: each slot keeps one visitor per part it touches, from `start(part)`, fed
    /// chunk by chunk by `scan(visitor, part, lo, hi)`; a slot's visitors are then joined by
    /// `combine` and turned into one result by `finish` on the slot's thread, and the
    /// results are reduced (so they must not depend on the split). One finish per slot, not
    /// per part: a slot that helped with another part at the end of a pass pays one finish
    /// (for exact MDAV, one exact re-check whose row loads all overlap) instead of two.
    /// `PartsOutcome::NotSplit` when the pass is not split at all: the caller then makes
    /// one fused pass, which reads the data once for every part.
    ///
    /// The last part may start late: its chunks are claimed only after `parts.last_ready()`
    /// has said what it is (`Opening`: the `len` records, none, or an abort of the whole
    /// pass, after which no slot claims another chunk or finishes a visitor, and the pass
    /// is `PartsOutcome::Aborted`).
    /// The first slot whose own part is the last calls it first, while the others start on
    /// their parts (or help with the first ones while the last is closed), and a slot that
    /// runs out of work calls it too; every call must give the same answer (waiting for the
    /// first where that one does work, as a `LazyLock` does).
    pub fn map_parts<V, R: Send>(
        self,
        parts: Parts<impl Fn() -> Opening + Sync>,
        start: impl Fn(usize) -> V + Sync,
        scan: impl Fn(&mut V, usize, usize, usize) + Sync,
        combine: impl Fn(V, V) -> V + Sync,
        finish: impl Fn(V) -> R + Sync,
        reduce: impl Fn(R, R) -> R + Sync + Send,
    ) -> PartsOutcome<R> {
        let Parts { count: parts, len, last_ready } = parts;
        if parts == 0 || !self.splits_parts(len) {
            return PartsOutcome::NotSplit;
        }
        let claims = Claims::new(parts, len, self.threads);
        let open_last = || claims.open(last_ready(), len);
        let slot = |s: usize| {
            // Claims follow the thread, not the slot: the team's threads claim slots in any
            // order, and a thread that claims the same records pass after pass finds them in
            // its own caches (`claims.rs`).
            let claimant = team::member().unwrap_or(s);
            let mut visitors: Vec<Option<V>> = (0..parts).map(|_| None).collect();
            // One slot answers for the last part; the others that own it help elsewhere
            // until it opens instead of waiting for the answer (with many threads).
            let mut opened = s == parts - 1;
            if opened {
                open_last();
            }
            loop {
                while let Some((part, lo, hi)) = claims.next(claimant) {
                    let v = visitors[part].get_or_insert_with(|| start(part));
                    scan(v, part, lo, hi);
                }
                if opened {
                    break;
                }
                open_last();
                opened = true;
            }
            // An aborted pass's visitors are dropped unfinished: finishing them (the
            // re-check of bands still warming up) would cost µs for nothing.
            if claims.aborted() {
                return None;
            }
            visitors.into_iter().flatten().reduce(&combine).map(&finish)
        };
        // A slot that starts late may find every chunk claimed: it has no result.
        let either = |a: Option<R>, b: Option<R>| merge_options(a, b, &reduce);
        let merged = team::map_on_current(self.threads, self.threads, &slot, &either)
            .unwrap_or_else(|| (0..self.threads).into_par_iter().map(slot).reduce_with(either))
            .flatten();
        match merged {
            _ if claims.aborted() => PartsOutcome::Aborted,
            Some(merged) => PartsOutcome::Done(merged),
            // No slot saw a record: a single part that opened empty (with two or more, the
            // first is open from the start with its `len` ≥ 1 records).
            None => PartsOutcome::Done(finish(start(0))),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicUsize, Ordering};

    #[test]
    fn n_jobs_convention() {
        assert_eq!(Parallelism::from_n_jobs(1).unwrap(), Parallelism::Sequential);
        assert_eq!(
            Parallelism::from_n_jobs(3).unwrap(),
            Parallelism::Threads(NonZeroUsize::new(3).unwrap())
        );
        assert!(Parallelism::from_n_jobs(0).is_err());
        assert!(Parallelism::from_n_jobs(-100_000).is_err());
        assert!(Parallelism::from_n_jobs(-1).is_ok());
        // Capped: a huge count starts no more threads than the cores (or 8, if more).
        let cores = std::thread::available_parallelism().unwrap().get() as i64;
        let cap = Parallelism::from_n_jobs(cores.max(MIN_THREAD_CAP)).unwrap();
        assert_eq!(Parallelism::from_n_jobs(i64::MAX).unwrap(), cap);
        assert_eq!(Parallelism::from_n_jobs(1 << 32).unwrap(), cap);
        let threads = NonZeroUsize::new(cores.max(MIN_THREAD_CAP) as usize).unwrap();
        assert_eq!(Parallelism::from_n_jobs(100_000).unwrap(), Parallelism::Threads(threads));
    }

    #[test]
    fn maybe_parallel_helpers_give_the_sequential_results() {
        let seq = Exec::SEQUENTIAL;
        let pool = Parallelism::from_n_jobs(3).unwrap();
        let squares = |e: Exec| e.map_indices::<u64, Vec<u64>>(1000, |i| (i * i) as u64);
        let want: Vec<u64> = (0..1000).map(|i| i * i).collect();
        assert_eq!(squares(seq), want);
        assert_eq!(pool.install(squares).unwrap(), want);
        // Chunk indices and contents reach `map` in pairs; the reduction keeps the order.
        let tagged = |e: Exec| {
            let mut data: Vec<u32> = (0..1003).collect();
            let map = |i: usize, c: &mut [u32]| {
                c.iter_mut().for_each(|v| *v += 1);
                vec![(i, c.len(), c[0])]
            };
            let cat = |mut a: Vec<_>, b: Vec<_>| {
                a.extend(b);
                a
            };
            let chunks = e.map_reduce_chunks_mut(&mut data, 100, map, Vec::new, cat);
            e.for_each_chunk_mut(&mut data, 7, |i, c| c.iter_mut().for_each(|v| *v += i as u32));
            (chunks, data)
        };
        let (chunks, data) = tagged(seq);
        assert_eq!(chunks.len(), 11);
        assert!(chunks.iter().enumerate().all(|(k, &(i, len, first))| {
            i == k && len == if k == 10 { 3 } else { 100 } && first == 100 * k as u32 + 1
        }));
        assert!(data.iter().enumerate().all(|(j, &v)| v == j as u32 + 1 + (j / 7) as u32));
        assert_eq!(pool.install(tagged).unwrap(), (chunks, data));
        let sorted = |e: Exec| {
            let mut v: Vec<u64> =
                (0..5000u64).map(|i| i.wrapping_mul(2_654_435_761) % 9973).collect();
            e.sort_unstable_by(&mut v, |a, b| b.cmp(a));
            v
        };
        let want = sorted(seq);
        assert!(want.windows(2).all(|w| w[0] >= w[1]));
        assert_eq!(pool.install(sorted).unwrap(), want);
    }

    #[test]
    fn chunked_reduction_matches_sequential() {
        let v: Vec<u64> = (0..200_000).collect();
        let sum = |lo: usize, hi: usize| v[lo..hi].iter().sum::<u64>();
        let seq = Exec::SEQUENTIAL.map_range(v.len(), sum, |a, b| a + b);
        let par = Parallelism::from_n_jobs(2)
            .unwrap()
            .install(|e| e.map_range(v.len(), sum, |a, b| a + b))
            .unwrap();
        assert_eq!(seq, par);
        let many = Parallelism::from_n_jobs(1000).unwrap();
        assert_eq!(many.install(|e| e.map_range(v.len(), sum, |a, b| a + b)).unwrap(), seq);
    }

    #[test]
    fn parts_see_every_record_once_per_part() {
        // Per part: (sum of the records seen, how many, visitors started); a visitor starts
        // on one part, and a slot's visitors are combined into one finish. Every record of
        // every part is seen exactly once, whatever thread claims it, on a team or on rayon.
        type PerPart = [(u64, u64, u64); 3];
        let len = 100_003;
        let start = |p: usize| {
            let mut v: PerPart = [(0, 0, 0); 3];
            v[p].2 = 1;
            v
        };
        let scan = |v: &mut PerPart, part: usize, lo: usize, hi: usize| {
            let started: u64 = v.iter().map(|e| e.2).sum();
            assert_eq!(started, 1, "combined only after the scans");
            assert_eq!(v[part].2, 1, "a visitor only sees its own part");
            v[part].0 += (lo as u64..hi as u64).sum::<u64>();
            v[part].1 += (hi - lo) as u64;
        };
        let add = |a: PerPart, b: PerPart| -> PerPart {
            std::array::from_fn(|p| (a[p].0 + b[p].0, a[p].1 + b[p].1, a[p].2 + b[p].2))
        };
        let whole = (len as u64 * (len as u64 - 1) / 2, len as u64);
        for threads in [2, 3, 5] {
            let finished = AtomicUsize::new(0);
            let finish = |v: PerPart| {
                finished.fetch_add(1, Ordering::Relaxed);
                v
            };
            let run = |e: Exec| {
                let parts = Parts { count: 3, len, last_ready: || Opening::Records };
                match e.map_parts(parts, start, scan, add, finish, add) {
                    PartsOutcome::Done(per_part) => per_part,
                    other => panic!("a split pass that ends: {other:?}"),
                }
            };
            let pool = Parallelism::from_n_jobs(threads).unwrap();
            for on_team in [false, true] {
                finished.store(0, Ordering::Relaxed);
                let per_part = if on_team {
                    pool.install(|e| e.with_team(len, || run(e))).unwrap()
                } else {
                    pool.install(run).unwrap()
                };
                for (sum, count, visitors) in per_part {
                    assert_eq!((sum, count), whole);
                    assert!((1..=threads as u64).contains(&visitors), "one visitor per thread");
                }
                let finishes = finished.load(Ordering::Relaxed);
                assert!(
                    (1..=threads as usize).contains(&finishes),
                    "one finish per slot: {finishes}"
                );
            }
        }
        let parts = Parts { count: 2, len, last_ready: || Opening::Records };
        let one_thread = Exec::SEQUENTIAL.map_parts(parts, start, scan, add, |v| v, add);
        assert_eq!(one_thread, PartsOutcome::NotSplit);
    }

    #[test]
    fn a_late_last_part_opens_once_with_or_without_records() {
        // Records seen per part, and how often `last_ready` was asked and did its work.
        let len = 50_000;
        let add = |a: [u64; 2], b: [u64; 2]| [a[0] + b[0], a[1] + b[1]];
        let cases = [
            (Opening::Records, 2),
            (Opening::Empty, 2),
            (Opening::Records, 3),
            (Opening::Empty, 5),
            (Opening::Abort, 2),
            (Opening::Abort, 3),
        ];
        for (opening, threads) in cases {
            let (asked, worked) = (AtomicUsize::new(0), AtomicUsize::new(0));
            let finished = AtomicUsize::new(0);
            let finish = |v: [u64; 2]| {
                finished.fetch_add(1, Ordering::Relaxed);
                v
            };
            let answer = std::sync::LazyLock::new(|| {
                std::thread::sleep(std::time::Duration::from_millis(2));
                worked.fetch_add(1, Ordering::Relaxed);
                opening
            });
            let ready = || {
                asked.fetch_add(1, Ordering::Relaxed);
                *answer
            };
            let pool = Parallelism::from_n_jobs(threads as i64).unwrap();
            // Before an abort, chunks take long enough for the answer (2 ms) to come mid-pass.
            let scan = |v: &mut [u64; 2], part: usize, lo: usize, hi: usize| {
                if opening == Opening::Abort {
                    std::thread::sleep(std::time::Duration::from_micros(500));
                }
                v[part] += (hi - lo) as u64;
            };
            let run = |e: Exec| {
                let parts = Parts { count: 2, len, last_ready: &ready };
                e.map_parts(parts, |_| [0, 0], scan, add, finish, add)
            };
            let on_team = pool.install(|e| e.with_team(len, || run(e))).unwrap();
            let seen = format!("{opening:?}, {threads} threads: {on_team:?}");
            let want = match opening {
                // The last part never opens, and no visitor is finished.
                Opening::Abort => PartsOutcome::Aborted,
                Opening::Records => PartsOutcome::Done([len as u64, len as u64]),
                Opening::Empty => PartsOutcome::Done([len as u64, 0]),
            };
            assert_eq!(on_team, want, "{seen}");
            let finishes = finished.load(Ordering::Relaxed);
            if opening == Opening::Abort {
                assert_eq!(finishes, 0, "{seen}: a visitor finished");
            } else {
                assert!(finishes >= 1, "{seen}");
            }
            assert_eq!(worked.load(Ordering::Relaxed), 1);
            assert!(
                (1..=threads).contains(&asked.load(Ordering::Relaxed)),
                "once per slot at most"
            );
        }
    }

    #[test]
    fn a_single_late_part_that_opens_empty_gives_an_empty_result() {
        let pool = Parallelism::from_n_jobs(2).unwrap();
        let len = PARALLEL_MIN;
        let outcome = pool.install(|e| {
            e.with_team(len, || {
                let parts = Parts { count: 1, len, last_ready: || Opening::Empty };
                e.map_parts(
                    parts,
                    |_| 0usize,
                    |v, _, lo, hi| *v += hi - lo,
                    |a, b| a + b,
                    |v| v + 1,
                    |a, b| a + b,
                )
            })
        });
        // One fresh visitor that saw nothing, finished once.
        assert_eq!(outcome.unwrap(), PartsOutcome::Done(1));
    }

    #[test]
    fn passes_split_from_team_min_on_a_team_only() {
        // NotSplit: the caller makes one fused pass; Done: the pass was split among threads.
        let split = |e: Exec, len: usize| {
            e.map_parts(
                Parts { count: 2, len, last_ready: || Opening::Records },
                |_| 0usize,
                |v, _, lo, hi| *v += hi - lo,
                |a, b| a + b,
                |v| v,
                |a, b| a + b,
            )
        };
        let pool = Parallelism::from_n_jobs(2).unwrap();
        let (small, mid) = (TEAM_MIN - 1, TEAM_MIN + 1);
        let off_team = pool.install(|e| (split(e, small), split(e, mid))).unwrap();
        let not_split = (PartsOutcome::NotSplit, PartsOutcome::NotSplit);
        assert_eq!(off_team, not_split, "below PARALLEL_MIN without a team");
        let on_team =
            pool.install(|e| e.with_team(PARALLEL_MIN, || (split(e, small), split(e, mid))));
        let want = (PartsOutcome::NotSplit, PartsOutcome::Done(2 * mid));
        assert_eq!(on_team.unwrap(), want, "from TEAM_MIN on a team");
    }
}
