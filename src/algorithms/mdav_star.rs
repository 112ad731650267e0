//! MDAV* and MDAV*+ (papers/scalable-microaggregation-ona-mona.txt Alg. 1;
//! docs/algorithms.md#mdav-star).
//!
//! x̄ = the unassigned record farthest from the centroid of the **whole input** (fixed for
//! the run); N1 = x̄ and its k−1 nearest unassigned records; ν = x̄'s nearest unassigned
//! record and N2 = ν with its k−1 nearest unassigned records other than x̄; clos(x̄) = the
//! cluster whose SSE rises least when x̄ joins, |C|/(|C|+1)·‖x̄ − c(C)‖², with current
//! centroids. Cost1 = SSE(N1)/k, Cost2 = (rise of clos + SSE(N2))/(k+1), exactly as printed.
//! N1 becomes a cluster if no cluster exists yet, if exactly k records are unassigned, or if
//! Cost1 ≤ Cost2; otherwise x̄ joins clos. The loop runs while ≥ k records are unassigned;
//! each leftover (in id order) then joins the cluster with the nearest centroid.
//!
//! MDAV*+ never lets a cluster reach 2k: clusters of 2k−1 records receive nothing (they are
//! not candidates for clos; if all are full N1 is formed; leftovers go to the nearest
//! non-full cluster unless every cluster is full).
//!
//! Cost: every step is two scans of the unassigned records plus one pass over the clusters,
//! and removes 1 or k records: O(n²·d/k) in the usual case, O(n²·d) at worst; O(n·d) memory.
//! In low d the farthest and nearest queries go to the k-d tree of exact MDAV (`spatial.rs`,
//! same [`IndexChoice`] rule, same answers, so the same partition); otherwise the scans read
//! MDAV's compact int8 copy first (`mdav/compact/`, same rule, same answers).

use super::clusters::{ClusterStats, sse};
use super::mdav::compact::uses_compact;
use super::mdav::norm_order::NormOrder;
use super::mdav::remaining::Remaining;
use super::spatial::{Accelerators, SpatialIndex};
use crate::centroid_table::CentroidTable;
use crate::dataset::WorkingSet;
use crate::float::Float;
use crate::index::IndexChoice;
use crate::kernels::Metric;
use crate::parallel::Exec;
use crate::partition::Partition;
use crate::progress::Progress;

/// The unassigned records' queries: the scans of [`Remaining`] (norm-pruned for the
/// farthest), or a [`SpatialIndex`] of them that must see every removal.
enum Queries<T> {
    Scan(Option<NormOrder>),
    Index(Box<SpatialIndex<T>>),
}

impl<T: Float> Queries<T> {
    /// The index when `choice` picks it for `ws`, else the scans.
    fn new(ws: &WorkingSet<T>, choice: IndexChoice, exec: Exec) -> Self {
        if choice.uses(ws.n(), ws.d()) {
            Queries::Index(Box::new(SpatialIndex::new(ws)))
        } else {
            Queries::Scan(Some(NormOrder::new(ws, exec)))
        }
    }

    /// Position of the unassigned record farthest from `center` (algebraic score, ties to
    /// the lowest id).
    fn farthest(&mut self, rest: &Remaining<T>, center: &[T]) -> usize {
        match self {
            Queries::Scan(order) => rest.farthest_by_norm_order(order.as_mut(), center),
            Queries::Index(index) => {
                rest.position_of(index.farthest(center, Metric::Algebraic).expect("unassigned"))
            }
        }
    }

    /// [`Remaining::nearest`]: the `count` unassigned records nearest to the one at `seed`,
    /// nearest first, never the seed nor `also`. The index is asked for one more than
    /// `count` when `also` is given, which leaves `count` after dropping it.
    fn nearest(
        &self,
        rest: &Remaining<T>,
        seed: usize,
        count: usize,
        also: Option<usize>,
    ) -> Vec<usize> {
        let Queries::Index(index) = self else { return rest.nearest(seed, count, also) };
        let also = also.map(|p| rest.id(p));
        let wanted = count + usize::from(also.is_some());
        let ids = index.nearest(&rest.row(seed), Metric::Algebraic, wanted, rest.id(seed));
        let kept = ids.into_iter().filter(|&id| Some(id) != also).take(count);
        kept.map(|id| rest.position_of(id)).collect()
    }

    /// [`Remaining::remove_into`], keeping the index in step.
    fn remove_into(&mut self, rest: &mut Remaining<T>, ps: &[usize], label: Option<u32>) -> u32 {
        if let Queries::Index(index) = self {
            ps.iter().for_each(|&p| index.remove(rest.id(p)));
        }
        rest.remove_into(ps, label)
    }
}

/// The clusters, and with the records' index also their centroids in a [`CentroidTable`],
/// which then answers clos(x̄) (its inertial query scores |C|/(|C|+1)·‖x̄ − c(C)‖² exactly as
/// [`ClusterStats::join_cost`] does, ties to the lowest id) instead of a pass over all
/// clusters.
struct Clusters {
    stats: ClusterStats,
    table: Option<CentroidTable>,
    /// Clusters of this size receive nothing (2k − 1 for MDAV*+): they leave the table.
    cap: usize,
}

impl Clusters {
    /// Adds the record `x` to cluster `g`.
    fn add(&mut self, g: usize, x: &[f64]) {
        self.stats.add(g, x);
        if let Some(table) = &mut self.table {
            let size = self.stats.size(g);
            table.set(g, &self.stats.centroid(g), if size < self.cap { size } else { 0 });
        }
    }

    /// clos(x): the cluster below the cap whose SSE rises least when `x` joins.
    fn closest(&mut self, x: &[f64]) -> Option<usize> {
        let Some(table) = &mut self.table else {
            let s = &self.stats;
            return s.argmin(|g| s.size(g) < self.cap, |g| s.join_cost(g, x));
        };
        table.nearest(x, true)
    }
}

/// Runs MDAV* (`plus = false`) or MDAV*+ (`plus = true`) on a working set (`1 ≤ k ≤ n`),
/// with the spatial index where `accelerators` picks it, else the compact copy's scans where
/// it picks them (`mdav/compact/`; same answers).
pub fn mdav_star<T: Float>(
    ws: WorkingSet<T>,
    k: usize,
    plus: bool,
    accelerators: Accelerators,
    exec: Exec,
    progress: &Progress,
) -> Partition {
    let Accelerators { spatial_index: index, compact_scan: compact } = accelerators;
    let center: Vec<T> = ws.prefix_means(ws.n());
    let mut queries = Queries::new(&ws, index, exec);
    let indexed = matches!(queries, Queries::Index(_));
    let mut clusters = Clusters {
        stats: ClusterStats::new(center.len()),
        table: indexed.then(|| CentroidTable::new(center.len(), index)),
        cap: if plus { 2 * k - 1 } else { usize::MAX },
    };
    let compact = uses_compact(compact, ws.n(), indexed);
    let mut rest = Remaining::new(ws, exec, progress);
    if compact {
        rest.use_compact_copy();
    }
    let rows = |rest: &Remaining<T>, ps: &[usize]| -> Vec<Vec<f64>> {
        ps.iter().map(|&p| rest.row_f64(p)).collect()
    };
    // Many short passes: on a team of threads kept awake between them (`team.rs`).
    exec.with_team(rest.len(), || {
        while rest.len() >= k {
            let xbar = queries.farthest(&rest, &center);
            let mut n1 = queries.nearest(&rest, xbar, k - 1, None);
            n1.push(xbar);
            let x = rest.row_f64(xbar);
            let clos = if clusters.stats.is_empty() || rest.len() == k || k == 1 {
                None
            } else {
                clusters.closest(&x)
            };
            let stats = &clusters.stats;
            let joins = clos.filter(|&g| {
                let nu = n1[0];
                let mut n2 = queries.nearest(&rest, nu, k - 1, Some(xbar));
                n2.push(nu);
                let cost1 = sse(&rows(&rest, &n1)) / k as f64;
                let cost2 = (stats.join_cost(g, &x) + sse(&rows(&rest, &n2))) / (k + 1) as f64;
                cost1 > cost2
            });
            match joins {
                Some(g) => {
                    clusters.add(g, &x);
                    queries.remove_into(&mut rest, &[xbar], Some(g as u32));
                }
                None => {
                    let g = clusters.stats.push();
                    for r in rows(&rest, &n1) {
                        clusters.add(g, &r);
                    }
                    let label = queries.remove_into(&mut rest, &n1, None);
                    debug_assert_eq!(label as usize, g);
                }
            }
        }
    });
    let mut stats = clusters.stats;
    let mut leftovers: Vec<u32> = (0..rest.len()).map(|p| rest.id(p)).collect();
    leftovers.sort_unstable();
    for id in leftovers {
        let p = rest.position_of(id);
        let x = rest.row_f64(p);
        let all_full = (0..stats.len()).all(|g| plus && stats.size(g) >= 2 * k - 1);
        let g = stats
            .argmin(|g| all_full || !plus || stats.size(g) < 2 * k - 1, |g| stats.dist2(g, &x))
            .expect("k <= n, so a cluster exists before leftovers");
        stats.add(g, &x);
        rest.remove_into(&[p], Some(g as u32));
    }
    rest.into_partition()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::algorithms::test_shapes::{cases, small_integers};
    use crate::dataset::Scaling;
    use ndarray::Array2;
    use proptest::prelude::*;

    fn run(x: &Array2<f64>, k: usize, plus: bool) -> Partition {
        let ws = WorkingSet::<f64>::new(x.view(), &Scaling::fit(x.view(), true)).unwrap();
        mdav_star(ws, k, plus, Accelerators::default(), Exec::SEQUENTIAL, &Progress::new())
    }

    #[test]
    fn an_outlier_joins_a_cluster_instead_of_dragging_two_records_along() {
        // Two tight triples and a far single record, k = 3: MDAV would group the outlier
        // with two of a triple; MDAV* adds it to a cluster when that costs less.
        let x =
            Array2::from_shape_vec((7, 1), vec![0.0, 0.1, 0.2, 10.0, 10.1, 10.2, 13.0]).unwrap();
        let p = run(&x, 3, false);
        p.check(3, None).unwrap();
        assert_eq!(p.n_groups(), 2);
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(64))]
        #[test]
        fn invariants((x, k) in small_integers(-20..20, 300, 7, 4)) {
            run(&x, k, false).check(k, None).unwrap();
            run(&x, k, true).check(k, Some((2 * k - 1).max(k))).unwrap();
        }
    }

    fn labels_of<T: Float>(x: &Array2<f64>, k: usize, plus: bool, index: IndexChoice) -> Vec<u32> {
        labels_with::<T>(x, k, plus, index, IndexChoice::Off)
    }

    fn labels_with<T: Float>(
        x: &Array2<f64>,
        k: usize,
        plus: bool,
        index: IndexChoice,
        compact: IndexChoice,
    ) -> Vec<u32> {
        let ws = WorkingSet::<T>::new(x.view(), &Scaling::fit(x.view(), true)).unwrap();
        let (e, p) = (Exec::SEQUENTIAL, Progress::new());
        let accelerators = Accelerators { spatial_index: index, compact_scan: compact };
        mdav_star(ws, k, plus, accelerators, e, &p).labels().to_vec()
    }

    /// The index gives the scans' partition bit for bit: MDAV* and MDAV*+, f32 and f64.
    fn index_equals_scan(x: &Array2<f64>, k: usize) {
        for plus in [false, true] {
            let [on, off] = [IndexChoice::On, IndexChoice::Off];
            assert_eq!(labels_of::<f64>(x, k, plus, on), labels_of::<f64>(x, k, plus, off));
            assert_eq!(labels_of::<f32>(x, k, plus, on), labels_of::<f32>(x, k, plus, off));
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(48))]
        /// The k-d tree (up to 8 attributes) and the compact copy's scans give the exact
        /// scans' partition: MDAV* and MDAV*+, f32 and f64, ties included.
        #[test]
        fn accelerated_paths_give_the_scan_partition(c in cases(3000, 21, 1, 4)) {
            let (x, k) = (c.data(), c.k);
            if c.d < 9 {
                index_equals_scan(&x, k);
            }
            let [on, off] = [IndexChoice::On, IndexChoice::Off];
            for plus in [false, true] {
                prop_assert_eq!(labels_with::<f64>(&x, k, plus, off, on), labels_with::<f64>(&x, k, plus, off, off));
                prop_assert_eq!(labels_with::<f32>(&x, k, plus, off, on), labels_with::<f32>(&x, k, plus, off, off));
            }
        }
    }
}
