//! The masked (missing-value) scan kernels, next to the complete ones of `kernels.rs`
//! (docs/workflow.md#missing-values).
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
use crate::kernels::{BLOCK, BlockScorer, Complete, Metric};

/// A reference for the masked kernels (see the module doc), prepared once per scan.
#[derive(Debug, Clone)]
pub struct Partial<T> {
    /// r with 0 on its missing attributes.
    zeroed: Vec<T>,
    /// ‖r‖² over its observed attributes.
    norm2: T,
    /// r's missing attributes (M_r).
    missing: Vec<usize>,
    /// Per byte of bits, 256 entries: Σ r_j² over the set bits (0 on M_r).
    squares: Vec<[T; 256]>,
    /// Per byte of bits, 256 entries: the number of set bits that r observes (|M_x ∩ O_r|).
    lost: Vec<[T; 256]>,
    /// d, and |O_r|.
    d: T,
    n_observed: T,
}

impl<T: Float> Partial<T> {
    /// The reference `values` (length d; NaN marks a missing attribute).
    pub fn new(values: &[T]) -> Self {
        let d = values.len();
        let zeroed: Vec<T> =
            values.iter().map(|&v| if v.is_nan() { T::zero() } else { v }).collect();
        let missing: Vec<usize> = (0..d).filter(|&j| values[j].is_nan()).collect();
        let attribute = |b: usize, i: usize| Some(8 * b + i).filter(|&j| j < d);
        // Per byte b, entry `byte`: the attributes of its set bits.
        // Entry `byte` of table b: the sum of f(j) over the attributes j of its set bits, built
        // from the entry without its lowest bit (256 additions per table).
        let table = |f: &dyn Fn(usize) -> T| -> Vec<[T; 256]> {
            (0..d.div_ceil(8))
                .map(|b| {
                    let mut t = [T::zero(); 256];
                    for byte in 1..256usize {
                        let low = attribute(b, byte.trailing_zeros() as usize).map_or(T::zero(), f);
                        t[byte] = t[byte & (byte - 1)] + low;
                    }
                    t
                })
                .collect()
        };
        let squares = table(&|j| zeroed[j] * zeroed[j]);
        let lost = table(&|j| if values[j].is_nan() { T::zero() } else { T::one() });
        let norm2 = zeroed.iter().fold(T::zero(), |a, &v| a + v * v);
        let n_observed = T::from_f64_lossy((d - missing.len()) as f64);
        Partial {
            zeroed,
            norm2,
            missing,
            squares,
            lost,
            d: T::from_f64_lossy(d as f64),
            n_observed,
        }
    }
}

impl<T: Float> BlockScorer<T> for Partial<T> {
    #[inline(always)]
    fn fill(&self, ws: &WorkingSet<T>, start: usize, out: &mut [T]) {
        for (i, block) in out.chunks_mut(BLOCK).enumerate() {
            self.fill_block(ws, start + i * BLOCK, block);
        }
    }

    fn bytes_per_record(&self, ws: &WorkingSet<T>) -> usize {
        (ws.d() + 1) * size_of::<T>() + ws.d().div_ceil(8)
    }
}

impl<T: Float> Partial<T> {
    /// [`BlockScorer::fill`] for at most [`BLOCK`] positions.
    #[inline(always)]
    fn fill_block(&self, ws: &WorkingSet<T>, start: usize, out: &mut [T]) {
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
        // Per record: Σ_{M_x} r_j² and |M_x ∩ O_r| by table lookups, one byte column at a
        // time (contiguous, so the lookups vectorize as gathers).
        let len = out.len();
        let (mut correction, mut lost) = ([T::zero(); BLOCK], [T::zero(); BLOCK]);
        for (b, (squares, lost_of)) in self.squares.iter().zip(&self.lost).enumerate() {
            let bits =
                ws.missing_bits(b).expect("the masked kernels run on data with missing values");
            for ((c, l), &m) in
                correction.iter_mut().zip(lost.iter_mut()).zip(&bits[start..start + len])
            {
                *c += squares[m as usize];
                *l += lost_of[m as usize];
            }
        }
        for ((o, &c), &l) in out.iter_mut().zip(&correction).zip(&lost) {
            let count = self.n_observed - l;
            // No common attribute: +∞ (the rounded difference need not be exactly 0).
            *o = if count > T::zero() { (*o - c) * (self.d / count) } else { T::infinity() };
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
