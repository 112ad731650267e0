//! The linkage scores with AVX-512: one register per panel column, [`TILE`] accumulators.

use super::panel::{Hit, LANES, PanelRun, TILE, report};
use std::arch::x86_64::*;

/// [`ScoreKernel::scan`](super::scores::ScoreKernel::scan) with AVX-512F: per panel, the
/// column of each attribute is loaded once and multiplied into the [`TILE`] queries'
/// accumulators by FMAs with the query's value broadcast; the scores are compared with the
/// thresholds (kept in registers) into masks, and only a panel with a lane set goes to
/// [`report`].
#[target_feature(enable = "avx512f")]
pub(super) fn scan_avx512(run: PanelRun, tile: &[f32], thresholds: &mut [f32; TILE], hit: Hit) {
    let mut limits = thresholds.map(|t| _mm512_set1_ps(t));
    for (base, norms, columns) in run.each(tile) {
        // SAFETY: `norms` holds LANES f32s.
        let mut acc = [unsafe { _mm512_loadu_ps(norms.as_ptr()) }; TILE];
        for (column, queries) in columns.chunks_exact(LANES).zip(tile.chunks_exact(TILE)) {
            // SAFETY: `column` holds LANES f32s.
            let c = unsafe { _mm512_loadu_ps(column.as_ptr()) };
            let queries: &[f32; TILE] = queries.try_into().unwrap();
            for (a, &q) in acc.iter_mut().zip(queries) {
                *a = _mm512_fmadd_ps(_mm512_set1_ps(q), c, *a);
            }
        }
        let mut any = 0;
        for (&a, &t) in acc.iter().zip(&limits) {
            any |= _mm512_cmp_ps_mask::<_CMP_LE_OQ>(a, t);
        }
        if any != 0 {
            // SAFETY: a register of 16 f32s is an array of 16 f32s.
            let scores = acc.map(|a| unsafe { std::mem::transmute::<__m512, [f32; LANES]>(a) });
            report(&scores, base, thresholds, hit);
            limits = thresholds.map(|t| _mm512_set1_ps(t));
        }
    }
}
