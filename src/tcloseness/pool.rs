//! The records not yet in a class, over the job's standardized keys (row-major, n × d), with
//! the running sum of their keys so that their centroid costs O(d): what the MDAV-style
//! loops of k-first and t-first take seeds from (the farthest record from a point), by a
//! scan or, when indexed, from a k-d tree of the remaining records (same answers).

use crate::index::kdtree::KdTree;
pub use crate::index::squared_distance as dist2;

/// Record `i`'s keys.
pub fn row(rows: &[f64], d: usize, i: usize) -> &[f64] {
    &rows[i * d..(i + 1) * d]
}

/// The remaining records (any order) and the sum of their keys.
#[derive(Debug, Clone)]
pub struct Pool {
    ids: Vec<u32>,
    pos: Vec<usize>,
    sums: Vec<f64>,
    /// The remaining records in a k-d tree, when indexed.
    tree: Option<KdTree<f64>>,
}

impl Pool {
    /// Every record of `rows` (n × d); with `indexed`, also in a k-d tree for
    /// [`farthest`](Self::farthest).
    pub fn full(rows: &[f64], d: usize, indexed: bool) -> Self {
        let n = rows.len() / d.max(1);
        let mut sums = vec![0.0; d];
        for i in 0..n {
            sums.iter_mut().zip(row(rows, d, i)).for_each(|(s, v)| *s += v);
        }
        let tree = indexed.then(|| KdTree::new(rows, d));
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

    /// Takes record `i` (remaining) out.
    pub fn remove(&mut self, rows: &[f64], d: usize, i: usize) {
        let p = self.pos[i];
        let last = *self.ids.last().expect("a remaining record");
        self.ids.swap_remove(p);
        if last as usize != i {
            self.pos[last as usize] = p;
        }
        self.sums.iter_mut().zip(row(rows, d, i)).for_each(|(s, v)| *s -= v);
        if let Some(tree) = &mut self.tree {
            tree.remove(i as u32);
        }
    }

    /// The centroid of the remaining records.
    pub fn centroid(&self) -> Vec<f64> {
        let n = self.ids.len().max(1) as f64;
        self.sums.iter().map(|s| s / n).collect()
    }

    /// The remaining record farthest from `point` (lowest index on ties).
    pub fn farthest(&self, rows: &[f64], d: usize, point: &[f64]) -> usize {
        if let Some(tree) = &self.tree {
            return tree.farthest(point).expect("a remaining record") as usize;
        }
        let mut best = (f64::NEG_INFINITY, usize::MAX);
        for &i in &self.ids {
            let i = i as usize;
            let s = dist2(row(rows, d, i), point);
            if s > best.0 || (s == best.0 && i < best.1) {
                best = (s, i);
            }
        }
        best.1
    }
}

/// The classes a loop has formed so far: each record's label (`u32::MAX` while
/// unassigned) and each class's key sum and size.
#[derive(Debug, Clone)]
pub struct Classes {
    labels: Vec<u32>,
    sums: Vec<Vec<f64>>,
    sizes: Vec<usize>,
}

impl Classes {
    /// No class yet over `n` records.
    pub fn new(n: usize) -> Self {
        Classes { labels: vec![u32::MAX; n], sums: Vec::new(), sizes: Vec::new() }
    }

    /// Makes `members` a new class.
    pub fn push(&mut self, rows: &[f64], d: usize, members: &[usize]) {
        let g = self.sizes.len() as u32;
        let mut sum = vec![0.0; d];
        for &i in members {
            self.labels[i] = g;
            sum.iter_mut().zip(row(rows, d, i)).for_each(|(s, v)| *s += v);
        }
        self.sums.push(sum);
        self.sizes.push(members.len());
    }

    /// Places each of `leftovers` in the class whose centroid is nearest, as MDAV places its
    /// last records (for the fewer than k records a loop could not group), and returns the
    /// labels.
    pub fn finish(mut self, rows: &[f64], d: usize, leftovers: &[u32]) -> Vec<u32> {
        let centroids: Vec<Vec<f64>> = self
            .sums
            .iter()
            .zip(&self.sizes)
            .map(|(s, &n)| s.iter().map(|v| v / n as f64).collect())
            .collect();
        for &i in leftovers {
            let r = row(rows, d, i as usize);
            let nearest = (0..centroids.len())
                .min_by(|&a, &b| dist2(r, &centroids[a]).total_cmp(&dist2(r, &centroids[b])))
                .expect("a class to join");
            self.labels[i as usize] = nearest as u32;
        }
        self.labels
    }
}
