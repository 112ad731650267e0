//! The linkage scan's single-precision scores: candidates in panels of [`LANES`], a tile of
//! [`TILE`] queries scored against each panel with register-blocked FMAs, and the lanes at
//! or below a query's threshold handed to the exact re-check.
//!
//! Scoring every query against every distinct released row is many-against-many, like a
//! matrix product: a panel's column of one attribute is loaded once for [`TILE`] queries,
//! each of which keeps its own accumulator, so the scan is bound by the FMA units, not by
//! one chain's latency. The score s̃ of candidate c for query x is the f32 chain
//! s̃ = N_c, s̃ = fma(−2x̂_j, ĉ_j, s̃) for j = 0, 1, … (`score_bound.rs` bounds its rounding).
//! The kernels for AVX-512 (`scores_avx512.rs`) and AVX2 with FMA (`scores_avx2.rs`) do
//! the portable kernel's single-rounding FMAs in the same order, so all give the same
//! scores bit for bit; the widest this CPU runs is chosen at run time.

#[cfg(target_arch = "x86_64")]
use super::scores_avx2::scan_avx2;
#[cfg(target_arch = "x86_64")]
use super::scores_avx512::scan_avx512;

use super::panel::report;
pub use super::panel::{Hit, LANES, PanelRun, TILE};

/// The candidates' f32 copies, `LANES` to a panel: per panel, the lanes' N_c, then their
/// values of attribute 0, 1, …; lanes past the last candidate hold N_c = NaN, which no
/// threshold admits.
#[derive(Debug, Clone)]
pub struct Panels {
    dim: usize,
    data: Vec<f32>,
}

impl Panels {
    /// Panels of `count` candidates, candidate `id`'s copy ĉ written by `copy(id, ĉ)`; N_c
    /// is fl32 of the f64 sum of the exact squares of ĉ.
    pub fn new(dim: usize, count: usize, mut copy: impl FnMut(usize, &mut [f32])) -> Self {
        let stride = (dim + 1) * LANES;
        let mut data = vec![0f32; count.div_ceil(LANES) * stride];
        let mut row = vec![0f32; dim];
        for (p, panel) in data.chunks_exact_mut(stride).enumerate() {
            for lane in 0..LANES {
                let id = p * LANES + lane;
                if id >= count {
                    panel[lane] = f32::NAN;
                    continue;
                }
                copy(id, &mut row);
                let norm: f64 = row.iter().map(|&v| f64::from(v) * f64::from(v)).sum();
                panel[lane] = norm as f32;
                for (j, &v) in row.iter().enumerate() {
                    panel[(j + 1) * LANES + lane] = v;
                }
            }
        }
        Panels { dim, data }
    }

    /// f32s of one panel.
    pub fn stride(&self) -> usize {
        (self.dim + 1) * LANES
    }

    /// The panels, row-major as described on the type.
    pub fn data(&self) -> &[f32] {
        &self.data
    }
}

/// Which kernel runs: the widest this CPU supports.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ScoreKernel {
    /// Any CPU.
    Portable,
    /// x86-64 with AVX2 and FMA (`scan_avx2`).
    Avx2,
    /// x86-64 with AVX-512F (`scan_avx512`).
    Avx512,
}

impl ScoreKernel {
    /// The widest kernel this CPU runs.
    pub fn detect() -> Self {
        #[cfg(target_arch = "x86_64")]
        {
            use std::arch::is_x86_feature_detected as has;
            if has!("avx512f") {
                return ScoreKernel::Avx512;
            }
            if has!("avx2") && has!("fma") {
                return ScoreKernel::Avx2;
            }
        }
        ScoreKernel::Portable
    }

    /// Whether this kernel's FMAs are the hardware's: not the portable kernel on x86-64,
    /// where `f32::mul_add` without the FMA feature is a software routine (150× slower than
    /// AVX2, bench-results/assess.md), so the scan would lose to the block index.
    pub fn hardware_fma(self) -> bool {
        !(cfg!(target_arch = "x86_64") && self == ScoreKernel::Portable)
    }

    /// Scores the tile of queries `tile` (its −2x̂, attribute-major: `dim` rows of [`TILE`])
    /// against every panel of `run`, calling `hit` for each lane whose score is ≤ its
    /// query's entry of `thresholds` at that moment and storing what `hit` returns there.
    pub fn scan(self, run: PanelRun, tile: &[f32], thresholds: &mut [f32; TILE], hit: Hit) {
        match self {
            #[cfg(target_arch = "x86_64")]
            // SAFETY: `detect` found AVX-512F on this CPU.
            ScoreKernel::Avx512 => unsafe { scan_avx512(run, tile, thresholds, hit) },
            #[cfg(target_arch = "x86_64")]
            // SAFETY: `detect` found AVX2 and FMA on this CPU.
            ScoreKernel::Avx2 => unsafe { scan_avx2(run, tile, thresholds, hit) },
            _ => scan_tile(run, tile, thresholds, hit),
        }
    }
}

/// The portable kernel of [`ScoreKernel::scan`], the reference of the SIMD ones.
fn scan_tile(run: PanelRun, tile: &[f32], thresholds: &mut [f32; TILE], hit: Hit) {
    for (base, norms, columns) in run.each(tile) {
        let norms: &[f32; LANES] = norms.try_into().unwrap();
        let mut acc = [*norms; TILE];
        for (column, queries) in columns.chunks_exact(LANES).zip(tile.chunks_exact(TILE)) {
            let column: &[f32; LANES] = column.try_into().unwrap();
            for (a, &q) in acc.iter_mut().zip(queries) {
                for (s, &c) in a.iter_mut().zip(column) {
                    *s = q.mul_add(c, *s);
                }
            }
        }
        let mut any = false;
        for (a, &t) in acc.iter().zip(thresholds.iter()) {
            any |= a.iter().fold(false, |m, &s| m | (s <= t));
        }
        if any {
            report(&acc, base, thresholds, hit);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::{RngExt, SeedableRng, rngs::StdRng};

    #[test]
    fn only_the_portable_kernel_on_x86_64_lacks_hardware_fma() {
        assert_eq!(ScoreKernel::Portable.hardware_fma(), !cfg!(target_arch = "x86_64"));
        assert!(ScoreKernel::Avx2.hardware_fma() && ScoreKernel::Avx512.hardware_fma());
    }

    /// Every compilation this CPU runs gives the portable kernel's scores bit for bit, and
    /// reports exactly the lanes at or below the thresholds.
    #[test]
    fn every_kernel_gives_the_portable_scores() {
        let mut rng = StdRng::seed_from_u64(3);
        for (dim, count) in [(1, 5), (3, 16), (15, 77), (20, 40)] {
            let rows: Vec<f32> = (0..dim * count).map(|_| rng.random_range(-1.0..1.0)).collect();
            let panels = Panels::new(dim, count, |id, out| {
                out.copy_from_slice(&rows[id * dim..(id + 1) * dim])
            });
            let tile: Vec<f32> = (0..dim * TILE).map(|_| rng.random_range(-2.0..2.0)).collect();
            let run = |kernel: ScoreKernel, limit: f32| {
                let mut got = Vec::new();
                let mut th = [limit; TILE];
                th[1] = f32::NEG_INFINITY;
                let mut hit = |q: usize, id: u32, s: f32| {
                    got.push((q, id, s.to_bits()));
                    limit
                };
                let run = PanelRun { panels: panels.data(), dim, first: 7 };
                kernel.scan(run, &tile, &mut th, &mut hit);
                got
            };
            let all = run(ScoreKernel::Portable, f32::MAX);
            assert_eq!(all.len(), (TILE - 1) * count, "every real lane but query 1's");
            assert!(all.iter().all(|&(q, id, _)| q != 1 && (7..7 + count as u32).contains(&id)));
            let mut kernels = vec![ScoreKernel::detect()];
            #[cfg(target_arch = "x86_64")]
            if std::arch::is_x86_feature_detected!("avx2")
                && std::arch::is_x86_feature_detected!("fma")
            {
                kernels.push(ScoreKernel::Avx2);
            }
            for kernel in kernels {
                assert_eq!(run(kernel, f32::MAX), all, "{kernel:?}");
                assert_eq!(run(kernel, 1.0), run(ScoreKernel::Portable, 1.0), "{kernel:?}");
            }
        }
    }
}
