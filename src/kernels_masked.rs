//! The masked (missing-value) scan kernels, next to the complete ones of `kernels.rs`
//! (DESIGN §8, "Missing values").
//!
//! The partial distance between a record x and a reference r is
//! (d / |O|) · Σ_{j ∈ O} (x_j − r_j)², where O is the set of attributes observed in both;
//! it is +∞ when O is empty (nothing in common: never nearer than a comparable record). For
//! a centroid reference, r's observed attributes are those some member observes, so O is
//! the record's observed attributes. The working set stores a missing cell as 0 with a 0/1
//! mask column, so a block is scored as Σ m_j·(x_j − r_j)² and |O| = Σ m_j over the
//! reference's observed attributes: no branch per cell, and LLVM vectorizes across records
//! exactly as for the complete kernels. With every cell observed the score is bit-identical
//! to [`crate::kernels::Metric::Direct`] (same operations, same order; d/d = 1).
//!
//! Data without NaN never reaches this file: the algorithms choose the scorer once per scan.

use crate::dataset::WorkingSet;
use crate::float::Float;
use crate::kernels::BlockScorer;

/// Records scored per register group, as in the complete kernels.
const LANES: usize = 16;

/// A reference for the masked kernels: its values (NaN = missing) and observed attributes.
#[derive(Debug, Clone)]
pub struct Partial<T> {
    values: Vec<T>,
    observed: Vec<usize>,
    d: T,
}

impl<T: Float> Partial<T> {
    /// The reference `values` (length d; NaN marks a missing attribute).
    pub fn new(values: &[T]) -> Self {
        let observed = (0..values.len()).filter(|&j| !values[j].is_nan()).collect();
        Partial { values: values.to_vec(), observed, d: T::from_f64_lossy(values.len() as f64) }
    }
}

/// Partial-distance scores of the `L` positions from `start` (see the module doc). Against
/// a reference with every attribute, |O| is the record's own count, so the scale d/|O| is
/// the precomputed [`WorkingSet::weights`] and only Σ m_j·(x_j − r_j)² is accumulated.
#[inline(always)]
fn partial_lanes<T: Float, const L: usize>(
    ws: &WorkingSet<T>,
    mask: &[T],
    start: usize,
    p: &Partial<T>,
    out: &mut [T; L],
) {
    let n = ws.n();
    let lanes = |v: &[T], at: usize| -> [T; L] { v[at..at + L].try_into().expect("L positions") };
    let mut acc = [T::zero(); L];
    let full = p.observed.len() == ws.d();
    let mut count = [T::zero(); L];
    for &j in &p.observed {
        let r = p.values[j];
        let (x, m) = (lanes(ws.column(j), start), lanes(mask, j * n + start));
        for l in 0..L {
            let t = x[l] - r;
            acc[l] += m[l] * (t * t);
        }
        if !full {
            for l in 0..L {
                count[l] += m[l];
            }
        }
    }
    if full {
        let w = lanes(ws.weights(), start);
        for l in 0..L {
            let s = acc[l] * w[l]; // NaN only as 0·∞: a record with nothing observed
            out[l] = if s.is_nan() { T::infinity() } else { s };
        }
    } else {
        for l in 0..L {
            out[l] = if count[l] > T::zero() { acc[l] * (p.d / count[l]) } else { T::infinity() };
        }
    }
}

impl<T: Float> BlockScorer<T> for Partial<T> {
    #[inline(always)]
    fn fill(&self, ws: &WorkingSet<T>, start: usize, out: &mut [T]) {
        let mask = ws.mask().expect("the masked kernels run on data with missing values");
        let mut lanes = out.chunks_exact_mut(LANES);
        let mut start = start;
        for o in &mut lanes {
            partial_lanes::<T, LANES>(ws, mask, start, self, o.try_into().expect("LANES"));
            start += LANES;
        }
        for o in lanes.into_remainder() {
            let mut one = [T::zero()];
            partial_lanes::<T, 1>(ws, mask, start, self, &mut one);
            *o = one[0];
            start += 1;
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
    use crate::kernels::{Complete, Metric};

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
            for reference in [0, n / 2, n - 1] {
                let r = ws.row(reference);
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
                        assert!(
                            (got - want).abs() <= tolerance * (1.0 + want),
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

    #[test]
    fn all_observed_masks_give_the_direct_scores_bit_for_bit() {
        let x = data(133, 5, 0.0, 9).mapv(|v| if v.is_nan() { 0.25 } else { v });
        let s = Scaling::fit(x.view(), true);
        let complete = WorkingSet::<f32>::new(x.view(), &s).unwrap();
        let masked = WorkingSet::<f32>::with_missing(x.view(), &s).unwrap();
        let r = complete.row(17);
        let (mut a, mut b) = (vec![0.0f32; 133], vec![0.0f32; 133]);
        Complete { reference: &r, metric: Metric::Direct }.fill(&complete, 0, &mut a);
        Partial::new(&r).fill(&masked, 0, &mut b);
        assert_eq!(a, b);
    }
}
