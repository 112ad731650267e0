//! Whether an exact accelerator (the k-d tree, the compact scan) is used: on, off, or by the
//! size of the data (`Auto`), as MDAV's `spatial_index` and `compact_scan` parameters say.

/// Whether exact MDAV uses the spatial index (the `spatial_index` parameter).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum IndexChoice {
    /// By size: on when `d ≤ AUTO_MAX_D` and `n ≥ auto_min_n(d)` (20 000 up to d = 5,
    /// 100 000 up to d = 8).
    #[default]
    Auto,
    /// Always (complete data).
    On,
    /// Never: the streaming scans.
    Off,
}

/// Largest d where `Auto` picks the index.
pub const AUTO_MAX_D: usize = 8;

/// Smallest n where `Auto` picks the index in dimension `d ≤ AUTO_MAX_D`, from
/// bench-results/mdav_lowd.md (Gaussian, k = 10, one thread): at 20 000 records it is
/// 2.7× faster than the scans for d = 2, 2.5× for d = 3, 1.5× for d = 5 but 0.7× for
/// d = 8; at 100 000 it is 5.6×, 5.5×, 3.6× and 1.5×.
pub fn auto_min_n(d: usize) -> usize {
    if d <= 5 { 20_000 } else { 100_000 }
}

impl IndexChoice {
    /// Whether to use the index on `n` records of dimension `d`.
    pub fn uses(self, n: usize, d: usize) -> bool {
        self.picks(d <= AUTO_MAX_D && n >= auto_min_n(d))
    }

    /// On, off, or for `Auto` the caller's own rule `auto` (MD, the incremental fold).
    pub fn picks(self, auto: bool) -> bool {
        match self {
            IndexChoice::On => true,
            IndexChoice::Off => false,
            IndexChoice::Auto => auto,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn choice_by_size_and_dimension() {
        assert!(IndexChoice::Auto.uses(20_000, 5));
        assert!(!IndexChoice::Auto.uses(99_999, 6));
        assert!(IndexChoice::Auto.uses(100_000, AUTO_MAX_D));
        assert!(!IndexChoice::Auto.uses(19_999, 2));
        assert!(!IndexChoice::Auto.uses(1 << 20, AUTO_MAX_D + 1));
        assert!(IndexChoice::On.uses(10, 20));
        assert!(!IndexChoice::Off.uses(1 << 20, 3));
    }
}
