//! ONA (Soria-Comas et al. 2019; papers/scalable-microaggregation-ona-mona.txt Alg. 2).
//!
//! A random k-member clustering (shuffle, consecutive groups of k, the last one taking the
//! remainder), then rounds (at most `max_rounds`, stopping after a round without change)
//! visiting the records in id order: a record of a cluster with more than k records moves to
//! the cluster with the nearest centroid (its own computed without it); a cluster with
//! exactly k records is dissolved when that lowers the SSE (the same test as ONA*). At the
//! end of a round every cluster of ≥ 2k records is split by ONA itself.
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
        let groups = run_once(&rows, k, opts.max_rounds, &mut rng);
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

/// One ONA run on `rows` (ids `0..len`), returning its groups.
fn run_once(rows: &Rows, k: usize, max_rounds: usize, rng: &mut SplitMix64) -> Vec<Vec<u32>> {
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
                let ids = c.members(g).to_vec();
                let pieces = run_once(&rows.subset(&ids), k, max_rounds, rng)
                    .into_iter()
                    .map(|p| p.into_iter().map(|local| ids[local as usize]).collect())
                    .collect();
                c.replace(g, pieces);
                changed = true;
            }
        }
        if !changed {
            break;
        }
    }
    c.into_groups()
}
