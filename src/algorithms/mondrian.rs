//! The Mondrian family (papers/scalable-microaggregation-ona-mona.txt §4, Algorithms 4–5;
//! cut rules fixed in docs/algorithms.md#mondrian): recursive median cuts in O(n·d·log n) expected
//! time (O(n·d²·log n) for Mondrian-V2D, whose summaries are d × d) and O(n·d) memory (two copies
//! of the data, ping-pong).
//!
//! A part is cut only if it has more than 2k records, so every group has k..2k records. To
//! cut a part of m records, choose a direction (`cut_direction.rs`), stable-sort the
//! part on the projection of its records onto it and put the first ⌊m/2⌋ on the left; both
//! children keep the order they have in the sorted parent (the root is the input order).
//!
//! The sort is never done. A record's place in its part is, lexicographically, its keys along the
//! directions of the cuts that made the part (most recent first), then its id: the part's lineage
//! (`Lineage`). So a cut finds the median key by selection (O(m)), sends smaller keys left and
//! larger ones right, and orders by lineage only the records whose key equals the median: usually
//! one record, though integer data can tie many. Records are moved to their side in the order they
//! had (one streaming pass that also gathers the children's summaries), which keeps every part
//! contiguous. The two halves of a cut are independent and run on the rayon pool; groups are
//! labelled left to right, so the result does not depend on the thread count.

pub use super::cut_direction::CutRule;
use super::cut_direction::{Direction, PartSummary};
use crate::parallel::Exec;
use crate::partition::Partition;
use crate::progress::Progress;
use crate::width::{Width, with_width};
use std::cmp::Ordering;

/// Parts at least this large split their two halves across threads.
const PARALLEL_PART: usize = 1 << 14;
/// Finished parts smaller than this are counted in the progress with their ancestor (one
/// atomic add per few thousand records, not per group).
const PROGRESS_PART: usize = 1 << 12;

/// The directions of the cuts that made a part, most recent first (none for the root).
struct Lineage<'a> {
    direction: Direction,
    parent: Option<&'a Lineage<'a>>,
}

/// The order of two records `(values, id)` of a part with this lineage: their keys along
/// its cuts, most recent first, then their ids.
fn lineage_order(lineage: Option<&Lineage<'_>>, a: (&[f64], u32), b: (&[f64], u32)) -> Ordering {
    let mut node = lineage;
    while let Some(cut) = node {
        let key = |x: &[f64]| cut.direction.key(x);
        match key(a.0).cmp(&key(b.0)) {
            Ordering::Equal => node = cut.parent,
            unequal => return unequal,
        }
    }
    a.1.cmp(&b.1)
}

/// The records of one part (row-major, with their original ids), contiguous; a cut moves
/// them into the spare buffers, which then become the children's data (ping-pong: no
/// allocation and no copy back). `keys` is scratch; a final part copies its ids to `out`
/// and marks its first position in `starts`.
struct Records<'a> {
    d: usize,
    rows: &'a mut [f64],
    ids: &'a mut [u32],
    spare_rows: &'a mut [f64],
    spare_ids: &'a mut [u32],
    keys: &'a mut [u64],
    starts: &'a mut [bool],
    out: &'a mut [u32],
}

impl<'a> Records<'a> {
    fn len(&self) -> usize {
        self.ids.len()
    }

    fn record(&self, i: usize) -> (&[f64], u32) {
        (&self.rows[i * self.d..][..self.d], self.ids[i])
    }

    fn split_at(self, mid: usize) -> (Records<'a>, Records<'a>) {
        let d = self.d;
        let (ra, rb) = self.rows.split_at_mut(mid * d);
        let (ia, ib) = self.ids.split_at_mut(mid);
        let (sra, srb) = self.spare_rows.split_at_mut(mid * d);
        let (sia, sib) = self.spare_ids.split_at_mut(mid);
        let (ka, kb) = self.keys.split_at_mut(mid);
        let (sa, sb) = self.starts.split_at_mut(mid);
        let (oa, ob) = self.out.split_at_mut(mid);
        let part = |rows, ids, spare_rows, spare_ids, keys, starts, out| Records {
            d,
            rows,
            ids,
            spare_rows,
            spare_ids,
            keys,
            starts,
            out,
        };
        (part(ra, ia, sra, sia, ka, sa, oa), part(rb, ib, srb, sib, kb, sb, ob))
    }
}

/// What every part of one run shares.
struct Plan<'f, F> {
    keep_cutting: &'f F,
    /// Whether final parts list their ids in the part's order (MONA hands them to ONA*,
    /// which depends on it); otherwise in any order.
    ordered_parts: bool,
    exec: Exec,
    progress: &'f Progress,
}

/// Cuts the part on `direction`: the first ⌊m/2⌋ records in the part's order along it
/// (the key, then the lineage) go left, the rest right, each side keeping their relative
/// order. With the part's `summary`, also returns the summaries of the two sides (only
/// needed if a side will be cut again).
fn cut(
    rec: &mut Records<'_>,
    direction: Direction,
    lineage: Option<&Lineage<'_>>,
    summary: Option<&PartSummary>,
) -> Option<[PartSummary; 2]> {
    cut_by(rec, |x| direction.key(x), lineage, summary)
}

/// [`cut`] with the records' `key` along the direction.
#[inline(always)]
fn cut_by(
    rec: &mut Records<'_>,
    key: impl Fn(&[f64]) -> u64 + Copy,
    lineage: Option<&Lineage<'_>>,
    summary: Option<&PartSummary>,
) -> Option<[PartSummary; 2]> {
    let half = rec.len() / 2;
    with_width!(rec.d, |w| fill_keys(rec, w, key));
    let (below, &mut median, above) = rec.keys.select_nth_unstable(half - 1);
    let less = below.iter().filter(|&&k| k < median).count();
    let tied = below.len() - less + 1 + above.iter().filter(|&&k| k == median).count();
    // The records tied at the median that go left: all, or the first in lineage order.
    let tied_left: Option<Vec<usize>> = (tied > half - less).then(|| {
        let mut ties: Vec<usize> =
            (0..rec.len()).filter(|&i| key(rec.record(i).0) == median).collect();
        ties.sort_unstable_by(|&a, &b| lineage_order(lineage, rec.record(a), rec.record(b)));
        ties.truncate(half - less);
        ties.sort_unstable();
        ties
    });
    match tied_left {
        None => move_records(rec, summary, |_, x| usize::from(key(x) > median)),
        Some(ties) => {
            let mut next_tie = 0;
            let side_of = move |i: usize, x: &[f64]| {
                let k = key(x);
                if k != median {
                    return usize::from(k > median);
                }
                let left = ties.get(next_tie) == Some(&i);
                next_tie += usize::from(left);
                usize::from(!left)
            };
            move_records(rec, summary, side_of)
        }
    }
}

/// Writes every record's key (in record order) to the part's scratch.
#[inline(always)]
fn fill_keys<W: Width>(rec: &mut Records<'_>, width: W, key: impl Fn(&[f64]) -> u64) {
    for (k, x) in rec.keys.iter_mut().zip(rec.rows.chunks_exact(width.get())) {
        *k = key(x);
    }
}

/// Moves every record `i` to side `side_of(i, x)` (0 left, 1 right) and makes the moved
/// records the part's data; with the part's `summary`, returns the sides' summaries.
fn move_records(
    rec: &mut Records<'_>,
    summary: Option<&PartSummary>,
    side_of: impl FnMut(usize, &[f64]) -> usize,
) -> Option<[PartSummary; 2]> {
    let Some(summary) = summary else {
        with_width!(rec.d, |w| move_rows(rec, w, &mut [(), ()], |_, _, _| {}, side_of));
        return None;
    };
    let mut sides = summary.empty_children();
    let to = &mut sides;
    with_width!(rec.d, |w| match summary.rule() {
        CutRule::Range => move_rows(rec, w, to, PartSummary::add_to_range, side_of),
        CutRule::Variance => move_rows(rec, w, to, PartSummary::add_to_diagonal, side_of),
        CutRule::Variance2D | CutRule::Variance2DScaled => {
            move_rows(rec, w, to, PartSummary::add_to_triangle, side_of)
        }
    });
    Some(sides)
}

/// The loop of [`move_records`]: records go to the spare buffers (left from 0, right from
/// ⌊m/2⌋, each in record order) and into their side's summary (`add`); then the spare
/// buffers become the part's data. Generic over the width so that small rows copy inline,
/// and over `side_of` so that the common case (no partial ties) has no branch per record.
#[inline(always)]
fn move_rows<S, W: Width>(
    rec: &mut Records<'_>,
    width: W,
    sides: &mut [S; 2],
    add: impl Fn(&mut S, &[f64], usize),
    mut side_of: impl FnMut(usize, &[f64]) -> usize,
) {
    let d = width.get();
    let mut cursor = [0, rec.len() / 2];
    for (i, (x, &id)) in rec.rows.chunks_exact(d).zip(rec.ids.iter()).enumerate() {
        let side = side_of(i, x);
        let at = cursor[side];
        cursor[side] += 1;
        rec.spare_rows[at * d..][..d].copy_from_slice(x);
        rec.spare_ids[at] = id;
        add(&mut sides[side], x, d);
    }
    std::mem::swap(&mut rec.rows, &mut rec.spare_rows);
    std::mem::swap(&mut rec.ids, &mut rec.spare_ids);
}

/// Writes a final part's ids to `out` (in the part's order if the plan asks) and marks its
/// start.
fn finish_part(rec: Records<'_>, lineage: Option<&Lineage<'_>>, ordered: bool) {
    rec.starts[0] = true;
    if ordered {
        let mut order: Vec<usize> = (0..rec.len()).collect();
        order.sort_unstable_by(|&a, &b| lineage_order(lineage, rec.record(a), rec.record(b)));
        for (o, i) in rec.out.iter_mut().zip(order) {
            *o = rec.ids[i];
        }
    } else {
        rec.out.copy_from_slice(rec.ids);
    }
}

/// Recursively cuts the part while the plan's `keep_cutting`; `summary` is the part's
/// summary, present whenever the part is to be cut. The first part on the way down that is
/// final or smaller than [`PROGRESS_PART`] adds its records to the progress when done
/// (`counted` tells the parts below it).
fn split_recursively<F: Fn(usize) -> bool + Sync>(
    mut rec: Records<'_>,
    summary: Option<PartSummary>,
    lineage: Option<&Lineage<'_>>,
    plan: &Plan<'_, F>,
    counted: bool,
) {
    let m = rec.len();
    let count_here = !counted && (m < PROGRESS_PART || !(plan.keep_cutting)(m));
    if !(plan.keep_cutting)(m) {
        finish_part(rec, lineage, plan.ordered_parts);
        if count_here {
            plan.progress.add(m);
        }
        return;
    }
    let summary = summary.expect("a part to be cut has a summary");
    let direction = summary.direction();
    let half = m / 2;
    let cut_again = (plan.keep_cutting)(half) || (plan.keep_cutting)(m - half);
    let sides = cut(&mut rec, direction, lineage, cut_again.then_some(&summary));
    let [left_summary, right_summary] = sides.map_or([None, None], |s| s.map(Some));
    let lineage = Lineage { direction, parent: lineage };
    let (left, right) = rec.split_at(half);
    let counted = counted || count_here;
    let left_run = || split_recursively(left, left_summary, Some(&lineage), plan, counted);
    let right_run = || split_recursively(right, right_summary, Some(&lineage), plan, counted);
    if plan.exec.is_parallel() && m >= PARALLEL_PART {
        rayon::join(left_run, right_run);
    } else {
        left_run();
        right_run();
    }
    if count_here {
        plan.progress.add(m);
    }
}

/// Cuts the whole data set (`rows`: row-major n × d, by id) recursively while `keep_cutting(len)`; returns the original ids part by
/// part, left to right (within a part in the part's order if `ordered_parts`), and the sizes
/// of the parts. Records are counted in `progress` as their parts are done.
#[allow(clippy::too_many_arguments)]
pub(crate) fn cut_into_parts(
    mut rows: Vec<f64>,
    d: usize,
    rule: CutRule,
    keep_cutting: &(impl Fn(usize) -> bool + Sync),
    ordered_parts: bool,
    exec: Exec,
    progress: &Progress,
) -> (Vec<u32>, Vec<usize>) {
    let n = rows.len() / d;
    let summary = PartSummary::of(rule, &rows, d);
    let mut ids: Vec<u32> = (0..n as u32).collect();
    let (mut spare_rows, mut spare_ids) = (vec![0.0; n * d], vec![0u32; n]);
    let (mut keys, mut starts, mut out) = (vec![0u64; n], vec![false; n], vec![0u32; n]);
    let rec = Records {
        d,
        rows: &mut rows,
        ids: &mut ids,
        spare_rows: &mut spare_rows,
        spare_ids: &mut spare_ids,
        keys: &mut keys,
        starts: &mut starts,
        out: &mut out,
    };
    let plan = Plan { keep_cutting, ordered_parts, exec, progress };
    split_recursively(rec, Some(summary), None, &plan, false);
    let mut bounds: Vec<usize> = (0..n).filter(|&i| starts[i]).collect();
    bounds.push(n);
    (out, bounds.windows(2).map(|w| w[1] - w[0]).collect())
}

/// Labels consecutive runs of `order` with the given sizes as groups 0, 1, ….
pub(crate) fn label_runs(order: &[u32], sizes: &[usize]) -> Partition {
    let mut labels = vec![0u32; order.len()];
    let mut start = 0;
    for (g, &s) in sizes.iter().enumerate() {
        for &p in &order[start..start + s] {
            labels[p as usize] = g as u32;
        }
        start += s;
    }
    Partition::new_unchecked(labels, sizes.len())
}

/// Runs a Mondrian variant on records given row-major (n × d, by id; see
/// [`crate::dataset::Scaling::rows_of`]).
pub fn mondrian(
    rows: Vec<f64>,
    d: usize,
    k: usize,
    rule: CutRule,
    exec: Exec,
    progress: &Progress,
) -> Partition {
    let (order, sizes) = cut_into_parts(rows, d, rule, &|m| m > 2 * k, false, exec, progress);
    label_runs(&order, &sizes)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dataset::{Scaling, WorkingSet};
    use ndarray::{Array2, array};
    use proptest::prelude::*;

    fn ws(x: &Array2<f64>) -> WorkingSet<f64> {
        WorkingSet::new(x.view(), &Scaling::fit(x.view(), false)).unwrap()
    }

    #[test]
    fn cuts_the_widest_attribute_at_the_median_by_position() {
        // attribute 1 is widest; 7 records > 2k = 4: left = 3 smallest on attribute 1.
        let x = array![
            [0.0, 5.0],
            [1.0, 1.0],
            [0.5, 9.0],
            [0.2, 3.0],
            [0.1, 3.0],
            [0.3, 7.0],
            [0.4, 0.0]
        ];
        // Stable sort on attribute 1: 0(id6) 1(id1) 3(id3) 3(id4) 5(id0) 7(id5) 9(id2); the
        // tie 3/3 keeps input order, so id3 goes left with ids 6 and 1.
        let p =
            mondrian(ws(&x).rows_by_id(), 2, 2, CutRule::Range, Exec::SEQUENTIAL, &Progress::new());
        assert_eq!(p.labels(), &[1, 0, 1, 0, 1, 1, 0]);
        assert_eq!(p.group_sizes(), vec![3, 4]);
    }

    /// The rules as docs/algorithms.md#mondrian states them: stable-sort every part on its
    /// direction and cut by position, children keeping the sorted order. Returns (ids part by part,
    /// in each part's order; part sizes).
    fn by_stable_sorts(rows: &[f64], d: usize, k: usize, rule: CutRule) -> (Vec<u32>, Vec<usize>) {
        fn split(
            part: Vec<u32>,
            x: &[f64],
            d: usize,
            k: usize,
            rule: CutRule,
            out: &mut Vec<Vec<u32>>,
        ) {
            if part.len() <= 2 * k {
                return out.push(part);
            }
            let row = |i: u32| &x[i as usize * d..][..d];
            let values: Vec<f64> = part.iter().flat_map(|&i| row(i).iter().copied()).collect();
            let direction = PartSummary::of(rule, &values, d).direction();
            let mut sorted = part;
            sorted.sort_by(|&a, &b| {
                direction.project(row(a)).partial_cmp(&direction.project(row(b))).unwrap()
            });
            let right = sorted.split_off(sorted.len() / 2);
            split(sorted, x, d, k, rule, out);
            split(right, x, d, k, rule, out);
        }
        let mut parts = Vec::new();
        split((0..(rows.len() / d) as u32).collect(), rows, d, k, rule, &mut parts);
        (parts.concat(), parts.iter().map(Vec::len).collect())
    }

    #[test]
    fn large_tied_data_gives_the_stable_sort_cuts_on_any_thread_count() {
        // Large enough for the parallel split (parts of 2^14 records and more).
        let (n, d, k) = (60_000, 3, 3);
        let mut rng = crate::rng::SplitMix64::new(11);
        let rows: Vec<f64> = (0..n * d).map(|_| (rng.next_u64() % 7) as f64).collect();
        for rule in [CutRule::Range, CutRule::Variance, CutRule::Variance2D] {
            let want = by_stable_sorts(&rows, d, k, rule);
            for n_jobs in [1, 2] {
                let progress = Progress::new();
                let got = crate::Parallelism::from_n_jobs(n_jobs)
                    .unwrap()
                    .install(|exec| {
                        cut_into_parts(rows.clone(), d, rule, &|m| m > 2 * k, true, exec, &progress)
                    })
                    .unwrap();
                assert_eq!(got, want, "{rule:?}, {n_jobs} threads");
                assert_eq!(progress.get(), n, "every record counted once");
            }
        }
    }

    proptest! {
        #[test]
        fn selection_and_lineage_give_the_stable_sort_cuts(
            values in prop::collection::vec(-2i8..3, 3..900), d in 1usize..4,
            k in 1usize..6, rule in 0usize..3,
        ) {
            // Few distinct values: most cuts tie at the median, often on several levels.
            let rule = [CutRule::Range, CutRule::Variance, CutRule::Variance2D][rule];
            let rows: Vec<f64> = values[..values.len() / d * d].iter().map(|&v| v as f64 * 0.5).collect();
            prop_assume!(rows.len() / d >= k);
            let (want_order, want_sizes) = by_stable_sorts(&rows, d, k, rule);
            let keep_cutting = |m: usize| m > 2 * k;
            let (order, sizes) =
                cut_into_parts(rows, d, rule, &keep_cutting, true, Exec::SEQUENTIAL, &Progress::new());
            prop_assert_eq!(&sizes, &want_sizes);
            prop_assert_eq!(&order, &want_order);
        }

        #[test]
        fn groups_have_k_to_2k_records_even_with_ties(
            values in prop::collection::vec(0u8..4, 2..400), k in 1usize..8, rule in 0usize..3,
        ) {
            let n = values.len() / 2;
            prop_assume!(n >= k);
            let x = Array2::from_shape_fn((n, 2), |(i, j)| values[2 * i + j] as f64);
            let rule = [CutRule::Range, CutRule::Variance, CutRule::Variance2D][rule];
            let p = mondrian(ws(&x).rows_by_id(), 2, k, rule, Exec::SEQUENTIAL, &Progress::new());
            p.check(k, Some(2 * k)).unwrap();
        }
    }
}
