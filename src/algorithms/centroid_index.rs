//! Exact nearest-centroid search over a changing set of clusters (ONA, ONA*).
//!
//! Centroids are kept sorted by their projection p(c) = ⟨c, u⟩ on a fixed unit axis u (the
//! data's principal direction). Since |p(x) − p(c)| ≤ ‖x − c‖, a search that walks outward
//! from p(x), always taking the side with the smaller gap, can stop as soon as the gap
//! squared exceeds the best squared distance found: every centroid not yet seen is at least
//! that far. A rounding margin keeps the stop conservative, so the answer, ties to the
//! lowest cluster id included, is the brute-force one. On low-dimensional data only a thin
//! slab of centroids is examined; updates cost O(log #clusters).

use crate::float::order_bits as ordered;
use std::collections::BTreeSet;

/// Cluster ids sorted by the projection of their centroid.
#[derive(Debug, Clone)]
pub struct CentroidIndex {
    axis: Vec<f64>,
    projection: Vec<Option<f64>>,
    sorted: BTreeSet<(u64, u32)>,
}

impl CentroidIndex {
    /// An empty index projecting on `axis` (a unit vector).
    pub fn new(axis: Vec<f64>) -> Self {
        CentroidIndex { axis, projection: Vec::new(), sorted: BTreeSet::new() }
    }

    /// The projection of a point on the index's axis.
    pub fn project(&self, x: &[f64]) -> f64 {
        self.axis.iter().zip(x).map(|(a, v)| a * v).sum()
    }

    /// Sets cluster `g`'s centroid (`None` removes it).
    pub fn set(&mut self, g: usize, centroid: Option<&[f64]>) {
        if self.projection.len() <= g {
            self.projection.resize(g + 1, None);
        }
        if let Some(old) = self.projection[g].take() {
            self.sorted.remove(&(ordered(old), g as u32));
        }
        if let Some(c) = centroid {
            let p = self.project(c);
            self.projection[g] = Some(p);
            self.sorted.insert((ordered(p), g as u32));
        }
    }

    /// The indexed cluster other than `except` minimizing `dist2(g)` (the squared distance
    /// from `x` to g's centroid), ties to the lowest id.
    pub fn nearest(&self, x: &[f64], except: usize, dist2: impl Fn(usize) -> f64) -> Option<usize> {
        let q = self.project(x);
        let mut up = self.sorted.range((ordered(q), 0)..).peekable();
        let mut down = self.sorted.range(..(ordered(q), 0)).rev().peekable();
        let gap = |k: &(u64, u32)| {
            let p = self.projection[k.1 as usize].expect("indexed");
            let slack = 1e-12 * (1.0 + q.abs() + p.abs());
            ((p - q).abs() - slack).max(0.0)
        };
        let mut best: Option<(f64, usize)> = None;
        loop {
            let take_up = match (up.peek(), down.peek()) {
                (Some(a), Some(b)) => gap(a) <= gap(b),
                (Some(_), None) => true,
                (None, Some(_)) => false,
                (None, None) => break,
            };
            let key = *if take_up { up.next() } else { down.next() }.expect("peeked");
            let g = gap(&key);
            if best.is_some_and(|(d, _)| g * g > d * (1.0 + 1e-12)) {
                break;
            }
            let id = key.1 as usize;
            if id == except {
                continue;
            }
            let d = dist2(id);
            if best.is_none_or(|(bd, bg)| d < bd || (d == bd && id < bg)) {
                best = Some((d, id));
            }
        }
        best.map(|(_, g)| g)
    }
}

/// The principal direction (unit vector) of the rows of `x` (n × d, row-major), by power
/// iteration on the scatter matrix; the first axis when the data has no spread.
pub fn principal_axis(rows: impl Iterator<Item = Vec<f64>> + Clone, d: usize) -> Vec<f64> {
    let n = rows.clone().count().max(1) as f64;
    let mean: Vec<f64> = (0..d).map(|j| rows.clone().map(|r| r[j]).sum::<f64>() / n).collect();
    let mut cov = vec![0.0; d * d];
    for r in rows {
        for i in 0..d {
            for j in 0..d {
                cov[i * d + j] += (r[i] - mean[i]) * (r[j] - mean[j]);
            }
        }
    }
    let mut v: Vec<f64> = (0..d).map(|j| 1.0 + j as f64 * 1e-3).collect();
    for _ in 0..100 {
        let w: Vec<f64> = (0..d).map(|i| (0..d).map(|j| cov[i * d + j] * v[j]).sum()).collect();
        let norm = w.iter().map(|a| a * a).sum::<f64>().sqrt();
        if norm == 0.0 || !norm.is_finite() {
            let mut e = vec![0.0; d];
            e[0] = 1.0;
            return e;
        }
        v = w.iter().map(|a| a / norm).collect();
    }
    v
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        #[test]
        fn equals_brute_force(
            cents in prop::collection::vec((-4i8..4, -4i8..4), 1..60),
            queries in prop::collection::vec((-5i8..5, -5i8..5), 1..20),
            except in 0usize..60,
        ) {
            let c: Vec<[f64; 2]> = cents.iter().map(|&(a, b)| [a as f64 / 2.0, b as f64]).collect();
            let mut idx = CentroidIndex::new(vec![0.6, 0.8]);
            for (g, p) in c.iter().enumerate() {
                idx.set(g, Some(p));
            }
            idx.set(0, None); // a dissolved cluster
            for &(a, b) in &queries {
                let x = [a as f64 / 2.0, b as f64];
                let d2 = |g: usize| (x[0] - c[g][0]).powi(2) + (x[1] - c[g][1]).powi(2);
                let brute = (1..c.len()).filter(|&g| g != except)
                    .min_by(|&a, &b| d2(a).partial_cmp(&d2(b)).unwrap().then(a.cmp(&b)));
                prop_assert_eq!(idx.nearest(&x, except, d2), brute);
            }
        }
    }

    #[test]
    fn principal_axis_follows_the_spread() {
        let rows: Vec<Vec<f64>> =
            (0..50).map(|i| vec![i as f64, 2.0 * i as f64 + (i % 2) as f64]).collect();
        let a = principal_axis(rows.iter().cloned(), 2);
        assert!((a[1] / a[0] - 2.0).abs() < 0.05, "{a:?}");
    }
}
