//! What a mixed key's records are scored against: a record or a centroid, with each nominal
//! attribute's contribution to the score prepared per level.

use super::key::MixedKey;
use crate::dataset::WorkingSet;
use crate::float::Float;
use crate::kernels::{BlockScorer, Complete, Metric};

/// A nominal attribute's part of a reference: what a record with each level adds to its score.
#[derive(Debug, Clone)]
pub(crate) enum Nominal<T> {
    /// A record's level: `same` for records with that level, `other` for the rest.
    Level {
        /// The reference record's level.
        level: u32,
        /// Added to the score of a record with `level`.
        same: T,
        /// Added to the score of any other record.
        other: T,
    },
    /// A centroid: the term added for each level (indexed by code).
    Levels(Vec<T>),
}

/// A point of the embedding to score records against, in the form of one [`Metric`]:
/// algebraic, ½‖x_num‖² − ⟨x_num, r⟩ − Σ (w²/2)·p[a] (F-MDAV §3.1; the nominal blocks' own
/// ½‖x‖², Σ w²/2, is the same for every record and left out), or direct,
/// ‖x_num − r‖² + Σ (w²/2)·(1 − 2·p[a] + ‖p‖²), where p is a centroid's level frequencies
/// or the indicator of a record's level.
#[derive(Debug, Clone)]
pub struct Reference<T> {
    numeric: Vec<T>,
    nominal: Vec<Nominal<T>>,
    metric: Metric,
}

impl<T: Float> Reference<T> {
    pub(crate) fn new(numeric: Vec<T>, nominal: Vec<Nominal<T>>, metric: Metric) -> Self {
        Reference { numeric, nominal, metric }
    }

    /// What bounds an algebraic score from above for a record of numeric ½‖x‖² = h
    /// (Cauchy–Schwarz): h + ‖x‖·`norm` + `nominal`, with `norm` = ‖r_num‖ and `nominal` =
    /// Σ over nominal attributes of the largest term any level adds; and `scale`, Σ of the
    /// largest magnitude of those terms, for the rounding margin.
    pub fn bound_terms(&self) -> (f64, f64, f64) {
        let norm = self.numeric.iter().map(|v| v.as_f64() * v.as_f64()).sum::<f64>().sqrt();
        let (mut nominal, mut scale) = (0.0, 0.0);
        for part in &self.nominal {
            let terms = match part {
                Nominal::Level { same, other, .. } => vec![same.as_f64(), other.as_f64()],
                Nominal::Levels(t) => t.iter().map(|v| v.as_f64()).collect(),
            };
            nominal += terms.iter().copied().fold(f64::NEG_INFINITY, f64::max);
            scale += terms.iter().fold(0.0f64, |m, v| m.max(v.abs()));
        }
        (norm, nominal, scale)
    }

    /// Writes the scores of positions `start..start + out.len()` of `key` to `out`, 16
    /// positions at a time kept in registers ([`Self::fill_lanes`]), then one by one.
    #[inline(always)]
    pub fn fill(&self, key: &MixedKey<T>, start: usize, out: &mut [T]) {
        let mut lanes = out.chunks_exact_mut(LANES);
        let mut at = start;
        for o in &mut lanes {
            self.fill_lanes::<LANES>(key, at, o.try_into().expect("LANES"));
            at += LANES;
        }
        for o in lanes.into_remainder() {
            let mut one = [T::zero()];
            self.fill_lanes::<1>(key, at, &mut one);
            *o = one[0];
            at += 1;
        }
    }

    /// The scores of the `L` positions from `start`: the numeric part attribute by attribute
    /// as the complete kernels compute it (`kernels::Complete`, the same operations in the
    /// same order), then the nominal terms in attribute order (a compare and select for a
    /// record's level, a gather of the per-level terms for a centroid): the same operations
    /// for any `L`, so the lane path and the tail path give bit-identical scores.
    #[inline(always)]
    fn fill_lanes<const L: usize>(&self, key: &MixedKey<T>, start: usize, out: &mut [T; L]) {
        let ws = key.numeric();
        let mut acc = [T::zero(); L];
        if self.numeric.is_empty() {
            if self.metric == Metric::Algebraic {
                acc.copy_from_slice(&ws.half_norms()[start..start + L]);
            }
        } else {
            Complete { reference: &self.numeric, metric: self.metric }.fill(ws, start, &mut acc);
        }
        for (a, part) in self.nominal.iter().enumerate() {
            let codes = key.code_column(a);
            match part {
                &Nominal::Level { level, same, other } => {
                    codes.add_terms(start, &mut acc, |c| if c == level { same } else { other });
                }
                Nominal::Levels(terms) => {
                    // Every code is below the levels' count: the clamp changes no index,
                    // and lets the compiler gather without a bounds check per record.
                    let last = terms.len() - 1;
                    codes.add_terms(start, &mut acc, |c| terms[(c as usize).min(last)]);
                }
            }
        }
        *out = acc;
    }
}

/// Positions scored together in registers (one AVX-512 register of f32, as the kernels').
const LANES: usize = 16;

/// A [`Reference`] scoring the records of its key block by block, for the kernels' scans
/// (`kernels::scan_with`: threads, and the instruction set chosen at run time).
pub(crate) struct Scorer<'a, T> {
    pub key: &'a MixedKey<T>,
    pub reference: &'a Reference<T>,
}

impl<T: Float> BlockScorer<T> for Scorer<'_, T> {
    #[inline(always)]
    fn fill(&self, _numeric: &WorkingSet<T>, start: usize, out: &mut [T]) {
        self.reference.fill(self.key, start, out)
    }

    fn bytes_per_record(&self, ws: &WorkingSet<T>) -> usize {
        (ws.d() + usize::from(self.reference.metric == Metric::Algebraic)) * size_of::<T>()
            + self.reference.nominal.len() * size_of::<u32>()
    }
}
