//! The block layout of the compact copy's codes, below the dot-product dispatcher
//! (`dots.rs`) and its per-ISA kernels (`dots_avx2.rs`, `dots_avx512.rs`) alike: block and
//! pair sizes, the group of blocks the SIMD kernels sum side by side, and the loop over those
//! groups (docs/algorithms.md).

/// Records per block of the codes (one AVX2 register of i32 dot products).
pub(super) const BLOCK_RECORDS: usize = 8;

/// Bytes of one attribute pair of one block: 8 records × 2 codes.
pub(super) const PAIR_BYTES: usize = 2 * BLOCK_RECORDS;

/// Splits whole blocks of codes (`pairs` attribute pairs a block), and their 8 dot
/// products a block in each of the `R` outputs, into groups of [`GROUP_BLOCKS`], given to
/// `group`, and the blocks after the last whole group, given one by one to `single`: the
/// loop shared by the SIMD kernels, inlined into each.
#[inline(always)]
pub(super) fn by_groups<const R: usize>(
    codes: &[i8],
    pairs: usize,
    mut outs: [&mut [i32]; R],
    group: impl Fn(&[i8], [&mut [i32]; R]),
    single: impl Fn(&[i8], [&mut [i32]; R]),
) {
    let bytes = pairs * PAIR_BYTES;
    let blocks = codes.len() / bytes.max(1);
    assert!(bytes > 0 && codes.len() == blocks * bytes);
    assert!(outs.iter().all(|out| out.len() == blocks * BLOCK_RECORDS));
    fn at<'o, const R: usize>(
        outs: &'o mut [&mut [i32]; R],
        from: usize,
        count: usize,
    ) -> [&'o mut [i32]; R] {
        outs.each_mut().map(|out| &mut out[from * BLOCK_RECORDS..(from + count) * BLOCK_RECORDS])
    }
    let whole = blocks / GROUP_BLOCKS * GROUP_BLOCKS;
    for first in (0..whole).step_by(GROUP_BLOCKS) {
        let codes = &codes[first * bytes..(first + GROUP_BLOCKS) * bytes];
        group(codes, at(&mut outs, first, GROUP_BLOCKS));
    }
    for b in whole..blocks {
        single(&codes[b * bytes..(b + 1) * bytes], at(&mut outs, b, 1));
    }
}

/// Code blocks summed side by side by the SIMD kernels: the 64 records of a scan block.
pub(super) const GROUP_BLOCKS: usize = 8;
