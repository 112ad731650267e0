//! The masked (missing-value) scan kernels, next to the complete ones of `kernels.rs`
//! (DESIGN §8, "Missing values").
//!
//! The partial distance between a record x and a reference r is
//! (d / |O|) · Σ_{j ∈ O} (x_j − r_j)², where O is the set of attributes observed in both;
//! it is +∞ when O is empty (nothing in common: never nearer than a comparable record). For
//! a centroid reference, r's observed attributes are those some member observes, so O is
//! usually the record's observed attributes.
//!
//! The working set stores a missing cell as 0 (so ½‖x‖² and ⟨x, r⟩ are over the observed
//! cells) with ⌈d/8⌉ bytes of missing-attribute bits per record. With M_x, M_r the missing
//! attributes of x and r (r set to 0 on M_r) and a = ½‖x‖² − ⟨x, r⟩, F-MDAV's algebraic score:
//!
//! Σ_{j ∈ O} (x_j − r_j)² = 2a + ‖r‖² − Σ_{j ∈ M_x} r_j² − Σ_{j ∈ M_r} x_j²,
//! |O| = |O_r| − |M_x ∩ O_r|.
//!
//! So a block is scored by the **complete** algebraic kernel (2 flops per cell, vectorized
//! across records), then corrected per record: the Σ_{M_x} r_j² term is one lookup per byte of
//! bits in tables built once per scan (256 entries per byte: the sum of r_j² over the set
//! bits), |M_x ∩ O_r| a popcount, and the few columns of M_r (none for a centroid) one more
//! vectorized pass each. No branch per cell; the absolute rounding of a score is that of
//! F-MDAV's algebraic comparison.
//!
//! Data without NaN never reaches this file: the algorithms choose the scorer once per scan.

use crate::dataset::WorkingSet;
use crate::float::Float;
use crate::kernels::{BlockScorer, Complete, Metric};

/// A reference for the masked kernels (see the module doc), prepared once per scan.
#[derive(Debug, Clone)]
pub struct Partial<T> {
    /// r with 0 on its missing attributes.
    zeroed: Vec<T>,
    /// ‖r‖² over its observed attributes.
    norm2: T,
    /// r's missing attributes (M_r).
    missing: Vec<usize>,
    /// Per byte of bits: r's observed attributes among its 8.
    observed_bits: Vec<u8>,
    /// Per byte of bits, 256 entries: Σ r_j² over the set bits (0 on M_r).
    squares: Vec<T>,
    /// d / c for c = |O| in 0..=d (+∞ for 0).
    scale: Vec<T>,
    /// |O_r|.
    n_observed: usize,
}

impl<T: Float> Partial<T> {
    /// The reference `values` (length d; NaN marks a missing attribute).
    pub fn new(values: &[T]) -> Self {
        let d = values.len();
        let zeroed: Vec<T> =
            values.iter().map(|&v| if v.is_nan() { T::zero() } else { v }).collect();
        let missing: Vec<usize> = (0..d).filter(|&j| values[j].is_nan()).collect();
        let bytes = d.div_ceil(8);
        let attribute = |b: usize, i: usize| Some(8 * b + i).filter(|&j| j < d);
        let observed_bits = (0..bytes)
            .map(|b| {
                (0..8)
                    .filter(|&i| attribute(b, i).is_some_and(|j| !values[j].is_nan()))
                    .fold(0u8, |m, i| m | 1 << i)
            })
            .collect();
        let mut squares = vec![T::zero(); bytes * 256];
        for (b, table) in squares.chunks_exact_mut(256).enumerate() {
            for (byte, entry) in table.iter_mut().enumerate() {
                *entry = (0..8)
                    .filter(|&i| byte >> i & 1 == 1)
                    .filter_map(|i| attribute(b, i))
                    .fold(T::zero(), |a, j| a + zeroed[j] * zeroed[j]);
            }
        }
        let dt = T::from_f64_lossy(d as f64);
        let scale = (0..=d)
            .map(|c| if c == 0 { T::infinity() } else { dt / T::from_f64_lossy(c as f64) })
            .collect();
        let norm2 = zeroed.iter().fold(T::zero(), |a, &v| a + v * v);
        let n_observed = d - missing.len();
        Partial { zeroed, norm2, missing, observed_bits, squares, scale, n_observed }
    }
}

impl<T: Float> BlockScorer<T> for Partial<T> {
    #[inline(always)]
    fn fill(&self, ws: &WorkingSet<T>, start: usize, out: &mut [T]) {
        let bits = ws.missing_bits().expect("the masked kernels run on data with missing values");
        Complete { reference: &self.zeroed, metric: Metric::Algebraic }.fill(ws, start, out);
        let two = T::one() + T::one();
        for o in out.iter_mut() {
            *o = two * *o + self.norm2;
        }
        for &j in &self.missing {
            for (o, &x) in out.iter_mut().zip(&ws.column(j)[start..]) {
                *o -= x * x;
            }
        }
        let bytes = self.observed_bits.len();
        let records = bits[start * bytes..(start + out.len()) * bytes].chunks_exact(bytes);
        for (o, record) in out.iter_mut().zip(records) {
            let mut correction = T::zero();
            let mut lost = 0;
            for (b, (&m, &obs)) in record.iter().zip(&self.observed_bits).enumerate() {
                correction += self.squares[b * 256 + m as usize];
                lost += (m & obs).count_ones() as usize;
            }
            let s = (*o - correction) * self.scale[self.n_observed - lost];
            // NaN only as 0·∞: a record with no attribute in common with the reference.
            *o = if s.is_nan() { T::infinity() } else { s };
        }
    }
}

/// The partial distance between two f64 rows with NaN for missing cells (the row-major
/// algorithms' version of the masked kernel: MD, the cluster statistics of MDAV*/ONA*).
#[inline]
pub fn partial_dist2(a: &[f64], b: &[f64]) -> f64 {
    partial_dist2_of(a.len(), a.iter().copied().zip(b.iter().copied()))
}

/// The partial distance over `d` attributes given as value pairs (NaN = missing).
#[inline]
pub fn partial_dist2_of(d: usize, pairs: impl Iterator<Item = (f64, f64)>) -> f64 {
    let (mut sum, mut count) = (0.0, 0.0);
    for (u, v) in pairs {
        let t = u - v; // NaN when either is missing
        let both = !t.is_nan();
        sum += if both { t * t } else { 0.0 };
        count += if both { 1.0 } else { 0.0 };
    }
    if count > 0.0 { sum * (d as f64 / count) } else { f64::INFINITY }
}

/// Test data: n × d continuous values (no distance ties) in about [−3, 3], with `share` of
/// the cells missing at random and, when `share > 0`, every 7th record entirely missing.
#[cfg(test)]
pub(crate) fn test_data(n: usize, d: usize, share: f64, seed: u64) -> ndarray::Array2<f64> {
    let mut rng = crate::rng::SplitMix64::new(seed);
    let mut unit = move || (rng.next_u64() >> 11) as f64 / (1u64 << 53) as f64;
    ndarray::Array2::from_shape_fn((n, d), |(i, _)| {
        let v = (unit() + unit() + unit() - 1.5) * 2.0;
        if share > 0.0 && (i % 7 == 3 || unit() < share) { f64::NAN } else { v }
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dataset::Scaling;

    use test_data as data;

    /// The partial distance computed directly from the definition.
    fn direct(x: &[f64], r: &[f64]) -> f64 {
        let common: Vec<f64> = x
            .iter()
            .zip(r)
            .filter(|(a, b)| !a.is_nan() && !b.is_nan())
            .map(|(a, b)| (a - b).powi(2))
            .collect();
        if common.is_empty() {
            f64::INFINITY
        } else {
            common.iter().sum::<f64>() * x.len() as f64 / common.len() as f64
        }
    }

    fn check_against_direct<T: Float>(tolerance: f64) {
        for (n, d, share, seed) in
            [(1, 1, 0.5, 1), (37, 3, 0.2, 2), (150, 7, 0.5, 3), (70, 15, 0.05, 4)]
        {
            let x = data(n, d, share, seed);
            let ws =
                WorkingSet::<T>::with_missing(x.view(), &Scaling::fit(x.view(), false)).unwrap();
            let rows: Vec<Vec<f64>> =
                (0..n).map(|p| ws.row(p).iter().map(|v| v.as_f64()).collect()).collect();
            // Records (often with missing attributes) and a complete reference, as a centroid.
            let complete: Vec<T> =
                (0..d).map(|j| T::from_f64_lossy(0.3 - 0.1 * j as f64)).collect();
            for r in [ws.row(0), ws.row(n / 2), ws.row(n - 1), complete] {
                let r64: Vec<f64> = r.iter().map(|v| v.as_f64()).collect();
                let mut out = vec![T::zero(); n];
                Partial::new(&r).fill(&ws, 0, &mut out);
                for (p, got) in out.iter().enumerate() {
                    let want = direct(&rows[p], &r64);
                    let got = got.as_f64();
                    assert_eq!(partial_dist2(&rows[p], &r64).is_infinite(), want.is_infinite());
                    if want.is_infinite() {
                        assert!(got.is_infinite(), "{} {p}: {got}", T::NAME);
                    } else {
                        // The algebraic form's absolute rounding: relative to the norms.
                        let norms: f64 =
                            rows[p].iter().chain(&r64).filter(|v| !v.is_nan()).map(|v| v * v).sum();
                        assert!(
                            (got - want).abs() <= tolerance * (want.max(1.0) + norms * d as f64),
                            "{} {p}: {got} vs {want}",
                            T::NAME
                        );
                        assert!(
                            (partial_dist2(&rows[p], &r64) - want).abs() <= 1e-12 * (1.0 + want)
                        );
                    }
                }
            }
        }
    }

    #[test]
    fn partial_scores_match_the_definition_f64() {
        check_against_direct::<f64>(1e-12);
    }

    #[test]
    fn partial_scores_match_the_definition_f32() {
        check_against_direct::<f32>(1e-5);
    }
}
