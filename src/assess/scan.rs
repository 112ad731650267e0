//! Nearest-record linkage by scoring every query against every distinct released row, for
//! tables of more attributes than the k-d tree serves.
//!
//! A release of n records in groups of k has about n/k distinct rows, so the scan computes
//! n·n/k scores, as many distance evaluations as MDAV spends building the release, but as
//! a many-against-many product that runs at the FMA units' rate ([`scores`](super::scores)).
//! Each query starts from the exact distance to its own release; a candidate whose f32
//! score exceeds the query's threshold ([`ScoreBound`]) is provably farther than the best
//! exact distance found so far, and every other one is re-checked with
//! [`squared_distance`] in the data's own type, so minimum and ties are exactly those of a
//! brute force over the released records. Queries run in parallel chunks with per-query
//! results: the same answer for every thread count.

use super::distinct::DistinctRows;
use super::links::NearestLinks;
use super::score_bound::{ScaledCopy, ScoreBound};
use super::scores::{LANES, PanelRun, Panels, ScoreKernel, TILE};
use crate::float::Float;
use crate::index::{Ties, squared_distance};
use rayon::prelude::*;

/// Queries per parallel task (a multiple of [`TILE`]).
const CHUNK: usize = 40 * TILE;

/// f32s of the candidates' panels scored before the next candidates (the block stays in the
/// core's L2 cache while every tile of a chunk passes over it).
const BLOCK_FLOATS: usize = 64 * 1024;

/// Links every query (row-major, the rows of `distinct`'s width) to its nearest distinct
/// rows; `None` when the data's magnitudes do not fit the f32 copy ([`ScaledCopy::new`]) or
/// this CPU has no kernel with hardware FMAs ([`ScoreKernel::hardware_fma`]): the caller
/// then searches otherwise. No value may be NaN or infinite.
pub fn link_by_scan<T: Float>(queries: &[T], distinct: &DistinctRows<T>) -> Option<NearestLinks> {
    let kernel = ScoreKernel::detect();
    if !kernel.hardware_fma() {
        return None;
    }
    let d = distinct.dim;
    let copy = ScaledCopy::new(&distinct.rows, queries, d)?;
    let (mut e_max, mut radius, mut n_max) = (0f64, 0f64, 0f64);
    let panels = Panels::new(d, distinct.len(), |id, out| {
        e_max = e_max.max(copy.copy(distinct.row(id as u32), out));
        let norm: f64 = out.iter().map(|&v| f64::from(v) * f64::from(v)).sum();
        radius = radius.max(norm.sqrt());
        n_max = n_max.max(f64::from(norm as f32));
    });
    // R is the largest norm computed in f64, raised past that computation's rounding.
    let radius = radius * (1.0 + 4.0 * (d as f64 + 2.0) * f64::EPSILON);
    let bound = ScoreBound::new::<T>(d, &copy, e_max, radius, n_max);
    let n = queries.len() / d;
    let mut tie_counts = vec![0u64; n];
    let mut own_among = vec![false; n];
    let scan = Scan { queries, distinct, copy: &copy, bound: &bound, panels: &panels, kernel };
    tie_counts
        .par_chunks_mut(CHUNK)
        .zip(own_among.par_chunks_mut(CHUNK))
        .enumerate()
        .for_each(|(c, (counts, owns))| scan.chunk(c * CHUNK, counts, owns));
    Some(NearestLinks { tie_counts, own_among })
}

/// What every chunk of queries reads.
struct Scan<'a, T> {
    queries: &'a [T],
    distinct: &'a DistinctRows<T>,
    copy: &'a ScaledCopy,
    bound: &'a ScoreBound,
    panels: &'a Panels,
    kernel: ScoreKernel,
}

/// One query's search: its ties so far, ‖x̂‖ and conversion error (for its thresholds).
struct Query<T> {
    ties: Ties<T>,
    norm: f64,
    error: f64,
}

impl<T: Float> Scan<'_, T> {
    /// Query `start + r` for r < `counts.len()`: its tie count and whether its own release
    /// is among the ties.
    fn chunk(&self, start: usize, counts: &mut [u64], owns: &mut [bool]) {
        let (d, len) = (self.distinct.dim, counts.len());
        let row = |r: usize| &self.queries[(start + r) * d..(start + r + 1) * d];
        let tiles = len.div_ceil(TILE);
        // Per tile, −2x̂ attribute-major; absent queries score 0 against +∞ thresholds'
        // opposite, −∞, which no score reaches.
        let mut tile_rows = vec![0f32; tiles * TILE * d];
        let mut thresholds = vec![f32::NEG_INFINITY; tiles * TILE];
        let mut hat = vec![0f32; d];
        let mut state: Vec<Query<T>> = (0..len)
            .map(|r| {
                let error = self.copy.copy(row(r), &mut hat);
                let norm = hat.iter().map(|&v| f64::from(v) * f64::from(v)).sum::<f64>().sqrt();
                let (t, q) = (r / TILE, r % TILE);
                for (j, &v) in hat.iter().enumerate() {
                    tile_rows[(t * d + j) * TILE + q] = -2.0 * v;
                }
                let own = self.distinct.row(self.distinct.of_record[start + r]);
                let best = squared_distance(row(r), own);
                thresholds[r] = self.bound.threshold(best.as_f64(), norm, error);
                Query { ties: Ties::within(best), norm, error }
            })
            .collect();
        let stride = self.panels.stride();
        let block = (BLOCK_FLOATS / stride).max(1) * stride;
        for (b, panels) in self.panels.data().chunks(block).enumerate() {
            let first = (b * block / stride * LANES) as u32;
            for (t, (tile, th)) in
                tile_rows.chunks_exact(TILE * d).zip(thresholds.chunks_exact_mut(TILE)).enumerate()
            {
                let mut hit = |q: usize, id: u32, _score: f32| {
                    let r = t * TILE + q;
                    let query = &mut state[r];
                    query.ties.offer(id, squared_distance(row(r), self.distinct.row(id)));
                    self.bound.threshold(query.ties.best().as_f64(), query.norm, query.error)
                };
                let th: &mut [f32; TILE] = th.try_into().unwrap();
                let run = PanelRun { panels, dim: d, first };
                self.kernel.scan(run, tile, th, &mut hit);
            }
        }
        for ((count, own), (r, query)) in counts.iter_mut().zip(owns).zip(state.iter().enumerate())
        {
            let ids = query.ties.ids();
            *count = ids.iter().map(|&id| u64::from(self.distinct.counts[id as usize])).sum();
            *own = ids.contains(&self.distinct.of_record[start + r]);
        }
    }
}
