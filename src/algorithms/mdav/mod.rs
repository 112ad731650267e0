//! MDAV-generic (papers/f-mdav-fast-mdav.txt Alg. 1; docs/algorithms.md#mdav), implemented the
//! F-MDAV way with each of the paper's five strategies switchable (§3.1–3.5; the fifth, single
//! precision, is the choice of `T`).
//!
//! While ≥ 3k records remain: C = centroid of the remaining records; P = the remaining
//! record farthest from C; P's group = P + its k−1 nearest remaining records; Q = the
//! remaining record farthest from P; Q's group likewise. Then with 2k..3k−1 left, one group
//! around the record farthest from their centroid, the rest (k..2k−1) as the last group;
//! with k..2k−1 left, one group. Squared Euclidean distance, ties to the lowest original
//! index, the seed always in its own group. Groups have k records except the last (≤ 2k−1).
//!
//! Cost: n/(2k) rounds of at most three passes over the remaining records, O(n²·d/k) time,
//! O(n·d) memory. In low d the passes become k-d tree queries (`spatial.rs`, option
//! `spatial_index`), about O(n log n) on spread-out data, with the same partition.

pub mod compact;
pub mod mixed;
pub mod norm_order;
pub mod remaining;
#[cfg(test)]
mod textbook;

use crate::dataset::WorkingSet;
use crate::float::Float;
use crate::index::IndexChoice;
use crate::kernels::{Metric, Selection};
use crate::parallel::Exec;
use crate::partition::Partition;
use crate::progress::Progress;
use compact::uses_compact;
use norm_order::NormOrder;
use remaining::{Mismatch, Prepared, Remaining};

/// F-MDAV's computational strategies (§3.1–3.4). All `true` is F-MDAV; all `false` (with
/// f64) is the paper's "traditional MDAV". Every combination gives the same partition on
/// data without distance ties.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MdavOptions {
    /// §3.1: compare ½‖x‖² − ⟨x, r⟩ (precomputed norms) instead of ‖x − r‖².
    pub algebraic_distance: bool,
    /// §3.2: find Q with the distances to P already computed for P's group.
    pub distance_reuse: bool,
    /// §3.3: partial selection of the k−1 nearest instead of a full sort.
    pub partial_sort: bool,
    /// §3.4: centroid of the remaining records from a running sum.
    pub centroid_by_subtraction: bool,
    /// microagg's addition: find the record farthest from the centroid by visiting records
    /// in decreasing norm and stopping at a proven bound (`norm_order.rs`). Exact; only
    /// active with `algebraic_distance`, whose precomputed norms it uses. On by default:
    /// 21–24% faster on Gaussian data (d = 15, n = 70k–200k) and 1–21% on skewed,
    /// clustered data (Census resampled), where a search that the bound does not stop
    /// soon gives up and the streaming scan takes over.
    pub norm_pruning: bool,
    /// microagg's addition (issue #15): answer the round's farthest and nearest queries
    /// from a k-d tree of the remaining records with deletions (`spatial.rs`); exact, the
    /// same partition as the scans. `Auto` uses it on complete data for d ≤ 5 and
    /// n ≥ 20 000, d ≤ 8 and n ≥ 100 000, where it is faster: see `bench-results/mdav_lowd.md`.
    pub spatial_index: IndexChoice,
    /// microagg's addition (issue #15): scan an int8 copy of the records first and re-check
    /// the few candidates with the exact scores (`mdav/compact/`); exact, the same partition,
    /// a quarter of the bytes per pass. Only with `algebraic_distance` and where the k-d
    /// tree is not used; `Auto` from `compact::AUTO_MIN_N` records on complete data. A run
    /// drops the copy when it re-checks too many records (`remaining.rs`, `RECHECK_LIMIT`).
    pub compact_scan: IndexChoice,
}

impl Default for MdavOptions {
    fn default() -> Self {
        MdavOptions {
            algebraic_distance: true,
            distance_reuse: true,
            partial_sort: true,
            centroid_by_subtraction: true,
            norm_pruning: true,
            spatial_index: IndexChoice::Auto,
            compact_scan: IndexChoice::Auto,
        }
    }
}

impl MdavOptions {
    /// The traditional MDAV of the paper's experiments (every strategy off).
    pub const TRADITIONAL: MdavOptions = MdavOptions {
        algebraic_distance: false,
        distance_reuse: false,
        partial_sort: false,
        centroid_by_subtraction: false,
        norm_pruning: false,
        spatial_index: IndexChoice::Off,
        compact_scan: IndexChoice::Off,
    };

    fn metric(self) -> Metric {
        if self.algebraic_distance { Metric::Algebraic } else { Metric::Direct }
    }

    fn selection(self) -> Selection {
        if self.partial_sort { Selection::Partial } else { Selection::FullSort }
    }
}

/// Runs MDAV on a working set (`1 ≤ k ≤ n`, checked by the caller).
pub fn mdav<T: Float>(
    ws: WorkingSet<T>,
    k: usize,
    opts: MdavOptions,
    exec: Exec,
    progress: &Progress,
) -> Partition {
    let (metric, selection) = (opts.metric(), opts.selection());
    let indexed = opts.spatial_index.uses(ws.n(), ws.d());
    // Norm pruning bounds the algebraic score; the spatial index answers that query itself.
    let mut order = (!indexed && opts.norm_pruning && metric == Metric::Algebraic)
        .then(|| NormOrder::new(&ws, exec));
    let compact = metric == Metric::Algebraic && uses_compact(opts.compact_scan, ws.n(), indexed);
    let mut rest = Remaining::new(ws, exec, progress);
    if indexed {
        rest.use_spatial_index();
    }
    if compact {
        rest.use_compact_copy();
    }
    let extreme = |rest: &Remaining<T>, order: Option<&mut NormOrder>| {
        let c = rest.centroid(opts.centroid_by_subtraction);
        rest.farthest_from_centroid(&c, metric, order)
    };
    // Speculation (issue #15, goal 3): the pass of Q's group also prepares the next round's
    // P group around a guessed seed. The next round takes that group on trust and goes
    // straight to its own Q's pass, in which one thread first checks that the exact seed
    // search names the same record (a mismatch drops the pass and puts the group back): so
    // the only serial work between two passes is taking one group and removing another,
    // and on passes split by records (`remaining.rs`, `BY_RECORDS_MIN`) that check.
    let speculate = !indexed && opts.distance_reuse && order.is_some();
    // The rounds' passes run on a team of threads kept awake between them (`team.rs`).
    exec.with_team(rest.len(), || {
        let mut prepared: Option<Prepared> = None;
        // Where Q's group mean sits from Q, towards the centroid (a running mean of the
        // groups that left): it sharpens the guessed centroid. At 200 000 × 15 (Gaussian,
        // k = 10), 14% of the guesses made with over 20 000 records left missed without
        // it, 6% with it.
        let mut pull = 0.0;
        while rest.len() >= 3 * k {
            // P's group: the prepared one, taken on trust while its seed is unassigned (Q's
            // pass checks that the seed search names it before anything of the pass is
            // kept: the search leaves the serial path between passes), else searched. Not
            // while the search backs off: the check could not confirm it, and the round
            // then scans for the seed and still uses the prepared group if it is the one.
            let trust = prepared.as_ref().is_some_and(|a| {
                rest.position_of(a.seed) < rest.len()
                    && order.as_ref().is_some_and(|o| !o.backing_off())
            });
            let trusted = prepared.take_if(|_| trust).map(|ahead| {
                let (c, back) = (rest.centroid(opts.centroid_by_subtraction), rest.checkpoint());
                (ahead.seed, c, back, rest.take_prepared(&ahead, k))
            });
            let (q, check) = match trusted {
                Some((seed, c, back, q)) => {
                    let seed_row = rest.row(rest.position_of(seed));
                    (
                        q.unwrap_or_else(|| rest.farthest_from(&seed_row, metric)),
                        Some((seed, c, back)),
                    )
                }
                None => {
                    let p = extreme(&rest, order.as_mut());
                    let p_row = rest.row(p);
                    let q = match prepared.take() {
                        Some(ahead) if ahead.seed == rest.id(p) => rest.take_prepared(&ahead, k),
                        _ => rest.take_group(p, k, metric, selection, opts.distance_reuse),
                    };
                    (q.unwrap_or_else(|| rest.farthest_from(&p_row, metric)), None)
                }
            };
            // Q's values and the centroid before Q's group leaves: for the guess and the pull.
            let before = speculate.then(|| (rest.row_f64(q), rest.centroid_f64()));
            // Run by one thread of Q's pass while the others start on Q's scores (before the
            // pass when it is split by records): the check of P, then the guess of the next
            // round's seed.
            let find = |rest: &Remaining<T>| {
                if let (Some(order), Some((seed, c, back))) = (order.as_mut(), &check)
                    && !rest.was_farthest_from_centroid(c, back, *seed, order)
                {
                    return Err(Mismatch);
                }
                Ok(match (order.as_mut(), &before) {
                    (Some(order), Some((seed, center))) if rest.len() >= 4 * k => {
                        let c = rest.centroid_without(seed, center, k, pull);
                        rest.guess_farthest_from_centroid(&c, order)
                    }
                    _ => None,
                })
            };
            let outcome = if speculate {
                rest.take_group_preparing(q, find, k, metric, selection)
            } else {
                rest.take_group(q, k, metric, selection, false);
                Ok(None)
            };
            match outcome {
                Ok(next) => prepared = next,
                Err(Mismatch) => {
                    // Not P's group: put it back, and search P this time.
                    let (_, _, back) = check.expect("only a group taken on trust is checked");
                    rest.restore(back);
                    continue;
                }
            }
            if let Some((seed, center)) = before {
                pull = 0.8 * pull + 0.2 * rest.pull_of_group(&seed, &center, k);
            }
        }
    });
    if rest.len() >= 2 * k {
        let p = extreme(&rest, order.as_mut());
        rest.take_group(p, k, metric, selection, false);
    }
    if !rest.is_empty() {
        rest.take_rest();
    }
    rest.into_partition()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::algorithms::test_shapes::{cases, shaped};
    use crate::dataset::Scaling;
    use ndarray::{Array2, array};
    use proptest::prelude::*;
    use rand::SeedableRng;
    use rand::rngs::StdRng;
    use rand_distr::{Distribution, StandardNormal};

    fn run(x: &Array2<f64>, k: usize, opts: MdavOptions) -> Partition {
        let ws = WorkingSet::<f64>::new(x.view(), &Scaling::fit(x.view(), false)).unwrap();
        mdav(ws, k, opts, Exec::SEQUENTIAL, &Progress::new())
    }

    const ALL_MODES: [MdavOptions; 9] = [
        MdavOptions::TRADITIONAL,
        MdavOptions { algebraic_distance: true, ..MdavOptions::TRADITIONAL },
        MdavOptions { distance_reuse: true, ..MdavOptions::TRADITIONAL },
        MdavOptions { partial_sort: true, ..MdavOptions::TRADITIONAL },
        MdavOptions { centroid_by_subtraction: true, ..MdavOptions::TRADITIONAL },
        MdavOptions { algebraic_distance: true, norm_pruning: true, ..MdavOptions::TRADITIONAL },
        MdavOptions { spatial_index: IndexChoice::On, ..MdavOptions::TRADITIONAL },
        MdavOptions { spatial_index: IndexChoice::On, ..MdavOptions::DEFAULT_SCAN },
        MdavOptions { compact_scan: IndexChoice::On, ..MdavOptions::DEFAULT_SCAN },
    ];

    #[test]
    fn hand_checked_line() {
        // 1-D points 0,1,2 | 10,11,12 | 20,21,22, k = 3. C = 11; 0 and 22 are both 11 away:
        // the tie goes to the lowest id, P = 0, group {0,1,2}; Q = 22, group {20,21,22};
        // 3 left = k..2k-1 -> last group.
        let x = array![[0.0], [1.0], [2.0], [10.0], [11.0], [12.0], [20.0], [21.0], [22.0]];
        let p = run(&x, 3, MdavOptions::default());
        assert_eq!(p.labels(), &[0, 0, 0, 2, 2, 2, 1, 1, 1]);
    }

    #[test]
    fn end_game_two_to_three_k() {
        // 5 records, k = 2: 2k <= 5 < 3k -> one group of 2 around the extreme, then 3.
        let x = array![[0.0], [1.0], [5.0], [6.0], [100.0]];
        let p = run(&x, 2, MdavOptions::default());
        assert_eq!(p.labels(), &[1, 1, 1, 0, 0]);
        assert_eq!(p.group_sizes(), vec![2, 3]);
    }

    #[test]
    fn seed_stays_in_its_group_with_duplicates() {
        let x = array![[0.0], [0.0], [0.0], [0.0], [9.0], [9.0], [9.0]];
        let p = run(&x, 3, MdavOptions::default());
        p.check(3, Some(5)).unwrap();
        assert_eq!(p.labels(), &[1, 1, 1, 1, 0, 0, 0]);
    }

    #[test]
    fn k_one_and_k_n() {
        let x = array![[0.0, 1.0], [3.0, 1.0], [7.0, 2.0]];
        assert_eq!(run(&x, 1, MdavOptions::default()).n_groups(), 3);
        assert_eq!(run(&x, 3, MdavOptions::default()).labels(), &[0, 0, 0]);
    }

    impl MdavOptions {
        /// The defaults with the scans forced.
        const DEFAULT_SCAN: MdavOptions = MdavOptions {
            algebraic_distance: true,
            distance_reuse: true,
            partial_sort: true,
            centroid_by_subtraction: true,
            norm_pruning: true,
            spatial_index: IndexChoice::Off,
            compact_scan: IndexChoice::Off,
        };
    }

    fn labels_of<T: Float>(x: &Array2<f64>, k: usize, opts: MdavOptions) -> Vec<u32> {
        let ws = WorkingSet::<T>::new(x.view(), &Scaling::fit(x.view(), true)).unwrap();
        mdav(ws, k, opts, Exec::SEQUENTIAL, &Progress::new()).labels().to_vec()
    }

    /// [`labels_of`] on a pool of `jobs` threads.
    fn labels_on<T: Float>(x: &Array2<f64>, k: usize, opts: MdavOptions, jobs: i64) -> Vec<u32> {
        let ws = WorkingSet::<T>::new(x.view(), &Scaling::fit(x.view(), true)).unwrap();
        let par = crate::parallel::Parallelism::from_n_jobs(jobs).unwrap();
        let p = par.install(|e| mdav(ws, k, opts, e, &Progress::new())).unwrap();
        p.labels().to_vec()
    }

    /// The index gives the scan's partition bit for bit: both metrics, f32 and f64.
    fn index_equals_scan(x: &Array2<f64>, k: usize) {
        for base in [MdavOptions::DEFAULT_SCAN, MdavOptions::TRADITIONAL] {
            let on = MdavOptions { spatial_index: IndexChoice::On, ..base };
            assert_eq!(labels_of::<f64>(x, k, on), labels_of::<f64>(x, k, base), "f64 {base:?}");
            assert_eq!(labels_of::<f32>(x, k, on), labels_of::<f32>(x, k, base), "f32 {base:?}");
        }
    }

    /// The compact copy gives the exact scans' partition bit for bit, f32 and f64.
    fn compact_equals_scan(x: &Array2<f64>, k: usize) {
        let on = MdavOptions { compact_scan: IndexChoice::On, ..MdavOptions::DEFAULT_SCAN };
        let off = MdavOptions::DEFAULT_SCAN;
        assert_eq!(labels_of::<f64>(x, k, on), labels_of::<f64>(x, k, off), "f64");
        assert_eq!(labels_of::<f32>(x, k, on), labels_of::<f32>(x, k, off), "f32");
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(48))]
        #[test]
        fn spatial_index_gives_the_scan_partition(c in cases(3000, 9, 2, 4)) {
            index_equals_scan(&c.data(), c.k);
        }

        #[test]
        fn compact_scan_gives_the_scan_partition(c in cases(3000, 21, 2, 4)) {
            compact_equals_scan(&c.data(), c.k);
        }

        /// Speculation (the next round's group prepared in the pass of Q's group) needs the
        /// norm order; without norm pruning every round makes its own passes. Same labels,
        /// ties included, with and without the compact copy.
        #[test]
        fn speculation_gives_the_round_by_round_partition(c in cases(3000, 16, 2, 4), compact: bool) {
            let (x, k) = (c.data(), c.k);
            let compact_scan = if compact { IndexChoice::On } else { IndexChoice::Off };
            let on = MdavOptions { compact_scan, ..MdavOptions::DEFAULT_SCAN };
            let off = MdavOptions { norm_pruning: false, ..on };
            prop_assert_eq!(labels_of::<f64>(&x, k, on), labels_of::<f64>(&x, k, off));
            prop_assert_eq!(labels_of::<f32>(&x, k, on), labels_of::<f32>(&x, k, off));
        }
    }

    #[test]
    fn compact_scan_gives_the_traditional_partition_without_ties() {
        // Continuous shapes (Gaussian, log-normal, clustered), up to d = 20: the compact
        // copy in float64 against every F-MDAV strategy off.
        for (n, d, shape, k) in [(4000, 20, 0, 5), (3000, 15, 1, 10), (3000, 7, 2, 3)] {
            let x = shaped(n, d, shape, 7);
            let on = MdavOptions { compact_scan: IndexChoice::On, ..MdavOptions::DEFAULT_SCAN };
            let traditional = labels_of::<f64>(&x, k, MdavOptions::TRADITIONAL);
            assert_eq!(labels_of::<f64>(&x, k, on), traditional, "n {n} d {d} shape {shape}");
        }
    }

    #[test]
    fn compact_scan_on_threads_gives_the_scan_partition() {
        // Passes over TEAM_MIN records or more split into chunks on a thread team; the
        // chunks re-check their own candidates and share their bands' limits.
        let on = MdavOptions { compact_scan: IndexChoice::On, ..MdavOptions::DEFAULT_SCAN };
        for shape in [0, 3] {
            let x = shaped(20_000, 15, shape, 5);
            let (exact64, exact32) = (
                labels_of::<f64>(&x, 10, MdavOptions::DEFAULT_SCAN),
                labels_of::<f32>(&x, 10, MdavOptions::DEFAULT_SCAN),
            );
            for jobs in [2, 3] {
                assert_eq!(labels_on::<f64>(&x, 10, on, jobs), exact64, "f64 shape {shape} {jobs}");
                assert_eq!(labels_on::<f32>(&x, 10, on, jobs), exact32, "f32 shape {shape} {jobs}");
            }
        }
    }

    #[test]
    fn compact_passes_split_by_records_give_the_scan_partition() {
        // From BY_RECORDS_MIN records on (`remaining.rs`) a split pass scores both references
        // in one read, the threads claiming from both ends of the records; on three
        // threads from two regions of them (`claims.rs`).
        let x = shaped(60_000, 4, 0, 9);
        let on = MdavOptions { compact_scan: IndexChoice::On, ..MdavOptions::DEFAULT_SCAN };
        let exact = labels_of::<f32>(&x, 10, MdavOptions::DEFAULT_SCAN);
        for jobs in [2, 3] {
            assert_eq!(labels_on::<f32>(&x, 10, on, jobs), exact, "{jobs} threads");
        }
    }

    #[test]
    fn spatial_index_gives_the_scan_partition_at_20000() {
        for (d, shape, k) in [(2, 0, 10), (3, 3, 5), (5, 1, 3), (8, 2, 7)] {
            index_equals_scan(&shaped(20_000, d, shape, d as u64), k);
        }
    }

    fn gaussian(n: usize, d: usize, seed: u64) -> Array2<f64> {
        // Continuous data: distance ties have probability zero.
        let mut rng = StdRng::seed_from_u64(seed);
        Array2::from_shape_simple_fn((n, d), || StandardNormal.sample(&mut rng))
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(40))]
        #[test]
        fn invariants_and_every_mode_agrees(n in 1usize..300, d in 1usize..6, k in 1usize..12, seed: u64) {
            let k = k.min(n);
            let x = gaussian(n, d, seed);
            let reference = run(&x, k, MdavOptions::default());
            reference.check(k, Some((2 * k - 1).max(k))).unwrap();
            for opts in ALL_MODES {
                let got = run(&x, k, opts);
                prop_assert_eq!(got.labels(), reference.labels());
            }
            let ws = WorkingSet::<f32>::new(x.view(), &Scaling::fit(x.view(), false)).unwrap();
            mdav(ws, k, MdavOptions::default(), Exec::SEQUENTIAL, &Progress::new())
                .check(k, Some((2 * k - 1).max(k))).unwrap();
        }
    }
}
