//! The compact copy's dot products with AVX2 (`vpmaddwd`): [`super::dots`]'s portable
//! kernel, 16 codes at a time.

use super::layout::{BLOCK_RECORDS, GROUP_BLOCKS, PAIR_BYTES, by_groups};

/// [`dots_portable`](super::dots::dots_portable) with AVX2: per pair, 16 codes widened to i16 and
/// one `vpmaddwd`.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
pub(super) fn dots_avx2(codes: &[i8], pair_weights: &[i32], out: &mut [i32]) {
    by_groups(
        codes,
        pair_weights.len(),
        [out],
        |group, [dots]| dots_avx2_blocks::<GROUP_BLOCKS>(group, pair_weights, dots),
        |block, [dots]| dots_avx2_blocks::<1>(block, pair_weights, dots),
    );
}

/// [`dots_avx2`] for `G` whole blocks side by side: each weight is broadcast once for the
/// `G`, and their independent sums keep the multipliers busy.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
#[inline]
fn dots_avx2_blocks<const G: usize>(codes: &[i8], pair_weights: &[i32], out: &mut [i32]) {
    use std::arch::x86_64::*;
    let bytes = pair_weights.len() * PAIR_BYTES;
    assert!(codes.len() == G * bytes && out.len() == G * BLOCK_RECORDS);
    let mut acc = [_mm256_setzero_si256(); G];
    for (p, &w) in pair_weights.iter().enumerate() {
        let w = _mm256_set1_epi32(w);
        for (b, acc) in acc.iter_mut().enumerate() {
            // SAFETY: b·bytes + p·16 + 16 ≤ G·bytes = codes.len(); read unaligned.
            let codes =
                unsafe { _mm_loadu_si128(codes.as_ptr().add(b * bytes + p * PAIR_BYTES).cast()) };
            *acc = _mm256_add_epi32(*acc, _mm256_madd_epi16(_mm256_cvtepi8_epi16(codes), w));
        }
    }
    for (b, acc) in acc.iter().enumerate() {
        // SAFETY: 8·b + 8 ≤ 8·G = out.len(); written unaligned.
        unsafe { _mm256_storeu_si256(out.as_mut_ptr().add(b * BLOCK_RECORDS).cast(), *acc) };
    }
}
