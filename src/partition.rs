//! The result every algorithm returns: a partition of the records into groups, and the
//! quality measures of DESIGN §1 (SSE, SST, information loss) in the standardized units.

use crate::dataset::Scaling;
use crate::error::{Error, Result};
use crate::float::Float;
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
    /// Group means in the caller's units, `(n_groups, d)`.
    pub centroids: Array2<f64>,
    /// Within-group sum of squares.
    pub sse: f64,
    /// Total sum of squares around the overall mean.
    pub sst: f64,
}

impl Evaluation {
    /// Computes centroids (f64, two passes per group), SSE and SST of `x` grouped by
    /// `partition`. The records are first grouped by a counting sort (ids ascending within
    /// a group), so each group's rows are read together: one random pass over `x` instead
    /// of two random passes over the centroids. Fails with [`Error::SumOverflow`] if the
    /// sums of squares overflow.
    pub fn new<T: Float>(
        x: ArrayView2<T>,
        partition: &Partition,
        scaling: &Scaling,
    ) -> Result<Self> {
        let (n, d) = x.dim();
        partition.check_len(n)?;
        let (bounds, by_group) = partition.members_by_group();
        // SST is around the data's own mean (which is the scaling's mean unless the scaling
        // came from other data, as in incremental microaggregation).
        let mut mean = vec![0.0; d];
        for row in x.rows() {
            mean.iter_mut().zip(row).for_each(|(m, v)| *m += v.as_f64());
        }
        mean.iter_mut().for_each(|m| *m /= n as f64);
        let mut centroids = Array2::<f64>::zeros((partition.n_groups, d));
        let (mut sse, mut sst) = (0.0, 0.0);
        for (mut c, members) in centroids.rows_mut().into_iter().zip(bounds.windows(2)) {
            let members = &by_group[members[0]..members[1]];
            for &i in members {
                c.iter_mut().zip(x.row(i as usize)).for_each(|(c, v)| *c += v.as_f64());
            }
            c /= members.len() as f64;
            for &i in members {
                for (j, v) in x.row(i as usize).iter().enumerate() {
                    let v = v.as_f64();
                    sse += ((v - c[j]) / scaling.scale[j]).powi(2);
                    sst += ((v - mean[j]) / scaling.scale[j]).powi(2);
                }
            }
        }
        if !sst.is_finite() {
            return Err(Error::SumOverflow);
        }
        Ok(Evaluation { centroids, sse, sst })
    }

    /// [`Evaluation::new`] for data with missing values (NaN, DESIGN §8): centroids are the
    /// means of the observed values, and SSE and SST are sums over the observed cells (SST
    /// around the observed column means). An attribute no member of a group observes gets the
    /// column's observed mean (it adds nothing to SSE), so a filled release has no gap.
    pub fn observed<T: Float>(
        x: ArrayView2<T>,
        partition: &Partition,
        scaling: &Scaling,
    ) -> Result<Self> {
        let d = x.ncols();
        partition.check_len(x.nrows())?;
        let (bounds, by_group) = partition.members_by_group();
        let all: Vec<u32> = (0..x.nrows() as u32).collect();
        let mean = observed_means(x, &all);
        let mut centroids = Array2::<f64>::zeros((partition.n_groups, d));
        let (mut sse, mut sst) = (0.0, 0.0);
        for (mut c, members) in centroids.rows_mut().into_iter().zip(bounds.windows(2)) {
            let members = &by_group[members[0]..members[1]];
            let group = observed_means(x, members);
            c.iter_mut().zip(group.iter().zip(&mean)).for_each(|(c, (&g, &m))| {
                *c = if g.is_nan() { m } else { g };
            });
            for &i in members {
                for (j, v) in x.row(i as usize).iter().enumerate().filter(|(_, v)| !v.is_nan()) {
                    let v = v.as_f64();
                    sse += ((v - c[j]) / scaling.scale[j]).powi(2);
                    sst += ((v - mean[j]) / scaling.scale[j]).powi(2);
                }
            }
        }
        if !sst.is_finite() {
            return Err(Error::SumOverflow);
        }
        Ok(Evaluation { centroids, sse, sst })
    }

    /// SSE / SST in [0, 1]; 0 when every record is identical (SST = 0).
    pub fn information_loss(&self) -> f64 {
        if self.sst > 0.0 { (self.sse / self.sst).clamp(0.0, 1.0) } else { 0.0 }
    }
}

/// Per-column means of the observed (non-NaN) values of the rows `members` of `x`; NaN for
/// a column with none.
fn observed_means<T: Float>(x: ArrayView2<T>, members: &[u32]) -> Vec<f64> {
    let mut sums = vec![(0.0, 0.0); x.ncols()];
    for &i in members {
        for ((s, c), v) in sums.iter_mut().zip(x.row(i as usize)).filter(|(_, v)| !v.is_nan()) {
            *s += v.as_f64();
            *c += 1.0;
        }
    }
    sums.iter().map(|&(s, c)| if c > 0.0 { s / c } else { f64::NAN }).collect()
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
