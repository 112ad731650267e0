//! CBFS, centroid-based fixed-size microaggregation (Laszlo & Mukherjee 2005; mhm paper
//! §4.2.3, plain reading per docs/algorithms.md#cbfs-and-the-mhm-combinations): while ≥ 2k records
//! remain, the record farthest from the centroid of the remaining records and its k−1 nearest form
//! a group; then the rest (k..2k−1 records) form the last group. One group per centroid, where MDAV
//! forms two. O(n²·d/k) time, O(n·d) memory.

use super::mdav::remaining::Remaining;
use crate::dataset::WorkingSet;
use crate::float::Float;
use crate::kernels::{Metric, Selection};
use crate::parallel::Exec;
use crate::partition::Partition;
use crate::progress::Progress;

/// Runs CBFS on a working set (`1 ≤ k ≤ n`).
pub fn cbfs<T: Float>(ws: WorkingSet<T>, k: usize, exec: Exec, progress: &Progress) -> Partition {
    let mut rest = Remaining::new(ws, exec, progress);
    while rest.len() >= 2 * k {
        let c = rest.centroid(true);
        let p = rest.farthest_from_centroid(&c, Metric::Algebraic, None);
        rest.take_group(p, k, Metric::Algebraic, Selection::Partial, false);
    }
    if !rest.is_empty() {
        rest.take_rest();
    }
    rest.into_partition()
}
