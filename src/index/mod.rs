//! Exact nearest-neighbour indexes over a fixed set of points
//! (docs/architecture.md#layers-and-folders).
//!
//! Every index answers the same question, "which stored points are nearest to this query,
//! all of them when several tie", and answers it **exactly**: the final comparison is always
//! [`squared_distance`], computed the same way for every candidate, so an index and a brute
//! force scan report bit-for-bit the same minimum and the same tied points. An index only
//! skips points by lower bounds that are safe under floating-point rounding (IEEE
//! subtraction, squaring and addition are monotone, so a bound built from smaller gaps with
//! the same operations can never exceed a computed distance).
//!
//! * [`kdtree::KdTree`]: a k-d tree with bounding boxes and deletions, for low dimensions
//!   (record linkage; exact MDAV can reuse it, removing records as groups form).
//! * [`blocks::BlockIndex`]: points in blocks of [`blocks::BLOCK`] stored column by column,
//!   visited nearest box first, each block's distances computed in one vectorized pass; for
//!   higher dimensions, where a tree's internal nodes rarely prune.
//! * [`choice::IndexChoice`]: whether an accelerator is used (on, off, or by size).

pub mod blocks;
pub mod choice;
pub mod kdtree;

pub use choice::IndexChoice;

use crate::float::Float;

/// ‖a − b‖², summed in attribute order as `((a₀−b₀)² + (a₁−b₁)²) + …` without contraction:
/// the one distance every index and every test compares.
#[inline(always)]
pub fn squared_distance<T: Float>(a: &[T], b: &[T]) -> T {
    let mut acc = T::zero();
    for (&x, &y) in a.iter().zip(b) {
        let t = x - y;
        acc += t * t;
    }
    acc
}

/// Lower bound of [`squared_distance`] from `query` to any point inside the box
/// `[lo, hi]`: the same sum over the per-attribute gaps, so it never exceeds a computed
/// distance to a point in the box.
#[inline(always)]
pub fn box_lower_bound<T: Float>(query: &[T], lo: &[T], hi: &[T]) -> T {
    sum_of_squares(query, lo, hi, |q, l, h| {
        if q < l {
            q - l
        } else if q > h {
            q - h
        } else {
            T::zero()
        }
    })
}

/// Upper bound of [`squared_distance`] from `query` to any point inside the box
/// `[lo, hi]`: the same sum over the per-attribute reaches to the farther face (IEEE
/// subtraction is monotone, so no point in the box has a larger computed gap).
#[inline(always)]
pub fn box_upper_bound<T: Float>(query: &[T], lo: &[T], hi: &[T]) -> T {
    sum_of_squares(query, lo, hi, |q, l, h| {
        let (below, above) = (q - l, h - q);
        if above > below { above } else { below }
    })
}

/// Σ gap(qⱼ, loⱼ, hiⱼ)² in attribute order without contraction, as [`squared_distance`]
/// sums: the box bounds then compare with computed distances exactly.
#[inline(always)]
fn sum_of_squares<T: Float>(query: &[T], lo: &[T], hi: &[T], gap: impl Fn(T, T, T) -> T) -> T {
    let mut acc = T::zero();
    for ((&q, &l), &h) in query.iter().zip(lo).zip(hi) {
        let t = gap(q, l, h);
        acc += t * t;
    }
    acc
}

/// The stored points at the smallest distance seen so far, all of them when several tie.
///
/// Starts from an upper bound (`Ties::within(bound)` reports only points at distance
/// ≤ `bound`; `f64::INFINITY` for none), which lets a caller who already knows one
/// candidate's distance prune from the first node on.
#[derive(Debug, Clone, PartialEq)]
pub struct Ties<T> {
    best: T,
    ids: Vec<u32>,
}

impl<T: Float> Ties<T> {
    /// Collects points at distance ≤ `bound`.
    pub fn within(bound: T) -> Self {
        Ties { best: bound, ids: Vec::new() }
    }

    /// Starts again with a new bound, keeping the allocation.
    pub fn reset(&mut self, bound: T) {
        self.best = bound;
        self.ids.clear();
    }

    /// The smallest distance offered so far (the bound while nothing was offered).
    #[inline(always)]
    pub fn best(&self) -> T {
        self.best
    }

    /// Ids of the points at [`best`](Self::best), in the order they were offered.
    pub fn ids(&self) -> &[u32] {
        &self.ids
    }

    /// `(best, ids in increasing order)`: the answer independent of the visiting order.
    #[cfg(test)]
    pub fn sorted(&self) -> (T, Vec<u32>) {
        let mut ids = self.ids.clone();
        ids.sort_unstable();
        (self.best, ids)
    }

    /// Offers a point at `distance`: it replaces the current ties if nearer, joins them if
    /// exactly as near.
    #[inline(always)]
    pub fn offer(&mut self, id: u32, distance: T) {
        if distance < self.best {
            self.best = distance;
            self.ids.clear();
            self.ids.push(id);
        } else if distance == self.best {
            self.ids.push(id);
        }
    }
}

/// What every index in this module does: offer every stored point that might be at
/// distance ≤ `ties.best()` to `ties` (pruning only by safe bounds).
pub trait NearestIndex<T: Float>: Sync {
    /// Adds the nearest stored points of `query` to `ties`.
    fn search(&self, query: &[T], ties: &mut Ties<T>);
}

/// The reference answer: every point of the row-major `points` (ids 0..) offered in turn.
#[cfg(test)]
pub fn brute_force<T: Float>(points: &[T], dim: usize, query: &[T], ties: &mut Ties<T>) {
    for (id, p) in points.chunks_exact(dim).enumerate() {
        ties.offer(id as u32, squared_distance(query, p));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ties_keep_every_equal_distance() {
        let mut t = Ties::within(f64::INFINITY);
        t.offer(3, 2.0);
        t.offer(1, 2.0);
        t.offer(7, 5.0);
        assert_eq!((t.best(), t.ids()), (2.0, &[3, 1][..]));
        t.offer(9, 1.0);
        assert_eq!(t.ids(), &[9]);
        let mut bounded = Ties::within(1.0);
        bounded.offer(4, 1.5);
        assert!(bounded.ids().is_empty());
        bounded.offer(5, 1.0);
        assert_eq!(bounded.ids(), &[5]);
    }

    #[test]
    fn box_bounds_hold_every_distance_inside() {
        let q = [0.1, -3.0, 7.25];
        let (lo, hi) = ([0.3, -1.0, 2.0], [0.9, 4.0, 7.0]);
        let inside = [[0.3, -1.0, 7.0], [0.9, 4.0, 2.0], [0.5, 0.0, 6.9]];
        for p in inside {
            assert!(box_lower_bound(&q, &lo, &hi) <= squared_distance(&q, &p));
        }
        assert_eq!(box_lower_bound(&[0.5, 0.0, 3.0], &lo, &hi), 0.0);
        for p in inside {
            assert!(box_upper_bound(&q, &lo, &hi) >= squared_distance(&q, &p));
        }
        assert_eq!(box_upper_bound(&q, &lo, &hi), squared_distance(&q, &[0.9, 4.0, 2.0]));
    }
}
