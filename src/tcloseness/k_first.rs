//! k-anonymity-first t-closeness (Soria-Comas et al., TKDE 2015, §5.1, Algorithm 2): MDAV's
//! loop, but each group of a seed's k nearest records grows, one record at a time, by the
//! nearest remaining record (to the seed) whose addition lowers the group's EMD, until the
//! group is t-close or no remaining record lowers it; the last records as in MDAV.

use super::confidential::Confidential;
use super::pool::{Classes, Pool, dist2, row};
use std::cmp::Ordering;

/// Labels (0..g) of the records of `rows` (standardized keys, n × d, n ≥ k) grouped by
/// k-first. Classes may still be above `t`: the caller verifies and merges.
pub fn k_first(rows: &[f64], d: usize, k: usize, conf: &Confidential, t: f64) -> Vec<u32> {
    let mut pool = Pool::full(rows, d);
    let mut classes = Classes::new(conf.n());
    let mut previous: Option<usize> = None;
    let mut form = |pool: &mut Pool, grow: bool, previous: &mut Option<usize>| {
        let from = match previous.take() {
            Some(s) => row(rows, d, s).to_vec(),
            None => pool.centroid(),
        };
        let seed = pool.farthest(rows, d, &from);
        let members =
            group_around(rows, d, k, conf, if grow { t } else { f64::INFINITY }, pool, seed);
        for &i in &members {
            pool.remove(rows, d, i);
        }
        classes.push(rows, d, &members);
        seed
    };
    while pool.len() >= 3 * k {
        // MDAV alternates: a seed farthest from the centroid, then the one farthest from it.
        let seed = form(&mut pool, true, &mut previous);
        previous = if previous.is_none() { Some(seed) } else { None };
    }
    if pool.len() >= 2 * k {
        form(&mut pool, false, &mut None);
    }
    let rest: Vec<usize> = pool.ids().iter().map(|&i| i as usize).collect();
    let leftovers = if rest.len() >= k {
        classes.push(rows, d, &rest);
        Vec::new()
    } else {
        pool.ids().to_vec()
    };
    classes.finish(rows, d, &leftovers)
}

/// The seed, its k − 1 nearest remaining records and, while the group is above `t`, the
/// nearest remaining record whose addition lowers its EMD (searched again from the nearest
/// after each addition). Candidates are sorted lazily, a growing prefix at a time.
fn group_around(
    rows: &[f64],
    d: usize,
    k: usize,
    conf: &Confidential,
    t: f64,
    pool: &Pool,
    seed: usize,
) -> Vec<usize> {
    let s = row(rows, d, seed);
    let mut cand: Vec<(f64, u32)> = pool
        .ids()
        .iter()
        .map(|&i| (if i as usize == seed { -1.0 } else { dist2(row(rows, d, i as usize), s) }, i))
        .collect();
    let order =
        |a: &(f64, u32), b: &(f64, u32)| -> Ordering { a.0.total_cmp(&b.0).then(a.1.cmp(&b.1)) };
    if k < cand.len() {
        cand.select_nth_unstable_by(k - 1, order);
    }
    let first = k.min(cand.len());
    let mut members: Vec<usize> = cand[..first].iter().map(|c| c.1 as usize).collect();
    let mut profile = conf.profile(members.iter().copied());
    let mut emd = conf.emd(&profile);
    let rest = &mut cand[first..];
    let mut sorted = 0;
    let mut p = 0;
    while emd > t && p < rest.len() {
        if p == sorted {
            sorted = (2 * sorted).max(64).min(rest.len());
            if sorted < rest.len() {
                rest[p..].select_nth_unstable_by(sorted - p - 1, order);
            }
            rest[p..sorted].sort_unstable_by(order);
        }
        let i = rest[p].1;
        if i != u32::MAX {
            let with = conf.emd_with(&mut profile, i as usize);
            if with < emd {
                conf.add(&mut profile, i as usize);
                members.push(i as usize);
                emd = with;
                rest[p].1 = u32::MAX;
                p = 0;
                continue;
            }
        }
        p += 1;
    }
    members
}
