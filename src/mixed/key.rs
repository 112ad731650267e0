//! The mixed key's working data: the numeric columns' working copy ([`WorkingSet`], centered
//! and scaled) and the nominal codes beside it, column-major, moved together.

use super::codes::CodeColumn;
use super::reference::{Nominal, Reference, Scorer};
use crate::dataset::{Scaling, WorkingSet};
use crate::error::{Error, Result};
use crate::float::Float;
use crate::kernels::{self, Metric, ScoreVisitor};
use crate::parallel::Exec;
use ndarray::ArrayView2;

/// Numeric columns (values, ordinal ranks; z-scored × weight through the [`Scaling`]) plus
/// nominal columns as codes 0..L−1, each with its weight w. Positions move with
/// [`Self::swap`] like the working copy's, so a caller keeps the records it still works on
/// in a prefix.
#[derive(Debug, Clone)]
pub struct MixedKey<T> {
    numeric: WorkingSet<T>,
    /// Codes, one column of n per nominal attribute, each in its narrowest width.
    codes: Vec<CodeColumn>,
    /// Levels per nominal attribute (largest code + 1).
    levels: Vec<usize>,
    /// w² per nominal attribute.
    weight_sq: Vec<f64>,
}

impl<T: Float> MixedKey<T> {
    /// Builds the key from validated numeric data `x` (n × d, d may be 0) with its scaling,
    /// the nominal `codes` (n × c, each in 0..) and one finite positive weight per nominal
    /// column. Fails on a negative code, a weight that is not finite and positive, or shapes
    /// that do not match.
    pub fn new<S: Float>(
        x: ArrayView2<S>,
        scaling: &Scaling,
        codes: ArrayView2<i64>,
        weights: &[f64],
    ) -> Result<Self> {
        let (n, c) = codes.dim();
        if n != x.nrows() || n == 0 || c + x.ncols() == 0 {
            return Err(Error::InvalidParameter {
                name: "codes".into(),
                reason: format!("must have one row per record ({}), got {n}", x.nrows()),
            });
        }
        if weights.len() != c || !weights.iter().all(|w| w.is_finite() && *w > 0.0) {
            return Err(Error::InvalidParameter {
                name: "nominal_weights".into(),
                reason: format!("must be {c} finite positive numbers, one per nominal column"),
            });
        }
        let mut columns = Vec::with_capacity(c);
        let mut levels = Vec::with_capacity(c);
        for (j, col) in codes.columns().into_iter().enumerate() {
            if let Some(i) = col.iter().position(|&v| !(0..=i64::from(u32::MAX - 1)).contains(&v)) {
                return Err(Error::InvalidParameter {
                    name: "codes".into(),
                    reason: format!(
                        "nominal column {j}: code {} of record {i} is not in 0..2³²−1",
                        col[i]
                    ),
                });
            }
            let count = col.iter().max().map_or(1, |&m| m as usize + 1);
            levels.push(count);
            columns.push(CodeColumn::new(col.iter().map(|&v| v as u32), count));
        }
        let numeric = WorkingSet::new(x, scaling)?;
        Ok(MixedKey {
            numeric,
            codes: columns,
            levels,
            weight_sq: weights.iter().map(|w| w * w).collect(),
        })
    }

    /// Number of records.
    #[inline]
    pub fn n(&self) -> usize {
        self.numeric.n()
    }

    /// The numeric columns' working copy.
    #[inline]
    pub fn numeric(&self) -> &WorkingSet<T> {
        &self.numeric
    }

    /// Number of nominal attributes.
    #[inline]
    pub fn n_nominal(&self) -> usize {
        self.levels.len()
    }

    /// Code of nominal attribute `a` at position `p`.
    #[inline]
    pub fn code(&self, a: usize, p: usize) -> u32 {
        self.codes[a].get(p)
    }

    /// Codes of nominal attribute `a` at every position.
    #[inline]
    pub(crate) fn code_column(&self, a: usize) -> &CodeColumn {
        &self.codes[a]
    }

    /// Original record index of every position.
    #[inline]
    pub fn ids(&self) -> &[u32] {
        self.numeric.ids()
    }

    /// Current position of the record with original index `id`.
    #[inline]
    pub fn position_of(&self, id: u32) -> usize {
        self.numeric.position_of(id)
    }

    /// Exchanges the records at positions `a` and `b` (values, codes, norms, ids).
    pub fn swap(&mut self, a: usize, b: usize) {
        if a == b {
            return;
        }
        self.numeric.swap(a, b);
        for col in &mut self.codes {
            col.swap(a, b);
        }
    }

    /// The record at position `p` as a reference for `metric`.
    pub fn reference_to(&self, p: usize, metric: Metric) -> Reference<T> {
        let nominal = (0..self.n_nominal())
            .map(|a| {
                let level = self.code(a, p);
                match metric {
                    // ⟨x, r⟩ of the one-hot blocks: (w²/2)·[a = b].
                    Metric::Algebraic => Nominal::Level {
                        level,
                        same: T::from_f64_lossy(-0.5 * self.weight_sq[a]),
                        other: T::zero(),
                    },
                    Metric::Direct => Nominal::Level {
                        level,
                        same: T::zero(),
                        other: T::from_f64_lossy(self.weight_sq[a]),
                    },
                }
            })
            .collect();
        Reference::new(self.numeric.row(p), nominal, metric)
    }

    /// The centroid of a group with numeric column sums `sums` (f64), nominal level `counts`
    /// (one vector of L per attribute) and `m` members, as a reference for `metric`.
    pub fn centroid(
        &self,
        sums: &[f64],
        counts: &[Vec<u64>],
        m: usize,
        metric: Metric,
    ) -> Reference<T> {
        let numeric = crate::dataset::means::<T>(sums, m);
        let nominal = counts
            .iter()
            .zip(&self.weight_sq)
            .map(|(count, &w2)| {
                let p: Vec<f64> = count.iter().map(|&c| c as f64 / m as f64).collect();
                let norm: f64 = p.iter().map(|v| v * v).sum();
                let term = |pl: f64| match metric {
                    Metric::Algebraic => -0.5 * w2 * pl,
                    Metric::Direct => 0.5 * w2 * (1.0 - 2.0 * pl + norm),
                };
                Nominal::Levels(p.iter().map(|&pl| T::from_f64_lossy(term(pl))).collect())
            })
            .collect();
        Reference::new(numeric, nominal, metric)
    }

    /// Empty nominal level counts, one vector of L per attribute.
    pub fn no_counts(&self) -> Vec<Vec<u64>> {
        self.levels.iter().map(|&l| vec![0; l]).collect()
    }

    /// Adds (`sign` = 1) or removes (−1) the record at position `p` to or from a group's
    /// numeric sums and level counts.
    pub fn count(&self, p: usize, sign: i64, sums: &mut [f64], counts: &mut [Vec<u64>]) {
        for (j, s) in sums.iter_mut().enumerate() {
            *s += sign as f64 * self.numeric.column(j)[p].as_f64();
        }
        for (a, count) in counts.iter_mut().enumerate() {
            let c = &mut count[self.code(a, p) as usize];
            *c = c.wrapping_add_signed(sign);
        }
    }

    /// Scores positions `0..m` against `reference` (in parallel chunks where `exec` allows)
    /// with a fresh visitor per chunk from `make`, merged exactly (ties to the lowest id).
    pub fn scan<V: ScoreVisitor<T>>(
        &self,
        exec: Exec,
        m: usize,
        reference: &Reference<T>,
        make: impl Fn() -> V + Sync,
    ) -> V {
        kernels::scan_with(exec, &self.numeric, m, &Scorer { key: self, reference }, make)
    }
}
