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
}
