//! The key centroids of the classes still alive during verification's merges, for "which
//! alive class is nearest to this point" (by [`Centroid::gap2`], ties to the lowest
//! label) while classes die and centroids move, exactly as a scan of the alive classes
//! answers it.
//!
//! With many classes in low dimension, a k-d tree of the centroids ([`KdTree::remove`] for
//! a class that dies, [`KdTree::update`] for a centroid that moves), rebuilt from the alive
//! classes whenever an eighth of the ones it was built with have died, so that its size and
//! boxes follow the alive classes and their moved centroids (`benches/t_close_merge.rs`,
//! 60 000 classes, d = 8: 4.1 s without rebuilds, 2.4–2.9 s rebuilt at half, 1.9 s at an
//! eighth). Otherwise, as [`auto_min_groups`] says for
//! incremental microaggregation's centroids (a tree's boxes rarely prune above d = 8: with
//! 20 000 classes at d = 15 the tree took 4.2 s, the scan 1.3 s), the alive centroids are
//! kept in a vector and scanned, as are a mixed key's centroids, which have no coordinates
//! a tree could index. Both are exact: the same distances, compared the same way.

use crate::centroid_table::auto_min_groups;
use crate::index::IndexChoice;
use crate::index::kdtree::KdTree;
use crate::tcloseness::space::Centroid;

/// The alive classes' centroids (see the module docs); classes are labels 0..g.
#[derive(Debug, Clone)]
pub struct AliveCentroids<P> {
    /// The k-d tree, when used (centroids with coordinates only).
    tree: Option<KdTree<f64>>,
    /// The alive labels: in increasing order in the tree's id order (so its ties to the
    /// lowest id are ties to the lowest label), in any order for the scan.
    labels: Vec<u32>,
    /// Where each alive label is in `labels` (its id in the tree), u32::MAX once dead.
    slot: Vec<u32>,
    /// The scan's centroids, in `labels` order (empty with a tree).
    points: Vec<P>,
    /// Classes alive now.
    alive: usize,
}

impl<P: Centroid> AliveCentroids<P> {
    /// Classes 0..g alive, with `centroids` (by label); a k-d tree as `choice` says, for
    /// centroids with coordinates (`Auto`: from [`auto_min_groups`] classes in dimension d,
    /// as for the centroids of incremental microaggregation).
    pub fn new(centroids: &[P], choice: IndexChoice) -> Self {
        let g = centroids.len();
        let mut index = AliveCentroids {
            tree: None,
            labels: (0..g as u32).collect(),
            slot: (0..g as u32).collect(),
            points: Vec::new(),
            alive: g,
        };
        let d = centroids.first().and_then(|c| c.coords()).map_or(0, <[f64]>::len);
        if d > 0 && choice.picks(auto_min_groups(d).is_some_and(|min| g >= min)) {
            index.rebuild(centroids);
        } else {
            index.points = centroids.to_vec();
        }
        index
    }

    /// Number of alive classes.
    pub fn len(&self) -> usize {
        self.alive
    }

    /// Whether class `c` is alive.
    pub fn contains(&self, c: usize) -> bool {
        self.slot[c] != u32::MAX
    }

    /// Class `c` (alive) dies; `centroids` (by label) hold every alive class's current
    /// centroid, for a rebuild.
    pub fn remove(&mut self, c: usize, centroids: &[P]) {
        let at = std::mem::replace(&mut self.slot[c], u32::MAX) as usize;
        self.alive -= 1;
        if let Some(tree) = &mut self.tree {
            tree.remove(at as u32);
            if 8 * self.alive < 7 * self.labels.len() {
                self.rebuild(centroids);
            }
        } else {
            self.labels.swap_remove(at);
            self.points.swap_remove(at);
            if let Some(&moved) = self.labels.get(at) {
                self.slot[moved as usize] = at as u32;
            }
        }
    }

    /// A new tree of the alive classes, ids in label order.
    fn rebuild(&mut self, centroids: &[P]) {
        let slot = &self.slot;
        self.labels.retain(|&c| slot[c as usize] != u32::MAX);
        let mut rows = Vec::new();
        for (id, &c) in self.labels.iter().enumerate() {
            self.slot[c as usize] = id as u32;
            rows.extend_from_slice(centroids[c as usize].coords().expect("indexed centroids"));
        }
        let d = rows.len() / self.labels.len().max(1);
        self.tree = Some(KdTree::new(&rows, d));
    }

    /// Class `c` (alive) now has centroid `centroid`.
    pub fn moved(&mut self, c: usize, centroid: &P) {
        let at = self.slot[c];
        match &mut self.tree {
            Some(tree) => tree.update(at, centroid.coords().expect("indexed centroids"), None),
            None => self.points[at as usize] = centroid.clone(),
        }
    }

    /// The alive class nearest to `query`, ties to the lowest label; `None` when none is.
    pub fn nearest(&self, query: &P) -> Option<usize> {
        match (&self.tree, query.coords()) {
            (Some(tree), Some(coords)) => {
                tree.nearest(coords).map(|(_, id)| self.labels[id as usize] as usize)
            }
            _ => {
                let mut best: Option<(f64, u32)> = None;
                for (&c, p) in self.labels.iter().zip(&self.points) {
                    let s = query.gap2_within(p, best.map_or(f64::INFINITY, |b| b.0));
                    if best.is_none_or(|b| (s, c) < b) {
                        best = Some((s, c));
                    }
                }
                best.map(|(_, c)| c as usize)
            }
        }
    }
}
