//! A team of threads kept awake between the many short passes of exact MDAV (issue #15,
//! goal 3).
//!
//! Exact MDAV makes one or two passes per round over the unassigned records, and a round
//! at 200 000 × 15 takes about 100 µs. Handing each pass to rayon costs a fork-join, and
//! rayon's idle workers go to sleep between passes: waking them costs tens of µs on a VM,
//! a fifth of the round. A [`Team`] instead keeps `threads − 1` helper threads spinning
//! for [`SPIN`] after each pass, so a pass starts with one atomic store and ends with one
//! counter: a synchronisation per pass of well under a µs. Helpers that stay idle longer
//! park on a condition variable and cost nothing.
//!
//! Every thread of the team, the caller included, claims chunks of a pass from one atomic
//! word (the pass's epoch and the next chunk) until none is left: a helper that the OS has
//! not scheduled claims nothing, and the others run its chunk instead of waiting for it (on
//! a busy machine a fixed chunk per thread would make every pass wait for the slowest
//! thread's time slice).
//!
//! A team is registered for the calling thread only, for the duration of
//! [`with_team`]; `Exec::map_range` uses it when the caller's thread count matches and
//! falls back to rayon elsewhere (nested jobs on other threads, other pools).

use crate::cache_line::CacheLine;
use std::any::Any;
use std::cell::Cell;
use std::panic::{AssertUnwindSafe, catch_unwind, resume_unwind};
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Condvar, Mutex, MutexGuard, PoisonError};
use std::thread::LocalKey;
use std::time::{Duration, Instant};

/// How long a helper spins for the next pass before it parks.
const SPIN: Duration = Duration::from_micros(500);

/// Spins of the caller waiting for the helpers' chunks before it starts yielding its core.
const WAIT_SPINS: u32 = 1 << 12;

type Payload = Box<dyn Any + Send>;

/// One pass as the threads see it: run chunk `c`.
type Job<'a> = dyn Fn(usize) + Sync + 'a;

/// A published job, its number of chunks and its pass's epoch. The pointer's lifetime is erased:
/// [`Team::run`] does not return or unwind before every claimed chunk has finished (see
/// its SAFETY comment).
#[derive(Clone, Copy)]
struct Published {
    job: *const Job<'static>,
    chunks: usize,
    epoch: u64,
}

// SAFETY: the pointee is `Sync` and outlives every use (Team::run waits for all chunks).
unsafe impl Send for Published {}

/// The shared state of a team of `size` threads (the caller and `size − 1` helpers); the
/// words that threads write during a pass each on their own [`CacheLine`]: a helper spins
/// reading the pass's state and the stop flag while the caller writes the job and the
/// finished count.
pub struct Team {
    size: usize,
    /// The current pass's epoch (high 32 bits) and its next unclaimed chunk (low 32 bits).
    state: CacheLine<AtomicU64>,
    /// Chunks of the current pass that finished.
    finished: CacheLine<AtomicUsize>,
    stop: CacheLine<AtomicBool>,
    /// Helpers parked (or about to park) on `wake`.
    sleepers: AtomicUsize,
    job: CacheLine<Mutex<Option<Published>>>,
    /// The first panic of a helper's chunk, re-raised on the caller.
    panic: Mutex<Option<Payload>>,
    park: Mutex<()>,
    wake: Condvar,
}

/// Locks a mutex whose data stays valid even if a holder panicked (panics are caught
/// around the jobs, never while a lock is held).
fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

fn epoch_of(state: u64) -> u64 {
    state >> 32
}

thread_local! {
    /// This thread's index in the team it belongs to (0 the caller of [`with_team`], 1..
    /// the helpers), while it does.
    static MEMBER: Cell<Option<usize>> = const { Cell::new(None) };
    /// The team of this thread, while [`with_team`] runs.
    static CURRENT: Cell<Option<*const Team>> = const { Cell::new(None) };
}

/// Runs `f` with a team of `threads` threads (this one included) registered for this
/// thread; the helpers are started first and stopped and joined when `f` returns or
/// unwinds.
pub fn with_team<R>(threads: usize, f: impl FnOnce() -> R) -> R {
    let team = Team::new(threads);
    std::thread::scope(|s| {
        for i in 1..threads {
            let team = &team;
            s.spawn(move || {
                MEMBER.with(|m| m.set(Some(i)));
                team.work()
            });
        }
        // Dropped in reverse order, also when `f` unwinds: the registration first, then
        // the helpers are told to stop (the scope joins them).
        let _stop = StopOnDrop(&team);
        let _current = register(Some(&team));
        let _member = Scoped::set(&MEMBER, Some(0));
        f()
    })
}

/// The team of `threads` threads registered for this thread's passes, if there is one.
fn current(threads: usize) -> Option<&'static Team> {
    let team = CURRENT.with(Cell::get)?;
    // SAFETY: CURRENT holds a team only while `with_team` runs on this thread, and that
    // call owns the team for longer than any call made from inside it (the reference does
    // not leave this module's functions, which all return before `with_team` does).
    let team = unsafe { &*team };
    (team.size == threads).then_some(team)
}

/// This thread's index in its team (0 the caller of [`with_team`], 1.. its helpers), also
/// during a pass: the same thread has the same index pass after pass, so a pass can give
/// each thread the same records every time and they stay in that core's caches
/// (`claims.rs`). `None` outside a team.
pub fn member() -> Option<usize> {
    MEMBER.with(Cell::get)
}

/// Whether this thread has a team of `threads` threads registered for its passes.
pub fn has_current(threads: usize) -> bool {
    current(threads).is_some()
}

/// Applies `part` to chunks `0..chunks` on the team of this thread if it has `threads`
/// threads, and reduces the results in chunk order; `None` when there is no such team.
pub fn map_on_current<R: Send>(
    threads: usize,
    chunks: usize,
    part: &(impl Fn(usize) -> R + Sync),
    reduce: &impl Fn(R, R) -> R,
) -> Option<Option<R>> {
    let team = current(threads)?;
    // A pass is not re-entrant: anything its chunks run on this thread (work that rayon
    // steals, say) finds no team and uses rayon.
    let _unregistered = register(None);
    Some(team.map(chunks, part, reduce))
}

impl Team {
    fn new(size: usize) -> Self {
        Team {
            size,
            state: CacheLine(AtomicU64::new(0)),
            finished: CacheLine(AtomicUsize::new(0)),
            stop: CacheLine(AtomicBool::new(false)),
            sleepers: AtomicUsize::new(0),
            job: CacheLine(Mutex::new(None)),
            panic: Mutex::new(None),
            park: Mutex::new(()),
            wake: Condvar::new(),
        }
    }

    fn map<R: Send>(
        &self,
        chunks: usize,
        part: &(impl Fn(usize) -> R + Sync),
        reduce: &impl Fn(R, R) -> R,
    ) -> Option<R> {
        let slots: Vec<CacheLine<Mutex<Option<R>>>> =
            (0..chunks).map(|_| CacheLine(Mutex::new(None))).collect();
        self.run(chunks, &|c| {
            let r = part(c);
            *lock(&slots[c]) = Some(r);
        });
        slots
            .into_iter()
            .filter_map(|s| s.0.into_inner().unwrap_or_else(PoisonError::into_inner))
            .reduce(reduce)
    }

    /// Runs `job(c)` for every chunk `c < chunks` on whichever threads of the team claim
    /// them (this one included) and returns when all have finished, re-raising the first
    /// panic.
    fn run(&self, chunks: usize, job: &Job<'_>) {
        // SAFETY: a helper uses the erased pointer only for a chunk it claimed, between the
        // claim and its `finished` increment; this function returns or unwinds only after
        // `finished` has counted all `chunks` of this pass (its own chunks run under
        // catch_unwind), and no chunk can be claimed after that (the claims stop at
        // `chunks`, and later passes have other epochs). The published job stays behind,
        // dangling, until the next pass replaces it: nothing dereferences it without a claim.
        let job_static = unsafe { std::mem::transmute::<&Job<'_>, &'static Job<'static>>(job) };
        let epoch = epoch_of(self.state.load(Ordering::Relaxed)) + 1;
        *lock(&self.job) = Some(Published { job: job_static, chunks, epoch });
        // Every chunk of the earlier passes has finished: the count only grows, and this
        // pass is done when it has grown by `chunks` (no reset for the helpers to see).
        let done = self.finished.load(Ordering::Relaxed) + chunks;
        self.state.store(epoch << 32, Ordering::SeqCst);
        if self.sleepers.load(Ordering::SeqCst) > 0 {
            let _g = lock(&self.park);
            self.wake.notify_all();
        }
        let mut first_panic = None;
        while let Some(c) = self.claim(epoch, chunks) {
            if let Err(p) = catch_unwind(AssertUnwindSafe(|| job(c))) {
                first_panic.get_or_insert(p);
            }
            self.finished.fetch_add(1, Ordering::Release);
        }
        let mut spins = 0u32;
        while self.finished.load(Ordering::Acquire) < done {
            if spins < WAIT_SPINS {
                spins += 1;
                std::hint::spin_loop();
            } else {
                std::thread::yield_now();
            }
        }
        if let Some(p) = first_panic.or_else(|| lock(&self.panic).take()) {
            resume_unwind(p);
        }
    }

    /// Claims the next chunk of the pass `epoch`, if that pass is still current and has one.
    fn claim(&self, epoch: u64, chunks: usize) -> Option<usize> {
        let mut state = self.state.load(Ordering::Acquire);
        loop {
            let next = (state & u64::from(u32::MAX)) as usize;
            if epoch_of(state) != epoch || next >= chunks {
                return None;
            }
            match self.state.compare_exchange_weak(
                state,
                state + 1,
                Ordering::AcqRel,
                Ordering::Acquire,
            ) {
                Ok(_) => return Some(next),
                Err(now) => state = now,
            }
        }
    }

    /// A helper's loop: wait for each pass, claim and run its chunks while any are left.
    fn work(&self) {
        let mut seen = 0;
        while let Some(epoch) = self.next_epoch(seen) {
            seen = epoch;
            // A helper late for its pass may find the next pass's job (published just before
            // its epoch): it then waits for the next epoch. Or it finds its own pass's,
            // finished by the others: its claims then fail.
            let Some(published) = *lock(&self.job) else { continue };
            if published.epoch != epoch {
                continue;
            }
            while let Some(c) = self.claim(epoch, published.chunks) {
                // SAFETY: see `run`: the job outlives every chunk claimed in its epoch.
                let job = unsafe { &*published.job };
                if let Err(p) = catch_unwind(AssertUnwindSafe(|| job(c))) {
                    lock(&self.panic).get_or_insert(p);
                }
                self.finished.fetch_add(1, Ordering::Release);
            }
        }
    }

    /// The epoch after `seen` (spinning for [`SPIN`], then parked), or `None` on stop.
    fn next_epoch(&self, seen: u64) -> Option<u64> {
        let start = Instant::now();
        let mut spins = 0u32;
        loop {
            if self.stop.load(Ordering::Acquire) {
                return None;
            }
            let epoch = epoch_of(self.state.load(Ordering::Acquire));
            if epoch != seen {
                return Some(epoch);
            }
            std::hint::spin_loop();
            spins = spins.wrapping_add(1);
            if spins.is_multiple_of(256) && start.elapsed() > SPIN {
                break;
            }
        }
        let mut guard = lock(&self.park);
        self.sleepers.fetch_add(1, Ordering::SeqCst);
        let next = loop {
            if self.stop.load(Ordering::SeqCst) {
                break None;
            }
            let epoch = epoch_of(self.state.load(Ordering::SeqCst));
            if epoch != seen {
                break Some(epoch);
            }
            guard = self.wake.wait(guard).unwrap_or_else(PoisonError::into_inner);
        };
        self.sleepers.fetch_sub(1, Ordering::SeqCst);
        next
    }
}

/// Tells the helpers to stop when dropped.
struct StopOnDrop<'a>(&'a Team);

impl Drop for StopOnDrop<'_> {
    fn drop(&mut self) {
        self.0.stop.store(true, Ordering::SeqCst);
        let _g = lock(&self.0.park);
        self.0.wake.notify_all();
    }
}

/// Sets a thread-local cell of this thread (its team, or its index in one), restoring the
/// previous value when dropped, also when the code in between unwinds.
struct Scoped<T: Copy + 'static> {
    cell: &'static LocalKey<Cell<T>>,
    previous: T,
}

impl<T: Copy + 'static> Scoped<T> {
    fn set(cell: &'static LocalKey<Cell<T>>, value: T) -> Self {
        Scoped { cell, previous: cell.with(|c| c.replace(value)) }
    }
}

impl<T: Copy + 'static> Drop for Scoped<T> {
    fn drop(&mut self) {
        self.cell.with(|c| c.set(self.previous));
    }
}

/// Registers a team (or none) for this thread's passes until dropped.
fn register(team: Option<&Team>) -> Scoped<Option<*const Team>> {
    Scoped::set(&CURRENT, team.map(|t| t as *const Team))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cat(mut a: Vec<usize>, b: Vec<usize>) -> Vec<usize> {
        a.extend(b);
        a
    }

    #[test]
    fn every_chunk_runs_once_and_reduces_in_order() {
        let out = with_team(3, || {
            let part = |c: usize| vec![c];
            let runs: Vec<_> =
                (0..200).map(|_| map_on_current(3, 5, &part, &cat).unwrap().unwrap()).collect();
            assert!(map_on_current(2, 2, &part, &cat).is_none(), "other thread counts use rayon");
            runs
        });
        assert!(out.iter().all(|r| r == &[0, 1, 2, 3, 4]));
        assert!(CURRENT.with(Cell::get).is_none(), "registration ends with the call");
    }

    #[test]
    fn every_thread_keeps_its_index_in_the_team() {
        assert_eq!(member(), None, "outside a team");
        let seen = with_team(3, || {
            let part = |_: usize| {
                std::thread::sleep(Duration::from_millis(20));
                vec![member()]
            };
            let cat = |mut a: Vec<_>, b: Vec<_>| {
                a.extend(b);
                a
            };
            (member(), map_on_current(3, 3, &part, &cat).unwrap().unwrap())
        });
        assert_eq!(seen.0, Some(0), "the caller is member 0");
        assert!(seen.1.iter().all(|m| m.is_some_and(|i| i < 3)), "{:?}", seen.1);
        assert_eq!(member(), None, "restored after the team");
    }

    #[test]
    fn a_pass_inside_a_pass_finds_no_team() {
        let inner_on_team = with_team(2, || {
            let part =
                |_: usize| vec![map_on_current(2, 2, &|c: usize| c, &|a, b| a + b).is_some()];
            let outer = map_on_current(2, 2, &part, &|mut a: Vec<bool>, b| {
                a.extend(b);
                a
            });
            let after = map_on_current(2, 2, &|c: usize| c, &|a, b| a + b);
            (outer.unwrap().unwrap(), after)
        });
        assert_eq!(inner_on_team.0, vec![false, false], "no chunk sees the team");
        assert_eq!(inner_on_team.1, Some(Some(1)), "the team is registered again after the pass");
    }

    #[test]
    fn a_helper_panic_reaches_the_caller_and_the_team_stops() {
        let caught = catch_unwind(|| {
            with_team(2, || {
                // The caller claims chunk 0 first; chunk 1 panics on whichever thread runs it.
                let part = |c: usize| if c == 1 { panic!("chunk one") } else { c };
                map_on_current(2, 2, &part, &|a, b| a + b)
            })
        });
        let payload = caught.expect_err("the chunk's panic is re-raised");
        assert_eq!(payload.downcast_ref::<&str>(), Some(&"chunk one"));
    }

    #[test]
    fn parked_helpers_wake_up_and_both_threads_work() {
        let threads = with_team(2, || {
            let part = |_: usize| {
                std::thread::sleep(Duration::from_millis(100));
                vec![std::thread::current().id()]
            };
            let cat = |mut a: Vec<_>, b: Vec<_>| {
                a.extend(b);
                a
            };
            std::thread::sleep(SPIN * 4);
            map_on_current(2, 2, &part, &cat).unwrap().unwrap()
        });
        assert_eq!(threads.len(), 2);
        assert_ne!(threads[0], threads[1], "a parked helper woke up and took a chunk");
    }

    #[test]
    fn many_short_passes_with_more_threads_than_cores() {
        // Helpers that the OS does not schedule in time leave their chunks to the others.
        let threads = 2 * std::thread::available_parallelism().map_or(2, |c| c.get());
        let sums = with_team(threads, || {
            (0..3000)
                .map(|i| {
                    let part = |c: usize| (0..100).map(|j| (i + c * j) % 7).sum::<usize>();
                    map_on_current(threads, threads, &part, &|a, b| a + b).unwrap().unwrap()
                })
                .collect::<Vec<_>>()
        });
        let expected = (0..3000)
            .map(|i| (0..threads).flat_map(|c| (0..100).map(move |j| (i + c * j) % 7)).sum())
            .collect::<Vec<usize>>();
        assert_eq!(sums, expected);
    }
}
