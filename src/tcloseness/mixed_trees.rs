//! k-d tree searches in a mixed key's geometry ([`MixedSpace`]), so that k-first and t-first
//! index a mixed key as they index a numeric one (docs/algorithms.md#mixed-keys).
//!
//! The tree holds each record's numbers then its codes as coordinates (scaled by
//! [`CODE_SCALE`], so that it splits on the numbers first), so a box holds every nominal
//! attribute's code range. A search tabulates the point's term of every level once
//! ([`MixedSpace::term_tables`]); a box's bound adds to its numeric bound, per nominal
//! attribute, the least (nearest) or largest (farthest) term of the levels in its range (of
//! every level when the range is wider than [`RANGE_SCAN`]), in the order the distance adds
//! its terms. So a bound never passes a computed distance (IEEE operations are monotone),
//! every record it does not rule out is scored exactly, and a search finds what a scan finds,
//! ties to the lowest id included.

use super::mixed_space::{CODE_SCALE, MixedPoint, MixedSpace, tabulated};
use crate::index::kdtree::{BoxSearch, KdTree};
use crate::index::{Ties, box_lower_bound, box_upper_bound};
use std::cmp::Ordering;

/// Widest code range whose levels a bound reads one by one; wider ones take the least or
/// largest term of all levels.
const RANGE_SCAN: u32 = 16;

/// A point's terms, tabulated for one search, and the least and largest of each table.
struct Terms<'a> {
    numeric: &'a [f64],
    tables: Vec<Vec<f64>>,
    spans: Vec<(f64, f64)>,
    d: usize,
}

impl<'a> Terms<'a> {
    fn new(space: &MixedSpace, point: &'a MixedPoint) -> Self {
        let tables = space.term_tables(point);
        let spans = tables.iter().map(|t| (least(t), largest(t))).collect();
        Terms { numeric: point.numeric(), tables, spans, d: space.numeric_dim() }
    }

    /// The distance of a record given by its tree coordinates.
    #[inline]
    fn distance(&self, coords: &[f64]) -> f64 {
        let codes = coords[self.d..].iter().map(|&c| (c / CODE_SCALE) as u32);
        tabulated(&coords[..self.d], self.numeric, codes, &self.tables)
    }

    /// The bound of the box `[lo, hi]`: `numeric`'s, then per nominal attribute `pick` of the
    /// terms in its code range (`wide` of the table's span when the range is wide).
    #[inline]
    fn bound(
        &self,
        lo: &[f64],
        hi: &[f64],
        numeric: fn(&[f64], &[f64], &[f64]) -> f64,
        pick: fn(&[f64]) -> f64,
        wide: fn((f64, f64)) -> f64,
    ) -> f64 {
        let d = self.d;
        let nominal = self.tables.iter().zip(&self.spans).enumerate().map(|(a, (table, &span))| {
            let (first, last) = ((lo[d + a] / CODE_SCALE) as u32, (hi[d + a] / CODE_SCALE) as u32);
            if last - first < RANGE_SCAN {
                pick(&table[first as usize..=last as usize])
            } else {
                wide(span)
            }
        });
        numeric(self.numeric, &lo[..d], &hi[..d]) + nominal.sum::<f64>()
    }
}

fn least(terms: &[f64]) -> f64 {
    terms.iter().fold(f64::INFINITY, |m, &v| if v < m { v } else { m })
}

fn largest(terms: &[f64]) -> f64 {
    terms.iter().fold(f64::NEG_INFINITY, |m, &v| if v > m { v } else { m })
}

impl MixedSpace {
    /// The live record of `tree` nearest to `point` (lowest id on ties) and its distance.
    pub(super) fn nearest_in_tree(
        &self,
        tree: &KdTree<f64>,
        point: &MixedPoint,
    ) -> Option<(f64, u32)> {
        let mut search =
            Nearest { terms: Terms::new(self, point), ties: Ties::within(f64::INFINITY) };
        tree.walk(&mut search);
        search.ties.ids().iter().min().map(|&id| (search.ties.best(), id))
    }

    /// The live record of `tree` farthest from `point` (lowest id on ties).
    pub(super) fn farthest_in_tree(&self, tree: &KdTree<f64>, point: &MixedPoint) -> Option<u32> {
        let mut search = Farthest { terms: Terms::new(self, point), best: None };
        tree.walk(&mut search);
        search.best.map(|(_, id)| id)
    }
}

/// The nearest records, all of them on ties.
struct Nearest<'a> {
    terms: Terms<'a>,
    ties: Ties<f64>,
}

impl BoxSearch<f64> for Nearest<'_> {
    fn bound(&self, lo: &[f64], hi: &[f64], _: Option<f64>) -> f64 {
        -self.terms.bound(lo, hi, box_lower_bound, least, |span| span.0)
    }

    fn worth(&self, bound: f64) -> bool {
        -bound <= self.ties.best()
    }

    fn offer(&mut self, _: usize, id: u32, coords: &[f64]) {
        self.ties.offer(id, self.terms.distance(coords));
    }
}

/// The farthest record: largest distance, ties to the lowest id.
struct Farthest<'a> {
    terms: Terms<'a>,
    best: Option<(f64, u32)>,
}

impl BoxSearch<f64> for Farthest<'_> {
    fn bound(&self, lo: &[f64], hi: &[f64], _: Option<f64>) -> f64 {
        self.terms.bound(lo, hi, box_upper_bound, largest, |span| span.1)
    }

    fn worth(&self, bound: f64) -> bool {
        // A box that may hold an equal distance (a tie of lower id) is kept.
        self.best.is_none_or(|(b, _)| bound.partial_cmp(&b) != Some(Ordering::Less))
    }

    fn offer(&mut self, _: usize, id: u32, coords: &[f64]) {
        let s = self.terms.distance(coords);
        if self.best.is_none_or(|(b, i)| s > b || (s == b && id < i)) {
            self.best = Some((s, id));
        }
    }
}
