//! k-anonymity-first t-closeness (Soria-Comas et al., TKDE 2015, §5.1, Algorithm 2): MDAV's
//! loop, but each group of a seed's k nearest records grows, one record at a time, by the
//! nearest remaining record (to the seed) whose addition lowers the group's EMD, until the
//! group is t-close or no remaining record lowers it; the last records as in MDAV.
//!
//! Two searches give the same groups: a scan of the remaining records per group (their
//! distances to the seed, sorted lazily), or, when indexed, k-d trees of the remaining
//! records by kind (`Buckets`): records of one kind (the same confidential values and mass)
//! change a group's EMD alike, so the record to add is the nearest one of some kind that
//! lowers it, one EMD and one tree query per kind instead of a pass over the records.
//! That pays while groups are small and kinds few against the records left; `Auto` starts
//! with the trees and goes over to the scan for good once the scan would form a group of
//! the average size so far more cheaply (`scan_is_cheaper`): the records left only shrink.

use super::buckets::Buckets;
use super::budget::Budget;
use super::confidential::{Confidential, Profile};
use super::pool::{Classes, Pool};
use super::space::Space;
use crate::index::IndexChoice;
use std::cmp::Ordering;
use std::collections::HashMap;

/// What one record added by the trees costs per kind still remaining (an EMD and a tree
/// query), in records passed by the scan: about 9 to 16 on Gaussian keys (n = 2·10⁴ and
/// 10⁵, 4 to 192 Zipf-distributed kinds) and Adult (7 to 41 kinds), `benches/k_first_kinds.rs`.
const QUERY_COST: usize = 12;

/// Labels (0..g) of the records of `space` (n ≥ k) grouped by k-first. Classes may still be
/// above `t`: the caller verifies and merges. `index` says whether the searches are indexed
/// (`Auto`: where exact MDAV would index n records of d attributes, until
/// `scan_is_cheaper`; never on a key without [`Space::rows`]); the labels are the same
/// either way. `None` once the classes formed cost more than `budget` allows.
pub fn k_first<S: Space>(
    space: &S,
    k: usize,
    conf: &Confidential,
    t: f64,
    index: IndexChoice,
    budget: &mut Budget,
) -> Option<Vec<u32>> {
    let n = conf.n();
    let (kind_of, kinds) = kinds(conf);
    let (d, indexed) = (space.d(), IndexChoice::Auto.uses(n, space.index_dim()));
    let rows = space.rows().filter(|_| index.picks(indexed));
    let mut pool = Pool::full(space, rows.is_some());
    let mut buckets = rows.map(|rows| Buckets::new(rows, d, &kind_of, kinds));
    let mut classes = Classes::new(n);
    let mut previous: Option<usize> = None;
    // Records and groups formed by the trees so far.
    let mut grown = (0usize, 0usize);
    let mut form = |pool: &mut Pool<S>, grow: bool, previous: &mut Option<usize>| {
        let from = match previous.take() {
            Some(s) => space.record(s),
            None => pool.centroid(space),
        };
        let seed = pool.farthest(space, &from);
        let t = if grow { t } else { f64::INFINITY };
        let members = match &mut buckets {
            Some(b) => group_by_kind(space, k, conf, t, b, seed),
            None => group_around(space, k, conf, t, pool, seed),
        };
        if let Some(b) = buckets.as_ref().filter(|_| index == IndexChoice::Auto) {
            grown = (grown.0 + members.len(), grown.1 + 1);
            if scan_is_cheaper(grown, b, pool.len()) {
                buckets = None;
            }
        }
        pool.remove_all(space, &members);
        classes.push(space, &members);
        budget.charge_class(space, &members, &conf.mass).then_some(seed)
    };
    while pool.len() >= 3 * k {
        // MDAV alternates: a seed farthest from the centroid, then the one farthest from it.
        let seed = form(&mut pool, true, &mut previous)?;
        previous = if previous.is_none() { Some(seed) } else { None };
    }
    if pool.len() >= 2 * k {
        form(&mut pool, false, &mut None)?;
    }
    let rest: Vec<usize> = pool.ids().iter().map(|&i| i as usize).collect();
    let leftovers = if rest.len() >= k {
        classes.push(space, &rest);
        Vec::new()
    } else {
        pool.ids().to_vec()
    };
    Some(classes.finish(space, &leftovers))
}

/// Whether the scan would form a group of the average size of the `grown` ones (records,
/// groups) from `remaining` records more cheaply than `buckets`: one pass over them, against
/// [`QUERY_COST`] per record added and kind still remaining. The average, not the last
/// group: one large group (of rare values) must not give up the trees for good.
fn scan_is_cheaper(grown: (usize, usize), buckets: &Buckets, remaining: usize) -> bool {
    let kinds = (0..buckets.len()).filter(|&b| buckets.remaining(b) > 0).count();
    QUERY_COST * grown.0 * kinds > remaining * grown.1
}

/// The seed, its k − 1 nearest remaining records (nearest first, ties to the lowest index)
/// and, while the group is above `t`, the nearest remaining record whose addition lowers
/// its EMD (searched again from the nearest after each addition), in the order they join.
/// Candidates are sorted lazily, a growing prefix at a time.
fn group_around<S: Space>(
    space: &S,
    k: usize,
    conf: &Confidential,
    t: f64,
    pool: &Pool<S>,
    seed: usize,
) -> Vec<usize> {
    let s = space.record(seed);
    let mut cand: Vec<(f64, u32)> = Vec::with_capacity(pool.len());
    space.scan(pool.ids(), &s, |i, e| cand.push((if i == seed { -1.0 } else { e }, i as u32)));
    let order =
        |a: &(f64, u32), b: &(f64, u32)| -> Ordering { a.0.total_cmp(&b.0).then(a.1.cmp(&b.1)) };
    if k < cand.len() {
        cand.select_nth_unstable_by(k - 1, order);
    }
    let first = k.min(cand.len());
    cand[..first].sort_unstable_by(order);
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

/// [`group_around`]'s group from the trees of the remaining records by kind, which lose
/// the group's records as they join (a key with [`Space::rows`]).
fn group_by_kind<S: Space>(
    space: &S,
    k: usize,
    conf: &Confidential,
    t: f64,
    buckets: &mut Buckets,
    seed: usize,
) -> Vec<usize> {
    let s = space.record(seed);
    let mut members = vec![seed];
    buckets.remove(seed);
    let mut profile = conf.profile([seed]);
    // The nearest remaining record (by distance, then index) of a kind that brings the EMD
    // below `emd` (of any kind for `None`), with the EMD the group would have with it.
    let mut next = |profile: &mut Profile, emd: Option<f64>| {
        let mut best: Option<(f64, usize, f64)> = None;
        for b in (0..buckets.len()).filter(|&b| buckets.remaining(b) > 0) {
            let rep = buckets.representative(b).expect("a record of the kind");
            let with = emd.map(|_| conf.emd_with(profile, rep));
            if with.zip(emd).is_some_and(|(with, emd)| with >= emd) {
                continue;
            }
            let (dist, i) = buckets.nearest(space, b, &s).expect("a remaining record");
            if best.is_none_or(|(bd, bi, _)| (dist, i) < (bd, bi)) {
                best = Some((dist, i, with.unwrap_or(0.0)));
            }
        }
        let (_, i, with) = best?;
        buckets.remove(i);
        conf.add(profile, i);
        Some((i, with))
    };
    while members.len() < k {
        let Some((i, _)) = next(&mut profile, None) else { break };
        members.push(i);
    }
    let mut emd = conf.emd(&profile);
    while emd > t {
        let Some((i, with)) = next(&mut profile, Some(emd)) else { break };
        members.push(i);
        emd = with;
    }
    members
}

/// Each record's kind (0..kinds, in order of first appearance) and the number of kinds:
/// records of one kind have the same confidential values and mass.
fn kinds(conf: &Confidential) -> (Vec<u32>, usize) {
    let mut seen: HashMap<(Vec<u32>, u64), u32> = HashMap::new();
    let kind_of = (0..conf.n())
        .map(|i| {
            let key = (conf.codes.iter().map(|c| c[i]).collect(), conf.mass[i].to_bits());
            let next = seen.len() as u32;
            *seen.entry(key).or_insert(next)
        })
        .collect();
    (kind_of, seen.len())
}
