//! Exact MDAV in high dimension with fewer bytes per pass (issue #15, goal 2): every scan
//! first reads a compact int8 copy of the unassigned records, then re-checks the few
//! records that could be selected with the exact scores.
//!
//! Each attribute j is quantized once, x ≈ mid_j + step_j·q (q an i8 in −127..127, step_j =
//! range/254), with a measured error bound err_j = max |x − mid_j − step_j·q|. A pass reads
//! d bytes plus ½‖x‖² per record instead of d values: 19 bytes instead of 64 for 15 f32
//! attributes, so 10⁶ × 15 fits the last-level cache and the pass is no longer bound by
//! memory bandwidth. The approximate algebraic score ŝ = ½‖x‖² − ⟨mid + step·q, r⟩ differs
//! from the exact kernel score s (`kernels.rs`, in precision `T`) by at most
//! B = Σ_j |r_j|·err_j plus a rigorous bound of the rounding of both computations.
//!
//! Exactness: a selection of the `count` smallest (or largest) scores keeps, as candidates,
//! every record with ŝ within 2B of the `count`-th best ŝ ([`Band`]). Every record of the
//! exact selection is among them (its s is at most the `count`-th best s, which is at most
//! the `count`-th best ŝ + B), and no record outside can tie with it, so re-checking the
//! candidates with the exact score (bit-identical to the scan's, from a row-major copy)
//! and the usual tie rule (lowest id) gives the scan's answer bit for bit.

use super::spatial::IndexChoice;
use crate::dataset::WorkingSet;
use crate::float::Float;
use crate::kernels::{BlockScorer, Exclude, Farthest, Nearest, Offer, Pick, Ranked, ScoreVisitor};
use crate::parallel::Exec;
use rayon::prelude::*;

/// Smallest number of records where `IndexChoice::Auto` scans the compact copy: below it
/// the remaining records fit the caches anyway (see `bench-results/mdav_large.md`).
pub const AUTO_MIN_N: usize = 20_000;

/// Whether exact MDAV scans a compact copy (the `compact_scan` parameter): `Auto` on
/// complete data from [`AUTO_MIN_N`] records when the k-d tree is not used. Missing values
/// have no algebraic score to bound, so they always scan the exact values.
pub fn uses_compact(choice: IndexChoice, n: usize, masked: bool, indexed: bool) -> bool {
    !masked
        && !indexed
        && match choice {
            IndexChoice::On => true,
            IndexChoice::Off => false,
            IndexChoice::Auto => n >= AUTO_MIN_N,
        }
}

/// Largest quantized magnitude.
const QMAX: f64 = 127.0;

/// The int8 copy of a working set (column-major, by position, swapped along with it) and an
/// exact row-major copy by original id for the re-checks.
#[derive(Debug, Clone)]
pub struct CompactCopy<T> {
    n: usize,
    d: usize,
    q: Vec<i8>,
    mid: Vec<f64>,
    step: Vec<f64>,
    /// Per attribute: the largest |x − mid − step·q|, rounded up.
    err: Vec<f64>,
    /// Per attribute: the largest |x|.
    max_abs: Vec<f64>,
    /// The largest |½‖x‖²|.
    max_half_norm: f64,
    /// Per original id: its d values, then its ½‖x‖² (exactly the working set's).
    rows: Vec<T>,
}

impl<T: Float> CompactCopy<T> {
    /// Quantizes every record of `ws` (complete data) in its current position order, one
    /// attribute per task where `exec` allows.
    pub fn new(ws: &WorkingSet<T>, exec: Exec) -> Self {
        let (n, d) = (ws.n(), ws.d());
        let columns: Vec<Quantized> = if exec.is_parallel() {
            (0..d).into_par_iter().map(|j| Quantized::of(ws.column(j))).collect()
        } else {
            (0..d).map(|j| Quantized::of(ws.column(j))).collect()
        };
        let mut rows = vec![T::zero(); n * (d + 1)];
        let fill = |(id, row): (usize, &mut [T])| {
            let p = ws.position_of(id as u32);
            for (j, r) in row[..d].iter_mut().enumerate() {
                *r = ws.column(j)[p];
            }
            row[d] = ws.half_norms()[p];
        };
        if exec.is_parallel() {
            rows.par_chunks_mut(d + 1).enumerate().for_each(fill);
        } else {
            rows.chunks_mut(d + 1).enumerate().for_each(fill);
        }
        CompactCopy {
            n,
            d,
            q: columns.iter().flat_map(|c| c.codes.iter().copied()).collect(),
            mid: columns.iter().map(|c| c.mid).collect(),
            step: columns.iter().map(|c| c.step).collect(),
            err: columns.iter().map(|c| c.err).collect(),
            max_abs: columns.iter().map(|c| c.max_abs).collect(),
            max_half_norm: ws.half_norms().iter().fold(0.0, |a, h| a.max(h.as_f64().abs())),
            rows,
        }
    }

    /// Exchanges the records at positions `a` and `b` (mirrors `WorkingSet::swap`).
    #[inline]
    pub fn swap(&mut self, a: usize, b: usize) {
        if a != b {
            for c in self.q.chunks_exact_mut(self.n) {
                c.swap(a, b);
            }
        }
    }

    /// Quantized attribute `j` of every position.
    #[inline]
    fn column(&self, j: usize) -> &[i8] {
        &self.q[j * self.n..(j + 1) * self.n]
    }

    /// The exact values of the record `id`.
    #[inline]
    pub fn row(&self, id: u32) -> &[T] {
        &self.rows[id as usize * (self.d + 1)..id as usize * (self.d + 1) + self.d]
    }

    /// F-MDAV's score ½‖x‖² − ⟨x, r⟩ of the record `id`, bit-identical to the scan kernel
    /// (`WorkingSet::algebraic_score`: same operations in the same order).
    #[inline]
    pub fn exact_score(&self, id: u32, reference: &[T]) -> T {
        let row = &self.rows[id as usize * (self.d + 1)..(id as usize + 1) * (self.d + 1)];
        let mut s = row[self.d];
        for (&r, &x) in reference.iter().zip(row) {
            s -= r * x;
        }
        s
    }

    /// Prepares a pass against `reference`: the weights step_j·r_j, the constant ⟨mid, r⟩ and
    /// the bound B on |ŝ − s| (see the module doc).
    pub fn query(&self, reference: &[T]) -> CompactQuery<'_, T> {
        let r: Vec<f64> = reference.iter().map(|v| v.as_f64()).collect();
        let w: Vec<T> = r.iter().zip(&self.step).map(|(r, s)| T::from_f64_lossy(r * s)).collect();
        let c0_exact: f64 = r.iter().zip(&self.mid).map(|(r, m)| r * m).sum();
        let c0 = T::from_f64_lossy(c0_exact);
        let eps = T::epsilon().as_f64();
        let dot = |a: &[f64], b: &[f64]| a.iter().zip(b).map(|(x, y)| x.abs() * y).sum::<f64>();
        let quantization = dot(&r, &self.err);
        let sum_w: f64 = w.iter().map(|v| v.as_f64().abs()).sum();
        let sum_rm = dot(&r, &self.mid.iter().map(|m| m.abs()).collect::<Vec<_>>());
        let dims = self.d as f64;
        // Rounding of ŝ (the weights, ⟨mid, r⟩ and d + 1 subtractions in T) and of s (d
        // products and subtractions in T), each at most eps relative per operation.
        let approx_rounding =
            (dims + 3.0) * eps * (self.max_half_norm + c0.as_f64().abs() + QMAX * sum_w + sum_rm);
        let exact_rounding = (dims + 2.0) * eps * (self.max_half_norm + dot(&r, &self.max_abs));
        let bound = quantization * (1.0 + 1e-9) + 2.0 * (approx_rounding + exact_rounding);
        CompactQuery { copy: self, w, c0, margin: 2.0 * bound }
    }
}

/// One attribute quantized: x = mid + step·q within err.
struct Quantized {
    codes: Vec<i8>,
    mid: f64,
    step: f64,
    err: f64,
    max_abs: f64,
}

impl Quantized {
    fn of<T: Float>(col: &[T]) -> Self {
        let (lo, hi) = col.iter().fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), v| {
            (lo.min(v.as_f64()), hi.max(v.as_f64()))
        });
        let (mid, step) = (lo + (hi - lo) / 2.0, (hi - lo) / (2.0 * QMAX));
        let mut err: f64 = 0.0;
        let codes = col
            .iter()
            .map(|v| {
                let v = v.as_f64();
                let q =
                    if step > 0.0 { ((v - mid) / step).round().clamp(-QMAX, QMAX) } else { 0.0 };
                err = err.max((v - (mid + step * q)).abs());
                q as i8
            })
            .collect();
        let max_abs = lo.abs().max(hi.abs());
        // The f64 evaluation of the error is itself rounded: widen by a few ulps of |x|.
        let err = err + 8.0 * f64::EPSILON * (max_abs + mid.abs() + step * QMAX);
        Quantized { codes, mid, step, err, max_abs }
    }
}

/// A pass of approximate scores against one reference (see [`CompactCopy::query`]).
#[derive(Debug)]
pub struct CompactQuery<'a, T> {
    copy: &'a CompactCopy<T>,
    w: Vec<T>,
    c0: T,
    margin: f64,
}

impl<T> CompactQuery<'_, T> {
    /// Width of the candidate band: 2B.
    pub fn margin(&self) -> f64 {
        self.margin
    }
}

/// Approximate scores kept in registers across all attributes: four AVX-512 registers of
/// f32, so that the per-attribute loop overhead is paid once per 64 records.
const LANES: usize = 64;

impl<T: Float> CompactQuery<'_, T> {
    #[inline(always)]
    fn lanes<const L: usize>(&self, h: &[T], start: usize, out: &mut [T]) {
        let mut acc = [T::zero(); L];
        for (a, &h) in acc.iter_mut().zip(&h[start..start + L]) {
            *a = h - self.c0;
        }
        for (j, &w) in self.w.iter().enumerate() {
            let q: &[i8; L] =
                self.copy.column(j)[start..start + L].try_into().expect("L positions");
            for l in 0..L {
                acc[l] -= w * T::from_i8(q[l]);
            }
        }
        out.copy_from_slice(&acc);
    }
}

impl<T: Float> BlockScorer<T> for CompactQuery<'_, T> {
    #[inline(always)]
    fn fill(&self, ws: &WorkingSet<T>, start: usize, out: &mut [T]) {
        let h = ws.half_norms();
        let mut chunks = out.chunks_exact_mut(LANES);
        let mut p = start;
        for o in &mut chunks {
            self.lanes::<LANES>(h, p, o);
            p += LANES;
        }
        for o in chunks.into_remainder().chunks_mut(1) {
            self.lanes::<1>(h, p, o);
            p += 1;
        }
    }

    fn bytes_per_record(&self, ws: &WorkingSet<T>) -> usize {
        ws.d() + size_of::<T>()
    }
}

/// The candidates of one selection in an approximate pass: every record whose signed
/// approximate score is at most the `count`-th smallest plus the margin 2B (sign +1 for
/// the nearest, −1 for the farthest), never the excluded positions.
#[derive(Debug, Clone)]
pub struct Band<T> {
    count: usize,
    sign: T,
    margin: f64,
    exclude: Exclude,
    /// (signed approximate score, position).
    keys: Vec<(T, u32)>,
    limit: Option<T>,
    /// Size of `keys` that triggers the next narrowing.
    cap: usize,
}

impl<T: Float> Band<T> {
    /// Candidates for the `count` best of `sign`·score within `margin`.
    pub fn new(count: usize, farthest: bool, margin: f64, exclude: Exclude) -> Self {
        let sign = if farthest { -T::one() } else { T::one() };
        Band { count, sign, margin, exclude, keys: Vec::new(), limit: None, cap: 2 * count + 64 }
    }

    /// Recomputes the limit from the `count`-th best key and drops the keys above it.
    fn narrow(&mut self) {
        if self.count == 0 || self.keys.len() < self.count {
            return;
        }
        let by_score = |a: &(T, u32), b: &(T, u32)| a.0.partial_cmp(&b.0).expect("finite");
        let nth = self.keys.select_nth_unstable_by(self.count - 1, by_score).1.0.as_f64();
        // Rounded up, so that the limit in T is never below nth + margin.
        let limit = nth + self.margin;
        let limit = T::from_f64_lossy(limit + limit.abs() * 4.0 * T::epsilon().as_f64());
        self.keys.retain(|k| k.0 <= limit);
        self.limit = Some(limit);
        self.cap = (2 * self.keys.len()).max(2 * self.count + 64);
    }

    /// The candidate positions (in no particular order).
    pub fn into_positions(mut self) -> Vec<usize> {
        self.narrow();
        self.keys.into_iter().map(|k| k.1 as usize).collect()
    }
}

impl<T: Float> ScoreVisitor<T> for Band<T> {
    #[inline(always)]
    fn visit(&mut self, scores: &[T], _: &[u32], offset: usize) {
        if self.count == 0 {
            return;
        }
        // Blocks have at most 64 scores: one bit each for those within the limit.
        debug_assert!(scores.len() <= 64);
        let (sign, limit) = (self.sign, self.limit.unwrap_or(T::infinity()));
        let mut within = 0u64;
        for (i, &v) in scores.iter().enumerate() {
            within |= u64::from(sign * v <= limit) << i;
        }
        if within != 0 {
            self.take(scores, offset, within);
        }
    }

    fn merge(mut self, other: Self) -> Self {
        self.keys.extend(other.keys);
        self.narrow();
        self
    }
}

impl<T: Float> Band<T> {
    #[inline(never)]
    fn take(&mut self, scores: &[T], offset: usize, mut within: u64) {
        while within != 0 {
            let i = within.trailing_zeros() as usize;
            within &= within - 1;
            if !self.exclude.contains(offset + i) {
                self.keys.push((self.sign * scores[i], (offset + i) as u32));
            }
        }
        if self.keys.len() >= self.cap {
            self.narrow();
        }
    }
}

/// A selection that an approximate pass can stand in for: it names the [`Band`]s of its
/// candidates and takes their exact re-check.
pub trait Recheck<T: Float>: ScoreVisitor<T> + Sync {
    /// The candidates' visitor of an approximate pass.
    type Bands: ScoreVisitor<T> + Clone + Sync;
    /// Bands for this selection with the margin of the pass.
    fn bands(&self, margin: f64) -> Self::Bands;
    /// Offers every candidate of `bands` with its exact score `exact(position)`.
    fn recheck(&mut self, bands: Self::Bands, exact: &impl Fn(usize) -> Pick<T>);
}

/// One selection: its band, re-checked into it.
macro_rules! single_selection {
    ($($visitor:ident),*) => {$(
        impl<T: Float> Recheck<T> for $visitor<T> {
            type Bands = Band<T>;

            fn bands(&self, margin: f64) -> Band<T> {
                let (count, farthest, exclude) = self.wants();
                Band::new(count, farthest, margin, exclude)
            }

            fn recheck(&mut self, bands: Band<T>, exact: &impl Fn(usize) -> Pick<T>) {
                // All scores first: the candidates' rows load in parallel.
                let picks: Vec<Pick<T>> = bands.into_positions().into_iter().map(exact).collect();
                for p in picks {
                    self.offer(p);
                }
            }
        }
    )*};
}
single_selection!(Farthest, Ranked, Nearest);

/// No selection (the unused second reference of a pass).
impl<T: Float> Recheck<T> for () {
    type Bands = ();

    fn bands(&self, _: f64) {}

    fn recheck(&mut self, _: (), _: &impl Fn(usize) -> Pick<T>) {}
}

/// Two selections of one pass (F-MDAV §3.2: P's group and the next seed Q).
impl<T: Float, A: Recheck<T>, B: Recheck<T>> Recheck<T> for (A, B) {
    type Bands = (A::Bands, B::Bands);

    fn bands(&self, margin: f64) -> Self::Bands {
        (self.0.bands(margin), self.1.bands(margin))
    }

    fn recheck(&mut self, bands: Self::Bands, exact: &impl Fn(usize) -> Pick<T>) {
        self.0.recheck(bands.0, exact);
        self.1.recheck(bands.1, exact);
    }
}
