//! Running statistics of a growing set of clusters (size and f64 sum per cluster), with
//! the two questions MDAV* and ONA* ask of them (ona-mona §3): which cluster's SSE rises
//! least when a record joins, and which centroid is nearest.
//!
//! SSE changes are exact identities: adding x to C (size m, centroid c) raises its SSE by
//! m/(m+1)·‖x − c‖²; removing x lowers it by m/(m−1)·‖x − c‖².

/// Sizes and sums of clusters with ids `0..len()`; ids are never reused.
#[derive(Debug, Clone, Default)]
pub struct ClusterStats {
    d: usize,
    sizes: Vec<usize>,
    sums: Vec<f64>,
}

impl ClusterStats {
    /// No clusters, records of `d` attributes.
    pub fn new(d: usize) -> Self {
        ClusterStats { d, sizes: Vec::new(), sums: Vec::new() }
    }

    /// Number of cluster ids ever created.
    pub fn len(&self) -> usize {
        self.sizes.len()
    }

    /// True before the first cluster.
    pub fn is_empty(&self) -> bool {
        self.sizes.is_empty()
    }

    /// Size of cluster `g`.
    pub fn size(&self, g: usize) -> usize {
        self.sizes[g]
    }

    /// Creates an empty cluster and returns its id.
    pub fn push(&mut self) -> usize {
        self.sizes.push(0);
        self.sums.extend(std::iter::repeat_n(0.0, self.d));
        self.sizes.len() - 1
    }

    /// Adds the record `x` to cluster `g`.
    pub fn add(&mut self, g: usize, x: &[f64]) {
        self.sizes[g] += 1;
        for (s, v) in self.sums[g * self.d..(g + 1) * self.d].iter_mut().zip(x) {
            *s += v;
        }
    }

    /// Removes the record `x` from cluster `g`.
    pub fn remove(&mut self, g: usize, x: &[f64]) {
        self.sizes[g] -= 1;
        for (s, v) in self.sums[g * self.d..(g + 1) * self.d].iter_mut().zip(x) {
            *s -= v;
        }
    }

    /// Centroid of cluster `g` (which must not be empty).
    pub fn centroid(&self, g: usize) -> Vec<f64> {
        let m = self.sizes[g] as f64;
        self.sums[g * self.d..(g + 1) * self.d].iter().map(|s| s / m).collect()
    }

    /// Squared distance from `x` to the centroid of cluster `g` (which must not be empty).
    #[inline(always)]
    pub fn dist2(&self, g: usize, x: &[f64]) -> f64 {
        let m = self.sizes[g] as f64;
        self.sums[g * self.d..(g + 1) * self.d]
            .iter()
            .zip(x)
            .map(|(s, v)| (v - s / m).powi(2))
            .sum()
    }

    /// Squared distance from its member `x` to the centroid of cluster `g` without `x`
    /// (`g` has ≥ 2 records).
    #[inline]
    pub fn dist2_without(&self, g: usize, x: &[f64]) -> f64 {
        let m = self.sizes[g] as f64;
        self.sums[g * self.d..(g + 1) * self.d]
            .iter()
            .zip(x)
            .map(|(s, v)| (v - (s - v) / (m - 1.0)).powi(2))
            .sum()
    }

    /// SSE increase of cluster `g` if `x` joins it.
    #[inline(always)]
    pub fn join_cost(&self, g: usize, x: &[f64]) -> f64 {
        let m = self.sizes[g] as f64;
        m / (m + 1.0) * self.dist2(g, x)
    }

    /// SSE decrease of cluster `g` if its member `x` leaves (`g` has ≥ 2 records).
    #[inline(always)]
    pub fn leave_gain(&self, g: usize, x: &[f64]) -> f64 {
        let m = self.sizes[g] as f64;
        m / (m - 1.0) * self.dist2(g, x)
    }

    /// The non-empty cluster accepted by `allowed` minimizing `score(g)`, ties to the lowest id.
    pub fn argmin(
        &self,
        allowed: impl Fn(usize) -> bool,
        score: impl Fn(usize) -> f64,
    ) -> Option<usize> {
        let mut best: Option<(f64, usize)> = None;
        for g in 0..self.len() {
            if self.sizes[g] == 0 || !allowed(g) {
                continue;
            }
            let s = score(g);
            if best.is_none_or(|(b, _)| s < b) {
                best = Some((s, g));
            }
        }
        best.map(|(_, g)| g)
    }
}

/// Within-group sum of squares of a set of records (f64, two-pass).
pub fn sse(rows: &[Vec<f64>]) -> f64 {
    let Some(first) = rows.first() else { return 0.0 };
    let m = rows.len() as f64;
    let mean: Vec<f64> =
        (0..first.len()).map(|j| rows.iter().map(|r| r[j]).sum::<f64>() / m).collect();
    rows.iter().map(|r| r.iter().zip(&mean).map(|(v, c)| (v - c).powi(2)).sum::<f64>()).sum()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cost_identities_match_recomputed_sse() {
        let a = vec![vec![0.0, 1.0], vec![2.0, 5.0], vec![4.0, 0.0]];
        let x = vec![7.0, -1.0];
        let mut st = ClusterStats::new(2);
        let g = st.push();
        for r in &a {
            st.add(g, r);
        }
        let mut with = a.clone();
        with.push(x.clone());
        assert!((st.join_cost(g, &x) - (sse(&with) - sse(&a))).abs() < 1e-12);
        st.add(g, &x);
        assert!((st.leave_gain(g, &x) - (sse(&with) - sse(&a))).abs() < 1e-12);
        assert_eq!(st.argmin(|_| true, |g| st.dist2(g, &x)), Some(0));
        assert_eq!(st.argmin(|_| false, |_| 0.0), None);
    }
}
