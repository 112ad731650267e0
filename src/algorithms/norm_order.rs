//! Exact, pruned search for the record farthest from a point near the data's center (the
//! "farthest from the centroid" step of MDAV-like algorithms).
//!
//! For F-MDAV's score s(x) = ½‖x‖² − ⟨x, c⟩, Cauchy–Schwarz gives s(x) ≤ ½‖x‖² + ‖x‖·‖c‖,
//! a bound that grows with ‖x‖. Visiting the unassigned records by decreasing norm, the
//! search stops as soon as the bound (widened by a rigorous rounding margin) falls below the
//! best score found, so no record that could win or tie is skipped: the result equals a full
//! scan's, ties to the lowest id included. The working copy is centered and the centroid of
//! the remaining records stays near the origin, so only a thin shell of large-norm records
//! is visited instead of the whole data set. This is microagg's addition to F-MDAV.
//!
//! Assigned records are dropped lazily: each search compacts the part of the order it
//! visited, so the total bookkeeping is O(n) plus the records actually scored. Visiting a
//! record is a gather over d columns, far slower than a streaming pass, so a search gives
//! up after a budget of visits (the caller then scans): on data whose remaining centroid
//! drifts away from the origin the bound stops biting, and the stream is the faster way.

use crate::dataset::WorkingSet;
use crate::float::Float;
use crate::kernels::Pick;
use crate::parallel::Exec;
use rayon::slice::ParallelSliceMut;

/// Original ids with their ½‖x‖², sorted by decreasing norm, with assigned ones removed
/// lazily.
#[derive(Debug, Clone)]
pub struct NormOrder {
    /// (½‖x‖² as f64, id): a search reads its bounds in order, without a gather.
    entries: Vec<(f64, u32)>,
    head: usize,
    /// Searches still to skip after giving up (exponential back-off).
    skip: usize,
    backoff: usize,
}

impl NormOrder {
    /// The order of every record of `ws` (O(n log n); a parallel sort where `exec` allows).
    pub fn new<T: Float>(ws: &WorkingSet<T>, exec: Exec) -> Self {
        let mut entries: Vec<(f64, u32)> =
            ws.half_norms().iter().zip(ws.ids()).map(|(h, &id)| (h.as_f64(), id)).collect();
        let by_norm = |a: &(f64, u32), b: &(f64, u32)| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1));
        if exec.is_parallel() {
            entries.par_sort_unstable_by(by_norm);
        } else {
            entries.sort_unstable_by(by_norm);
        }
        NormOrder { entries, head: 0, skip: 0, backoff: 0 }
    }

    /// The unassigned record (position `< m`) with the largest ½‖x‖² − ⟨x, c⟩, ties to the
    /// lowest id (`Some(None)` when every record is assigned), or `None` when proving it
    /// would take more than `budget` visits (`score` as in [`Self::search`]). After giving up, the next 1, 2, 4, … (up to
    /// 1024) searches answer `None` at once, so data where the bound does not bite costs
    /// almost nothing extra; a success resets the back-off.
    pub fn farthest<T: Float>(
        &mut self,
        ws: &WorkingSet<T>,
        m: usize,
        c: &[T],
        budget: usize,
        score: impl Fn(usize, u32) -> T,
    ) -> Option<Option<Pick<T>>> {
        if self.skip > 0 {
            self.skip -= 1;
            return None;
        }
        let found = self.search(ws, m, c, budget, score);
        if found.is_none() {
            self.backoff = (2 * self.backoff).clamp(1, 1024);
            self.skip = self.backoff;
        } else {
            self.backoff = 0;
        }
        found
    }

    /// [`Self::farthest`] without the back-off: one search, `None` past the budget; a
    /// visited record is scored by `score(position, id)`, which must equal
    /// `ws.algebraic_score(position, c)` bit for bit (e.g. from a row-major copy).
    pub fn search<T: Float>(
        &mut self,
        ws: &WorkingSet<T>,
        m: usize,
        c: &[T],
        budget: usize,
        score: impl Fn(usize, u32) -> T,
    ) -> Option<Option<Pick<T>>> {
        // Relative rounding bound of a d-term score in precision T, with a safety factor.
        let delta = 4.0 * (ws.d() as f64 + 4.0) * T::epsilon().as_f64();
        let c_norm = c.iter().map(|v| v.as_f64() * v.as_f64()).sum::<f64>().sqrt();
        let mut best: Option<Pick<T>> = None;
        let mut live = Vec::new();
        let mut stop = self.entries.len();
        let mut gave_up = false;
        for (i, &(hx, id)) in self.entries.iter().enumerate().skip(self.head) {
            let p = ws.position_of(id);
            if p >= m {
                continue;
            }
            let bound = hx + (2.0 * hx.max(0.0)).sqrt() * c_norm;
            if let Some(b) = best {
                let slack =
                    delta * (hx.abs() + bound.abs() + b.score.as_f64().abs()) + f64::MIN_POSITIVE;
                if bound + slack < b.score.as_f64() {
                    stop = i;
                    break;
                }
            }
            if live.len() == budget {
                (stop, gave_up) = (i, true);
                break;
            }
            let pick = Pick { score: score(p, id), id, pos: p };
            best = Some(best.map_or(pick, |b| b.farther(pick)));
            live.push((hx, id));
        }
        // Keep the visited live entries, in order, right before the unvisited part.
        self.head = stop - live.len();
        self.entries[self.head..stop].copy_from_slice(&live);
        (!gave_up).then_some(best)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dataset::Scaling;
    use crate::kernels::{self, Farthest, Metric};
    use crate::parallel::Exec;
    use ndarray::Array2;
    use proptest::prelude::*;

    #[test]
    fn gives_up_after_the_budget_of_visits() {
        // Centered values -49.5..49.5 and c = 0: the two records of norm 49.5 tie for the
        // best score, so proving the answer takes exactly two visits.
        let x = Array2::from_shape_fn((100, 1), |(i, _)| i as f64);
        let ws = WorkingSet::<f64>::new(x.view(), &Scaling::fit(x.view(), false)).unwrap();
        let best = NormOrder::new(&ws, Exec::SEQUENTIAL)
            .farthest(&ws, 100, &[0.0], 2, |p, _| ws.algebraic_score(p, &[0.0]))
            .unwrap()
            .unwrap();
        assert_eq!(best.id, 0, "tie to the lowest id");
        let mut order = NormOrder::new(&ws, Exec::SEQUENTIAL);
        assert_eq!(order.farthest(&ws, 100, &[0.0], 1, |p, _| ws.algebraic_score(p, &[0.0])), None);
        assert_eq!(
            order.farthest(&ws, 100, &[0.0], 2, |p, _| ws.algebraic_score(p, &[0.0])),
            None,
            "backing off"
        );
        assert_eq!(
            order
                .farthest(&ws, 100, &[0.0], 2, |p, _| ws.algebraic_score(p, &[0.0]))
                .unwrap()
                .unwrap(),
            best
        );
    }

    proptest! {
        #[test]
        fn equals_a_full_scan_as_records_are_removed(
            values in prop::collection::vec(-6i8..6, 3..600),
            d in 1usize..4,
            shift in -3.0f64..3.0,
        ) {
            // Small integers: many exact ties, duplicates and a centroid off the origin.
            let n = values.len() / d;
            prop_assume!(n >= 2);
            let x = Array2::from_shape_fn((n, d), |(i, j)| values[i * d + j] as f64);
            let ws = WorkingSet::<f32>::new(x.view(), &Scaling::fit(x.view(), false)).unwrap();
            let mut order = NormOrder::new(&ws, Exec::SEQUENTIAL);
            let mut ws = ws;
            let mut m = n;
            let c: Vec<f32> = (0..d).map(|j| (shift * (j as f64 + 1.0) / 3.0) as f32).collect();
            while m > 0 {
                let full: Farthest<f32> = kernels::scan(Exec::SEQUENTIAL, &ws, m, &c, Metric::Algebraic, Farthest::default);
                let pruned = order.farthest(&ws, m, &c, usize::MAX, |p, _| ws.algebraic_score(p, &c)).unwrap();
                prop_assert_eq!(pruned, full.0);
                // A tight budget either proves the same answer or gives up (then backs off).
                let mut tight = order.clone();
                if let Some(p) = tight.farthest(&ws, m, &c, 3, |p, _| ws.algebraic_score(p, &c)) {
                    prop_assert_eq!(p, full.0);
                } else {
                    prop_assert_eq!(tight.farthest(&ws, m, &c, usize::MAX, |p, _| ws.algebraic_score(p, &c)), None);
                }
                // Remove the winner and a record from the middle, as groups do.
                let p = pruned.unwrap().pos;
                ws.swap(p, m - 1);
                m -= 1;
                if m > 2 {
                    ws.swap(m / 2, m - 1);
                    m -= 1;
                }
            }
            prop_assert_eq!(order.farthest(&ws, 0, &c, usize::MAX, |p, _| ws.algebraic_score(p, &c)), Some(None));
        }
    }
}
