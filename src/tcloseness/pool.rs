//! The records not yet in a class, with the running sum of their keys so that their centroid
//! costs O(d): what the MDAV-style loops of k-first and t-first take seeds from (the farthest
//! record from a point), by a scan or, when indexed, from a k-d tree of the remaining records
//! (same answers; keys with [`Space::rows`]).

use super::space::Space;
use crate::index::kdtree::KdTree;

/// The remaining records (any order) and the sum of their keys.
#[derive(Debug, Clone)]
pub struct Pool<S: Space> {
    ids: Vec<u32>,
    pos: Vec<usize>,
    sums: S::Sums,
    /// The remaining records in a k-d tree, when indexed.
    tree: Option<KdTree<f64>>,
}

impl<S: Space> Pool<S> {
    /// Every record of `space`; with `indexed` (and rows a tree can index), also in a k-d
    /// tree for [`farthest`](Self::farthest).
    pub fn full(space: &S, indexed: bool) -> Self {
        let n = space.n();
        let mut sums = space.no_sums();
        for i in 0..n {
            space.add(&mut sums, i, 1.0);
        }
        let tree = space.rows().filter(|_| indexed).map(|rows| KdTree::new(rows, space.d()));
        Pool { ids: (0..n as u32).collect(), pos: (0..n).collect(), sums, tree }
    }

    /// Number of remaining records.
    pub fn len(&self) -> usize {
        self.ids.len()
    }

    /// The remaining records.
    pub fn ids(&self) -> &[u32] {
        &self.ids
    }

    /// Takes the records `members` (remaining, distinct) out.
    pub fn remove_all(&mut self, space: &S, members: &[usize]) {
        for &i in members {
            let p = self.pos[i];
            let last = *self.ids.last().expect("a remaining record");
            self.ids.swap_remove(p);
            if last as usize != i {
                self.pos[last as usize] = p;
            }
            space.add(&mut self.sums, i, -1.0);
            if let Some(tree) = &mut self.tree {
                tree.remove(i as u32);
            }
        }
    }

    /// The centroid of the remaining records.
    pub fn centroid(&self, space: &S) -> S::Point {
        space.mean(&self.sums, self.ids.len().max(1) as f64)
    }

    /// The remaining record farthest from `point` (lowest index on ties).
    pub fn farthest(&self, space: &S, point: &S::Point) -> usize {
        if let Some(tree) = &self.tree {
            return space.farthest_in(tree, point).expect("a remaining record") as usize;
        }
        let mut best = (f64::NEG_INFINITY, usize::MAX);
        space.scan(&self.ids, point, |i, s| {
            if s > best.0 || (s == best.0 && i < best.1) {
                best = (s, i);
            }
        });
        best.1
    }
}

/// The classes a loop has formed so far: each record's label (`u32::MAX` while
/// unassigned) and each class's key sum and size.
#[derive(Debug, Clone)]
pub struct Classes<S: Space> {
    labels: Vec<u32>,
    sums: Vec<S::Sums>,
    sizes: Vec<usize>,
}

impl<S: Space> Classes<S> {
    /// No class yet over `n` records.
    pub fn new(n: usize) -> Self {
        Classes { labels: vec![u32::MAX; n], sums: Vec::new(), sizes: Vec::new() }
    }

    /// Makes `members` a new class.
    pub fn push(&mut self, space: &S, members: &[usize]) {
        let g = self.sizes.len() as u32;
        let mut sum = space.no_sums();
        for &i in members {
            self.labels[i] = g;
            space.add(&mut sum, i, 1.0);
        }
        self.sums.push(sum);
        self.sizes.push(members.len());
    }

    /// Places each of `leftovers` in the class whose centroid is nearest, as MDAV places its
    /// last records (for the fewer than k records a loop could not group), and returns the
    /// labels.
    pub fn finish(mut self, space: &S, leftovers: &[u32]) -> Vec<u32> {
        let centroids: Vec<S::Point> =
            self.sums.iter().zip(&self.sizes).map(|(s, &n)| space.mean(s, n as f64)).collect();
        for &i in leftovers {
            let i = i as usize;
            let nearest = (0..centroids.len())
                .min_by(|&a, &b| {
                    space.dist2(i, &centroids[a]).total_cmp(&space.dist2(i, &centroids[b]))
                })
                .expect("a class to join");
            self.labels[i] = nearest as u32;
        }
        self.labels
    }
}
