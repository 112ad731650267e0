//! Verification after construction (Soria-Comas et al., TKDE 2015, §5: a class above t is
//! merged): while some class is farther than t from the file, the class with the largest
//! EMD joins the class whose key centroid is nearest (`verify/next_merge.rs` states the
//! rule, ties included, and answers it from a heap and, in low dimension, a k-d tree, so a
//! run of many merges no longer scans the g classes twice per merge, O(g²·d) in all). Also
//! the whole of the "merge" algorithm, applied to a k-anonymous partition. Ends at the
//! latest with one class, the job's records, which the caller has checked to be t-close.

mod alive_centroids;
mod next_merge;

use super::budget::Budget;
use super::confidential::{Confidential, Profile};
use super::space::{Centroid, Space};
use crate::index::IndexChoice;
use next_merge::{Indexed, NextMerge};

/// A class counts as t-close up to this rounding slack on its EMD.
pub const SLACK: f64 = 1e-12;

/// Merges classes of `labels` (0..g over the records of `space`, every class non-empty) until every class is within `t` (plus [`SLACK`]), the class of largest EMD
/// first, into the class of nearest centroid, ties to the lowest label (`next_merge`);
/// returns the labels 0..g′ of the merged classes (numbered in the order of the label of
/// the class that absorbed the others) and the number of merges, or `None` once the merges
/// have added more (weighted) SSE than `budget` allows (charged merge by merge, in merge
/// order).
pub fn merge_until_close<S: Space>(
    space: &S,
    labels: &[u32],
    conf: &Confidential,
    t: f64,
    budget: &mut Budget,
) -> Option<(Vec<u32>, usize)> {
    let classes = Classes::new(space, labels, conf);
    let next = Indexed::new(&classes.centroids, &classes.emd, IndexChoice::Auto);
    merge(space, classes, next, labels, conf, t, budget)
}

/// [`merge_until_close`]'s loop over `classes` (of `labels`), the next merge found by `next`.
fn merge<S: Space, P: NextMerge<S::Point>>(
    space: &S,
    mut classes: Classes<S>,
    mut next: P,
    labels: &[u32],
    conf: &Confidential,
    t: f64,
    budget: &mut Budget,
) -> Option<(Vec<u32>, usize)> {
    // (merged, into) in merge order.
    let mut joins: Vec<(usize, usize)> = Vec::new();
    while let Some(worst) = next.worst(&classes.emd) {
        if classes.emd[worst] <= t + SLACK {
            break;
        }
        let target = next.take_nearest(worst, &classes.centroids);
        if !budget.charge(classes.added_sse(space, worst, target)) {
            return None;
        }
        classes.join(space, worst, target, conf);
        next.moved(target, &classes.centroids, classes.emd[target]);
        joins.push((worst, target));
    }
    // Each class's final class, from the last merge back: a class absorbed another only
    // while alive, so its own final class is known by then.
    let g = classes.sizes.len();
    let mut root: Vec<usize> = (0..g).collect();
    for &(merged, into) in joins.iter().rev() {
        root[merged] = root[into];
    }
    let mut compact = vec![u32::MAX; g];
    let survivors = (0..g).filter(|&c| root[c] == c);
    for (new, c) in survivors.enumerate() {
        compact[c] = new as u32;
    }
    Some((labels.iter().map(|&l| compact[root[l as usize]]).collect(), joins.len()))
}

/// The classes as verification merges them, by label: what the rule and the SSE need.
#[derive(Debug, Clone)]
struct Classes<S: Space> {
    /// Confidential distributions, and their EMD to the file.
    profiles: Vec<Profile>,
    emd: Vec<f64>,
    /// Key sums and sizes, and the centroids kept up to date from them.
    sums: Vec<S::Sums>,
    sizes: Vec<usize>,
    centroids: Vec<S::Point>,
    /// Mass-weighted key sums and masses, for the SSE each merge adds.
    weighted: Vec<S::Sums>,
    masses: Vec<f64>,
}

impl<S: Space> Classes<S> {
    /// The classes of `labels` (0..g, every class non-empty) over the records of `space`.
    fn new(space: &S, labels: &[u32], conf: &Confidential) -> Self {
        let g = labels.iter().map(|&l| l as usize + 1).max().unwrap_or(0);
        let mut profiles: Vec<Profile> = vec![conf.empty(); g];
        let mut sums = vec![space.no_sums(); g];
        let mut sizes = vec![0usize; g];
        let mut weighted = vec![space.no_sums(); g];
        let mut masses = vec![0.0; g];
        for (i, &l) in labels.iter().enumerate() {
            let l = l as usize;
            conf.add(&mut profiles[l], i);
            space.add(&mut sums[l], i, 1.0);
            sizes[l] += 1;
            let m = conf.mass[i];
            space.add(&mut weighted[l], i, m);
            masses[l] += m;
        }
        debug_assert!(sizes.iter().all(|&s| s > 0), "every class 0..g has a record");
        let emd = profiles.iter().map(|p| conf.emd(p)).collect();
        let centroids = sums.iter().zip(&sizes).map(|(s, &m)| space.mean(s, m as f64)).collect();
        Classes { profiles, emd, sums, sizes, centroids, weighted, masses }
    }

    /// Class `merged` joins class `into`: its records, sums and mass move over, and
    /// `into`'s centroid and EMD are recomputed.
    fn join(&mut self, space: &S, merged: usize, into: usize, conf: &Confidential) {
        let moved = std::mem::replace(&mut self.weighted[merged], space.no_sums());
        space.absorb(&mut self.weighted[into], &moved);
        self.masses[into] += self.masses[merged];
        let moved = std::mem::take(&mut self.profiles[merged]);
        self.profiles[into].absorb(&moved);
        let moved = std::mem::replace(&mut self.sums[merged], space.no_sums());
        space.absorb(&mut self.sums[into], &moved);
        self.sizes[into] += self.sizes[merged];
        self.centroids[into] = space.mean(&self.sums[into], self.sizes[into] as f64);
        self.emd[into] = conf.emd(&self.profiles[into]);
    }

    /// The weighted SSE that merging classes `a` and `b` adds, W_a·W_b/(W_a + W_b)·‖μ_a −
    /// μ_b‖² from their mass-weighted key sums and masses (0 when either has no mass: its
    /// records count nothing in the SSE, as in the release). Reads no class but `a`, `b`.
    fn added_sse(&self, space: &S, a: usize, b: usize) -> f64 {
        let (wa, wb) = (self.masses[a], self.masses[b]);
        if wa <= 0.0 || wb <= 0.0 {
            return 0.0;
        }
        let gap = space.mean(&self.weighted[a], wa).gap2(&space.mean(&self.weighted[b], wb));
        wa * wb / (wa + wb) * gap
    }
}

#[cfg(test)]
mod tests {
    use super::next_merge::Scans;
    use super::*;
    use crate::tcloseness::emd::Reference;
    use crate::tcloseness::space::Dense;
    use proptest::prelude::*;

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(128))]
        /// The heap and the alive centroids (a k-d tree or their own scan) pick every merge
        /// the scans pick, ties included: the same labels, merges and SSE charged (the same
        /// stop under a limited budget).
        /// Small integer keys, few confidential values and masses in quarters make many
        /// classes tie in EMD and in centroid distance.
        #[test]
        fn the_indexed_loop_merges_as_the_scans(
            d in 1usize..4,
            records in prop::collection::vec((0u32..120, -3i32..4, 0u32..3, 0u32..5), 2..300),
            ordered: bool,
            t in prop::sample::select(vec![0.02, 0.1, 0.25, 0.4]),
            limit in prop::option::of(0.0f64..40.0),
        ) {
            // Labels 0..g with every class used: record i's draw, renumbered densely.
            let mut seen = vec![u32::MAX; 120];
            let mut g = 0;
            let labels: Vec<u32> = records.iter().map(|r| {
                if seen[r.0 as usize] == u32::MAX {
                    seen[r.0 as usize] = g;
                    g += 1;
                }
                seen[r.0 as usize]
            }).collect();
            let n = records.len();
            let rows: Vec<f64> = (0..n * d)
                .map(|c| f64::from(records[c / d].1 + (c % d) as i32 % 2))
                .collect();
            let space = Dense::new(&rows, d);
            let codes: Vec<u32> = records.iter().map(|r| r.2).collect();
            let mass: Vec<f64> = records.iter().map(|r| f64::from(r.3) / 4.0).collect();
            let refs = [Reference::new(&codes, 3, &mass, ordered)];
            let conf = Confidential { codes: vec![codes], mass, references: &refs };
            let budget = || limit.map_or_else(Budget::unlimited, Budget::below);
            let classes = Classes::new(&space, &labels, &conf);
            let (x, e) = (&classes.centroids, &classes.emd);
            let mut slow = budget();
            let next = Scans::new(x, e, IndexChoice::Off);
            let scans = merge(&space, classes.clone(), next, &labels, &conf, t, &mut slow);
            for choice in [IndexChoice::On, IndexChoice::Off] {
                let mut fast = budget();
                let next = Indexed::new(x, e, choice);
                let indexed = merge(&space, classes.clone(), next, &labels, &conf, t, &mut fast);
                prop_assert_eq!(&indexed, &scans, "{:?}", choice);
                prop_assert_eq!(fast, slow);
            }
        }
    }
}
