//! What the linkage scan's score kernels share, below the dispatcher
//! ([`super::scores`]) and its per-ISA kernels (`scores_avx2.rs`, `scores_avx512.rs`) alike:
//! the panel and tile sizes, a run of panels, the hit callback and the rare path that
//! reports the lanes at or below a threshold (docs/assessment.md#risk).

/// Candidates a panel (one AVX-512 register of f32).
pub const LANES: usize = 16;

/// Queries a tile (the AVX-512 kernel's 12 accumulators of 16 lanes and their 12
/// thresholds, besides the candidates' column, fill 25 of its 32 registers).
pub const TILE: usize = 12;

/// What the kernel calls for a lane at or below its query's threshold: (query of the tile,
/// candidate id, score) → the query's threshold from now on.
pub type Hit<'a> = &'a mut dyn FnMut(usize, u32, f32) -> f32;

/// Consecutive panels of the candidates' copies (`Panels::data`), of rows of `dim` attributes, whose first
/// candidate has id `first`.
#[derive(Debug, Clone, Copy)]
pub struct PanelRun<'a> {
    /// The panels' f32s (whole panels).
    pub panels: &'a [f32],
    /// Attributes of a row.
    pub dim: usize,
    /// Id of the first panel's first lane.
    pub first: u32,
}

impl<'a> PanelRun<'a> {
    /// Each panel as (id of its first lane, its N_c, its columns), after checking that
    /// `tile` holds `dim` rows of [`TILE`].
    #[inline(always)]
    pub fn each(self, tile: &[f32]) -> impl Iterator<Item = (u32, &'a [f32], &'a [f32])> {
        let stride = (self.dim + 1) * LANES;
        assert!(tile.len() == self.dim * TILE && self.panels.len().is_multiple_of(stride));
        self.panels.chunks_exact(stride).enumerate().map(move |(p, panel)| {
            let (norms, columns) = panel.split_at(LANES);
            (self.first + (p * LANES) as u32, norms, columns)
        })
    }
}

/// The rare path shared by every kernel: every lane at or below its query's threshold, in
/// order, each compared with the threshold as the previous hits left it.
#[cold]
#[inline(never)]
pub(super) fn report(
    acc: &[[f32; LANES]; TILE],
    base: u32,
    thresholds: &mut [f32; TILE],
    hit: Hit,
) {
    for (q, scores) in acc.iter().enumerate() {
        for (lane, &s) in scores.iter().enumerate() {
            if s <= thresholds[q] {
                thresholds[q] = hit(q, base + lane as u32, s);
            }
        }
    }
}
