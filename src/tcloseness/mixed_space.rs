//! A mixed key as t-closeness measures it (docs/algorithms.md#mixed-keys): numeric columns
//! (standardized rows) and nominal columns as codes, in the geometry of the one-hot
//! embedding that scales a nominal attribute of weight w by w/√2, without its columns. A
//! point holds each nominal attribute's level shares p (a record: its level at share 1); a
//! record of level a is (w²/2)·(1 − 2·p[a] + ‖p‖²) from it on that attribute, two points
//! (w²/2)·‖p − q‖². Shares are kept sparse (the levels present), so a class costs its
//! records, not its attribute's levels.

use super::space::{Centroid, Space};
use crate::index::kdtree::KdTree;
use crate::index::squared_distance;
use std::sync::OnceLock;

/// Codes as tree coordinates are scaled by this power of two (exactly, both ways), so that
/// a tree splits on the numbers first, where the farthest and nearest searches prune, and
/// on code ranges once the numbers are narrow.
pub(super) const CODE_SCALE: f64 = 1.0 / 256.0;

/// A nominal attribute's sparse level sums or shares, sorted by level.
type Levels = Vec<(u32, f64)>;

/// Numeric rows and nominal codes of a job's records.
#[derive(Debug, Clone)]
pub struct MixedSpace {
    rows: Vec<f64>,
    d: usize,
    n: usize,
    /// Codes, row-major n × c.
    codes: Vec<u32>,
    /// Levels per nominal attribute (largest code + 1).
    levels: Vec<usize>,
    /// w²/2 per nominal attribute.
    half: Vec<f64>,
    /// The rows with the codes as coordinates (n × (d + c)), built when a tree first asks.
    tree_rows: OnceLock<Vec<f64>>,
}

/// Key sums: numeric column sums and, per nominal attribute, the weight on each level.
#[derive(Debug, Clone, PartialEq)]
pub struct MixedSums {
    numeric: Vec<f64>,
    levels: Vec<Levels>,
}

/// A record or centroid: numeric coordinates and, per nominal attribute, w²/2, the level
/// shares and their squared norm.
#[derive(Debug, Clone, PartialEq)]
pub struct MixedPoint {
    numeric: Vec<f64>,
    nominal: Vec<(f64, Levels, f64)>,
}

impl MixedPoint {
    /// The numeric coordinates.
    pub(super) fn numeric(&self) -> &[f64] {
        &self.numeric
    }
}

impl MixedSpace {
    /// `rows` (n × d standardized numeric keys), `codes` (n × c, row-major) and one weight
    /// per nominal column (checked finite and positive by the caller).
    pub fn new(rows: Vec<f64>, d: usize, n: usize, codes: Vec<u32>, weights: &[f64]) -> Self {
        debug_assert!(rows.len() == n * d && codes.len() == n * weights.len());
        let half: Vec<f64> = weights.iter().map(|w| 0.5 * w * w).collect();
        let mut levels = vec![0; half.len()];
        for record in codes.chunks_exact(half.len().max(1)) {
            levels.iter_mut().zip(record).for_each(|(l, &c)| *l = (*l).max(c as usize + 1));
        }
        MixedSpace { rows, d, n, codes, levels, half, tree_rows: OnceLock::new() }
    }

    fn row(&self, i: usize) -> &[f64] {
        &self.rows[i * self.d..(i + 1) * self.d]
    }

    /// Number of numeric columns.
    pub(super) fn numeric_dim(&self) -> usize {
        self.d
    }

    /// Each nominal attribute's term from `point` by level (O(levels)): what a scan or a
    /// tree search adds for a record's code, the values [`Space::dist2`] computes.
    pub(super) fn term_tables(&self, point: &MixedPoint) -> Vec<Vec<f64>> {
        let attributes = point.nominal.iter().zip(&self.levels);
        attributes
            .map(|((h, p, norm), &levels)| {
                (0..levels as u32).map(|l| term(*h, p, *norm, l)).collect()
            })
            .collect()
    }

    fn codes_of(&self, i: usize) -> &[u32] {
        let c = self.half.len();
        &self.codes[i * c..(i + 1) * c]
    }
}

/// The distance from a record (numeric keys `row`, `codes`) to a point of numeric
/// coordinates `numeric` whose nominal terms are tabulated by level
/// ([`MixedSpace::term_tables`]): [`Space::dist2`]'s sum, term for term.
#[inline]
pub(super) fn tabulated(
    row: &[f64],
    numeric: &[f64],
    codes: impl Iterator<Item = u32>,
    tables: &[Vec<f64>],
) -> f64 {
    squared_distance(row, numeric) + codes.zip(tables).map(|(c, t)| t[c as usize]).sum::<f64>()
}

/// The value at `level` of sparse `levels` (0 when absent).
fn share(levels: &Levels, level: u32) -> f64 {
    levels.binary_search_by_key(&level, |e| e.0).map_or(0.0, |at| levels[at].1)
}

/// Adds `weight` at `level`.
fn add_level(levels: &mut Levels, level: u32, weight: f64) {
    match levels.binary_search_by_key(&level, |e| e.0) {
        Ok(at) => levels[at].1 += weight,
        Err(at) => levels.insert(at, (level, weight)),
    }
}

/// What a record of level `level` adds to its squared distance from a point of shares `p`
/// (squared norm `norm`) on a nominal attribute of w²/2 = `half`.
#[inline]
fn term(half: f64, p: &Levels, norm: f64, level: u32) -> f64 {
    half * (1.0 - 2.0 * share(p, level) + norm)
}

/// Σ over the levels of either of (a_l − b_l)², in level order.
fn level_gap2(a: &Levels, b: &Levels) -> f64 {
    let (mut i, mut j, mut acc) = (0, 0, 0.0);
    while i < a.len() || j < b.len() {
        // The lower level first; one absent from a list is at 0 there.
        let (p, q) = (a.get(i).map_or(u32::MAX, |e| e.0), b.get(j).map_or(u32::MAX, |e| e.0));
        let x = if p <= q {
            i += 1;
            a[i - 1].1
        } else {
            0.0
        };
        let y = if q <= p {
            j += 1;
            b[j - 1].1
        } else {
            0.0
        };
        acc += (x - y) * (x - y);
    }
    acc
}

impl Centroid for MixedPoint {
    fn gap2(&self, other: &Self) -> f64 {
        self.gap2_within(other, f64::INFINITY)
    }

    /// The numeric part first: the nominal part only adds (a sum of squares, and rounding
    /// is monotone), so past `limit` it is not computed.
    fn gap2_within(&self, other: &Self, limit: f64) -> f64 {
        let numeric = squared_distance(&self.numeric, &other.numeric);
        if numeric > limit {
            return numeric;
        }
        let nominal = self.nominal.iter().zip(&other.nominal);
        numeric + nominal.map(|(a, b)| a.0 * level_gap2(&a.1, &b.1)).sum::<f64>()
    }

    fn coords(&self) -> Option<&[f64]> {
        None
    }
}

impl Space for MixedSpace {
    type Sums = MixedSums;
    type Point = MixedPoint;

    fn n(&self) -> usize {
        self.n
    }

    fn d(&self) -> usize {
        self.d + self.half.len()
    }

    fn no_sums(&self) -> MixedSums {
        MixedSums { numeric: vec![0.0; self.d], levels: vec![Vec::new(); self.half.len()] }
    }

    fn add(&self, sums: &mut MixedSums, i: usize, weight: f64) {
        sums.numeric.iter_mut().zip(self.row(i)).for_each(|(s, v)| *s += weight * v);
        for (levels, &code) in sums.levels.iter_mut().zip(self.codes_of(i)) {
            add_level(levels, code, weight);
        }
    }

    fn absorb(&self, into: &mut MixedSums, from: &MixedSums) {
        into.numeric.iter_mut().zip(&from.numeric).for_each(|(s, v)| *s += v);
        for (levels, other) in into.levels.iter_mut().zip(&from.levels) {
            for &(level, weight) in other {
                add_level(levels, level, weight);
            }
        }
    }

    fn record(&self, i: usize) -> MixedPoint {
        let nominal = self.codes_of(i).iter().zip(&self.half);
        MixedPoint {
            numeric: self.row(i).to_vec(),
            nominal: nominal.map(|(&code, &h)| (h, vec![(code, 1.0)], 1.0)).collect(),
        }
    }

    fn mean(&self, sums: &MixedSums, total: f64) -> MixedPoint {
        let nominal = sums.levels.iter().zip(&self.half).map(|(levels, &h)| {
            let p: Levels = levels.iter().map(|&(l, w)| (l, w / total)).collect();
            let norm = p.iter().map(|e| e.1 * e.1).sum();
            (h, p, norm)
        });
        MixedPoint {
            numeric: sums.numeric.iter().map(|s| s / total).collect(),
            nominal: nominal.collect(),
        }
    }

    fn dist2(&self, i: usize, point: &MixedPoint) -> f64 {
        let nominal = self.codes_of(i).iter().zip(&point.nominal);
        squared_distance(self.row(i), &point.numeric)
            + nominal.map(|(&c, (h, p, norm))| term(*h, p, *norm, c)).sum::<f64>()
    }

    /// Each nominal attribute's term tabulated by level once (O(levels)), then O(attributes)
    /// table reads per record.
    fn scan(&self, ids: &[u32], point: &MixedPoint, mut visit: impl FnMut(usize, f64)) {
        let tables = self.term_tables(point);
        for &i in ids {
            let i = i as usize;
            let codes = self.codes_of(i).iter().copied();
            visit(i, tabulated(self.row(i), &point.numeric, codes, &tables));
        }
    }

    fn rows(&self) -> Option<&[f64]> {
        let rows = self.tree_rows.get_or_init(|| {
            let coded = (0..self.n).map(|i| (self.row(i), self.codes_of(i)));
            let code = |&v: &u32| f64::from(v) * CODE_SCALE;
            coded.flat_map(|(r, c)| r.iter().copied().chain(c.iter().map(code))).collect()
        });
        Some(rows)
    }

    fn index_dim(&self) -> usize {
        self.d
    }

    fn nearest_in(&self, tree: &KdTree<f64>, point: &MixedPoint) -> Option<(f64, u32)> {
        self.nearest_in_tree(tree, point)
    }

    fn farthest_in(&self, tree: &KdTree<f64>, point: &MixedPoint) -> Option<u32> {
        self.farthest_in_tree(tree, point)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tcloseness::space::Dense;

    /// Distances, centroids and their gaps equal the dense embedding's (nominal columns
    /// one-hot, scaled by w/√2), on values where the arithmetic is exact up to rounding.
    #[test]
    fn distances_are_the_embeddings() {
        let rows = vec![0.5, -1.0, 2.0, 0.25, 1.5];
        let codes = vec![0, 2, 1, 2, 0, 0, 1, 1, 2, 0];
        let weights = [1.0, 2.0];
        let mixed = MixedSpace::new(rows.clone(), 1, 5, codes.clone(), &weights);
        let embedded: Vec<f64> = (0..5)
            .flat_map(|i| {
                let mut r = vec![rows[i]];
                for (a, w) in weights.iter().enumerate() {
                    let mut block = vec![0.0; 3];
                    block[codes[2 * i + a] as usize] = w / 2f64.sqrt();
                    r.extend(block);
                }
                r
            })
            .collect();
        let dense = Dense::new(&embedded, 7);
        let close = |a: f64, b: f64| (a - b).abs() <= 1e-12 * (1.0 + b.abs());
        let (ms, mt) = mixed.weighted([0, 1, 3], &[1.0, 2.0, 1.0, 0.5, 1.0]);
        let (ds, dt) = dense.weighted([0, 1, 3], &[1.0, 2.0, 1.0, 0.5, 1.0]);
        assert_eq!(mt, dt);
        let (mc, dc) = (mixed.mean(&ms, mt), dense.mean(&ds, dt));
        let (mo, dother) = (mixed.mean(&mixed.weighted([2, 4], &[1.0; 5]).0, 2.0), {
            dense.mean(&dense.weighted([2, 4], &[1.0; 5]).0, 2.0)
        });
        assert!(close(mc.gap2(&mo), dc.gap2(&dother)));
        let all: Vec<u32> = (0..5).collect();
        let mut scanned = Vec::new();
        mixed.scan(&all, &mc, |i, e| scanned.push((i, e)));
        assert_eq!(scanned, (0..5).map(|i| (i, mixed.dist2(i, &mc))).collect::<Vec<_>>());
        // Within a limit at or above the gap: the gap; below it: something past the limit.
        let gap = mc.gap2(&mo);
        assert_eq!(mc.gap2_within(&mo, gap), gap);
        let numeric = squared_distance(&mc.numeric, &mo.numeric);
        assert!(numeric < gap && mc.gap2_within(&mo, numeric) == gap);
        assert!(mc.gap2_within(&mo, 0.5 * numeric) > 0.5 * numeric);
        for i in 0..5 {
            assert!(close(mixed.dist2(i, &mc), dense.dist2(i, &dc)), "record {i}");
            for j in 0..5 {
                assert!(close(mixed.dist2(i, &mixed.record(j)), dense.dist2(i, &dense.record(j))));
            }
        }
        // Taking a record out leaves a zero share, not a different centroid.
        let mut sums = mixed.no_sums();
        mixed.absorb(&mut sums, &ms);
        mixed.add(&mut sums, 1, -2.0);
        let (want, total) = mixed.weighted([0, 3], &[1.0, 2.0, 1.0, 0.5, 1.0]);
        let (a, b) = (mixed.mean(&sums, total), mixed.mean(&want, total));
        assert!((0..5).all(|i| mixed.dist2(i, &a) == mixed.dist2(i, &b)));
        assert_eq!(a.gap2(&b), 0.0);
    }
}
