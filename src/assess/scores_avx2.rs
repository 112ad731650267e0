//! The linkage scores with AVX2 and FMA: a panel is two registers of 8 lanes, and a tile is
//! scored in two halves of [`TILE`] / 2 queries (12 accumulators of the 16 registers).

use super::panel::{Hit, LANES, PanelRun, TILE, report};
use std::arch::x86_64::*;

/// Queries scored together.
const HALF: usize = TILE / 2;

/// [`ScoreKernel::scan`](super::scores::ScoreKernel::scan) with AVX2 and FMA: the same FMAs
/// as the AVX-512 kernel, eight lanes a register, half a tile at a time.
#[target_feature(enable = "avx2,fma")]
pub(super) fn scan_avx2(run: PanelRun, tile: &[f32], thresholds: &mut [f32; TILE], hit: Hit) {
    for (base, norms, columns) in run.each(tile) {
        let mut scores = [[0f32; LANES]; TILE];
        let mut any = 0;
        for h in 0..2 {
            // SAFETY: `norms` holds LANES = 16 f32s.
            let n =
                unsafe { [_mm256_loadu_ps(norms.as_ptr()), _mm256_loadu_ps(norms[8..].as_ptr())] };
            let mut acc = [n; HALF];
            for (column, queries) in columns.chunks_exact(LANES).zip(tile.chunks_exact(TILE)) {
                // SAFETY: `column` holds 16 f32s.
                let c = unsafe {
                    [_mm256_loadu_ps(column.as_ptr()), _mm256_loadu_ps(column[8..].as_ptr())]
                };
                let queries: &[f32; HALF] = queries[h * HALF..(h + 1) * HALF].try_into().unwrap();
                for (a, &q) in acc.iter_mut().zip(queries) {
                    let q = _mm256_set1_ps(q);
                    *a = [_mm256_fmadd_ps(q, c[0], a[0]), _mm256_fmadd_ps(q, c[1], a[1])];
                }
            }
            for (k, a) in acc.iter().enumerate() {
                let t = _mm256_set1_ps(thresholds[h * HALF + k]);
                let le = _mm256_or_ps(
                    _mm256_cmp_ps::<_CMP_LE_OQ>(a[0], t),
                    _mm256_cmp_ps::<_CMP_LE_OQ>(a[1], t),
                );
                any |= _mm256_movemask_ps(le);
                // SAFETY: two registers of 8 f32s are an array of 16 f32s.
                scores[h * HALF + k] =
                    unsafe { std::mem::transmute::<[__m256; 2], [f32; LANES]>(*a) };
            }
        }
        if any != 0 {
            report(&scores, base, thresholds, hit);
        }
    }
}
