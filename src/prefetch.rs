//! Cache prefetch hints for scattered loads and writes known ahead (a leaf: it needs nothing
//! of the crate). Exact MDAV's pool of remaining records (`dataset.rs`, `remaining.rs`)
//! asks for the lines of the records it is about to move.

/// Asks the caches for the line holding `x`: a hint for scattered loads that are known
/// ahead (no effect where the target has no stable prefetch instruction).
#[inline(always)]
pub fn prefetch<V>(x: &V) {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: a prefetch never faults and reads nothing into the program; `x` is a valid
    // reference anyway. SSE is part of x86_64's baseline.
    unsafe {
        use std::arch::x86_64::{_MM_HINT_T0, _mm_prefetch};
        _mm_prefetch::<_MM_HINT_T0>((x as *const V).cast());
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = x;
}

/// Asks the caches for the line holding `x` ahead of a write to it (`prefetchw` where the
/// CPU has it, else [`prefetch`]). A line that another thread has read since (the data of
/// a pass, which exact MDAV's caller then changes between two passes) must be taken back
/// from that core's cache before it is written: asked for together, ahead of the writes,
/// those transfers overlap instead of queueing (numbers in `Remaining::prefetch_group`).
#[inline(always)]
pub fn prefetch_for_write<V>(x: &V) {
    #[cfg(target_arch = "x86_64")]
    if has_prefetchw() {
        // SAFETY: `prefetchw` (checked just above) never faults, writes nothing and reads
        // nothing into the program; `x` is a valid reference anyway.
        unsafe {
            std::arch::asm!(
                "prefetchw byte ptr [{0}]",
                in(reg) (x as *const V),
                options(nostack, preserves_flags, readonly)
            );
        }
        return;
    }
    prefetch(x);
}

/// Whether this CPU has `prefetchw` (CPUID 8000_0001h, ECX bit 8: every x86-64 AMD CPU,
/// Intel's since Broadwell), asked once.
#[cfg(target_arch = "x86_64")]
fn has_prefetchw() -> bool {
    static HAS: std::sync::LazyLock<bool> = std::sync::LazyLock::new(|| {
        use std::arch::x86_64::__cpuid;
        // The extended leaf exists when the largest extended leaf reaches it. `__cpuid` is
        // safe since Rust 1.87 (the crate needs 1.89, Cargo.toml's `rust-version`).
        __cpuid(0x8000_0000).eax >= 0x8000_0001 && __cpuid(0x8000_0001).ecx & (1 << 8) != 0
    });
    *HAS
}
