//! A k-d tree over a fixed set of points, with tight bounding boxes and deletions.
//!
//! Built once by median splits on the attribute of widest extent (ties to the lower
//! attribute; equal coordinates ordered by id, so the tree depends on the data only).
//! Leaves hold up to [`KdTree::LEAF`] points stored row by row in tree order. A search visits
//! the child on the query's side first and skips any node whose box lies farther than the
//! best distance found ([`box_lower_bound`], safe under rounding), so it reports exactly
//! what a brute-force pass (`brute_force`, the tests' reference) reports. [`KdTree::remove`]
//! deletes a point in O(leaf·d + depth·d): subtrees with no live point are skipped and the boxes on
//! the path shrink to the live points, so bounds stay tight as points go (exact MDAV removes the
//! records from the outside in, `crate::algorithms::spatial`). Other searches (farthest point, k
//! nearest under another score) walk the tree through [`BoxSearch`]. Memory O(n·d).

use super::{NearestIndex, Ties, box_lower_bound, box_upper_bound, squared_distance};
use crate::float::{Float, order_bits};
use std::cmp::Ordering;

/// A node: the points `start..end` of the tree order, its box, and its children.
#[derive(Debug, Clone)]
struct Node {
    start: u32,
    end: u32,
    /// Index of the first child (the second is `left + 1`); 0 for a leaf (the root is 0).
    left: u32,
    /// Points of this subtree not removed yet.
    live: u32,
}

/// A k-d tree of `n` points of dimension `d` (see the module docs).
#[derive(Debug, Clone)]
pub struct KdTree<T> {
    dim: usize,
    /// Coordinates in tree order, row-major.
    coords: Vec<T>,
    /// Caller's id of each point in tree order.
    ids: Vec<u32>,
    /// Position in tree order of each id.
    position: Vec<u32>,
    alive: Vec<bool>,
    nodes: Vec<Node>,
    /// Per node, `dim` lower then `dim` upper box corners.
    boxes: Vec<T>,
    /// Optional per-point keys in tree order ([`KdTree::set_keys`]), and per node the
    /// largest key of its live points; both empty without keys.
    keys: Vec<T>,
    key_max: Vec<T>,
    /// Reused buffer of [`KdTree::refit`].
    scratch: Vec<T>,
}

impl<T: Float> KdTree<T> {
    /// Points per leaf at most.
    pub const LEAF: usize = 16;

    /// Builds the tree of the rows of the row-major `points` (`points.len() / dim` points,
    /// ids 0..n). Coordinates must not be NaN. Panics if `dim == 0` or the length is not a
    /// multiple of `dim` (callers validate their data first).
    pub fn new(points: &[T], dim: usize) -> Self {
        Self::with_leaf_size(points, dim, Self::LEAF)
    }

    /// Like [`new`](Self::new) with leaves of at most `leaf` points (`leaf ≥ 1`).
    pub fn with_leaf_size(points: &[T], dim: usize, leaf: usize) -> Self {
        assert!(dim > 0 && points.len().is_multiple_of(dim), "points must be n x dim, dim > 0");
        let n = points.len() / dim;
        assert!(n <= u32::MAX as usize, "at most 2^32 - 1 points");
        let mut order: Vec<u32> = (0..n as u32).collect();
        let mut tree = KdTree {
            dim,
            coords: Vec::new(),
            ids: Vec::new(),
            position: vec![0; n],
            alive: vec![true; n],
            nodes: Vec::new(),
            boxes: Vec::new(),
            keys: Vec::new(),
            key_max: Vec::new(),
            scratch: Vec::new(),
        };
        if n > 0 {
            tree.nodes.push(Node { start: 0, end: n as u32, left: 0, live: n as u32 });
            tree.boxes = vec![T::zero(); 2 * dim];
            tree.split(points, &mut order, 0, leaf.max(1));
        }
        tree.coords = order.iter().flat_map(|&i| row(points, dim, i as usize)).copied().collect();
        for (pos, &id) in order.iter().enumerate() {
            tree.position[id as usize] = pos as u32;
        }
        tree.ids = order;
        tree
    }

    /// Computes node `node`'s box, and splits it (recursively) while it has more than
    /// `leaf` points and a positive extent.
    fn split(&mut self, points: &[T], order: &mut [u32], node: usize, leaf: usize) {
        let (start, end) = (self.nodes[node].start as usize, self.nodes[node].end as usize);
        let d = self.dim;
        let mut lo = row(points, d, order[start] as usize).to_vec();
        let mut hi = lo.clone();
        for &i in &order[start + 1..end] {
            for ((l, h), &v) in lo.iter_mut().zip(hi.iter_mut()).zip(row(points, d, i as usize)) {
                *l = if v < *l { v } else { *l };
                *h = if v > *h { v } else { *h };
            }
        }
        let widest = (0..d).fold(0, |b, j| if hi[j] - lo[j] > hi[b] - lo[b] { j } else { b });
        let flat = hi[widest] - lo[widest] <= T::zero();
        let b = 2 * d * node;
        self.boxes[b..b + d].copy_from_slice(&lo);
        self.boxes[b + d..b + 2 * d].copy_from_slice(&hi);
        if end - start <= leaf || flat {
            return;
        }
        let key = |i: &u32| (order_bits(points[*i as usize * d + widest].as_f64()), *i);
        let part = &mut order[start..end];
        let mid = part.len() / 2;
        part.select_nth_unstable_by_key(mid, key);
        let left = self.nodes.len();
        self.nodes[node].left = left as u32;
        let (s, m, e) = (start as u32, (start + mid) as u32, end as u32);
        self.nodes.push(Node { start: s, end: m, left: 0, live: m - s });
        self.nodes.push(Node { start: m, end: e, left: 0, live: e - m });
        self.boxes.resize(self.boxes.len() + 4 * d, T::zero());
        self.split(points, order, left, leaf);
        self.split(points, order, left + 1, leaf);
    }

    /// Number of points not removed.
    pub fn len(&self) -> usize {
        self.nodes.first().map_or(0, |r| r.live as usize)
    }

    /// True when every point was removed (or there were none).
    #[cfg(test)]
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// True when point `id` is stored and not removed.
    pub fn contains(&self, id: u32) -> bool {
        self.alive.get(id as usize).is_some_and(|&a| a)
    }

    /// Removes point `id` and shrinks the boxes on its path to the live points; returns
    /// false if it was already removed or never stored.
    pub fn remove(&mut self, id: u32) -> bool {
        if !self.contains(id) {
            return false;
        }
        self.alive[id as usize] = false;
        let (path, depth) = self.path(id);
        for &node in &path[..depth] {
            self.nodes[node].live -= 1;
        }
        self.refit_path(&path[..depth], true);
        true
    }

    /// Moves point `id` to `coords` (and, with keys, gives it `key`), reviving it if it was
    /// removed, and refits the boxes on its path: the tree keeps its shape, so the boxes of
    /// points that moved far may overlap (searches stay exact, only slower). For points that
    /// drift, e.g. the centroids of growing groups (`crate::centroid_table`).
    pub fn update(&mut self, id: u32, coords: &[T], key: Option<T>) {
        let (pos, d) = (self.position[id as usize] as usize, self.dim);
        self.coords[pos * d..(pos + 1) * d].copy_from_slice(coords);
        if let (Some(key), false) = (key, self.keys.is_empty()) {
            self.keys[pos] = key;
        }
        let (path, depth) = self.path(id);
        let revived = !std::mem::replace(&mut self.alive[id as usize], true);
        if revived {
            for &node in &path[..depth] {
                self.nodes[node].live += 1;
            }
        }
        // A revived point's ancestors left out its subtree while it had no live point,
        // whatever box that subtree kept: refit them all.
        self.refit_path(&path[..depth], !revived);
    }

    /// The nodes from the root to the leaf holding `id`, and their number.
    fn path(&self, id: u32) -> ([usize; 40], usize) {
        let pos = self.position[id as usize];
        // Median splits: depth ≤ log2(2^32) + 1 levels.
        let (mut path, mut depth) = ([0usize; 40], 0);
        let mut node = 0;
        loop {
            path[depth] = node;
            depth += 1;
            let left = self.nodes[node].left as usize;
            if left == 0 {
                return (path, depth);
            }
            node = if pos < self.nodes[left].end { left } else { left + 1 };
        }
    }

    /// Refits the boxes (and key maxima) of a root-to-leaf path from the leaf up; with
    /// `stop_early`, up to the first that does not change (its ancestors' boxes cannot).
    fn refit_path(&mut self, path: &[usize], stop_early: bool) {
        for &node in path.iter().rev() {
            if self.nodes[node].live > 0 && !self.refit(node) && stop_early {
                break;
            }
        }
    }

    /// Attaches a key to every point (`keys_by_id[id]`, e.g. ½‖x‖² for exact MDAV): each node
    /// then keeps the largest key of its live points, which [`BoxSearch::bound`] receives.
    pub fn set_keys(&mut self, keys_by_id: &[T]) {
        assert_eq!(keys_by_id.len(), self.position.len(), "one key per point");
        self.keys = self.ids.iter().map(|&id| keys_by_id[id as usize]).collect();
        self.key_max = vec![T::neg_infinity(); self.nodes.len()];
        // Children come after their parent: fit from the last node back.
        for node in (0..self.nodes.len()).rev() {
            self.key_max[node] = self.live_key_max(node);
        }
    }

    /// The largest key of the live points of `node` (−∞ if none), from its points or from
    /// its children's maxima.
    fn live_key_max(&self, node: usize) -> T {
        let n = &self.nodes[node];
        let larger = |a: T, b: T| if b > a { b } else { a };
        if n.left == 0 {
            (n.start as usize..n.end as usize)
                .filter(|&pos| self.alive[self.ids[pos] as usize])
                .fold(T::neg_infinity(), |m, pos| larger(m, self.keys[pos]))
        } else {
            let children = [n.left as usize, n.left as usize + 1];
            let live = children.into_iter().filter(|&c| self.nodes[c].live > 0);
            live.fold(T::neg_infinity(), |m, c| larger(m, self.key_max[c]))
        }
    }

    /// Recomputes the box (and key maximum) of a node with live points from its live points
    /// (a leaf) or its children's; returns whether it changed.
    fn refit(&mut self, node: usize) -> bool {
        let key_changed = !self.keys.is_empty() && {
            let m = self.live_key_max(node);
            std::mem::replace(&mut self.key_max[node], m) != m
        };
        let (d, n) = (self.dim, &self.nodes[node]);
        // The box is rebuilt in a reused buffer: removals are frequent (exact MDAV: n).
        let mut scratch = std::mem::take(&mut self.scratch);
        scratch.clear();
        scratch.resize(d, T::infinity());
        scratch.resize(2 * d, T::neg_infinity());
        let (lo, hi) = scratch.split_at_mut(d);
        let mut widen = |l: &[T], h: &[T]| {
            for j in 0..d {
                lo[j] = if l[j] < lo[j] { l[j] } else { lo[j] };
                hi[j] = if h[j] > hi[j] { h[j] } else { hi[j] };
            }
        };
        if n.left == 0 {
            for pos in n.start as usize..n.end as usize {
                if self.alive[self.ids[pos] as usize] {
                    let p = &self.coords[pos * d..(pos + 1) * d];
                    widen(p, p);
                }
            }
        } else {
            for child in [n.left as usize, n.left as usize + 1] {
                if self.nodes[child].live > 0 {
                    let (l, h) = self.node_box(child);
                    widen(l, h);
                }
            }
        }
        let b = &mut self.boxes[2 * d * node..2 * d * (node + 1)];
        let changed = b[..] != scratch[..];
        b.copy_from_slice(&scratch);
        self.scratch = scratch;
        changed || key_changed
    }

    /// The leaves in tree order, each as (ids, row-major coordinates): spatially coherent
    /// runs of at most the leaf size (more only where every point is equal), including
    /// removed points.
    pub fn leaves(&self) -> impl Iterator<Item = (&[u32], &[T])> + '_ {
        self.nodes.iter().filter(|n| n.left == 0).map(|n| {
            let (s, e) = (n.start as usize, n.end as usize);
            (&self.ids[s..e], &self.coords[s * self.dim..e * self.dim])
        })
    }

    fn node_box(&self, node: usize) -> (&[T], &[T]) {
        let b = &self.boxes[2 * self.dim * node..2 * self.dim * (node + 1)];
        b.split_at(self.dim)
    }

    /// Runs `search` over the live points: depth first, the more promising child first,
    /// skipping every subtree whose box `search` rules out (asked again just before the
    /// second child, as the search may have tightened meanwhile).
    pub fn walk<S: BoxSearch<T>>(&self, search: &mut S) {
        if let Some(bound) = self.bound(0, search)
            && search.worth(bound)
        {
            self.walk_node(0, search);
        }
    }

    /// The search's bound for `node`'s box; `None` when it has no live point.
    #[inline]
    fn bound<S: BoxSearch<T>>(&self, node: usize, search: &S) -> Option<f64> {
        let live = self.nodes.get(node).is_some_and(|n| n.live > 0);
        let key = self.key_max.get(node).copied();
        live.then(|| self.node_box(node)).map(|(lo, hi)| search.bound(lo, hi, key))
    }

    fn walk_node<S: BoxSearch<T>>(&self, node: usize, search: &mut S) {
        let n = &self.nodes[node];
        if n.left == 0 {
            let d = self.dim;
            for pos in n.start as usize..n.end as usize {
                let id = self.ids[pos];
                if self.alive[id as usize] {
                    search.offer(pos, id, &self.coords[pos * d..(pos + 1) * d]);
                }
            }
            return;
        }
        let left = n.left as usize;
        let (a, b) = (self.bound(left, search), self.bound(left + 1, search));
        let children = match (a, b) {
            (Some(a), Some(b)) if b > a => [(left + 1, b), (left, a)],
            (Some(a), Some(b)) => [(left, a), (left + 1, b)],
            (Some(a), None) => [(left, a), (left, f64::NEG_INFINITY)],
            (None, Some(b)) => [(left + 1, b), (left + 1, f64::NEG_INFINITY)],
            (None, None) => return,
        };
        let mut done = usize::MAX;
        for (child, bound) in children {
            if child != done && search.worth(bound) {
                self.walk_node(child, search);
            }
            done = child;
        }
    }

    /// Ids of the points in tree order (position `pos` of [`BoxSearch::offer`]).
    pub fn ids_in_tree_order(&self) -> &[u32] {
        &self.ids
    }

    /// The live point farthest from `query` by [`squared_distance`] (ties to the lowest id),
    /// exactly what a scan of the live points reports; `None` when none is live.
    pub fn farthest(&self, query: &[T]) -> Option<u32> {
        debug_assert_eq!(query.len(), self.dim);
        let mut search = FarthestSearch { query, best: None };
        self.walk(&mut search);
        search.best.map(|(_, id)| id)
    }

    /// The live point nearest to `query` by [`squared_distance`] (ties to the lowest id) and
    /// its distance; `None` when none is live.
    pub fn nearest(&self, query: &[T]) -> Option<(T, u32)> {
        let mut ties = Ties::within(T::infinity());
        self.search(query, &mut ties);
        ties.ids().iter().min().map(|&id| (ties.best(), id))
    }
}

/// A search over the live points of a [`KdTree`], pruned by boxes ([`KdTree::walk`]).
pub trait BoxSearch<T> {
    /// How promising the subtree with box `[lo, hi]` (and largest live key `key_max`, with
    /// keys) is (larger: visited first): a bound of what its points can offer, safe under
    /// rounding.
    fn bound(&self, lo: &[T], hi: &[T], key_max: Option<T>) -> f64;
    /// Whether a subtree of this bound may still change the answer (true for NaN).
    fn worth(&self, bound: f64) -> bool;
    /// Sees a live point: its position in tree order, id and coordinates.
    fn offer(&mut self, pos: usize, id: u32, coords: &[T]);
}

/// The nearest points by [`squared_distance`] (the [`NearestIndex`] search).
struct NearestSearch<'a, T> {
    query: &'a [T],
    ties: &'a mut Ties<T>,
}

impl<T: Float> BoxSearch<T> for NearestSearch<'_, T> {
    #[inline]
    fn bound(&self, lo: &[T], hi: &[T], _: Option<T>) -> f64 {
        -box_lower_bound(self.query, lo, hi).as_f64()
    }

    #[inline]
    fn worth(&self, bound: f64) -> bool {
        -bound <= self.ties.best().as_f64()
    }

    #[inline]
    fn offer(&mut self, _: usize, id: u32, coords: &[T]) {
        self.ties.offer(id, squared_distance(self.query, coords));
    }
}

/// The farthest point by [`squared_distance`]: largest distance, ties to the lowest id.
struct FarthestSearch<'a, T> {
    query: &'a [T],
    best: Option<(T, u32)>,
}

impl<T: Float> BoxSearch<T> for FarthestSearch<'_, T> {
    #[inline]
    fn bound(&self, lo: &[T], hi: &[T], _: Option<T>) -> f64 {
        box_upper_bound(self.query, lo, hi).as_f64()
    }

    #[inline]
    fn worth(&self, bound: f64) -> bool {
        // A box that may hold an equal distance (a tie of lower id) is kept.
        self.best.is_none_or(|(b, _)| bound.partial_cmp(&b.as_f64()) != Some(Ordering::Less))
    }

    #[inline]
    fn offer(&mut self, _: usize, id: u32, coords: &[T]) {
        let s = squared_distance(self.query, coords);
        if self.best.is_none_or(|(b, i)| s > b || (s == b && id < i)) {
            self.best = Some((s, id));
        }
    }
}

fn row<T>(points: &[T], dim: usize, i: usize) -> &[T] {
    &points[i * dim..(i + 1) * dim]
}

impl<T: Float> NearestIndex<T> for KdTree<T> {
    fn search(&self, query: &[T], ties: &mut Ties<T>) {
        debug_assert_eq!(query.len(), self.dim);
        self.walk(&mut NearestSearch { query, ties });
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn nearest<I: NearestIndex<f64>>(index: &I, q: &[f64]) -> (f64, Vec<u32>) {
        let mut t = Ties::within(f64::INFINITY);
        index.search(q, &mut t);
        t.sorted()
    }

    fn brute(points: &[f64], d: usize, q: &[f64], keep: impl Fn(u32) -> bool) -> (f64, Vec<u32>) {
        let mut all = Ties::within(f64::INFINITY);
        for (id, p) in points.chunks_exact(d).enumerate() {
            if keep(id as u32) {
                all.offer(id as u32, squared_distance(q, p));
            }
        }
        all.sorted()
    }

    /// The live point of largest distance, lowest id on ties, by a scan.
    fn brute_farthest(points: &[f64], d: usize, q: &[f64], gone: &[bool]) -> Option<u32> {
        let live = points.chunks_exact(d).enumerate().filter(|(id, _)| !gone[*id]);
        let scored = live.map(|(id, p)| (squared_distance(q, p), id as u32));
        scored
            .fold(None, |best: Option<(f64, u32)>, (s, id)| match best {
                Some((b, _)) if b >= s => best,
                _ => Some((s, id)),
            })
            .map(|(_, id)| id)
    }

    proptest! {
        #[test]
        fn equals_brute_force_with_ties_removals_and_moves(
            d in 1usize..6,
            raw in prop::collection::vec(-4i32..4, 1..400),
            queries in prop::collection::vec(-5i32..5, 6..60),
            removed in prop::collection::vec(any::<u32>(), 0..40),
            moved in prop::collection::vec((any::<u32>(), -8i32..8), 0..40),
        ) {
            // Small integers: many duplicate points and many exactly tied distances.
            let n = raw.len() / d;
            prop_assume!(n > 0);
            let mut points: Vec<f64> = raw[..n * d].iter().map(|&v| v as f64 * 0.5).collect();
            let mut tree = KdTree::with_leaf_size(&points, d, 3);
            let mut gone = vec![false; n];
            for r in removed {
                let id = r % n as u32;
                prop_assert_eq!(tree.remove(id), !gone[id as usize]);
                gone[id as usize] = true;
            }
            // Moves, far ones included, revive removed points.
            for (r, v) in moved {
                let id = r % n as u32;
                let to: Vec<f64> = (0..d).map(|j| (v + j as i32 % 3) as f64 * 0.5).collect();
                tree.update(id, &to, None);
                points[id as usize * d..(id as usize + 1) * d].copy_from_slice(&to);
                gone[id as usize] = false;
            }
            prop_assert_eq!(tree.len(), gone.iter().filter(|g| !**g).count());
            for q in queries.chunks_exact(d) {
                let q: Vec<f64> = q.iter().map(|&v| v as f64 * 0.3).collect();
                let want = brute(&points, d, &q, |id| !gone[id as usize]);
                prop_assert_eq!(tree.nearest(&q), want.1.first().map(|&id| (want.0, id)));
                prop_assert_eq!(nearest(&tree, &q), want);
                prop_assert_eq!(tree.farthest(&q), brute_farthest(&points, d, &q, &gone));
            }
        }
    }

    #[test]
    fn a_bound_hides_farther_points_and_keeps_equal_ones() {
        let points = [0.0, 0.0, 1.0, 0.0, 0.0, 1.0, 3.0, 3.0];
        let tree = KdTree::with_leaf_size(&points, 2, 1);
        let mut t = Ties::within(1.0);
        tree.search(&[0.0, 0.0], &mut t);
        assert_eq!(t.ids(), &[0]);
        let mut t = Ties::within(1.0);
        tree.search(&[1.0, 1.0], &mut t);
        assert_eq!(t.sorted().1, vec![1, 2]);
        let empty = KdTree::<f64>::new(&[], 2);
        assert!(empty.is_empty());
        assert!(!empty.clone().remove(0));
    }

    #[test]
    fn a_revived_point_widens_its_ancestors() {
        // Revived where its leaf's stale box already was: the root must still widen.
        let mut tree = KdTree::with_leaf_size(&[0.0, 10.0], 1, 1);
        tree.remove(0);
        tree.update(0, &[0.0], None);
        let mut t = Ties::within(1.0);
        tree.search(&[0.0], &mut t);
        assert_eq!(t.ids(), &[0]);
    }
}
