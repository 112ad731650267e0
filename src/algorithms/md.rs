//! Maximum distance (MD; papers/data-oriented-microaggregation-mhm.txt §4.2.2, reading fixed
//! in docs/algorithms.md#md).
//!
//! While ≥ 2k records remain: (r, s) = the two mutually most distant remaining records, r
//! the lower index; the two groups grow alternately, r taking its nearest free record, then
//! s its nearest free record, until both have k (so a record near both goes to the seed for
//! which it ranks higher, r winning equal ranks). Then k..2k−1 remaining records form one
//! group; each of fewer than k leftovers (in index order) joins the group of its nearest
//! already-grouped record.
//!
//! The farthest pair is found without a distance matrix: every remaining record caches its
//! farthest remaining partner in a max-heap. Removing records only lowers the true values,
//! so cached values are upper bounds; the top entry whose partner is still unassigned is
//! the exact maximum, and stale entries are refreshed by a farthest-point query that visits
//! records by decreasing norm and stops at the bound (‖x‖ + ‖y‖)² (O(n) memory). Worst case
//! O(n³·d/k) time, as in the paper; on real data the refresh queries stop after few records.
//!
//! In low d (complete data) the free records also sit in the k-d tree of exact MDAV
//! (`spatial.rs`, direct score Σ(x − r)² in f64, the same sum as here), which answers the
//! farthest and nearest queries with the same answers, ties included: the nearest-record
//! pass over all records becomes a tree query, and so does the farthest partner, which the
//! norm bound prunes poorly in d ≤ 3 (option `spatial_index`; `Auto` by [`auto_min_n`]).

use super::spatial::SpatialIndex;
use crate::dataset::{Scaling, WorkingSet};
use crate::float::Float;
use crate::index::IndexChoice;
use crate::kernels::Metric;
use crate::partition::Partition;
use crate::progress::Progress;
use ndarray::ArrayView2;
use std::collections::BinaryHeap;

/// Records as f64 rows with their norms, indexed by id.
struct Points {
    d: usize,
    x: Vec<f64>,
    norm: Vec<f64>,
    /// ids by decreasing norm
    by_norm: Vec<u32>,
}

impl Points {
    fn new<T: Float>(ws: &WorkingSet<T>) -> Self {
        let (n, d) = (ws.n(), ws.d());
        let x = ws.rows_by_id();
        let norm: Vec<f64> =
            x.chunks_exact(d).map(|r| r.iter().map(|v| v * v).sum::<f64>().sqrt()).collect();
        let mut by_norm: Vec<u32> = (0..n as u32).collect();
        by_norm.sort_by(|&a, &b| norm[b as usize].total_cmp(&norm[a as usize]).then(a.cmp(&b)));
        Points { d, x, norm, by_norm }
    }

    #[inline]
    fn dist2(&self, a: u32, b: u32) -> f64 {
        let (a, b) = (a as usize * self.d, b as usize * self.d);
        let (a, b) = (&self.x[a..a + self.d], &self.x[b..b + self.d]);
        a.iter().zip(b).map(|(u, v)| (u - v).powi(2)).sum()
    }

    fn row(&self, a: u32) -> &[f64] {
        &self.x[a as usize * self.d..(a as usize + 1) * self.d]
    }

    /// The free record farthest from `a` (ties to the lowest id): pruned by norms, or from
    /// the index.
    fn farthest(&self, a: u32, free: &Free) -> Option<(f64, u32)> {
        let found = match &free.index {
            None => return self.farthest_by_norm(a, &free.flags),
            // `a` itself (score 0) wins only if every other free record ties at 0, and
            // then the lowest of those is the nearest one.
            Some(index) => match index.farthest(self.row(a), Metric::Direct) {
                Some(b) if b == a => index.nearest(self.row(a), Metric::Direct, 1, a).pop(),
                b => b,
            },
        };
        found.map(|b| (self.dist2(a, b), b))
    }

    /// [`Self::farthest`] by a pass over the records in decreasing norm, stopped by the
    /// bound (‖a‖ + ‖b‖)².
    fn farthest_by_norm(&self, a: u32, free: &[bool]) -> Option<(f64, u32)> {
        let mut best: Option<(f64, u32)> = None;
        for &b in &self.by_norm {
            if let Some((d, _)) = best {
                let bound = (self.norm[a as usize] + self.norm[b as usize]).powi(2);
                if bound * (1.0 + 1e-9) < d {
                    break;
                }
            }
            if b == a || !free[b as usize] {
                continue;
            }
            let d = self.dist2(a, b);
            if best.is_none_or(|(bd, bb)| d > bd || (d == bd && b < bb)) {
                best = Some((d, b));
            }
        }
        best
    }

    /// The `count` free records nearest to `a` (ties to the lowest id), nearest first.
    fn nearest(&self, a: u32, count: usize, free: &Free) -> Vec<u32> {
        if let Some(index) = &free.index {
            return index.nearest(self.row(a), Metric::Direct, count, a);
        }
        let free = &free.flags;
        let mut c: Vec<(f64, u32)> = (0..free.len() as u32)
            .filter(|&b| b != a && free[b as usize])
            .map(|b| (self.dist2(a, b), b))
            .collect();
        let count = count.min(c.len());
        if count < c.len() {
            c.select_nth_unstable_by(count, |p, q| p.0.total_cmp(&q.0).then(p.1.cmp(&q.1)));
            c.truncate(count);
        }
        c.sort_by(|p, q| p.0.total_cmp(&q.0).then(p.1.cmp(&q.1)));
        c.into_iter().map(|(_, b)| b).collect()
    }
}

/// The free (not yet grouped) records, also in a spatial index when MD uses one.
struct Free {
    flags: Vec<bool>,
    index: Option<SpatialIndex<f64>>,
}

impl Free {
    fn is(&self, a: u32) -> bool {
        self.flags[a as usize]
    }

    /// Marks `a` as grouped.
    fn take(&mut self, a: u32) {
        self.flags[a as usize] = false;
        if let Some(index) = &mut self.index {
            index.remove(a);
        }
    }
}

/// Smallest n where `Auto` gives MD the spatial index in dimension `d` (`None`: never),
/// from bench-results/index_family.md (Gaussian, k = 10, one thread): index vs scans at
/// d = 2 2 000 records 1.4×, 20 000 4.6×; d = 3 5 000 1.0×, 20 000 2.4×; d = 4 20 000 0.9×,
/// d = 5 0.4×, d = 8 0.1–0.2× (the norm-pruned farthest queries win there).
pub fn auto_min_n(d: usize) -> Option<usize> {
    match d {
        0..=2 => Some(2_000),
        3 => Some(10_000),
        _ => None,
    }
}

/// A heap entry: a record's cached farthest partner (max-heap by distance, then lowest ids).
#[derive(PartialEq)]
struct Entry {
    dist: f64,
    lo: u32,
    hi: u32,
    owner: u32,
    partner: u32,
}

impl Eq for Entry {}
impl PartialOrd for Entry {
    fn partial_cmp(&self, o: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(o))
    }
}
impl Ord for Entry {
    fn cmp(&self, o: &Self) -> std::cmp::Ordering {
        self.dist.total_cmp(&o.dist).then(o.lo.cmp(&self.lo)).then(o.hi.cmp(&self.hi))
    }
}

fn entry(owner: u32, (dist, partner): (f64, u32)) -> Entry {
    Entry { dist, lo: owner.min(partner), hi: owner.max(partner), owner, partner }
}

/// Runs MD on a working set (`1 ≤ k ≤ n`), with the spatial index where `index` picks it;
/// groups are listed in creation order.
pub fn md_groups<T: Float>(
    ws: &WorkingSet<T>,
    k: usize,
    index: IndexChoice,
    progress: &Progress,
) -> Vec<Vec<u32>> {
    let (n, d) = (ws.n(), ws.d());
    let mut free = Free { flags: vec![true; n], index: None };
    let pts = Points::new(ws);
    if index.picks(auto_min_n(d).is_some_and(|min| n >= min)) {
        // The f64 rows as a working set of their own (identity scaling: the same values),
        // so that the index scores in f64 like `Points::dist2`.
        let identity = Scaling { mean: vec![0.0; d], scale: vec![1.0; d] };
        let rows = ArrayView2::from_shape((n, d), &pts.x).expect("n x d rows");
        let rows = WorkingSet::<f64>::new(rows, &identity);
        free.index = rows.ok().map(|rows| SpatialIndex::new(&rows));
    }
    groups(pts, free, k, progress)
}

fn groups(pts: Points, mut free: Free, k: usize, progress: &Progress) -> Vec<Vec<u32>> {
    let n = pts.norm.len();
    let mut left = n;
    let mut groups: Vec<Vec<u32>> = Vec::new();
    let mut heap: BinaryHeap<Entry> =
        (0..n as u32).filter_map(|a| pts.farthest(a, &free).map(|f| entry(a, f))).collect();
    while left >= 2 * k {
        let top = heap.pop().expect("at least two free records");
        if !free.is(top.owner) {
            continue;
        }
        if !free.is(top.partner) {
            if let Some(f) = pts.farthest(top.owner, &free) {
                heap.push(entry(top.owner, f));
            }
            continue;
        }
        let (r, s) = (top.lo, top.hi);
        free.take(r);
        free.take(s);
        let (mut gr, mut gs) = (vec![r], vec![s]);
        // Candidates: a seed takes at most k−1 records and loses at most k−1 to the other.
        let (cr, cs) = (pts.nearest(r, 2 * k, &free), pts.nearest(s, 2 * k, &free));
        let (mut ir, mut is) = (0, 0);
        while gr.len() < k || gs.len() < k {
            for (g, c, i) in [(&mut gr, &cr, &mut ir), (&mut gs, &cs, &mut is)] {
                if g.len() < k {
                    while !free.is(c[*i]) {
                        *i += 1;
                    }
                    free.take(c[*i]);
                    g.push(c[*i]);
                }
            }
        }
        left -= 2 * k;
        progress.add(2 * k);
        groups.push(gr);
        groups.push(gs);
    }
    let rest: Vec<u32> = (0..n as u32).filter(|&a| free.is(a)).collect();
    if rest.len() >= k {
        groups.push(rest);
    } else {
        let mut group_of = vec![usize::MAX; n];
        for (g, members) in groups.iter().enumerate() {
            for &a in members {
                group_of[a as usize] = g;
            }
        }
        for a in rest {
            let nearest = (0..n as u32)
                .filter(|&b| group_of[b as usize] != usize::MAX)
                .min_by(|&b, &c| pts.dist2(a, b).total_cmp(&pts.dist2(a, c)).then(b.cmp(&c)))
                .expect("k <= n: a group exists");
            let g = group_of[nearest as usize];
            groups[g].push(a);
            group_of[a as usize] = g;
        }
    }
    progress.add(left);
    groups
}

/// MD as a partition (groups labelled in creation order).
pub fn md<T: Float>(
    ws: &WorkingSet<T>,
    k: usize,
    index: IndexChoice,
    progress: &Progress,
) -> Partition {
    let groups = md_groups(ws, k, index, progress);
    let mut labels = vec![0u32; ws.n()];
    for (g, members) in groups.iter().enumerate() {
        for &a in members {
            labels[a as usize] = g as u32;
        }
    }
    Partition::new_unchecked(labels, groups.len())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::algorithms::test_shapes::{cases, small_integers};
    use crate::dataset::Scaling;
    use ndarray::Array2;
    use proptest::prelude::*;

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(64))]
        #[test]
        fn valid_groups((x, k) in small_integers(-9..9, 300, 6, 4)) {
            let ws = WorkingSet::<f64>::new(x.view(), &Scaling::fit(x.view(), false)).unwrap();
            md(&ws, k, IndexChoice::Auto, &Progress::new()).check(k, None).unwrap();
        }
    }

    #[test]
    fn first_pair_is_the_diameter() {
        let x = Array2::from_shape_vec((6, 1), vec![0.0, 1.0, 2.0, 7.0, 8.0, 10.0]).unwrap();
        let ws = WorkingSet::<f64>::new(x.view(), &Scaling::fit(x.view(), false)).unwrap();
        let g = md_groups(&ws, 2, IndexChoice::Auto, &Progress::new());
        assert_eq!(g[0], vec![0, 1]); // r = record 0 (lower index of the pair 0, 5)
        assert_eq!(g[1], vec![5, 4]);
        assert_eq!(g[2], vec![2, 3]);
    }

    fn labels_of<T: Float>(x: &Array2<f64>, k: usize, index: IndexChoice) -> Vec<u32> {
        let ws = WorkingSet::<T>::new(x.view(), &Scaling::fit(x.view(), true)).unwrap();
        md(&ws, k, index, &Progress::new()).labels().to_vec()
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(32))]
        /// The index gives the scans' partition bit for bit, f32 and f64.
        #[test]
        fn spatial_index_gives_the_scan_partition(c in cases(1500, 9, 1, 4)) {
            let x = c.data();
            let [on, off] = [IndexChoice::On, IndexChoice::Off];
            prop_assert_eq!(labels_of::<f64>(&x, c.k, on), labels_of::<f64>(&x, c.k, off));
            prop_assert_eq!(labels_of::<f32>(&x, c.k, on), labels_of::<f32>(&x, c.k, off));
        }
    }
}
