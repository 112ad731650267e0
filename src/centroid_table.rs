//! Centroids of a set of groups in column-major order, for brute-force nearest-group
//! queries that vectorize across groups (incremental microaggregation folds thousands of
//! records into thousands of groups; a row-at-a-time scan with a division per element was
//! slower than re-running F-MDAV).
//!
//! A query scores every group in blocks that stay in L1: the squared distance
//! Σ_j (y_j − c_gj)² in attribute order, optionally weighted by n_g/(n_g + 1) (the SSE
//! increase, thesis §3.2.6). Ties go to the lowest group id.

/// Group centroids, one contiguous slice per attribute, plus group sizes.
#[derive(Debug, Clone, Default)]
pub struct CentroidTable {
    d: usize,
    cols: Vec<Vec<f64>>,
    sizes: Vec<f64>,
}

const BLOCK: usize = 64;

impl CentroidTable {
    /// An empty table for `d` attributes.
    pub fn new(d: usize) -> Self {
        CentroidTable { d, cols: vec![Vec::new(); d], sizes: Vec::new() }
    }

    /// Sets group `g`'s centroid and size (growing the table as needed).
    pub fn set(&mut self, g: usize, centroid: &[f64], size: usize) {
        if g >= self.sizes.len() {
            self.sizes.resize(g + 1, 0.0);
            for c in &mut self.cols {
                c.resize(g + 1, 0.0);
            }
        }
        for (c, &v) in self.cols.iter_mut().zip(centroid) {
            c[g] = v;
        }
        self.sizes[g] = size as f64;
    }

    /// The non-empty group minimizing ‖y − c_g‖² (or, `inertial`, n_g/(n_g+1)·‖y − c_g‖²),
    /// ties to the lowest id.
    pub fn nearest(&self, y: &[f64], inertial: bool) -> Option<usize> {
        debug_assert_eq!(y.len(), self.d);
        let mut best: Option<(f64, usize)> = None;
        let mut buf = [0.0f64; BLOCK];
        let g_count = self.sizes.len();
        let mut start = 0;
        while start < g_count {
            let len = BLOCK.min(g_count - start);
            let out = &mut buf[..len];
            out.fill(0.0);
            for (col, &v) in self.cols.iter().zip(y) {
                for (o, &c) in out.iter_mut().zip(&col[start..start + len]) {
                    let t = v - c;
                    *o += t * t;
                }
            }
            for (i, &dist) in out.iter().enumerate() {
                let n = self.sizes[start + i];
                if n == 0.0 {
                    continue;
                }
                let score = if inertial { n / (n + 1.0) * dist } else { dist };
                if best.is_none_or(|(b, _)| score < b) {
                    best = Some((score, start + i));
                }
            }
            start += len;
        }
        best.map(|(_, g)| g)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nearest_and_inertial_choices() {
        let mut t = CentroidTable::new(2);
        t.set(0, &[0.0, 0.0], 1);
        t.set(1, &[3.0, 0.0], 100);
        t.set(2, &[9.0, 9.0], 0); // empty: never chosen
        let y = [1.6, 0.0];
        assert_eq!(t.nearest(&y, false), Some(1)); // 1.96 < 2.56
        assert_eq!(t.nearest(&y, true), Some(0)); // 0.5 * 2.56 = 1.28 < 0.99 * 1.96
        t.set(1, &[-1.6, 0.0], 5); // a tie at distance 1.6 goes to the lower id
        assert_eq!(t.nearest(&[0.0, 0.0], false), Some(0));
        assert_eq!(t.nearest(&[-0.8, 0.0], false), Some(0));
        assert_eq!(CentroidTable::new(2).nearest(&y, false), None);
    }
}
