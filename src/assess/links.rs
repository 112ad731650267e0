//! The result of record linkage, below both ways of computing it (the index search of
//! `linkage.rs` and the panel scan of `scan.rs`), so that neither imports the other's module
//! for it (docs/assessment.md#risk).

/// The nearest links of every original record.
#[derive(Debug, Clone, PartialEq)]
pub struct NearestLinks {
    /// Released records at the minimum distance of each original record (t ≥ 1).
    pub tie_counts: Vec<u64>,
    /// Whether the record's own release is among them.
    pub own_among: Vec<bool>,
}

impl NearestLinks {
    /// Expected number of correct links: Σ [own among the ties] / t.
    pub fn expected_correct(&self) -> f64 {
        self.tie_counts
            .iter()
            .zip(&self.own_among)
            .map(|(&t, &own)| if own { 1.0 / t as f64 } else { 0.0 })
            .sum()
    }
}
