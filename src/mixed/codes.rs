//! One nominal attribute's codes, stored in the narrowest unsigned integer that holds its
//! levels: a pass reads 1, 2 or 4 bytes per record and attribute instead of 4. At 10⁶
//! records the passes are bound by memory traffic, and a census key of 2- to 5 000-level
//! columns reads 7 bytes of codes per record instead of 24 (bench-results/mixed_scale.md).

use crate::float::Float;

/// The codes of one nominal attribute at every position of a key.
#[derive(Debug, Clone)]
pub(crate) enum CodeColumn {
    U8(Vec<u8>),
    U16(Vec<u16>),
    U32(Vec<u32>),
}

impl CodeColumn {
    /// The column of `codes`, each below `levels`.
    pub(crate) fn new(codes: impl Iterator<Item = u32>, levels: usize) -> Self {
        if levels <= 1 << 8 {
            CodeColumn::U8(codes.map(|c| c as u8).collect())
        } else if levels <= 1 << 16 {
            CodeColumn::U16(codes.map(|c| c as u16).collect())
        } else {
            CodeColumn::U32(codes.collect())
        }
    }

    /// The code at position `p`.
    #[inline]
    pub(crate) fn get(&self, p: usize) -> u32 {
        match self {
            CodeColumn::U8(c) => c[p].into(),
            CodeColumn::U16(c) => c[p].into(),
            CodeColumn::U32(c) => c[p],
        }
    }

    /// Exchanges the codes at positions `a` and `b`.
    #[inline]
    pub(crate) fn swap(&mut self, a: usize, b: usize) {
        match self {
            CodeColumn::U8(c) => c.swap(a, b),
            CodeColumn::U16(c) => c.swap(a, b),
            CodeColumn::U32(c) => c.swap(a, b),
        }
    }

    /// Adds `term(code)` to `out[i]` for the code of position `start + i`, one loop per
    /// width (each vectorizes on the caller's instruction set).
    #[inline(always)]
    pub(crate) fn add_terms<T: Float>(&self, start: usize, out: &mut [T], term: impl Fn(u32) -> T) {
        #[inline(always)]
        fn add<C: Copy + Into<u32>, T: Float>(codes: &[C], out: &mut [T], term: impl Fn(u32) -> T) {
            for (o, &c) in out.iter_mut().zip(codes) {
                *o += term(c.into());
            }
        }
        let end = start + out.len();
        match self {
            CodeColumn::U8(c) => add(&c[start..end], out, term),
            CodeColumn::U16(c) => add(&c[start..end], out, term),
            CodeColumn::U32(c) => add(&c[start..end], out, term),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_width_keeps_its_codes_and_adds_their_terms() {
        for levels in [2usize, 256, 257, 65_536, 65_537, 1 << 20] {
            let codes: Vec<u32> = (0..100).map(|i| (i * 7919 % levels) as u32).collect();
            let mut column = CodeColumn::new(codes.iter().copied(), levels);
            column.swap(3, 90);
            let mut want = codes.clone();
            want.swap(3, 90);
            assert_eq!((0..100).map(|p| column.get(p)).collect::<Vec<_>>(), want);
            let mut out = vec![0.5f64; 40];
            column.add_terms(10, &mut out, f64::from);
            for (i, o) in out.iter().enumerate() {
                assert_eq!(*o, 0.5 + f64::from(want[10 + i]));
            }
        }
    }
}
