//! Running statistics of a growing set of clusters (size and f64 sum per cluster), with
//! the two questions MDAV* and ONA* ask of them (ona-mona §3): which cluster's SSE rises
//! least when a record joins, and which centroid is nearest.
//!
//! SSE changes are exact identities: adding x to C (size m, centroid c) raises its SSE by
//! m/(m+1)·‖x − c‖²; removing x lowers it by m/(m−1)·‖x − c‖².
//!
//! With missing values (NaN cells, docs/workflow.md#missing-values) each cluster also counts its
//! observed values per attribute: centroids are means of the observed values, distances to a
//! centroid are partial distances (`kernels_masked.rs`), and the SSE changes are the same
//! identities taken attribute by attribute with that attribute's count (the SSE of observed cells).

use crate::kernels_masked::partial_dist2_of;

/// Sizes and sums of clusters with ids `0..len()`; ids are never reused.
#[derive(Debug, Clone, Default)]
pub struct ClusterStats {
    d: usize,
    sizes: Vec<usize>,
    sums: Vec<f64>,
    /// Observed values per cluster and attribute (data with missing values only).
    counts: Option<Vec<f64>>,
}

impl ClusterStats {
    /// No clusters, records of `d` attributes.
    pub fn new(d: usize) -> Self {
        Self::new_for(d, false)
    }

    /// No clusters, records of `d` attributes that may have missing values (NaN) if `missing`.
    pub fn new_for(d: usize, missing: bool) -> Self {
        ClusterStats { d, sizes: Vec::new(), sums: Vec::new(), counts: missing.then(Vec::new) }
    }

    /// Sums and observed counts of cluster `g` (missing values only).
    fn observed(&self, g: usize) -> Option<(&[f64], &[f64])> {
        let range = g * self.d..(g + 1) * self.d;
        self.counts.as_ref().map(|c| (&self.sums[range.clone()], &c[range]))
    }

    /// With missing values: adds (`sign` 1) or removes (−1) the observed values of `x` in
    /// cluster `g`. Out of line, so the complete-data callers stay as small as before.
    #[inline(never)]
    fn update_observed(&mut self, g: usize, x: &[f64], sign: f64) {
        let range = g * self.d..(g + 1) * self.d;
        let counts = self.counts.as_mut().expect("missing values");
        for ((s, c), v) in self.sums[range.clone()].iter_mut().zip(&mut counts[range]).zip(x) {
            if !v.is_nan() {
                *s += sign * v;
                *c += sign;
            }
        }
    }

    /// With missing values: Σ over the attributes observed in `x` and in cluster `g` of
    /// `factor(m_j)·(x_j − c_j)²`, m_j the cluster's observed count (SSE changes).
    #[inline(never)]
    fn per_attribute(&self, g: usize, x: &[f64], factor: fn(f64) -> f64) -> f64 {
        let (sums, counts) = self.observed(g).expect("missing values");
        let mut total = 0.0;
        for ((&s, &m), &v) in sums.iter().zip(counts).zip(x) {
            let f = factor(m);
            if !v.is_nan() && f > 0.0 {
                total += f * (v - s / m).powi(2);
            }
        }
        total
    }

    /// With missing values: the partial distance from `x` to the centroid of cluster `g`.
    #[inline(never)]
    fn partial_dist2(&self, g: usize, x: &[f64]) -> f64 {
        let (sums, counts) = self.observed(g).expect("missing values");
        let centroid = sums.iter().zip(counts).map(|(s, c)| s / c); // NaN when c = 0
        partial_dist2_of(self.d, x.iter().copied().zip(centroid))
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
        if let Some(c) = &mut self.counts {
            c.extend(std::iter::repeat_n(0.0, self.d));
        }
        self.sizes.len() - 1
    }

    /// Adds the record `x` to cluster `g`.
    pub fn add(&mut self, g: usize, x: &[f64]) {
        self.sizes[g] += 1;
        if self.counts.is_some() {
            return self.update_observed(g, x, 1.0);
        }
        for (s, v) in self.sums[g * self.d..(g + 1) * self.d].iter_mut().zip(x) {
            *s += v;
        }
    }

    /// Removes the record `x` from cluster `g`.
    pub fn remove(&mut self, g: usize, x: &[f64]) {
        self.sizes[g] -= 1;
        if self.counts.is_some() {
            return self.update_observed(g, x, -1.0);
        }
        for (s, v) in self.sums[g * self.d..(g + 1) * self.d].iter_mut().zip(x) {
            *s -= v;
        }
    }

    /// Centroid of cluster `g` (which must not be empty); NaN for an attribute no member
    /// observes.
    pub fn centroid(&self, g: usize) -> Vec<f64> {
        if let Some((sums, counts)) = self.observed(g) {
            return sums
                .iter()
                .zip(counts)
                .map(|(s, &c)| if c > 0.0 { s / c } else { f64::NAN })
                .collect();
        }
        let m = self.sizes[g] as f64;
        self.sums[g * self.d..(g + 1) * self.d].iter().map(|s| s / m).collect()
    }

    /// Squared distance from `x` to the centroid of cluster `g` (which must not be empty);
    /// the partial distance with missing values.
    #[inline(always)]
    pub fn dist2(&self, g: usize, x: &[f64]) -> f64 {
        if self.counts.is_some() {
            return self.partial_dist2(g, x);
        }
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
        if self.counts.is_some() {
            return self.per_attribute(g, x, |m| if m > 0.0 { m / (m + 1.0) } else { 0.0 });
        }
        let m = self.sizes[g] as f64;
        m / (m + 1.0) * self.dist2(g, x)
    }

    /// SSE decrease of cluster `g` if its member `x` leaves (`g` has ≥ 2 records).
    #[inline(always)]
    pub fn leave_gain(&self, g: usize, x: &[f64]) -> f64 {
        if self.counts.is_some() {
            return self.per_attribute(g, x, |m| if m > 1.0 { m / (m - 1.0) } else { 0.0 });
        }
        let m = self.sizes[g] as f64;
        m / (m - 1.0) * self.dist2(g, x)
    }

    /// SSE of a set of records of these clusters' data ([`sse`], or [`sse_observed`] with
    /// missing values).
    pub fn sse_of(&self, rows: &[Vec<f64>]) -> f64 {
        if self.counts.is_some() { sse_observed(rows) } else { sse(rows) }
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

/// [`sse`] over the observed cells of records with missing values (NaN).
pub fn sse_observed(rows: &[Vec<f64>]) -> f64 {
    let Some(first) = rows.first() else { return 0.0 };
    let mean: Vec<f64> = (0..first.len())
        .map(|j| {
            let observed = rows.iter().map(|r| r[j]).filter(|v| !v.is_nan());
            observed.clone().sum::<f64>() / observed.count() as f64
        })
        .collect();
    let cell = |(v, c): (&f64, &f64)| if v.is_nan() { 0.0 } else { (v - c).powi(2) };
    rows.iter().map(|r| r.iter().zip(&mean).map(cell).sum::<f64>()).sum()
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
