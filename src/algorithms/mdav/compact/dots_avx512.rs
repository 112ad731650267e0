//! The compact copy's dot products with AVX-512 VNNI (`vpdpwssd`, every reference of a pass
//! from one read of the codes), and the f32 scores from them 16 at a time.

use super::layout::{BLOCK_RECORDS, GROUP_BLOCKS, PAIR_BYTES, by_groups};

/// [`dots_avx2`](super::dots_avx2::dots_avx2) with AVX-512 VNNI: two attribute pairs of a block at
/// once (32 codes widened to i16 in one register, whose low half is one pair and high half the
/// next), multiplied, summed in pairs and accumulated by one `vpdpwssd` (`vpmaddwd` and `vpaddd`
/// fused); the two halves are added at the end. Ten vector instructions a block of 8 records with
/// 15 or 16 attributes instead of `dots_avx2`'s 24, the same integers: `vpdpwssd` wraps as `vpaddd`
/// does, and no sum overflows. Exact MDAV at 200 000 × 15 took 16–28% less time with it than with
/// `dots_avx2` on the AVX-512 Xeon VM of docs/performance.md#machines. With `R` = 2 references it
/// widens each load of codes once for both (the fused pass of one thread, `remaining.rs`): 0.72
/// against 0.98 ns a record for the two references' dots at 200 000 × 15 (medians of ten).
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f,avx512bw,avx512vnni")]
pub(super) fn dots_vnni<const PAIRED: bool, const R: usize>(
    codes: &[i8],
    weights: [&[i32]; R],
    outs: [&mut [i32]; R],
) {
    by_groups(
        codes,
        weights[0].len(),
        outs,
        |group, dots| dots_vnni_blocks::<GROUP_BLOCKS, PAIRED, R>(group, weights, dots),
        |block, dots| dots_vnni_blocks::<1, PAIRED, R>(block, weights, dots),
    );
}

/// [`dots_vnni`] for `G` whole blocks side by side (as `dots_avx2_blocks`) and `R`
/// references (each widened load of codes serves all). An odd last pair fills the low half
/// alone (the high half's codes are zero). `PAIRED` stores two blocks' dots a store, for
/// readers of 16 at a time; else 8 a store.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f,avx512bw,avx512vnni")]
#[inline]
fn dots_vnni_blocks<const G: usize, const PAIRED: bool, const R: usize>(
    codes: &[i8],
    weights: [&[i32]; R],
    outs: [&mut [i32]; R],
) {
    use std::arch::x86_64::*;
    let pairs = weights[0].len();
    let bytes = pairs * PAIR_BYTES;
    assert!(codes.len() == G * bytes);
    assert!(weights.iter().all(|w| w.len() == pairs));
    assert!(outs.iter().all(|out| out.len() == G * BLOCK_RECORDS));
    let mut acc = [[_mm512_setzero_si512(); G]; R];
    for p in (0..pairs).step_by(2) {
        let two = p + 1 < pairs;
        // Pairs p and p + 1 of each reference, in the low and high halves.
        let weights = weights.map(|w| {
            let (lo, hi) =
                (_mm256_set1_epi32(w[p]), _mm256_set1_epi32(if two { w[p + 1] } else { 0 }));
            _mm512_inserti64x4::<1>(_mm512_castsi256_si512(lo), hi)
        });
        for b in 0..G {
            let at = b * bytes + p * PAIR_BYTES;
            // SAFETY: two pairs read 32 bytes at `at` ≤ G·bytes − 32; an odd last pair
            // reads its 16 bytes, at most to the end of its block. Read unaligned.
            let codes = unsafe {
                if two {
                    _mm256_loadu_si256(codes.as_ptr().add(at).cast())
                } else {
                    _mm256_zextsi128_si256(_mm_loadu_si128(codes.as_ptr().add(at).cast()))
                }
            };
            let codes = _mm512_cvtepi8_epi16(codes);
            for (acc, weights) in acc.iter_mut().zip(&weights) {
                acc[b] = _mm512_dpwssd_epi32(acc[b], codes, *weights);
            }
        }
    }
    for (acc, out) in acc.iter().zip(outs) {
        let sums = acc.map(|a| {
            _mm256_add_epi32(_mm512_castsi512_si256(a), _mm512_extracti64x4_epi64::<1>(a))
        });
        // `PAIRED`: two blocks' 16 sums a store (the last block alone when G is odd), since
        // `fill` then reads them 16 at a time and a load is forwarded only from one store
        // that holds all of it. Else 8 a store, as readers of 8 read them.
        let paired = if PAIRED { G / 2 } else { 0 };
        for i in 0..paired {
            let both =
                _mm512_inserti64x4::<1>(_mm512_castsi256_si512(sums[2 * i]), sums[2 * i + 1]);
            // SAFETY: 16·i + 16 ≤ 8·G = out.len(); written unaligned.
            unsafe {
                _mm512_storeu_si512(out.as_mut_ptr().add(2 * i * BLOCK_RECORDS).cast(), both)
            };
        }
        for (b, sum) in sums.iter().enumerate().skip(2 * paired) {
            // SAFETY: 8·b + 8 ≤ 8·G = out.len(); written unaligned.
            unsafe { _mm256_storeu_si256(out.as_mut_ptr().add(b * BLOCK_RECORDS).cast(), *sum) };
        }
    }
}

/// f32 scores `(h − c0) − σ·dot` of the first whole sixteens of records, 16 a load and a
/// store, with the operations of [`CompactQuery`](super::CompactQuery)'s `fill` in the same order
/// (no fused multiply-add: the same bits); returns how many were scored. After [`dots_vnni`] with
/// paired stores (16 dots a store), the bands then read 16 scores that one store wrote: written 8
/// at a time they waited for two stores to reach the cache. Scans of 100 000 × 15 took 3–8% less
/// time this way, and exact MDAV at 200 000 × 15 on one thread 8–12% less (the Xeon VM of
/// docs/performance.md#machines).
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f")]
pub(super) fn scores_avx512(
    out: &mut [f32],
    h: &[f32],
    dots: &[i32],
    c0: f32,
    scale: f32,
) -> usize {
    use std::arch::x86_64::*;
    const W: usize = 16;
    let whole = out.len() / W * W;
    assert!(h.len() >= whole && dots.len() >= whole);
    let (c0, scale) = (_mm512_set1_ps(c0), _mm512_set1_ps(scale));
    for b in (0..whole).step_by(W) {
        // SAFETY: b + 16 ≤ whole ≤ the length of each slice; read and written unaligned.
        unsafe {
            let dot = _mm512_cvtepi32_ps(_mm512_loadu_si512(dots.as_ptr().add(b).cast()));
            let h = _mm512_loadu_ps(h.as_ptr().add(b));
            let score = _mm512_sub_ps(_mm512_sub_ps(h, c0), _mm512_mul_ps(scale, dot));
            _mm512_storeu_ps(out.as_mut_ptr().add(b), score);
        }
    }
    whole
}
