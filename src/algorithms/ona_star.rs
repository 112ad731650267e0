//! ONA* (papers/scalable-microaggregation-ona-mona.txt Alg. 3; phase order fixed in
//! docs/algorithms.md#ona-and-ona-star, which decides the result).
//!
//! Start from MDAV* and split every cluster of ≥ 2k records with MDAV*+. Then rounds (at
//! most `max_rounds`, stopping after a round without change):
//! * phase 1 visits the ids of clusters of exactly k records, increasing, and dissolves one
//!   when its members, each moved to the other cluster with the nearest centroid, lower the
//!   total SSE; a receiver that reaches 2k is split by MDAV*;
//! * phase 2 visits every id that exists at the start of the phase, increasing, and treats
//!   it if it still exists and has more than k records: while it has more than k, move the
//!   member with the largest improvement m/(m−1)·‖s − c_i‖² − |C_j|/(|C_j|+1)·‖s − c_j‖²
//!   (j = the other cluster with the nearest centroid) if that is positive; a receiver that
//!   reaches 2k is split by MDAV*.
//!
//! Cost per round: O(n·(n/k)·d) for the nearest-centroid searches; the result never has a
//! larger SSE than its MDAV* start, since every step lowers the SSE.

use super::clustering::{Clustering, Rows};
use super::mdav_star::mdav_star;
use super::spatial::Accelerators;
use crate::dataset::WorkingSet;
use crate::float::Float;
use crate::parallel::Exec;
use crate::partition::Partition;
use crate::progress::Progress;

/// Runs ONA* on a working set whose positions are the original ids (`1 ≤ k ≤ n`).
pub fn ona_star<T: Float>(
    ws: WorkingSet<T>,
    k: usize,
    max_rounds: usize,
    exec: Exec,
    progress: &Progress,
) -> Partition {
    let rows = Rows::of(&ws);
    let start = mdav_star(ws, k, false, Accelerators::default(), exec, progress);
    let mut groups = vec![Vec::new(); start.n_groups()];
    for (id, &l) in start.labels().iter().enumerate() {
        groups[l as usize].push(id as u32);
    }
    improve(Clustering::new(&rows, groups), k, max_rounds, progress).into_partition()
}

/// ONA* on the records `ids` of `rows` (for MONA's parts): the groups, as lists of ids.
pub fn ona_star_groups(rows: &Rows, ids: &[u32], k: usize, max_rounds: usize) -> Vec<Vec<u32>> {
    let mut ids = ids.to_vec();
    ids.sort_unstable(); // ties go to the lowest original id, as in a whole-data run
    let sub = rows.subset(&ids);
    let local: Vec<u32> = (0..ids.len() as u32).collect();
    let start = sub.mdav_star_groups(&local, k, false);
    // MONA runs many parts at once and counts finished parts instead of rounds.
    improve(Clustering::new(&sub, start), k, max_rounds, &Progress::new())
        .into_groups()
        .into_iter()
        .map(|g| g.into_iter().map(|l| ids[l as usize]).collect())
        .collect()
}

/// ONA*'s splitting of large clusters and improvement rounds on a given clustering (each
/// round counted in `progress`).
pub fn improve<'a>(
    mut c: Clustering<'a>,
    k: usize,
    max_rounds: usize,
    progress: &Progress,
) -> Clustering<'a> {
    for g in c.live_ids() {
        if c.size(g) >= 2 * k {
            c.split(g, k, true);
        }
    }
    for _ in 0..max_rounds {
        let mut changed = false;
        for i in c.live_ids() {
            if c.size(i) == k
                && let Some(receivers) = c.try_dissolve(i)
            {
                changed = true;
                split_large(&mut c, &receivers, k);
            }
        }
        for i in c.live_ids() {
            while c.size(i) > k {
                let Some((s, j)) = best_move(&c, i) else { break };
                c.move_record(s, j);
                changed = true;
                split_large(&mut c, &[j], k);
            }
        }
        progress.round_done();
        if !changed {
            break;
        }
    }
    c
}

/// The member of cluster `i` whose move to its nearest other cluster improves the SSE the
/// most (ties to the lowest id), if any move improves it.
fn best_move(c: &Clustering<'_>, i: usize) -> Option<(u32, usize)> {
    let st = c.stats();
    let mut best: Option<(f64, u32, usize)> = None;
    for &s in c.members(i) {
        let x = c.row(s);
        let Some(j) = c.nearest_other(x, i) else { continue };
        let gain = st.leave_gain(i, x) - st.join_cost(j, x);
        if gain > 0.0 && best.is_none_or(|(b, bs, _)| gain > b || (gain == b && s < bs)) {
            best = Some((gain, s, j));
        }
    }
    best.map(|(_, s, j)| (s, j))
}

fn split_large(c: &mut Clustering<'_>, receivers: &[usize], k: usize) {
    for &l in receivers {
        if c.size(l) >= 2 * k {
            c.split(l, k, false);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::algorithms::mdav_star::mdav_star;
    use crate::algorithms::test_shapes::small_integers;
    use crate::dataset::Scaling;
    use crate::workflow::evaluation::Evaluation;
    use proptest::prelude::*;

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(48))]
        #[test]
        fn valid_and_never_worse_than_mdav_star((x, k) in small_integers(-9..9, 240, 6, 4)) {
            let s = Scaling::fit(x.view(), true);
            let ws = WorkingSet::<f64>::new(x.view(), &s).unwrap();
            let p = ona_star(ws.clone(), k, 30, Exec::SEQUENTIAL, &Progress::new());
            p.check(k, Some((2 * k - 1).max(k))).unwrap();
            let start = mdav_star(ws, k, false, Accelerators::default(), Exec::SEQUENTIAL, &Progress::new());
            let sse = |p: &Partition| Evaluation::new(x.view(), p, &s).unwrap().sse;
            prop_assert!(sse(&p) <= sse(&start) * (1.0 + 1e-12) + 1e-12);
        }
    }
}
