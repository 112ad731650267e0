//! The result every algorithm returns: a partition of the records into groups, with its
//! invariants (every record in one group, groups of at least k). Its quality and release are
//! the workflow's (`workflow/evaluation.rs`).

use crate::error::{Error, Result};

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
    pub(crate) fn check_len(&self, n: usize) -> Result<()> {
        if self.labels.len() == n {
            Ok(())
        } else {
            Err(Error::InvalidLabels(format!("{} labels for {n} records", self.labels.len())))
        }
    }

    /// The records grouped by a counting sort (ids ascending within a group): group g's
    /// members are `by_group[bounds[g]..bounds[g + 1]]`. Returns `(bounds, by_group)`.
    pub(crate) fn members_by_group(&self) -> (Vec<usize>, Vec<u32>) {
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

    /// The invariants every algorithm's output must satisfy (docs/architecture.md#the-cores-rules):
    /// every group has at least `k` records and, where the algorithm promises it, at most
    /// `max_size`.
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn checks_group_sizes() {
        let p = Partition::from_labels(vec![0, 1, 0, 1, 1]).unwrap();
        assert_eq!(p.group_sizes(), vec![2, 3]);
        assert!(p.check(2, Some(3)).is_ok());
        assert!(p.check(3, None).is_err());
        assert!(p.check(2, Some(2)).is_err());
        assert!(Partition::from_labels(vec![0, 2]).is_err());
    }
}
