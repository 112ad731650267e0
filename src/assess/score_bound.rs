//! The single-precision copy of the rows that the linkage scan scores, and the rigorous
//! bound that tells from a score whether a candidate may lie within a query's best exact
//! distance.
//!
//! Every row v (query or released row) is copied as v̂ = fl32(σ·fl64(v − μ)): μ is the mean
//! of the release's distinct rows and σ a power of two that brings the largest |v − μ| of both
//! tables to at most 1, so no f32 sum or product below can overflow and small data keep their
//! bits. A candidate c's score for a query x is s̃, the f32 chain s̃ = N_c, then
//! s̃ = fma(−2x̂_j, ĉ_j, s̃) for j = 0, 1, …, with N_c = fl32(‖ĉ‖²) (`scores.rs`). Write
//! u = 2⁻²⁴ and u_T, λ_T for the unit roundoff and smallest normal of the data type T, D̃ for
//! [`squared_distance`](crate::index::squared_distance)(x, c) in T and D = ‖x − c‖² in reals.
//!
//! 1. D̃ adds d rounded squares of rounded differences, all ≥ 0, left to right, so
//!    D̃ ≥ (1 − u_T)^(d+2)·D − d·λ_T (λ_T covers underflow). Hence D̃ ≤ b implies
//!    D ≤ U(b) = (b + d·λ_T) / (1 − u_T)^(d+2).
//! 2. With e_v ≥ ‖σ(v − μ) − v̂‖ (measured per row by [`ScaledCopy::copy`]) and e_max the
//!    largest e_c of the candidates, the triangle inequality gives
//!    σ√D ≥ ‖x̂ − ĉ‖ − e_x − e_max, so D ≤ U implies ‖x̂ − ĉ‖ ≤ ρ = σ√U + e_x + e_max.
//! 3. ‖x̂ − ĉ‖² = ‖x̂‖² + ‖ĉ‖² − 2x̂·ĉ exactly. The chain s̃ rounds d times, each time a
//!    partial sum bounded by N_c + 2Σ|x̂_j ĉ_j| ≤ N_max + 2‖x̂‖R (Cauchy–Schwarz; R ≥ every
//!    ‖ĉ‖, N_max the largest N_c), so it is within γ_d·(N_max + 2‖x̂‖R) + d·2⁻¹⁴⁹ of
//!    N_c − 2x̂·ĉ (γ_d = du / (1 − du), the second term for underflow); and N_c, a sum of
//!    exact f64 squares rounded to f32, is within (u + 2d·2⁻⁵³)·R² + 2⁻¹⁴⁹ of ‖ĉ‖². So
//!    ‖x̂ − ĉ‖² ≥ ‖x̂‖² + s̃ − E with E the sum of these errors.
//! 4. So D̃ ≤ b implies s̃ ≤ τ(b) = ρ² − ‖x̂‖² + E. [`ScoreBound::threshold`] evaluates τ in
//!    f64 with a relative slack larger than the roundings of that evaluation, and rounds it
//!    up to f32. A candidate whose score exceeds τ(best) is farther than the best exact
//!    distance found so far and is skipped; every other one is re-checked exactly.
//!
//! The bound is loose only by the rounding terms (about 10⁻⁶ of ‖x̂‖ on data of one scale), so
//! a query re-checks little more than its ties; data whose distances are far below their
//! magnitudes re-check more, never wrongly.

use crate::float::Float;

/// 2⁻⁵³, the unit roundoff of f64.
const U64: f64 = f64::EPSILON / 2.0;
/// 2⁻²⁴, the unit roundoff of f32.
const U32: f64 = f32::EPSILON as f64 / 2.0;
/// 2⁻¹⁴⁹, the smallest positive f32 (bounds the absolute error of an f32 rounding that
/// underflows).
const TINY32: f64 = 1.401_298_464_324_817e-45;

/// How rows are copied to f32: centred on `centre`, scaled by the power of two `scale`.
#[derive(Debug, Clone)]
pub struct ScaledCopy {
    centre: Vec<f64>,
    scale: f64,
}

impl ScaledCopy {
    /// The copy for the row-major `candidates` (centred on their mean) and `queries`
    /// (whose magnitudes count for the scale too); `None` when some |v − μ| reaches 2¹⁰⁰⁰
    /// (no power of two in the normal range scales it). No value may be NaN or infinite.
    pub fn new<T: Float>(candidates: &[T], queries: &[T], dim: usize) -> Option<Self> {
        let rows = (candidates.len() / dim).max(1) as f64;
        let mut centre = vec![0.0; dim];
        for row in candidates.chunks_exact(dim) {
            centre.iter_mut().zip(row).for_each(|(m, &v)| *m += v.as_f64());
        }
        centre.iter_mut().for_each(|m| *m /= rows);
        let largest = candidates
            .chunks_exact(dim)
            .chain(queries.chunks_exact(dim))
            .flat_map(|row| row.iter().zip(&centre).map(|(&v, &m)| (v.as_f64() - m).abs()))
            .fold(0.0, f64::max);
        if largest >= 2f64.powi(1000) {
            return None;
        }
        // The smallest power of two ≥ `largest`, kept within the normal range.
        let exponent = if largest > 0.0 { largest.log2().ceil() as i32 } else { 0 };
        let mut scale = 2f64.powi(-exponent.clamp(-1000, 1000));
        while largest * scale > 1.0 {
            scale /= 2.0;
        }
        Some(ScaledCopy { centre, scale })
    }

    /// Writes v̂ of `row` into `out` and returns e_v, an upper bound of ‖σ(v − μ) − v̂‖.
    /// The residuals σ·fl(v − μ) − v̂ are exact in f64 (an f64 minus its f32 rounding); the
    /// subtraction's own rounding adds at most 2⁻⁵³·σ‖fl(v − μ)‖.
    pub fn copy<T: Float>(&self, row: &[T], out: &mut [f32]) -> f64 {
        let (mut residual, mut norm) = (0.0, 0.0);
        for ((o, &v), &m) in out.iter_mut().zip(row).zip(&self.centre) {
            let a = self.scale * (v.as_f64() - m);
            *o = a as f32;
            residual += (a - f64::from(*o)).powi(2);
            norm += a * a;
        }
        let slack = 1.0 + 8.0 * (row.len() as f64 + 4.0) * U64;
        (residual.sqrt() + 2.0 * U64 * norm.sqrt()) * slack + 1e-150
    }

    /// σ.
    pub fn scale(&self) -> f64 {
        self.scale
    }
}

/// Thresholds of the scores of one set of candidates (see the module docs).
#[derive(Debug, Clone)]
pub struct ScoreBound {
    dim: f64,
    scale: f64,
    /// Largest conversion error e_c of a candidate.
    e_max: f64,
    /// R and N_max of the module docs.
    radius: f64,
    n_max: f64,
    /// Unit roundoff and smallest normal of the data type.
    unit: f64,
    smallest: f64,
}

impl ScoreBound {
    /// The bound for candidates with conversion errors up to `e_max`, norms ‖ĉ‖ up to
    /// `radius` and f32 squared norms up to `n_max`, of data of type `T`.
    pub fn new<T: Float>(
        dim: usize,
        copy: &ScaledCopy,
        e_max: f64,
        radius: f64,
        n_max: f64,
    ) -> Self {
        ScoreBound {
            dim: dim as f64,
            scale: copy.scale(),
            e_max,
            radius,
            n_max,
            unit: T::epsilon().as_f64() / 2.0,
            smallest: T::min_positive_value().as_f64(),
        }
    }

    /// τ(best) for a query with ‖x̂‖ = `norm` and conversion error `error`: every candidate
    /// whose [`squared_distance`](crate::index::squared_distance) to the query is ≤ `best`
    /// scores ≤ τ. +∞ when `best` is (or the bound overflows).
    pub fn threshold(&self, best: f64, norm: f64, error: f64) -> f32 {
        let d = self.dim;
        let slack = 1.0 + 16.0 * (d + 8.0) * U64;
        let within = (best + d * self.smallest) / (1.0 - self.unit).powf(d + 2.0) * slack;
        let rho = (self.scale * within.sqrt() * slack + error + self.e_max) * slack;
        let gamma = d * U32 / (1.0 - d * U32);
        let rounding = gamma * (self.n_max + 2.0 * norm * self.radius)
            + (U32 + 2.0 * d * U64) * self.radius * self.radius
            + (d + 1.0) * TINY32;
        let (plus, minus) = (rho * rho + rounding, norm * norm);
        let tau = plus - minus + (plus + minus) * 8.0 * (d + 8.0) * U64;
        round_up(tau)
    }
}

/// The smallest f32 ≥ `x` (+∞ above the f32 range; NaN stays NaN).
fn round_up(x: f64) -> f32 {
    let r = x as f32;
    if f64::from(r) < x { r.next_up() } else { r }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::index::squared_distance;
    use rand::{RngExt, SeedableRng, rngs::StdRng};

    /// The f32 score chain of the module docs, written out.
    fn score(x: &[f32], c: &[f32]) -> f32 {
        let n = c.iter().map(|&v| f64::from(v) * f64::from(v)).sum::<f64>() as f32;
        x.iter().zip(c).fold(n, |s, (&xj, &cj)| (-2.0 * xj).mul_add(cj, s))
    }

    /// Every candidate scores within τ of its own exact distance, on data with large
    /// offsets, tiny differences, huge and tiny magnitudes, in f64 and f32.
    fn holds<T: Float>(offset: f64, spread: f64, step: f64, seed: u64) {
        let mut rng = StdRng::seed_from_u64(seed);
        for d in [1, 2, 5, 15, 40] {
            let mut draw = |n: usize| -> Vec<T> {
                (0..n * d)
                    .map(|_| {
                        let base = offset + spread * rng.random_range(-1.0..1.0);
                        T::from_f64_lossy(base + step * f64::from(rng.random_range(-3i32..=3)))
                    })
                    .collect()
            };
            let (cands, queries) = (draw(40), draw(30));
            let copy = ScaledCopy::new(&cands, &queries, d).unwrap();
            let mut hat = vec![0f32; d];
            let (mut chat, mut e_max, mut radius, mut n_max) = (Vec::new(), 0f64, 0f64, 0f64);
            for c in cands.chunks_exact(d) {
                e_max = e_max.max(copy.copy(c, &mut hat));
                let n = hat.iter().map(|&v| f64::from(v).powi(2)).sum::<f64>();
                radius = radius.max(n.sqrt() * (1.0 + 1e-12));
                n_max = n_max.max(f64::from(n as f32));
                chat.push(hat.clone());
            }
            let bound = ScoreBound::new::<T>(d, &copy, e_max, radius, n_max);
            for x in queries.chunks_exact(d) {
                let e_x = copy.copy(x, &mut hat);
                let norm = hat.iter().map(|&v| f64::from(v).powi(2)).sum::<f64>().sqrt();
                for (c, ch) in cands.chunks_exact(d).zip(&chat) {
                    let exact = squared_distance(x, c).as_f64();
                    let tau = bound.threshold(exact, norm, e_x);
                    let s = score(&hat, ch);
                    assert!(s <= tau, "d={d} offset={offset:e} spread={spread:e}: {s} > {tau}");
                }
            }
        }
    }

    #[test]
    fn every_candidate_scores_within_the_threshold_of_its_own_distance() {
        for (i, (offset, spread, step)) in [
            (0.0, 1.0, 0.0),
            (1e6, 1.0, 0.0),
            (1e6, 0.0, 1e-3),
            (-3e9, 1e-4, 1e-7),
            (0.0, 1e150, 0.0),
            (1e300, 1e299, 0.0),
            (0.0, 1e-300, 0.0),
            (0.0, 0.0, 1e-310),
            (0.0, 1e30, 1.0),
        ]
        .into_iter()
        .enumerate()
        {
            holds::<f64>(offset, spread, step, i as u64);
            if offset.abs() + spread + step < 1e30 {
                holds::<f32>(offset, spread, step, i as u64);
            }
        }
    }

    #[test]
    fn the_copy_fits_within_one_and_thresholds_round_up() {
        let rows = [1e6f64, 1e6 + 3.0, 1e6 - 1.0];
        let copy = ScaledCopy::new(&rows, &[1e6 + 5.0], 1).unwrap();
        let mut out = [0f32];
        for v in rows.iter().chain(&[1e6 + 5.0]) {
            copy.copy(&[*v], &mut out);
            assert!(out[0].abs() <= 1.0);
        }
        assert!(f64::from(round_up(0.1)) >= 0.1 && f64::from(round_up(0.1).next_down()) < 0.1);
        assert_eq!(round_up(1e300), f32::INFINITY);
        assert!(ScaledCopy::new(&[f64::MAX, -f64::MAX], &[], 1).is_none());
    }
}
