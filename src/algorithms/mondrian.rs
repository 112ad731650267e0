//! The Mondrian family (papers/scalable-microaggregation-ona-mona.txt §4, Algorithms 4–5;
//! cut rules fixed in DESIGN §4): recursive median cuts, O(n·d·log² n) time, O(n) memory
//! beyond the working copy.
//!
//! A part is cut only if it has more than 2k records, so every group has k..2k records. To
//! cut a part of m records, choose a direction, stable-sort the part on the projection of
//! its records onto it and put the first ⌊m/2⌋ records on the left; both children keep the
//! order they have in the sorted parent (the root is the input order). Directions:
//! * [`CutRule::Range`] (`mondrian`): the attribute with the widest range inside the part;
//! * [`CutRule::Variance`] (`mondrian-v`): the attribute with the largest sum of squares;
//! * [`CutRule::Variance2D`] (`mondrian-v2d`): also the projections (x_i ± x_j)/√2, i < j.
//!
//! Scores within a relative 1e-9 of the best are ties, won by the lowest index (single
//! attributes first, then pairs in (i, j, +/−) order). The two halves of a cut are
//! independent and run on the rayon pool; groups are labelled left to right, so the result
//! does not depend on the thread count.

use crate::parallel::Exec;
use crate::partition::Partition;
use crate::progress::Progress;
use crate::radix;
use std::cmp::Ordering;
use std::f64::consts::FRAC_1_SQRT_2;

/// How a part's cut direction is chosen.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CutRule {
    /// Widest range of a single attribute (LeFevre et al.'s Mondrian).
    Range,
    /// Largest sum of squared deviations of a single attribute (Mondrian-V).
    Variance,
    /// Largest sum of squared deviations among single attributes and the 45° projections
    /// (x_i ± x_j)/√2 (Mondrian-V2D).
    Variance2D,
}

/// Relative tolerance under which two direction scores are a tie.
const TIE: f64 = 1e-9;
/// Parts at least this large are sorted by radix (below, std's stable sort is faster).
const RADIX_PART: usize = 1 << 12;
/// Parts at least this large split their two halves across threads.
const PARALLEL_PART: usize = 1 << 14;

/// A cut direction: one attribute, or the pair (i, j) with sign ±1.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) enum Direction {
    Attribute(usize),
    Pair(usize, usize, f64),
}

impl Direction {
    /// The projection of a record onto this direction.
    #[inline]
    fn project(self, x: &[f64]) -> f64 {
        match self {
            Direction::Attribute(j) => x[j],
            Direction::Pair(i, j, sign) => (x[i] + sign * x[j]) * FRAC_1_SQRT_2,
        }
    }
}

/// The records of one part, kept physically in the part's current order (row-major, with
/// their original ids) so that every pass over a part streams through contiguous memory.
/// A cut writes the sorted part into the spare buffers, which then become the children's
/// data (ping-pong: no allocation and no copy back); `out` receives the ids of final parts.
pub(crate) struct Records<'a> {
    d: usize,
    rows: &'a mut [f64],
    ids: &'a mut [u32],
    spare_rows: &'a mut [f64],
    spare_ids: &'a mut [u32],
    keys: &'a mut [(f64, u32)],
    spare_keys: &'a mut [(f64, u32)],
    out: &'a mut [u32],
}

impl<'a> Records<'a> {
    fn len(&self) -> usize {
        self.ids.len()
    }

    fn rows(&self) -> impl Iterator<Item = &[f64]> + Clone {
        self.rows.chunks_exact(self.d)
    }

    fn split_at(self, mid: usize) -> (Records<'a>, Records<'a>) {
        let d = self.d;
        let (ra, rb) = self.rows.split_at_mut(mid * d);
        let (ia, ib) = self.ids.split_at_mut(mid);
        let (sra, srb) = self.spare_rows.split_at_mut(mid * d);
        let (sia, sib) = self.spare_ids.split_at_mut(mid);
        let (ka, kb) = self.keys.split_at_mut(mid);
        let (ska, skb) = self.spare_keys.split_at_mut(mid);
        let (oa, ob) = self.out.split_at_mut(mid);
        (
            Records {
                d,
                rows: ra,
                ids: ia,
                spare_rows: sra,
                spare_ids: sia,
                keys: ka,
                spare_keys: ska,
                out: oa,
            },
            Records {
                d,
                rows: rb,
                ids: ib,
                spare_rows: srb,
                spare_ids: sib,
                keys: kb,
                spare_keys: skb,
                out: ob,
            },
        )
    }
}

/// The first candidate whose score is within [`TIE`] of the best.
fn first_best(scores: impl Iterator<Item = (Direction, f64)> + Clone) -> Direction {
    let best = scores.clone().map(|(_, s)| s).fold(f64::NEG_INFINITY, f64::max);
    scores
        .into_iter()
        .find(|&(_, s)| s >= best - TIE * best.abs())
        .map(|(d, _)| d)
        .expect("at least one attribute")
}

/// The direction `rule` picks for a part.
fn choose_direction(rec: &Records<'_>, rule: CutRule) -> Direction {
    let d = rec.d;
    let attr = Direction::Attribute;
    match rule {
        CutRule::Range => {
            let mut lo = vec![f64::INFINITY; d];
            let mut hi = vec![f64::NEG_INFINITY; d];
            for x in rec.rows() {
                for j in 0..d {
                    lo[j] = lo[j].min(x[j]);
                    hi[j] = hi[j].max(x[j]);
                }
            }
            first_best((0..d).map(|j| (attr(j), hi[j] - lo[j])))
        }
        CutRule::Variance => {
            let scatter = Scatter::of(rec, false);
            first_best((0..d).map(|j| (attr(j), scatter.get(j, j))))
        }
        CutRule::Variance2D => {
            let scatter = Scatter::of(rec, true);
            let s = &scatter;
            let singles = (0..d).map(|j| (attr(j), s.get(j, j)));
            let pairs = (0..d).flat_map(move |i| {
                (i + 1..d).flat_map(move |j| {
                    [1.0, -1.0].map(|sign| {
                        let ss = 0.5 * (s.get(i, i) + s.get(j, j) + 2.0 * sign * s.get(i, j));
                        (Direction::Pair(i, j, sign), ss)
                    })
                })
            });
            first_best(singles.chain(pairs))
        }
    }
}

/// Sums of centered products of a part's attributes (the diagonal only, or all of them).
struct Scatter {
    d: usize,
    values: Vec<f64>,
}

impl Scatter {
    fn of(rec: &Records<'_>, full: bool) -> Scatter {
        let d = rec.d;
        let mut mean = vec![0.0; d];
        for x in rec.rows() {
            for (m, v) in mean.iter_mut().zip(x) {
                *m += v;
            }
        }
        mean.iter_mut().for_each(|m| *m /= rec.len() as f64);
        let mut values = vec![0.0; d * d];
        let mut dev = vec![0.0; d];
        for x in rec.rows() {
            for j in 0..d {
                dev[j] = x[j] - mean[j];
            }
            for i in 0..d {
                for j in i..if full { d } else { i + 1 } {
                    values[i * d + j] += dev[i] * dev[j];
                }
            }
        }
        Scatter { d, values }
    }

    #[inline]
    fn get(&self, i: usize, j: usize) -> f64 {
        self.values[i.min(j) * self.d + i.max(j)]
    }
}

/// Stable-sorts the part on the projection onto `direction` (its rows move to the spare
/// buffers, which become the data) and returns the size of the left half.
fn cut(rec: &mut Records<'_>, direction: Direction) -> usize {
    let d = rec.d;
    for (k, (i, x)) in rec.keys.iter_mut().zip(rec.rows.chunks_exact(d).enumerate()) {
        *k = (direction.project(x), i as u32);
    }
    // Both sorts are stable with the same ties; radix wins on large parts.
    if rec.len() >= RADIX_PART {
        radix::sort_stable(rec.keys, rec.spare_keys);
    } else {
        rec.keys.sort_by(|a, b| a.0.partial_cmp(&b.0).unwrap_or(Ordering::Equal));
    }
    for ((dst, id), &(_, i)) in
        rec.spare_rows.chunks_exact_mut(d).zip(rec.spare_ids.iter_mut()).zip(rec.keys.iter())
    {
        dst.copy_from_slice(&rec.rows[i as usize * d..][..d]);
        *id = rec.ids[i as usize];
    }
    std::mem::swap(&mut rec.rows, &mut rec.spare_rows);
    std::mem::swap(&mut rec.ids, &mut rec.spare_ids);
    rec.len() / 2
}

/// Recursively cuts the part while `keep_cutting(len)`; returns the sizes of the final
/// parts from left to right (their ids are then in `rec.ids`, in that order).
fn split_recursively(
    mut rec: Records<'_>,
    rule: CutRule,
    keep_cutting: &(impl Fn(usize) -> bool + Sync),
    exec: Exec,
) -> Vec<usize> {
    let m = rec.len();
    if !keep_cutting(m) {
        rec.out.copy_from_slice(rec.ids);
        return vec![m];
    }
    let direction = choose_direction(&rec, rule);
    let half = cut(&mut rec, direction);
    let (left, right) = rec.split_at(half);
    let (mut a, b) = if exec.is_parallel() && m >= PARALLEL_PART {
        rayon::join(
            || split_recursively(left, rule, keep_cutting, exec),
            || split_recursively(right, rule, keep_cutting, exec),
        )
    } else {
        (
            split_recursively(left, rule, keep_cutting, exec),
            split_recursively(right, rule, keep_cutting, exec),
        )
    };
    a.extend(b);
    a
}

/// Cuts the whole data set (`rows`: row-major n × d, by id) recursively while
/// `keep_cutting(len)`; returns the original ids in final order and the sizes of the final
/// parts, left to right.
pub(crate) fn cut_into_parts(
    mut rows: Vec<f64>,
    d: usize,
    rule: CutRule,
    keep_cutting: &(impl Fn(usize) -> bool + Sync),
    exec: Exec,
) -> (Vec<u32>, Vec<usize>) {
    let n = rows.len() / d;
    let mut ids: Vec<u32> = (0..n as u32).collect();
    let (mut spare_rows, mut spare_ids) = (vec![0.0; n * d], vec![0u32; n]);
    let (mut keys, mut spare_keys) = (vec![(0.0, 0u32); n], vec![(0.0, 0u32); n]);
    let mut out = vec![0u32; n];
    let rec = Records {
        d,
        rows: &mut rows,
        ids: &mut ids,
        spare_rows: &mut spare_rows,
        spare_ids: &mut spare_ids,
        keys: &mut keys,
        spare_keys: &mut spare_keys,
        out: &mut out,
    };
    let sizes = split_recursively(rec, rule, keep_cutting, exec);
    (out, sizes)
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
    let n = rows.len() / d;
    let (order, sizes) = cut_into_parts(rows, d, rule, &|m| m > 2 * k, exec);
    progress.add(n);
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

    #[test]
    fn two_d_rule_prefers_a_diagonal_when_the_data_lies_on_one() {
        let x = Array2::from_shape_fn((40, 2), |(i, j)| {
            i as f64 + if j == 0 { 0.0 } else { 0.1 * (i % 3) as f64 }
        });
        let (mut rows, mut spare): (Vec<f64>, Vec<f64>) =
            (x.iter().copied().collect(), vec![0.0; 80]);
        let (mut ids, mut spare_ids, mut out) = (vec![0u32; 40], vec![0u32; 40], vec![0u32; 40]);
        let (mut keys, mut spare_keys) = (vec![(0.0, 0u32); 40], vec![(0.0, 0u32); 40]);
        let rec = Records {
            d: 2,
            rows: &mut rows,
            ids: &mut ids,
            spare_rows: &mut spare,
            spare_ids: &mut spare_ids,
            keys: &mut keys,
            spare_keys: &mut spare_keys,
            out: &mut out,
        };
        assert_eq!(choose_direction(&rec, CutRule::Variance2D), Direction::Pair(0, 1, 1.0));
        assert_eq!(choose_direction(&rec, CutRule::Variance), Direction::Attribute(1));
    }

    proptest! {
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
