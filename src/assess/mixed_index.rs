//! Exact nearest rows under a mixed key's distance ([`MixedMetric`]), for record linkage
//! over a key with nominal columns (docs/assessment.md#fast-exact-linkage).
//!
//! A [`KdTree`] over the rows with the codes as coordinates: its boxes hold each nominal
//! column's code range, and a box whose range excludes the query's code adds that column's
//! mismatch cost to the box's lower bound ([`MixedMetric::box_lower_bound`]). Splits follow
//! the tree's rule (the widest extent), so a many-level column is cut into code ranges first
//! and a query skips the subtrees of other levels once its best distance is below their
//! cost. Every row the bound cannot rule out is scored with [`MixedMetric::distance`], so
//! the answer is a brute force pass's, ties included.

use super::mixed_metric::MixedMetric;
use crate::float::Float;
use crate::index::kdtree::{BoxSearch, KdTree};
use crate::index::{NearestIndex, Ties};

/// The rows of a mixed key in a k-d tree, searched by their mixed distance.
pub struct MixedIndex<'a, T> {
    tree: KdTree<T>,
    metric: &'a MixedMetric<T>,
}

impl<'a, T: Float> MixedIndex<'a, T> {
    /// Indexes the row-major `rows` (no NaN; `metric.dim()` columns each).
    pub fn new(rows: &[T], metric: &'a MixedMetric<T>) -> Self {
        MixedIndex { tree: KdTree::new(rows, metric.dim()), metric }
    }
}

impl<T: Float> NearestIndex<T> for MixedIndex<'_, T> {
    fn search(&self, query: &[T], ties: &mut Ties<T>) {
        self.tree.walk(&mut MixedSearch { query, ties, metric: self.metric });
    }
}

/// The nearest rows by the mixed distance, pruned by the mixed box bound.
struct MixedSearch<'a, T> {
    query: &'a [T],
    ties: &'a mut Ties<T>,
    metric: &'a MixedMetric<T>,
}

impl<T: Float> BoxSearch<T> for MixedSearch<'_, T> {
    #[inline]
    fn bound(&self, lo: &[T], hi: &[T], _: Option<T>) -> f64 {
        -self.metric.box_lower_bound(self.query, lo, hi).as_f64()
    }

    #[inline]
    fn worth(&self, bound: f64) -> bool {
        -bound <= self.ties.best().as_f64()
    }

    #[inline]
    fn offer(&mut self, _: usize, id: u32, coords: &[T]) {
        self.ties.offer(id, self.metric.distance(self.query, coords));
    }
}
