//! A k-member clustering under local improvement, shared by ONA and ONA* (ona-mona §3):
//! members and running statistics per cluster id, the nearest other centroid of a record,
//! the dissolve test of a k-cluster, moves, and splits of clusters that grew to ≥ 2k.
//!
//! Cluster ids are never reused: new clusters (pieces of a split) get larger ids, which is
//! the order ONA*'s phases visit them in (docs/algorithms.md#ona-and-ona-star). Records are
//! addressed by their original id; their (standardized) values are kept row-major in f64 for random
//! access.

use super::centroid_index::{CentroidIndex, principal_axis};
use super::clusters::{ClusterStats, sse};
use super::mdav_star::mdav_star;
use super::spatial::Accelerators;
use crate::dataset::{Scaling, WorkingSet};
use crate::float::Float;
use crate::parallel::Exec;
use crate::partition::Partition;
use crate::progress::Progress;
use ndarray::Array2;

/// Records as f64 rows (row-major), indexed by id.
#[derive(Debug, Clone)]
pub struct Rows {
    values: Array2<f64>,
}

impl Rows {
    /// The working set's values by original id.
    pub fn of<T: Float>(ws: &WorkingSet<T>) -> Self {
        let values = Array2::from_shape_vec((ws.n(), ws.d()), ws.rows_by_id()).expect("n x d");
        Rows { values }
    }

    /// Rows given row-major (n × d), indexed by id.
    pub fn from_row_major(values: Vec<f64>, d: usize) -> Self {
        let n = values.len() / d;
        Rows { values: Array2::from_shape_vec((n, d), values).expect("n x d") }
    }

    /// The subset `ids` (in that order) as a new set of rows.
    pub fn subset(&self, ids: &[u32]) -> Rows {
        let d = self.values.ncols();
        let values =
            Array2::from_shape_fn((ids.len(), d), |(i, j)| self.values[[ids[i] as usize, j]]);
        Rows { values }
    }

    /// Number of records.
    pub fn len(&self) -> usize {
        self.values.nrows()
    }

    /// The record `id`.
    #[inline]
    pub fn row(&self, id: u32) -> &[f64] {
        self.values.row(id as usize).to_slice().expect("row-major")
    }

    /// MDAV* (or MDAV*+) on the records `ids` (sorted, so ties keep id order): the groups,
    /// as lists of ids, in creation order.
    pub fn mdav_star_groups(&self, ids: &[u32], k: usize, plus: bool) -> Vec<Vec<u32>> {
        let sub = self.subset(ids);
        let identity =
            Scaling { mean: vec![0.0; sub.values.ncols()], scale: vec![1.0; sub.values.ncols()] };
        let ws = WorkingSet::<f64>::new(sub.values.view(), &identity).expect("validated data");
        let p = mdav_star(ws, k, plus, Accelerators::default(), Exec::SEQUENTIAL, &Progress::new());
        let mut groups = vec![Vec::new(); p.n_groups()];
        for (&id, &l) in ids.iter().zip(p.labels()) {
            groups[l as usize].push(id);
        }
        groups
    }
}

/// Clusters of records with ids `0..n`, each record in exactly one cluster.
#[derive(Debug, Clone)]
pub struct Clustering<'a> {
    rows: &'a Rows,
    members: Vec<Vec<u32>>,
    stats: ClusterStats,
    cluster_of: Vec<u32>,
    /// The pruned nearest-centroid search.
    index: CentroidIndex,
}

impl<'a> Clustering<'a> {
    /// The clusters listed by `groups` (ids `0..`), which must cover every record once.
    pub fn new(rows: &'a Rows, groups: Vec<Vec<u32>>) -> Self {
        let d = rows.values.ncols();
        let index = CentroidIndex::new(principal_axis(
            rows.values.rows().into_iter().map(|r| r.to_vec()),
            d,
        ));
        let mut c = Clustering {
            rows,
            members: Vec::new(),
            stats: ClusterStats::new(d),
            cluster_of: vec![u32::MAX; rows.len()],
            index,
        };
        for g in groups {
            c.push(g);
        }
        debug_assert!(c.cluster_of.iter().all(|&g| g != u32::MAX));
        c
    }

    fn push(&mut self, ids: Vec<u32>) -> usize {
        let g = self.stats.push();
        for &id in &ids {
            self.stats.add(g, self.rows.row(id));
            self.cluster_of[id as usize] = g as u32;
        }
        self.members.push(ids);
        self.reindex(g);
        g
    }

    /// Re-files cluster `g`'s centroid in the index after its members changed.
    fn reindex(&mut self, g: usize) {
        let centroid = (!self.members[g].is_empty()).then(|| self.stats.centroid(g));
        self.index.set(g, centroid.as_deref());
    }

    /// Ids of the clusters that exist now, increasing.
    pub fn live_ids(&self) -> Vec<usize> {
        (0..self.members.len()).filter(|&g| !self.members[g].is_empty()).collect()
    }

    /// Size of cluster `g` (0 once dissolved).
    pub fn size(&self, g: usize) -> usize {
        self.members[g].len()
    }

    /// The cluster of record `id`.
    pub fn cluster_of(&self, id: u32) -> usize {
        self.cluster_of[id as usize] as usize
    }

    /// Members of cluster `g`.
    pub fn members(&self, g: usize) -> &[u32] {
        &self.members[g]
    }

    /// The record `id`'s values.
    pub fn row(&self, id: u32) -> &[f64] {
        self.rows.row(id)
    }

    /// Statistics (sizes, centroids, cost changes) of the clusters.
    pub fn stats(&self) -> &ClusterStats {
        &self.stats
    }

    /// The existing cluster other than `except` whose centroid is nearest to `x`, ties to the
    /// lowest id.
    pub fn nearest_other(&self, x: &[f64], except: usize) -> Option<usize> {
        let dist2 = |g| self.stats.dist2(g, x);
        self.index.nearest(x, except, dist2)
    }

    /// SSE of cluster `g`, optionally with extra records.
    pub fn sse_with(&self, g: usize, extra: &[u32]) -> f64 {
        let rows: Vec<Vec<f64>> =
            self.members[g].iter().chain(extra).map(|&id| self.rows.row(id).to_vec()).collect();
        sse(&rows)
    }

    /// Moves record `id` to cluster `to`.
    pub fn move_record(&mut self, id: u32, to: usize) {
        let from = self.cluster_of(id);
        let x = self.rows.row(id);
        self.stats.remove(from, x);
        self.stats.add(to, x);
        self.members[from].retain(|&m| m != id);
        self.members[to].push(id);
        self.cluster_of[id as usize] = to as u32;
        self.reindex(from);
        self.reindex(to);
    }

    /// ONA's dissolve test for cluster `i` (Alg. 2 lines 10–16, Alg. 3 lines 7–13): every
    /// member would go to the other cluster with the nearest centroid; dissolve if the total
    /// SSE of `i` and the receivers falls. Returns the receivers (increasing) if dissolved.
    pub fn try_dissolve(&mut self, i: usize) -> Option<Vec<usize>> {
        let members = self.members[i].clone();
        let targets: Vec<usize> = members
            .iter()
            .map(|&s| self.nearest_other(self.rows.row(s), i))
            .collect::<Option<_>>()?;
        let mut receivers = targets.clone();
        receivers.sort_unstable();
        receivers.dedup();
        let incoming = |l: usize| -> Vec<u32> {
            members.iter().zip(&targets).filter(|&(_, &t)| t == l).map(|(&s, _)| s).collect()
        };
        let cost1 =
            self.sse_with(i, &[]) + receivers.iter().map(|&l| self.sse_with(l, &[])).sum::<f64>();
        let cost2: f64 = receivers.iter().map(|&l| self.sse_with(l, &incoming(l))).sum();
        if cost1 > cost2 {
            for (&s, &t) in members.iter().zip(&targets) {
                self.move_record(s, t);
            }
            Some(receivers)
        } else {
            None
        }
    }

    /// Replaces cluster `g` by the groups MDAV* (or MDAV*+) forms on its records; the
    /// pieces get new ids.
    pub fn split(&mut self, g: usize, k: usize, plus: bool) {
        let mut ids = std::mem::take(&mut self.members[g]);
        ids.sort_unstable();
        for &id in &ids {
            self.stats.remove(g, self.rows.row(id));
        }
        self.reindex(g);
        for piece in self.rows.mdav_star_groups(&ids, k, plus) {
            self.push(piece);
        }
    }

    /// Replaces cluster `g` by the given groups of its records (new ids).
    pub fn replace(&mut self, g: usize, pieces: Vec<Vec<u32>>) {
        for &id in &std::mem::take(&mut self.members[g]) {
            self.stats.remove(g, self.rows.row(id));
        }
        self.reindex(g);
        for piece in pieces {
            self.push(piece);
        }
    }

    /// Total SSE.
    pub fn total_sse(&self) -> f64 {
        self.live_ids().into_iter().map(|g| self.sse_with(g, &[])).sum()
    }

    /// The clusters as groups, in increasing id order.
    pub fn into_groups(self) -> Vec<Vec<u32>> {
        self.members.into_iter().filter(|m| !m.is_empty()).collect()
    }

    /// The partition, groups labelled in increasing cluster id (creation) order.
    pub fn into_partition(self) -> Partition {
        let n = self.cluster_of.len();
        let groups = self.into_groups();
        let mut labels = vec![0u32; n];
        for (l, g) in groups.iter().enumerate() {
            for &id in g {
                labels[id as usize] = l as u32;
            }
        }
        Partition::new_unchecked(labels, groups.len())
    }
}
