//! Exact MDAV in high dimension with fewer bytes per pass (issue #15, goal 2): every scan
//! first reads a compact int8 copy of the unassigned records, then re-checks the few
//! records that could be selected with the exact scores.
//!
//! Each attribute j is quantized once, x ≈ mid_j + step_j·q (q an i8 in −127..127, step_j =
//! range/254), with a measured error bound err_j = max |x − mid_j − step_j·q|. A pass reads
//! d bytes plus ½‖x‖² per record instead of d values: 20 bytes instead of 64 for 15 f32
//! attributes, so 10⁶ × 15 fits the last-level cache and the pass is no longer bound by
//! memory bandwidth.
//!
//! Per pass the weights w_j = r_j·step_j of the reference r are rounded to integers
//! ŵ_j = round(w_j / σ) (|ŵ_j| ≤ 32 767), so that ⟨q, ŵ⟩ is an exact integer dot product:
//! the codes are stored in blocks of 8 records, attribute pair by attribute pair (16 bytes,
//! the operand of one AVX2 `vpmaddwd`: 16 products summed in pairs), a third of the
//! instructions of a float dot product. The approximate algebraic score
//! ŝ = (½‖x‖² − ⟨mid, r⟩) − σ·⟨q, ŵ⟩ differs from the exact kernel score s (`kernels/mod.rs`, in
//! precision `T`) by at most B = Σ_j |r_j|·err_j + 127·Σ_j |w_j − σ·ŵ_j| plus a rigorous
//! bound of the rounding of both computations.
//!
//! Exactness: a selection of the `count` smallest (or largest) scores keeps, as candidates,
//! every record with ŝ within 2B of the `count`-th best ŝ ([`band::Band`]). Every record of the
//! exact selection is among them (its s is at most the `count`-th best s, which is at most
//! the `count`-th best ŝ + B), and no record outside can tie with it, so re-checking the
//! candidates with the exact score (bit-identical to the scan's, from a row-major copy)
//! and the usual tie rule (lowest id) gives the scan's answer bit for bit.

use crate::dataset::WorkingSet;
use crate::float::Float;
use crate::index::IndexChoice;
use crate::kernels::{Aligned, BLOCK, BlockScorer, max_value, min_value};
use crate::parallel::Exec;
use crate::prefetch::{prefetch, prefetch_for_write};

mod band;
mod dots;
#[cfg(target_arch = "x86_64")]
mod dots_avx2;
#[cfg(target_arch = "x86_64")]
mod dots_avx512;
mod layout;

pub use band::{Recheck, RecheckBuffers};
use dots::{DotKernel, code_index};
#[cfg(target_arch = "x86_64")]
use dots_avx512::scores_avx512;
use layout::{BLOCK_RECORDS, PAIR_BYTES};

/// Smallest number of records where `IndexChoice::Auto` scans the compact copy: below it
/// the remaining records fit the caches anyway (see `bench-results/mdav_scale.md`).
pub const AUTO_MIN_N: usize = 20_000;

/// Whether exact MDAV scans a compact copy (the `compact_scan` parameter): `Auto` from
/// [`AUTO_MIN_N`] records when the k-d tree is not used.
pub fn uses_compact(choice: IndexChoice, n: usize, indexed: bool) -> bool {
    !indexed
        && match choice {
            IndexChoice::On => true,
            IndexChoice::Off => false,
            IndexChoice::Auto => n >= AUTO_MIN_N,
        }
}

/// Largest quantized magnitude.
const QMAX: f64 = 127.0;

/// The int8 copy of a working set (by position, swapped along with it; blocks of 8 records
/// stored attribute pair by attribute pair, see the module doc) and an exact row-major copy
/// by original id for the re-checks.
#[derive(Debug, Clone)]
pub struct CompactCopy<T> {
    d: usize,
    /// Attribute pairs per block: ⌈d / 2⌉ (an odd d pads its last pair with code 0).
    pairs: usize,
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
    /// The dot-product kernel of this CPU, detected once.
    kernel: DotKernel,
}

impl<T: Float> CompactCopy<T> {
    /// Quantizes every record of `ws` (complete data) in its current position order, and
    /// copies the rows by id, in parallel chunks where `exec` allows. The codes are written
    /// in place, block by block, straight from the columns: no per-attribute code vectors
    /// and no interleaving pass. At 200 000 × 15 (f32, one thread) the scales and codes took
    /// 4.0–4.7 ms this way against 5.8 ms (fresh memory costs about 0.3 ms a megabyte in
    /// page faults on this VM). Two threads faulting fresh pages in at once took 20–24 ms
    /// instead of 3 ms on one VM; on another the parallel writes were faster.
    pub fn new(ws: &WorkingSet<T>, exec: Exec) -> Self {
        let (n, d) = (ws.n(), ws.d());
        let scales: Vec<Scale> = exec.map_indices(d, |j| Scale::of(ws.column(j)));
        let pairs = d.div_ceil(2);
        let mut q = vec![0i8; n.div_ceil(BLOCK_RECORDS) * pairs * PAIR_BYTES];
        let task = TASK_BLOCKS * pairs * PAIR_BYTES;
        let quantize = |t: usize, codes: &mut [i8]| {
            quantize_blocks(ws, &scales, pairs, t * TASK_BLOCKS, codes)
        };
        let err =
            exec.map_reduce_chunks_mut(&mut q, task.max(1), quantize, || vec![0.0; d], larger_each);
        let mut rows = vec![T::zero(); n * (d + 1)];
        let fill = |id: usize, row: &mut [T]| {
            let p = ws.position_of(id as u32);
            for (j, r) in row[..d].iter_mut().enumerate() {
                *r = ws.column(j)[p];
            }
            row[d] = ws.half_norms()[p];
        };
        exec.for_each_chunk_mut(&mut rows, d + 1, fill);
        CompactCopy {
            d,
            pairs,
            q,
            mid: scales.iter().map(|s| s.mid).collect(),
            step: scales.iter().map(|s| s.step).collect(),
            err: scales.iter().zip(err).map(|(s, e)| s.widened(e)).collect(),
            max_abs: scales.iter().map(|s| s.max_abs).collect(),
            max_half_norm: ws.half_norms().iter().fold(0.0, |a, h| a.max(h.as_f64().abs())),
            rows,
            kernel: DotKernel::detect(),
        }
    }

    /// Exchanges the records at positions `a` and `b` (mirrors `WorkingSet::swap`): their
    /// two codes in each attribute pair, 16 bytes apart within two cache lines of the block
    /// (an odd d's padding code is 0 for every record, so swapping it changes nothing).
    #[inline]
    pub fn swap(&mut self, a: usize, b: usize) {
        if a != b {
            let (first_a, first_b) = (code_index(self.pairs, a, 0), code_index(self.pairs, b, 0));
            for pair in 0..self.pairs {
                let (i, j) = (first_a + pair * PAIR_BYTES, first_b + pair * PAIR_BYTES);
                self.q.swap(i, j);
                self.q.swap(i + 1, j + 1);
            }
        }
    }

    /// Asks the caches for the codes of the record at position `p` ahead of a [`Self::swap`]
    /// (for writing: the threads of the passes read them).
    #[inline]
    pub fn prefetch_codes(&self, p: usize) {
        if self.d == 0 {
            return;
        }
        prefetch_for_write(&self.q[code_index(self.pairs, p, 0)]);
        prefetch_for_write(&self.q[code_index(self.pairs, p, self.d - 1)]);
    }

    /// The exact values of the record `id`.
    #[inline]
    pub fn row(&self, id: u32) -> &[T] {
        &self.rows[id as usize * (self.d + 1)..id as usize * (self.d + 1) + self.d]
    }

    /// Asks the caches for the row of record `id` (its d values and ½‖x‖²): re-checks read
    /// rows by id, scattered over the whole copy, so they wait on memory unless the loads
    /// are issued together, ahead of the arithmetic.
    #[inline]
    pub fn prefetch_row(&self, id: u32) {
        let at = id as usize * (self.d + 1);
        prefetch(&self.rows[at]);
        prefetch(&self.rows[at + self.d]);
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

    /// Prepares a pass against `reference`: the integer weights ŵ and their scale σ, the
    /// constant ⟨mid, r⟩ and the bound B on |ŝ − s| (see the module doc).
    pub fn query(&self, reference: &[T]) -> CompactQuery<'_, T> {
        let r = |j: usize| reference[j].as_f64();
        let w = |j: usize| r(j) * self.step[j];
        // |⟨q, ŵ⟩| ≤ 127·Σ|ŵ_j| must fit an i32 (and one vpmaddwd pair sum always does).
        let w_max = (f64::from(i32::MAX) / (QMAX * self.d as f64)).floor().min(32_767.0);
        let largest = (0..self.d).fold(0.0f64, |a, j| a.max(w(j).abs()));
        let scale = T::from_f64_lossy(largest / w_max).as_f64();
        let scale = if scale > 0.0 && scale.is_finite() { scale } else { 1.0 };
        // One pass over the attributes, with no temporary vectors (the caller's serial path
        // between two passes makes one query a round): the weights, packed in pairs, and
        // every sum of the bound, each in attribute order.
        let (mut c0_exact, mut sum_w, mut sum_wq, mut off) = (0.0, 0.0, 0.0, 0.0);
        let (mut quantization, mut sum_rm, mut sum_rx) = (0.0, 0.0, 0.0);
        let mut pair_weights = Vec::with_capacity(self.pairs);
        for j in 0..self.d {
            let (rj, wj) = (r(j), w(j));
            let q = (wj / scale).round().clamp(-w_max, w_max) as i16;
            if j % 2 == 0 {
                pair_weights.push(i32::from(q as u16));
            } else {
                *pair_weights.last_mut().expect("the pair's first weight") |= i32::from(q) << 16;
            }
            c0_exact += rj * self.mid[j];
            sum_w += wj.abs();
            sum_wq += f64::from(q).abs();
            off += (wj - scale * f64::from(q)).abs();
            quantization += rj.abs() * self.err[j];
            sum_rm += rj.abs() * self.mid[j].abs();
            sum_rx += rj.abs() * self.max_abs[j];
        }
        let c0 = T::from_f64_lossy(c0_exact);
        let eps = T::epsilon().as_f64();
        let sum_wq = sum_wq * scale;
        // Replacing w by σ·ŵ (and the f64 rounding of w itself) moves ŝ by at most this.
        let weights = off * QMAX + QMAX * 4.0 * f64::EPSILON * sum_w;
        let dims = self.d as f64;
        // Rounding of ŝ (⟨mid, r⟩, h − c0, the integer sum to T, its product with σ and the
        // last subtraction, in T) and of s (d products and subtractions in T), each at most
        // eps relative per operation.
        let approx_rounding = (dims + 3.0)
            * eps
            * (self.max_half_norm + c0.as_f64().abs() + QMAX * sum_w.max(sum_wq) + sum_rm);
        let exact_rounding = (dims + 2.0) * eps * (self.max_half_norm + sum_rx);
        let bound =
            (quantization + weights) * (1.0 + 1e-9) + 2.0 * (approx_rounding + exact_rounding);
        CompactQuery {
            copy: self,
            pair_weights,
            scale: T::from_f64_lossy(scale),
            c0,
            margin: 2.0 * bound,
        }
    }

    /// ⟨q, ŵ_r⟩ of every record of `blocks` blocks from block `first` into `outs[r]` (8 a
    /// block) for the `R` references' weights, stored as the scores read them: 16 at a
    /// time in f32 after the VNNI kernel ([`CompactQuery::scores_by_sixteen`]), else 8 (f64
    /// reads 8 dots from half of a 16-wide store more slowly; measured on the Xeon VM of
    /// docs/performance.md#machines).
    #[inline(always)]
    fn dots<const R: usize>(
        &self,
        weights: [&[i32]; R],
        first: usize,
        blocks: usize,
        outs: [&mut [i32]; R],
    ) {
        let bytes = self.pairs * PAIR_BYTES;
        let codes = &self.q[first * bytes..(first + blocks) * bytes];
        let outs = outs.map(|out| &mut out[..blocks * BLOCK_RECORDS]);
        if self.by_sixteen() {
            self.kernel.dots::<true, R>(codes, weights, outs);
        } else {
            self.kernel.dots::<false, R>(codes, weights, outs);
        }
    }

    /// Whether scores are computed 16 at a time (f32 after the VNNI kernel): the one place
    /// that decides both how [`Self::dots`] stores the dot products and how
    /// [`CompactQuery::scores_by_sixteen`] reads them, which must agree (a read across two
    /// stores waits for them to reach the cache).
    #[inline(always)]
    fn by_sixteen(&self) -> bool {
        self.kernel == DotKernel::Vnni && size_of::<T>() == size_of::<f32>()
    }
}

/// How one attribute is quantized: x ≈ mid + step·q, with q an integer in −127..127.
#[derive(Debug, Clone, Copy)]
struct Scale {
    mid: f64,
    step: f64,
    /// 1 / step (0 for a constant attribute).
    inv: f64,
    /// The largest |x|.
    max_abs: f64,
}

/// Blocks of codes per task of [`CompactCopy::new`] (2 048 records).
const TASK_BLOCKS: usize = 256;

/// 1.5·2⁵²: adding and subtracting it rounds an f64 below 2⁵¹ in magnitude to the nearest
/// integer (ties to even) in two vectorizable additions.
const ROUNDER: f64 = 6_755_399_441_055_744.0;

impl Scale {
    /// The scale spanning the column's range.
    fn of<T: Float>(col: &[T]) -> Self {
        let (lo, hi) = (min_value(col).as_f64(), max_value(col).as_f64());
        let (mid, step) = (lo + (hi - lo) / 2.0, (hi - lo) / (2.0 * QMAX));
        let inv = if step > 0.0 { 1.0 / step } else { 0.0 };
        Scale { mid, step, inv, max_abs: lo.abs().max(hi.abs()) }
    }

    /// The code of `v` and its error |v − mid − step·q| (evaluated in f64). Any integer
    /// code in range is valid: the error bound is measured on the codes made. The integer
    /// q sits in the low bits of the shifted value: no saturating cast, no `f64::round`.
    #[inline(always)]
    fn code(&self, v: f64) -> (i8, f64) {
        let shifted = ((v - self.mid) * self.inv).clamp(-QMAX, QMAX) + ROUNDER;
        let q = shifted - ROUNDER;
        (shifted.to_bits() as i32 as i8, (v - (self.mid + self.step * q)).abs())
    }

    /// The largest measured error `err`, widened by a few ulps of |x|: its f64 evaluation
    /// is itself rounded.
    fn widened(&self, err: f64) -> f64 {
        err + 8.0 * f64::EPSILON * (self.max_abs + self.mid.abs() + self.step * QMAX)
    }
}

/// Writes the codes of the records of blocks `first..` into `codes` (whole blocks of the
/// copy's layout, see [`code_index`]) and returns, per attribute, the largest error met.
/// Reads the d columns eight values at a time; each attribute keeps one running extreme
/// per lane, compared plainly (no `f64::max` and its NaN rules).
fn quantize_blocks<T: Float>(
    ws: &WorkingSet<T>,
    scales: &[Scale],
    pairs: usize,
    first: usize,
    codes: &mut [i8],
) -> Vec<f64> {
    let mut err = vec![[0.0f64; BLOCK_RECORDS]; scales.len()];
    for (b, block) in codes.chunks_mut(pairs * PAIR_BYTES).enumerate() {
        let start = (first + b) * BLOCK_RECORDS;
        let end = (start + BLOCK_RECORDS).min(ws.n());
        for (j, (scale, lanes)) in scales.iter().zip(&mut err).enumerate() {
            for (i, &v) in ws.column(j)[start..end].iter().enumerate() {
                let (code, e) = scale.code(v.as_f64());
                lanes[i] = if e > lanes[i] { e } else { lanes[i] };
                block[code_index(pairs, i, j)] = code;
            }
        }
    }
    err.iter().map(|lanes| lanes.iter().fold(0.0, |a: f64, &e| a.max(e))).collect()
}

/// The larger of two errors, attribute by attribute.
fn larger_each(mut a: Vec<f64>, b: Vec<f64>) -> Vec<f64> {
    a.iter_mut().zip(b).for_each(|(x, y)| *x = x.max(y));
    a
}

/// A pass of approximate scores against one reference (see [`CompactCopy::query`]).
#[derive(Debug)]
pub struct CompactQuery<'a, T> {
    copy: &'a CompactCopy<T>,
    /// (ŵ_2i, ŵ_2i+1) packed per attribute pair.
    pair_weights: Vec<i32>,
    scale: T,
    c0: T,
    margin: f64,
}

impl<T> CompactQuery<'_, T> {
    /// Width of the candidate band: 2B.
    pub fn margin(&self) -> f64 {
        self.margin
    }
}

impl<T: Float> CompactQuery<'_, T> {
    /// The first whole sixteens of f32 scores by [`scores_avx512`] after
    /// [`dots_vnni`](dots_avx512::dots_vnni) (how many); `None` elsewhere, for
    /// [`BlockScorer::fill`]'s portable loop.
    #[inline(always)]
    fn scores_by_sixteen(&self, out: &mut [T], h: &[T], dots: &[i32]) -> Option<usize> {
        #[cfg(target_arch = "x86_64")]
        if self.copy.by_sixteen()
            && let Some((out, h)) = T::as_f32s(out, h)
        {
            let (c0, scale) = (self.c0.as_f64() as f32, self.scale.as_f64() as f32);
            // SAFETY: `DotKernel::Vnni` was detected with AVX-512F.
            return Some(unsafe { scores_avx512(out, h, dots, c0, scale) });
        }
        let _ = (out, h, dots);
        None
    }

    /// The scores of positions `start..start + out.len()` from `dots`, the dot products of
    /// the whole blocks from the one holding `start` ([`blocks_of`]).
    #[inline(always)]
    fn scores_from_dots(&self, ws: &WorkingSet<T>, start: usize, dots: &[i32], out: &mut [T]) {
        let skip = start % BLOCK_RECORDS;
        let h = &ws.half_norms()[start..start + out.len()];
        let score = |h: T, dot: i32| (h - self.c0) - self.scale * T::from_i32_lossy(dot);
        let dots = &dots[skip..skip + out.len()];
        // In f32 the compiler would read 16 dots at once, across two of the stores that
        // wrote them: the CPU cannot forward those to the load, which then waits for them to
        // reach the cache (a third of a pass's time on two threads at 200 000 × 15). So they
        // are read as they were stored when the block starts on a code block (`skip` 0, as
        // every chunk of a pass does): 16 at a time in f32 after `dots_vnni`, else eight;
        // f64 reads eight anyway.
        let whole = self.scores_by_sixteen(out, h, dots).unwrap_or_else(|| {
            let eights = size_of::<T>() < size_of::<f64>();
            let whole = if eights { out.len() / BLOCK_RECORDS * BLOCK_RECORDS } else { 0 };
            for b in (0..whole).step_by(BLOCK_RECORDS) {
                let o: &mut [T; BLOCK_RECORDS] =
                    (&mut out[b..b + BLOCK_RECORDS]).try_into().expect("eight");
                let h: &[T; BLOCK_RECORDS] = h[b..b + BLOCK_RECORDS].try_into().expect("eight");
                let d: &[i32; BLOCK_RECORDS] =
                    dots[b..b + BLOCK_RECORDS].try_into().expect("eight");
                for i in 0..BLOCK_RECORDS {
                    o[i] = score(h[i], d[i]);
                }
            }
            whole
        });
        for ((o, &h), &dot) in out[whole..].iter_mut().zip(&h[whole..]).zip(&dots[whole..]) {
            *o = score(h, dot);
        }
    }
}

/// The code blocks holding positions `start..start + len`: the first and how many. Whole
/// blocks from the one holding `start` (scans start chunks at multiples of 64, so usually
/// there); records past `start + len` are computed and ignored.
fn blocks_of(start: usize, len: usize) -> (usize, usize) {
    (start / BLOCK_RECORDS, (start % BLOCK_RECORDS + len).div_ceil(BLOCK_RECORDS))
}

impl<T: Float> BlockScorer<T> for CompactQuery<'_, T> {
    #[inline(always)]
    fn fill(&self, ws: &WorkingSet<T>, start: usize, out: &mut [T]) {
        let mut dots = Aligned([0i32; BLOCK + BLOCK_RECORDS]);
        let (first, blocks) = blocks_of(start, out.len());
        self.copy.dots([&self.pair_weights], first, blocks, [&mut dots.0]);
        self.scores_from_dots(ws, start, &dots.0, out);
    }

    /// Both queries' dot products from one read of the codes (`dots_vnni` with two
    /// references), then each one's scores: the same bits as two fills.
    #[inline(always)]
    fn fill_pair(&self, other: &Self, ws: &WorkingSet<T>, start: usize, outs: [&mut [T]; 2]) {
        let [out, other_out] = outs;
        debug_assert!(std::ptr::eq(self.copy, other.copy) && out.len() == other_out.len());
        let mut dots = Aligned([0i32; BLOCK + BLOCK_RECORDS]);
        let mut other_dots = Aligned([0i32; BLOCK + BLOCK_RECORDS]);
        let (first, blocks) = blocks_of(start, out.len());
        let weights = [self.pair_weights.as_slice(), &other.pair_weights];
        self.copy.dots(weights, first, blocks, [&mut dots.0, &mut other_dots.0]);
        self.scores_from_dots(ws, start, &dots.0, out);
        other.scores_from_dots(ws, start, &other_dots.0, other_out);
    }

    fn bytes_per_record(&self, _: &WorkingSet<T>) -> usize {
        self.copy.pairs * 2 + size_of::<T>()
    }
}

#[cfg(test)]
mod tests {
    use super::dots::dots_portable;
    use super::*;
    use crate::algorithms::test_shapes::shaped;
    use crate::dataset::Scaling;
    use proptest::prelude::*;
    use rand::rngs::StdRng;
    use rand::{RngExt, SeedableRng};

    #[test]
    fn quantized_values_stay_within_the_measured_error() {
        // A wide column, a constant one and a narrow one (an odd d pads its last pair);
        // 5 000 records span several tasks of the quantization, on one thread and on three.
        use crate::parallel::Parallelism;
        let mut rng = StdRng::seed_from_u64(5);
        for n in [1, 7, 8, 9, 1000, 5000] {
            let wide: Vec<f32> = (0..n).map(|_| rng.random::<f32>() * 200.0 - 150.0).collect();
            let x = ndarray::Array2::from_shape_fn((n, 3), |(i, j)| {
                [wide[i], 2.5, wide[n - 1 - i] * 1e-3][j]
            });
            let ws = WorkingSet::<f32>::new(x.view(), &Scaling::fit(x.view(), false)).unwrap();
            let copy = CompactCopy::new(&ws, Exec::SEQUENTIAL);
            for j in 0..3 {
                let col = ws.column(j);
                for (p, &v) in col.iter().enumerate() {
                    let c = copy.q[code_index(copy.pairs, p, j)];
                    assert!((-127..=127).contains(&c));
                    let back = copy.mid[j] + copy.step[j] * f64::from(c);
                    assert!((f64::from(v) - back).abs() <= copy.err[j], "{v} vs {back}");
                }
                let most = col.iter().fold(0.0f64, |a, v| a.max(f64::from(v.abs())));
                assert_eq!(copy.max_abs[j], most);
                // Codes round to the nearest step: half a step of error, plus rounding.
                assert!(copy.err[j] <= copy.step[j] / 2.0 + 1e-9 * most.max(1.0));
            }
            let threads = Parallelism::from_n_jobs(3).unwrap();
            let on_threads = threads.install(|e| CompactCopy::new(&ws, e)).unwrap();
            assert_eq!(on_threads.q, copy.q, "n {n}");
            assert_eq!((&on_threads.err, &on_threads.rows), (&copy.err, &copy.rows), "n {n}");
        }
    }

    #[test]
    fn swapped_records_keep_their_codes_and_the_padding_stays_zero() {
        for d in [1, 6, 7, 15] {
            let x = shaped(50, d, 0, d as u64);
            let mut ws = WorkingSet::<f64>::new(x.view(), &Scaling::fit(x.view(), true)).unwrap();
            let mut copy = CompactCopy::new(&ws, Exec::SEQUENTIAL);
            let codes = |copy: &CompactCopy<f64>, p: usize| -> Vec<i8> {
                (0..2 * copy.pairs).map(|j| copy.q[code_index(copy.pairs, p, j)]).collect()
            };
            let mut by_id = vec![Vec::new(); 50];
            for p in 0..50 {
                by_id[ws.ids()[p] as usize] = codes(&copy, p);
            }
            for (a, b) in [(0, 49), (3, 4), (8, 8), (17, 40), (7, 9)] {
                ws.swap_keys(a, b);
                copy.swap(a, b);
            }
            for p in 0..50 {
                let id = ws.ids()[p] as usize;
                assert_eq!(codes(&copy, p), by_id[id], "d {d} position {p}");
                assert!(d % 2 == 0 || codes(&copy, p)[d] == 0, "d {d}: the padding code");
            }
        }
    }

    fn codes_and_weights(blocks: usize, pairs: usize, seed: u64) -> (Vec<i8>, Vec<i32>) {
        let x = shaped(blocks * pairs * PAIR_BYTES + pairs, 1, 0, seed);
        let v: Vec<f64> = x.iter().copied().collect();
        let codes = v[pairs..].iter().map(|g| (g * 60.0).clamp(-127.0, 127.0) as i8).collect();
        let weights = v[..pairs]
            .iter()
            .map(|g| {
                let (lo, hi) = ((g * 20_000.0) as i16, (-g * 32_767.0) as i16);
                i32::from(lo as u16) | (i32::from(hi) << 16)
            })
            .collect();
        (codes, weights)
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(64))]
        /// The SIMD kernels this CPU runs and the portable one give the same integer dot
        /// products, whole groups of 8 blocks and the blocks after them, with either store
        /// shape, for one reference or two at once.
        #[test]
        fn simd_and_portable_dots_agree(blocks in 1usize..20, pairs in 1usize..12, seed: u64) {
            let (codes, weights) = codes_and_weights(blocks, pairs, seed);
            let other = codes_and_weights(blocks, pairs, seed ^ 1).1;
            let mut portable = vec![0; blocks * BLOCK_RECORDS];
            dots_portable(&codes, &weights, &mut portable);
            let mut other_portable = vec![0; blocks * BLOCK_RECORDS];
            dots_portable(&codes, &other, &mut other_portable);
            let (lo, hi) = (i64::from(weights[0] as i16), i64::from(weights[0] >> 16));
            let first = i64::from(codes[0]) * lo + i64::from(codes[1]) * hi
                + (1..pairs).map(|p| {
                    let (l, h) = (i64::from(weights[p] as i16), i64::from(weights[p] >> 16));
                    i64::from(codes[p * PAIR_BYTES]) * l + i64::from(codes[p * PAIR_BYTES + 1]) * h
                }).sum::<i64>();
            prop_assert_eq!(i64::from(portable[0]), first);
            // Every CPU with AVX-512 has AVX2: the kernels up to the detected one all run.
            for kernel in [DotKernel::Avx2, DotKernel::Vnni] {
                if kernel <= DotKernel::detect() {
                    let fresh = || vec![0; portable.len()];
                    let (mut eights, mut sixteens) = (fresh(), fresh());
                    kernel.dots::<false, 1>(&codes, [&weights], [&mut eights]);
                    kernel.dots::<true, 1>(&codes, [&weights], [&mut sixteens]);
                    prop_assert_eq!(&eights, &portable, "{:?}", kernel);
                    prop_assert_eq!(&sixteens, &portable, "{:?}, paired stores", kernel);
                    for paired in [false, true] {
                        let (mut one, mut two) = (fresh(), fresh());
                        let both = [weights.as_slice(), &other];
                        if paired {
                            kernel.dots::<true, 2>(&codes, both, [&mut one, &mut two]);
                        } else {
                            kernel.dots::<false, 2>(&codes, both, [&mut one, &mut two]);
                        }
                        prop_assert_eq!(&one, &portable, "{:?}, two references", kernel);
                        prop_assert_eq!(&two, &other_portable, "{:?}, two references", kernel);
                    }
                }
            }
        }
    }

    #[test]
    fn every_dot_kernel_gives_the_same_scores() {
        // The SIMD paths (dot products and, after `dots_vnni`, the f32 scores by sixteen)
        // give the portable path's scores bit for bit, at any start and length, and so do
        // two references scored together (`fill_pair`) on either path.
        fn check<T: Float>() {
            let x = shaped(1000, 15, 0, 11);
            let ws = WorkingSet::<T>::new(x.view(), &Scaling::fit(x.view(), true)).unwrap();
            let copy = CompactCopy::new(&ws, Exec::SEQUENTIAL);
            let (reference, other) = (copy.row(17).to_vec(), copy.row(503).to_vec());
            let (fast, fast_other) = (copy.query(&reference), copy.query(&other));
            let portable_copy = CompactCopy { kernel: DotKernel::Portable, ..copy.clone() };
            let portable = portable_copy.query(&reference);
            let portable_other = portable_copy.query(&other);
            let bits = |v: &[T]| v.iter().map(|s| s.as_f64().to_bits()).collect::<Vec<_>>();
            for (start, len) in [(0, 64), (64, 64), (128, 37), (3, 64), (900, 64), (961, 39)] {
                let fresh = || vec![T::zero(); len];
                let (mut a, mut b) = (fresh(), fresh());
                fast.fill(&ws, start, &mut a);
                portable.fill(&ws, start, &mut b);
                assert_eq!(bits(&a), bits(&b), "{} start {start} len {len}", T::NAME);
                let mut c = fresh();
                portable_other.fill(&ws, start, &mut c);
                for (first, second) in [(&fast, &fast_other), (&portable, &portable_other)] {
                    let (mut pa, mut pc) = (fresh(), fresh());
                    first.fill_pair(second, &ws, start, [&mut pa, &mut pc]);
                    assert_eq!(bits(&pa), bits(&b), "{} pair, start {start}", T::NAME);
                    assert_eq!(bits(&pc), bits(&c), "{} pair, start {start}", T::NAME);
                }
            }
        }
        check::<f32>();
        check::<f64>();
    }

    /// Every approximate score is within B (half the band's margin) of the exact kernel
    /// score, for records and references of every shape, at every start offset.
    fn scores_within_bound<T: Float>(n: usize, d: usize, shape: u8, seed: u64) {
        let x = shaped(n, d, shape, seed);
        let ws = WorkingSet::<T>::new(x.view(), &Scaling::fit(x.view(), shape != 3)).unwrap();
        let copy = CompactCopy::new(&ws, Exec::SEQUENTIAL);
        let mean: Vec<T> = (0..d)
            .map(|j| {
                T::from_f64_lossy(ws.column(j).iter().map(|v| v.as_f64()).sum::<f64>() / n as f64)
            })
            .collect();
        for reference in [ws.row(0), ws.row(n / 2), mean] {
            let query = copy.query(&reference);
            let bound = query.margin() / 2.0;
            for start in [0, 3.min(n - 1), n.saturating_sub(70)] {
                let len = (n - start).min(BLOCK);
                let mut approx = vec![T::zero(); len];
                query.fill(&ws, start, &mut approx);
                for (i, a) in approx.iter().enumerate() {
                    let p = start + i;
                    let exact = copy.exact_score(ws.ids()[p], &reference);
                    assert_eq!(exact, ws.algebraic_score(p, &reference), "the re-check's bits");
                    let gap = (a.as_f64() - exact.as_f64()).abs();
                    assert!(
                        gap <= bound,
                        "{} d {d} shape {shape}: |ŝ − s| = {gap} > B = {bound}",
                        T::NAME
                    );
                }
            }
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(64))]
        #[test]
        fn approximate_scores_stay_within_the_bound(
            n in 1usize..300, d in 1usize..24, shape in 0u8..4, seed: u64,
        ) {
            scores_within_bound::<f32>(n, d, shape, seed);
            scores_within_bound::<f64>(n, d, shape, seed);
        }
    }
}
