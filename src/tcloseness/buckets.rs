//! The remaining records split into buckets, one k-d tree each, for "the remaining record of
//! bucket b nearest to a point" in about log n instead of a pass over every remaining record:
//! t-first's runs of confidential values, and k-first's kinds of records (records of one
//! kind change a class's EMD alike, so the nearest record whose addition lowers it is the
//! nearest record of one of the kinds that lower it). Answers are the scans' exactly: the
//! same squared distance, ties to the lowest record index ([`Space::nearest_in`]).

use super::space::Space;
use crate::index::kdtree::KdTree;

/// Per bucket, a k-d tree of its records not yet taken.
#[derive(Debug, Clone)]
pub struct Buckets {
    /// Bucket of each record, and its id in the bucket's tree (records of a bucket are
    /// numbered in increasing index, so the lowest id is the lowest index).
    of: Vec<(u32, u32)>,
    /// Per bucket, its records by id.
    members: Vec<Vec<u32>>,
    trees: Vec<KdTree<f64>>,
}

impl Buckets {
    /// Records `0..n` of `rows` (n × d) in the buckets `bucket_of` (0..n_buckets).
    pub fn new(rows: &[f64], d: usize, bucket_of: &[u32], n_buckets: usize) -> Self {
        let mut members = vec![Vec::new(); n_buckets];
        let of = bucket_of
            .iter()
            .enumerate()
            .map(|(i, &b)| {
                let m = &mut members[b as usize];
                m.push(i as u32);
                (b, m.len() as u32 - 1)
            })
            .collect();
        let trees = members
            .iter()
            .map(|m| {
                let points: Vec<f64> = m
                    .iter()
                    .flat_map(|&i| &rows[i as usize * d..(i as usize + 1) * d])
                    .copied()
                    .collect();
                KdTree::new(&points, d)
            })
            .collect();
        Buckets { of, members, trees }
    }

    /// Number of buckets.
    pub fn len(&self) -> usize {
        self.trees.len()
    }

    /// Number of remaining records of bucket `b`.
    pub fn remaining(&self, b: usize) -> usize {
        self.trees[b].len()
    }

    /// Some record of bucket `b` (taken or not): what every record of it does to a class.
    pub fn representative(&self, b: usize) -> Option<usize> {
        self.members[b].first().map(|&i| i as usize)
    }

    /// The remaining record of bucket `b` nearest to `point` (ties to the lowest index),
    /// with its squared distance in `space` (whose [`Space::rows`] the buckets hold).
    pub fn nearest<S: Space>(&self, space: &S, b: usize, point: &S::Point) -> Option<(f64, usize)> {
        let (s, id) = space.nearest_in(&self.trees[b], point)?;
        Some((s, self.members[b][id as usize] as usize))
    }

    /// Takes record `i` out (it joined a class).
    pub fn remove(&mut self, i: usize) {
        let (b, id) = self.of[i];
        self.trees[b as usize].remove(id);
    }
}
