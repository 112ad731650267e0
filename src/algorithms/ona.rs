//! ONA (Soria-Comas et al. 2019; papers/scalable-microaggregation-ona-mona.txt Alg. 2).
//!
//! A random k-member clustering (shuffle, consecutive groups of k, the last one taking the
//! remainder), then rounds (at most `max_rounds`, stopping after a round without change)
//! visiting the records in id order: a record of a cluster with more than k records moves to
//! the cluster with the nearest centroid (its own computed without it); a cluster with
//! exactly k records is dissolved when that lowers the SSE (the same test as ONA*). At the
//! end of a round every cluster of ≥ 2k records is split by ONA itself. Every round of that
//! inner run may split again, and on data with many duplicates its records can gather into
//! one cluster again, so nesting compounds (30 rounds per level): beyond
//! [`MAX_SPLIT_DEPTH`] nested runs the split uses MDAV*+ (groups < 2k), which always ends.
//!
//! `n_init` independent runs (run r uses seed `seed + r`) keep the one with the lowest SSE,
//! ties to the lower r; runs go to the thread pool, so the result is the same for every
//! thread count.

use super::clustering::{Clustering, Rows};
use crate::dataset::WorkingSet;
use crate::float::Float;
use crate::parallel::Exec;
use crate::partition::Partition;
use crate::progress::Progress;
use crate::rng::SplitMix64;
use rayon::prelude::*;

/// Nesting limit of ONA's recursive splits (beyond it MDAV*+ splits).
pub const MAX_SPLIT_DEPTH: usize = 1;

/// ONA's settings.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct OnaOptions {
    /// Seed of the first run.
    pub seed: u64,
    /// Round limit per run (30 in the paper's experiments).
    pub max_rounds: usize,
    /// Number of randomized runs; the best is kept.
    pub n_init: usize,
}

/// Runs ONA on a working set whose positions are the original ids (`1 ≤ k ≤ n`).
pub fn ona<T: Float>(
    ws: WorkingSet<T>,
    k: usize,
    opts: OnaOptions,
    exec: Exec,
    progress: &Progress,
) -> Partition {
    let rows = Rows::of(&ws);
    let run = |r: usize| {
        let mut rng = SplitMix64::new(opts.seed.wrapping_add(r as u64));
        let groups = run_once(&rows, k, opts.max_rounds, &mut rng, 0, progress);
        let c = Clustering::new(&rows, groups);
        (c.total_sse(), r, c.into_groups())
    };
    let best = |a: (f64, usize, Vec<Vec<u32>>), b: (f64, usize, Vec<Vec<u32>>)| {
        if b.0 < a.0 || (b.0 == a.0 && b.1 < a.1) { b } else { a }
    };
    let (_, _, groups) = if exec.is_parallel() && opts.n_init > 1 {
        (0..opts.n_init).into_par_iter().map(run).reduce_with(best)
    } else {
        (0..opts.n_init).map(run).reduce(best)
    }
    .expect("n_init >= 1");
    progress.add(rows.len());
    Clustering::new(&rows, groups).into_partition()
}

/// One ONA run on `rows` (ids `0..len`), `depth` levels inside splits; returns its groups.
/// Every round (nested runs' included) is counted in `progress`.
fn run_once(
    rows: &Rows,
    k: usize,
    max_rounds: usize,
    rng: &mut SplitMix64,
    depth: usize,
    progress: &Progress,
) -> Vec<Vec<u32>> {
    let n = rows.len();
    if n < 2 * k {
        return vec![(0..n as u32).collect()];
    }
    let mut order: Vec<u32> = (0..n as u32).collect();
    rng.shuffle(&mut order);
    let mut groups: Vec<Vec<u32>> = order.chunks(k).map(<[u32]>::to_vec).collect();
    if groups.last().is_some_and(|g| g.len() < k) {
        let tail = groups.pop().expect("non-empty");
        groups.last_mut().expect("n >= 2k").extend(tail);
    }
    let mut c = Clustering::new(rows, groups);
    for _ in 0..max_rounds {
        let mut changed = false;
        for id in 0..n as u32 {
            let i = c.cluster_of(id);
            if c.size(i) > k {
                let x = c.row(id);
                let st = c.stats();
                // Nearest centroid, the own cluster's computed without the record.
                let own = st.dist2_without(i, x);
                let other = c.nearest_other(x, i);
                if let Some(j) = other.filter(|&j| st.dist2(j, x) < own) {
                    c.move_record(id, j);
                    changed = true;
                }
            } else if c.size(i) == k && c.try_dissolve(i).is_some() {
                changed = true;
            }
        }
        for g in c.live_ids() {
            if c.size(g) >= 2 * k {
                let mut ids = c.members(g).to_vec();
                ids.sort_unstable();
                let pieces = if depth < MAX_SPLIT_DEPTH {
                    run_once(&rows.subset(&ids), k, max_rounds, rng, depth + 1, progress)
                        .into_iter()
                        .map(|p| p.into_iter().map(|local| ids[local as usize]).collect())
                        .collect()
                } else {
                    rows.mdav_star_groups(&ids, k, true)
                };
                c.replace(g, pieces);
                changed = true;
            }
        }
        progress.round_done();
        if !changed {
            break;
        }
    }
    c.into_groups()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dataset::Scaling;
    use ndarray::Array2;
    use proptest::prelude::*;

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(48))]
        #[test]
        fn terminates_with_valid_groups_on_duplicate_heavy_data(
            values in prop::collection::vec(0u8..3, 4..400), k in 1usize..8, seed: u64,
        ) {
            let n = values.len() / 2;
            prop_assume!(n >= k);
            let x = Array2::from_shape_fn((n, 2), |(i, j)| values[2 * i + j] as f64);
            let ws = WorkingSet::<f64>::new(x.view(), &Scaling::fit(x.view(), true)).unwrap();
            let opts = OnaOptions { seed, max_rounds: 30, n_init: 2 };
            ona(ws, k, opts, Exec::SEQUENTIAL, &Progress::new()).check(k, None).unwrap();
        }
    }
}
