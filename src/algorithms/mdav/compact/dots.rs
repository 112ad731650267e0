//! The integer dot products ⟨q, ŵ⟩ of the compact copy's codes with a reference's packed
//! weights: the layout of the codes, the choice of kernel for this CPU, and the portable
//! kernel every SIMD one (`dots_avx2.rs`, `dots_avx512.rs`) must equal.

#[cfg(target_arch = "x86_64")]
use super::dots_avx2::dots_avx2;
#[cfg(target_arch = "x86_64")]
use super::dots_avx512::dots_vnni;
use super::layout::{BLOCK_RECORDS, PAIR_BYTES};

/// Index of the code of attribute `j` of the record at position `p`.
#[inline(always)]
pub(super) fn code_index(pairs: usize, p: usize, j: usize) -> usize {
    (p / BLOCK_RECORDS) * pairs * PAIR_BYTES
        + (j / 2) * PAIR_BYTES
        + (p % BLOCK_RECORDS) * 2
        + j % 2
}

/// Which kernel computes the integer dot products: the widest this CPU runs. All give the
/// same integers (no sum of ⟨q, ŵ⟩ overflows an i32, see
/// [`CompactCopy::query`](super::CompactCopy::query)).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub(super) enum DotKernel {
    Portable,
    /// [`dots_avx2`].
    Avx2,
    /// [`dots_vnni`].
    Vnni,
}

impl DotKernel {
    /// The widest kernel this CPU runs.
    pub(super) fn detect() -> Self {
        #[cfg(target_arch = "x86_64")]
        {
            use std::arch::is_x86_feature_detected as has;
            if has!("avx512f") && has!("avx512bw") && has!("avx512vnni") {
                return DotKernel::Vnni;
            }
            if has!("avx2") {
                return DotKernel::Avx2;
            }
        }
        DotKernel::Portable
    }

    /// ⟨q, ŵ_r⟩ of every record of `codes` (whole blocks) into `outs[r]` (8 a block), for
    /// the `R` references' packed weights `weights[r]`; the VNNI kernel reads the codes
    /// once for all. `PAIRED`: the VNNI kernel stores two blocks' dots a store, for a
    /// reader of 16 at a time.
    #[inline(always)]
    pub(super) fn dots<const PAIRED: bool, const R: usize>(
        self,
        codes: &[i8],
        weights: [&[i32]; R],
        outs: [&mut [i32]; R],
    ) {
        match self {
            #[cfg(target_arch = "x86_64")]
            // SAFETY: `detect` found AVX-512F, BW and VNNI on this CPU.
            DotKernel::Vnni => unsafe { dots_vnni::<PAIRED, R>(codes, weights, outs) },
            _ => weights.into_iter().zip(outs).for_each(|(w, out)| self.dots_one(codes, w, out)),
        }
    }

    /// One reference's dots with the AVX2 or the portable kernel, which read the codes once
    /// per reference (the VNNI kernel serves every reference of a pass from one read).
    #[inline(always)]
    fn dots_one(self, codes: &[i8], weights: &[i32], out: &mut [i32]) {
        match self {
            #[cfg(target_arch = "x86_64")]
            // SAFETY: `detect` found AVX2 on this CPU.
            DotKernel::Avx2 => unsafe { dots_avx2(codes, weights, out) },
            _ => dots_portable(codes, weights, out),
        }
    }
}

/// The integer dot products of whole blocks (`codes`: blocks of `pair_weights.len()` pairs
/// of 16 bytes), one i32 per record; `pair_weights` packs (ŵ_2i, ŵ_2i+1) as the low and
/// high i16 of an i32, as `vpmaddwd` reads them.
pub(super) fn dots_portable(codes: &[i8], pair_weights: &[i32], out: &mut [i32]) {
    let bytes = pair_weights.len() * PAIR_BYTES;
    for (block, dots) in codes.chunks_exact(bytes).zip(out.chunks_exact_mut(BLOCK_RECORDS)) {
        let mut acc = [0i32; BLOCK_RECORDS];
        for (pair, &w) in block.chunks_exact(PAIR_BYTES).zip(pair_weights) {
            let (lo, hi) = (i32::from(w as i16), w >> 16);
            for (a, c) in acc.iter_mut().zip(pair.chunks_exact(2)) {
                *a += i32::from(c[0]) * lo + i32::from(c[1]) * hi;
            }
        }
        dots.copy_from_slice(&acc);
    }
}
