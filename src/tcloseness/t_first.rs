//! t-closeness-first microaggregation (Soria-Comas et al., TKDE 2015, §5.2, Algorithm 3; µ-ANT's
//! `kAnonymize_tCloseness`): with k′ = max(k, ⌈n / (2(n−1)t + 1)⌉), the records sorted by the
//! confidential value (ties by row) are cut into k′ runs of consecutive records, sizes ⌊n/k′⌋
//! or ⌈n/k′⌉ (the larger spread evenly); MDAV-style seeds (the record farthest from the
//! remaining records' centroid, then the one farthest from it, alternately) each take, from
//! every other run, the remaining record nearest to them. Every class then holds one record
//! of each run, which with distinct values bounds its EMD by (n − k′)/(2k′(n − 1)) ≤ t
//! (Proposition 3); ties can exceed it, so the caller verifies.

use super::buckets::Buckets;
use super::budget::Budget;
use super::confidential::Confidential;
use super::pool::{Classes, Pool};
use super::space::Space;

/// Labels (0..g) of the records of `space` (n ≥ k) grouped by t-first on the first
/// confidential attribute. With `indexed` (and a key with [`Space::rows`]), the seeds and
/// each run's nearest record come from k-d trees of the remaining records (`Pool`,
/// `Buckets`) instead of a scan per class: the same labels. `None` once the classes formed
/// cost more than `budget` allows.
pub fn t_first<S: Space>(
    space: &S,
    k: usize,
    conf: &Confidential,
    t: f64,
    indexed: bool,
    budget: &mut Budget,
) -> Option<Vec<u32>> {
    let n = conf.n();
    let runs = run_count(n, k, t);
    let mut order: Vec<u32> = (0..n as u32).collect();
    order.sort_by_key(|&i| (conf.codes[0][i as usize], i));
    let mut run_of = vec![0u32; n];
    let mut left = vec![0usize; runs];
    for (j, size) in left.iter_mut().enumerate() {
        let (a, b) = (j * n / runs, (j + 1) * n / runs);
        for &i in &order[a..b] {
            run_of[i as usize] = j as u32;
        }
        *size = b - a;
    }
    let rows = space.rows().filter(|_| indexed);
    let mut pool = Pool::full(space, rows.is_some());
    let mut buckets = rows.map(|rows| Buckets::new(rows, space.d(), &run_of, runs));
    let mut classes = Classes::new(n);
    let mut previous: Option<usize> = None;
    while left.iter().filter(|&&c| c > 0).count() >= k {
        let from = match previous {
            Some(s) => space.record(s),
            None => pool.centroid(space),
        };
        let seed = pool.farthest(space, &from);
        previous = if previous.is_none() { Some(seed) } else { None };
        let s = space.record(seed);
        let nearest: Vec<Option<usize>> = match &buckets {
            Some(b) => (0..runs).map(|j| b.nearest(space, j, &s).map(|(_, i)| i)).collect(),
            None => nearest_per_run(space, &pool, &run_of, runs, &s),
        };
        let members: Vec<usize> = (0..runs)
            .filter_map(|j| if j == run_of[seed] as usize { Some(seed) } else { nearest[j] })
            .collect();
        pool.remove_all(space, &members);
        for &i in &members {
            if let Some(b) = &mut buckets {
                b.remove(i);
            }
            left[run_of[i] as usize] -= 1;
        }
        classes.push(space, &members);
        if !budget.charge_class(space, &members, &conf.mass) {
            return None;
        }
    }
    let leftovers = pool.ids().to_vec();
    Some(classes.finish(space, &leftovers))
}

/// Per run, the remaining record nearest to `s` (ties to the lowest index), by a scan.
fn nearest_per_run<S: Space>(
    space: &S,
    pool: &Pool<S>,
    run_of: &[u32],
    runs: usize,
    s: &S::Point,
) -> Vec<Option<usize>> {
    let mut nearest = vec![(f64::INFINITY, usize::MAX); runs];
    space.scan(pool.ids(), s, |i, e| {
        let j = run_of[i] as usize;
        if e < nearest[j].0 || (e == nearest[j].0 && i < nearest[j].1) {
            nearest[j] = (e, i);
        }
    });
    nearest.iter().map(|b| (b.1 != usize::MAX).then_some(b.1)).collect()
}

/// k′ = max(k, ⌈n / (2(n−1)t + 1)⌉), at most n.
pub fn run_count(n: usize, k: usize, t: f64) -> usize {
    let bound = (n as f64 / (2.0 * (n as f64 - 1.0) * t + 1.0)).ceil() as usize;
    bound.max(k).min(n)
}
