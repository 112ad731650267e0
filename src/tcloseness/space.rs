//! The keys a t-close job groups, as its algorithms measure them: a record's squared distance
//! to a point (a record or a centroid), the sums a centroid is taken from, and the distance
//! between two centroids. [`Dense`] is a numeric key (rows n × d); `mixed_space::MixedSpace`
//! a mixed key in the one-hot embedding's geometry without its columns
//! (docs/algorithms.md#mixed-keys). k-first, t-first and verification are written once over
//! [`Space`], so both keys give the same classes where exact arithmetic decides.

use crate::index::kdtree::KdTree;
use crate::index::squared_distance;

/// A centroid (or a record) as verification compares classes: the squared distance between
/// two, and its coordinates where it has plain numeric ones (which a k-d tree can index).
pub trait Centroid: Clone {
    /// Squared distance to `other`.
    fn gap2(&self, other: &Self) -> f64;
    /// [`gap2`](Self::gap2) where it is at most `limit`; otherwise some value above `limit`
    /// (a search for the nearest point skips what cannot win or tie).
    fn gap2_within(&self, other: &Self, _limit: f64) -> f64 {
        self.gap2(other)
    }
    /// The point's coordinates, when it is a plain numeric vector.
    fn coords(&self) -> Option<&[f64]>;
}

impl Centroid for Vec<f64> {
    fn gap2(&self, other: &Self) -> f64 {
        squared_distance(self, other)
    }

    fn coords(&self) -> Option<&[f64]> {
        Some(self)
    }
}

/// The records of a job (local indices 0..n) in the geometry the algorithms group them in.
pub trait Space: Sync {
    /// The key sums of a set of records, each counted with a weight.
    type Sums: Clone;
    /// A point records are measured from: a record or a centroid.
    type Point: Centroid;

    /// Number of records.
    fn n(&self) -> usize;
    /// Number of key attributes (what decides whether an index pays).
    fn d(&self) -> usize;
    /// Empty sums.
    fn no_sums(&self) -> Self::Sums;
    /// Adds record `i` counted `weight` times (−1 takes it out again).
    fn add(&self, sums: &mut Self::Sums, i: usize, weight: f64);
    /// Adds the sums `from` to `into`.
    fn absorb(&self, into: &mut Self::Sums, from: &Self::Sums);
    /// Record `i` as a point.
    fn record(&self, i: usize) -> Self::Point;
    /// The centroid of sums of total weight `total` (> 0).
    fn mean(&self, sums: &Self::Sums, total: f64) -> Self::Point;
    /// Squared distance from record `i` to `point`.
    fn dist2(&self, i: usize, point: &Self::Point) -> f64;
    /// Calls `visit(i, dist2(i, point))` for each record `i` of `ids`, in order: the same
    /// values as [`dist2`](Self::dist2), with what the point costs prepared once.
    fn scan(&self, ids: &[u32], point: &Self::Point, mut visit: impl FnMut(usize, f64)) {
        for &i in ids {
            visit(i as usize, self.dist2(i as usize, point));
        }
    }
    /// The rows (n × [`d`](Self::d), row-major) the k-d trees index: the numeric keys, or a
    /// mixed key's numbers then its codes as coordinates; `None` for a key the trees cannot
    /// index.
    fn rows(&self) -> Option<&[f64]>;
    /// The number of attributes that decides whether a k-d tree pays
    /// ([`crate::index::IndexChoice::uses`]): the numeric ones.
    fn index_dim(&self) -> usize {
        self.d()
    }
    /// The live record of `tree` (built on [`rows`](Self::rows), or a subset of them) nearest
    /// to `point` with its [`dist2`](Self::dist2), lowest tree id on ties; what a scan finds.
    fn nearest_in(&self, tree: &KdTree<f64>, point: &Self::Point) -> Option<(f64, u32)>;
    /// The live record of `tree` farthest from `point`, lowest tree id on ties.
    fn farthest_in(&self, tree: &KdTree<f64>, point: &Self::Point) -> Option<u32>;

    /// The sums of `members`, each counted with its `mass`, and their total mass.
    fn weighted(
        &self,
        members: impl IntoIterator<Item = usize>,
        mass: &[f64],
    ) -> (Self::Sums, f64) {
        let mut sums = self.no_sums();
        let mut total = 0.0;
        for i in members {
            self.add(&mut sums, i, mass[i]);
            total += mass[i];
        }
        (sums, total)
    }
}

/// A numeric key: standardized rows, n × d, row-major.
#[derive(Debug, Clone, Copy)]
pub struct Dense<'a> {
    rows: &'a [f64],
    d: usize,
}

impl<'a> Dense<'a> {
    /// The records of `rows` (n × d).
    pub fn new(rows: &'a [f64], d: usize) -> Self {
        Dense { rows, d }
    }

    /// Record `i`'s keys.
    pub fn row(&self, i: usize) -> &'a [f64] {
        &self.rows[i * self.d..(i + 1) * self.d]
    }
}

impl Space for Dense<'_> {
    type Sums = Vec<f64>;
    type Point = Vec<f64>;

    fn n(&self) -> usize {
        self.rows.len() / self.d.max(1)
    }

    fn d(&self) -> usize {
        self.d
    }

    fn no_sums(&self) -> Vec<f64> {
        vec![0.0; self.d]
    }

    fn add(&self, sums: &mut Vec<f64>, i: usize, weight: f64) {
        sums.iter_mut().zip(self.row(i)).for_each(|(s, v)| *s += weight * v);
    }

    fn absorb(&self, into: &mut Vec<f64>, from: &Vec<f64>) {
        into.iter_mut().zip(from).for_each(|(s, v)| *s += v);
    }

    fn record(&self, i: usize) -> Vec<f64> {
        self.row(i).to_vec()
    }

    fn mean(&self, sums: &Vec<f64>, total: f64) -> Vec<f64> {
        sums.iter().map(|s| s / total).collect()
    }

    fn dist2(&self, i: usize, point: &Vec<f64>) -> f64 {
        squared_distance(self.row(i), point)
    }

    fn rows(&self) -> Option<&[f64]> {
        Some(self.rows)
    }

    fn nearest_in(&self, tree: &KdTree<f64>, point: &Vec<f64>) -> Option<(f64, u32)> {
        tree.nearest(point)
    }

    fn farthest_in(&self, tree: &KdTree<f64>, point: &Vec<f64>) -> Option<u32> {
        tree.farthest(point)
    }
}
