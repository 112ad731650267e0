//! The result every algorithm returns: a partition of the records into groups, and the
//! quality measures of DESIGN §1 (SSE, SST, information loss) in the standardized units.

use crate::dataset::Scaling;
use crate::error::{Error, Result};
use crate::float::Float;
use crate::workflow::aggregate::{Aggregation, group_value, weighted_mean};
use ndarray::{Array2, ArrayView2};

/// Group label of each record (original order); labels are `0..n_groups`, in order of
/// creation by the algorithm.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Partition {
    labels: Vec<u32>,
    n_groups: usize,
}

impl Partition {
    /// Wraps labels that must cover `0..n_groups` (checked).
    pub fn from_labels(labels: Vec<u32>) -> Result<Self> {
        let n_groups = labels.iter().map(|&l| l as usize + 1).max().unwrap_or(0);
        let p = Partition { labels, n_groups };
        if p.group_sizes().contains(&0) {
            return Err(Error::InvalidLabels(format!(
                "labels must be 0..n_groups-1 with every group used; {} groups are empty",
                p.group_sizes().iter().filter(|&&s| s == 0).count()
            )));
        }
        Ok(p)
    }

    /// Builds from labels known to be valid (used by the algorithms).
    pub(crate) fn new_unchecked(labels: Vec<u32>, n_groups: usize) -> Self {
        Partition { labels, n_groups }
    }

    /// The group of each record.
    pub fn labels(&self) -> &[u32] {
        &self.labels
    }

    /// Refuses labels whose number is not `n`.
    fn check_len(&self, n: usize) -> Result<()> {
        if self.labels.len() == n {
            Ok(())
        } else {
            Err(Error::InvalidLabels(format!("{} labels for {n} records", self.labels.len())))
        }
    }

    /// The records grouped by a counting sort (ids ascending within a group): group g's
    /// members are `by_group[bounds[g]..bounds[g + 1]]`. Returns `(bounds, by_group)`.
    fn members_by_group(&self) -> (Vec<usize>, Vec<u32>) {
        let mut bounds = vec![0usize; self.n_groups + 1];
        for &l in &self.labels {
            bounds[l as usize + 1] += 1;
        }
        for g in 0..self.n_groups {
            bounds[g + 1] += bounds[g];
        }
        let mut next = bounds.clone();
        let mut by_group = vec![0u32; self.labels.len()];
        for (i, &l) in self.labels.iter().enumerate() {
            by_group[next[l as usize]] = i as u32;
            next[l as usize] += 1;
        }
        (bounds, by_group)
    }

    /// Number of groups.
    pub fn n_groups(&self) -> usize {
        self.n_groups
    }

    /// Records per group.
    pub fn group_sizes(&self) -> Vec<usize> {
        let mut sizes = vec![0usize; self.n_groups];
        for &l in &self.labels {
            sizes[l as usize] += 1;
        }
        sizes
    }

    /// The invariants every algorithm's output must satisfy (DESIGN §3): every group has at
    /// least `k` records and, where the algorithm promises it, at most `max_size`.
    pub fn check(&self, k: usize, max_size: Option<usize>) -> Result<()> {
        for (g, &s) in self.group_sizes().iter().enumerate() {
            if s < k || max_size.is_some_and(|m| s > m) {
                return Err(Error::InvalidLabels(format!(
                    "group {g} has {s} records; allowed {k}..={}",
                    max_size.map_or("n".to_string(), |m| m.to_string())
                )));
            }
        }
        Ok(())
    }
}

/// Quality of a partition of some data: centroids in the caller's units, and SSE / SST in
/// the (standardized, if asked) units the algorithms work in.
#[derive(Debug, Clone)]
pub struct Evaluation {
    /// Group (weighted) means in the caller's units, `(n_groups, d)`.
    pub centroids: Array2<f64>,
    /// What each group releases when that is not its centroid (an aggregation other than
    /// the mean, DESIGN §8), `(n_groups, d)`; `None` when every group releases its centroid.
    pub released: Option<Array2<f64>>,
    /// Within-group (weighted) sum of squares around the released values.
    pub sse: f64,
    /// Total (weighted) sum of squares around the overall (weighted) mean.
    pub sst: f64,
}

impl Evaluation {
    /// [`Evaluation::weighted`] with unit weights and mean aggregation.
    pub fn new<T: Float>(
        x: ArrayView2<T>,
        partition: &Partition,
        scaling: &Scaling,
    ) -> Result<Self> {
        Self::weighted(x, partition, scaling, None, Aggregation::Mean)
    }

    /// Computes centroids (f64), the released values of `aggregation`, SSE and SST of `x`
    /// grouped by `partition`, each record counted with its weight (1 without `weights`).
    /// The records are first grouped by a counting sort (ids ascending within a group), so
    /// each group's rows are read together: one random pass over `x`. Each group value comes
    /// from the group's (value, weight) pairs of one attribute ([`group_value`]).
    ///
    /// Missing values (NaN, DESIGN §8) are left out: centroids and group values come from
    /// the observed values, SSE and SST are sums over the observed cells (SST around the
    /// observed column means), and an attribute no member of a group observes gets the
    /// column's observed mean (adding nothing to SSE), so a filled release has no gap. On
    /// data without NaN this is the plain computation, bit for bit. Fails with
    /// [`Error::SumOverflow`] if the sums of squares overflow.
    pub fn weighted<T: Float>(
        x: ArrayView2<T>,
        partition: &Partition,
        scaling: &Scaling,
        weights: Option<&[f64]>,
        aggregation: Aggregation,
    ) -> Result<Self> {
        let (n, d) = x.dim();
        partition.check_len(n)?;
        let (bounds, by_group) = partition.members_by_group();
        let weight = |i: usize| weights.map_or(1.0, |w| w[i]);
        let observed = |i: usize, j: usize| {
            let v = x[[i, j]].as_f64();
            (!v.is_nan()).then(|| (v, weight(i)))
        };
        // SST is around the data's own mean (which is the scaling's mean unless the scaling
        // came from other data, as in incremental microaggregation).
        let mean: Vec<f64> = (0..d)
            .map(|j| {
                let pairs = (0..n).filter_map(|i| observed(i, j));
                if pairs.clone().next().is_some() { weighted_mean(pairs) } else { 0.0 }
            })
            .collect();
        let largest = bounds.windows(2).map(|b| b[1] - b[0]).max().unwrap_or(0);
        let mut pairs: Vec<(f64, f64)> = Vec::with_capacity(largest);
        let mut centroids = Array2::<f64>::zeros((partition.n_groups, d));
        let mut released = (!aggregation.is_mean()).then(|| centroids.clone());
        let mut value = vec![0.0; d];
        let (mut sse, mut sst) = (0.0, 0.0);
        for (g, members) in bounds.windows(2).enumerate() {
            let members = &by_group[members[0]..members[1]];
            for j in 0..d {
                pairs.clear();
                pairs.extend(members.iter().filter_map(|&i| observed(i as usize, j)));
                let (centroid, v) = if pairs.is_empty() {
                    (mean[j], mean[j])
                } else {
                    let c = weighted_mean(pairs.iter().copied());
                    (
                        c,
                        if aggregation.is_mean() {
                            c
                        } else {
                            group_value(&mut pairs, aggregation)
                        },
                    )
                };
                centroids[[g, j]] = centroid;
                if let Some(r) = released.as_mut() {
                    r[[g, j]] = v;
                }
                value[j] = v;
            }
            for &i in members {
                let w = weight(i as usize);
                for (j, v) in x.row(i as usize).iter().enumerate() {
                    let v = v.as_f64();
                    if !v.is_nan() {
                        sse += w * ((v - value[j]) / scaling.scale[j]).powi(2);
                        sst += w * ((v - mean[j]) / scaling.scale[j]).powi(2);
                    }
                }
            }
        }
        if !sst.is_finite() {
            return Err(Error::SumOverflow);
        }
        Ok(Evaluation { centroids, released, sse, sst })
    }

    /// SSE / SST in [0, 1]; 0 when every record is identical (SST = 0).
    pub fn information_loss(&self) -> f64 {
        if self.sst > 0.0 { (self.sse / self.sst).clamp(0.0, 1.0) } else { 0.0 }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ndarray::array;

    #[test]
    fn evaluates_hand_computed_example() {
        let x = array![[0.0, 0.0], [2.0, 0.0], [10.0, 4.0], [12.0, 4.0]];
        let p = Partition::from_labels(vec![0, 0, 1, 1]).unwrap();
        let s = Scaling::fit(x.view(), false);
        let e = Evaluation::new(x.view(), &p, &s).unwrap();
        assert_eq!(e.centroids, array![[1.0, 0.0], [11.0, 4.0]]);
        assert_eq!(e.sse, 4.0);
        assert_eq!(e.sst, 4.0 * 25.0 + 4.0 * 1.0 + 4.0 * 4.0);
        assert!((e.information_loss() - 4.0 / 120.0).abs() < 1e-15);
    }

    #[test]
    fn checks_group_sizes() {
        let p = Partition::from_labels(vec![0, 1, 0, 1, 1]).unwrap();
        assert_eq!(p.group_sizes(), vec![2, 3]);
        assert!(p.check(2, Some(3)).is_ok());
        assert!(p.check(3, None).is_err());
        assert!(p.check(2, Some(2)).is_err());
        assert!(Partition::from_labels(vec![0, 2]).is_err());
    }

    #[test]
    fn single_group_loses_everything_and_constant_data_nothing() {
        let x = array![[1.0], [2.0], [4.0]];
        let p = Partition::from_labels(vec![0, 0, 0]).unwrap();
        let e = Evaluation::new(x.view(), &p, &Scaling::fit(x.view(), true)).unwrap();
        assert!((e.information_loss() - 1.0).abs() < 1e-12);
        let c = array![[5.0], [5.0], [5.0]];
        let e = Evaluation::new(c.view(), &p, &Scaling::fit(c.view(), true)).unwrap();
        assert_eq!(e.information_loss(), 0.0);
    }
}
