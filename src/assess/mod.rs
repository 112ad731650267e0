//! Disclosure-risk measures of a release that need the core's speed (docs/assessment.md#risk).
//!
//! The Python package computes the cheap measures (interval disclosure, IL1s, eigen, the
//! per-attribute changes) with NumPy; what is quadratic in the naive form lives here:
//! distance-based record linkage, which links every original record to its nearest released
//! records through an exact index over the release's distinct rows ([`crate::index`]).

pub mod distinct;
pub mod linkage;

pub use linkage::{NearestLinks, link_nearest};
