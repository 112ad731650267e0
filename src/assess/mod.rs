//! Disclosure-risk measures of a release that need the core's speed (docs/assessment.md#risk).
//!
//! The Python package computes the cheap measures (interval disclosure, IL1s, eigen, the
//! per-attribute changes) with NumPy; what is quadratic in the naive form lives here:
//! distance-based record linkage, which links every original record to its nearest released
//! records exactly, over the release's distinct rows: an index ([`crate::index`]) in few
//! dimensions, a scan by f32 scores with an exact re-check above.

pub mod distinct;
pub mod linkage;
mod links;
mod mixed_index;
pub mod mixed_metric;
mod panel;
pub mod row_ids;
mod scan;
mod score_bound;
pub mod scores;
#[cfg(target_arch = "x86_64")]
mod scores_avx2;
#[cfg(target_arch = "x86_64")]
mod scores_avx512;

pub use linkage::{link_nearest, link_nearest_mixed};
pub use links::NearestLinks;
pub use row_ids::RowIds;
