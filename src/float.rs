//! The floating-point types the kernels run on (f32 and f64).
//!
//! One small trait instead of macro-duplicated code: every kernel and algorithm is generic
//! over `T: Float`. Sums that must stay accurate (centroids, SSE) are accumulated in f64
//! whatever `T` is (F-MDAV paper §3.5: single precision only for the comparisons).

use ndarray::NdFloat;

/// A working precision: `f32` (F-MDAV's single-precision strategy) or `f64`.
pub trait Float: NdFloat + Send + Sync + Default {
    /// Name used in messages and benchmarks ("float32" / "float64").
    const NAME: &'static str;
    /// Rounds an f64 to this precision.
    fn from_f64_lossy(x: f64) -> Self;
    /// Widens to f64 (exact).
    fn as_f64(self) -> f64;
    /// Converts an integer, rounded to nearest (exact in f64, and in f32 up to 2²⁴; the
    /// compact copy's dot products).
    fn from_i32_lossy(v: i32) -> Self;
    /// The slices as f32 when this is f32 (`None` for f64): lets a kernel written with
    /// f32 intrinsics serve the generic code without a cast (`mdav/compact/`'s scores).
    fn as_f32s<'a>(out: &'a mut [Self], values: &'a [Self]) -> Option<(&'a mut [f32], &'a [f32])>;
}

impl Float for f32 {
    const NAME: &'static str = "float32";
    #[inline(always)]
    fn from_f64_lossy(x: f64) -> Self {
        x as f32
    }
    #[inline(always)]
    fn as_f64(self) -> f64 {
        self as f64
    }
    #[inline(always)]
    fn from_i32_lossy(v: i32) -> Self {
        v as f32
    }
    #[inline(always)]
    fn as_f32s<'a>(out: &'a mut [f32], values: &'a [f32]) -> Option<(&'a mut [f32], &'a [f32])> {
        Some((out, values))
    }
}

impl Float for f64 {
    const NAME: &'static str = "float64";
    #[inline(always)]
    fn from_f64_lossy(x: f64) -> Self {
        x
    }
    #[inline(always)]
    fn as_f64(self) -> f64 {
        self
    }
    #[inline(always)]
    fn from_i32_lossy(v: i32) -> Self {
        f64::from(v)
    }
    #[inline(always)]
    fn as_f32s<'a>(_: &'a mut [f64], _: &'a [f64]) -> Option<(&'a mut [f32], &'a [f32])> {
        None
    }
}

/// Bits of `v` whose unsigned order is the numeric order of `v` (−0.0 folded into +0.0,
/// so the two tie as they do under `partial_cmp`): cheap integer keys for selections and
/// sorts of NaN-free values.
#[inline]
pub fn order_bits(v: f64) -> u64 {
    let b = (if v == 0.0 { 0.0 } else { v }).to_bits();
    if b >> 63 == 1 { !b } else { b | (1 << 63) }
}

/// The f64 of [`order_bits`]' bits (−0 comes back as +0).
#[inline]
pub fn from_order_bits(b: u64) -> f64 {
    f64::from_bits(if b >> 63 == 1 { b & !(1 << 63) } else { !b })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn order_bits_follow_the_numeric_order() {
        let values = [f64::MIN, -1.0, -1e-300, -0.0, 0.0, 1e-300, 1.0, f64::MAX];
        for w in values.windows(2) {
            let (a, b) = (order_bits(w[0]), order_bits(w[1]));
            assert!(if w[0] == w[1] { a == b } else { a < b }, "{} vs {}", w[0], w[1]);
        }
        for v in values.into_iter().chain([f64::INFINITY, f64::NEG_INFINITY, 3.5e-310]) {
            let back = from_order_bits(order_bits(v));
            assert!(back == v && (v != 0.0 || back.is_sign_positive()), "{v} came back as {back}");
        }
    }
}
