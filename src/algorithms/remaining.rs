//! The unassigned records of a fixed-size algorithm (MDAV and its relatives), kept as a
//! contiguous prefix `0..m` of the working set (DESIGN §3, "performance principles").
//!
//! When a group is formed its records are swapped to the end of the prefix and the prefix
//! shrinks, so every scan is a straight pass over contiguous memory with no index
//! indirection. A score buffer aligned with the positions is kept (and swapped along), so
//! distances to a reference can be reused after a group is removed (F-MDAV §3.2).

use crate::dataset::WorkingSet;
use crate::float::Float;
use crate::kernels::{self, Metric, Nearest, Pick, Selection};
use crate::parallel::Exec;
use crate::partition::Partition;
use crate::progress::Progress;

/// The state shared by prefix-shrinking algorithms.
pub struct Remaining<'a, T> {
    ws: WorkingSet<T>,
    m: usize,
    scores: Vec<T>,
    labels: Vec<u32>,
    n_groups: u32,
    sum: Vec<f64>,
    exec: Exec,
    progress: &'a Progress,
}

impl<'a, T: Float> Remaining<'a, T> {
    /// All records of `ws`, none assigned.
    pub fn new(ws: WorkingSet<T>, exec: Exec, progress: &'a Progress) -> Self {
        let n = ws.n();
        let sum = ws.prefix_sums(n);
        Remaining {
            ws,
            m: n,
            scores: vec![T::zero(); n],
            labels: vec![0; n],
            n_groups: 0,
            sum,
            exec,
            progress,
        }
    }

    /// Number of unassigned records.
    #[inline]
    pub fn len(&self) -> usize {
        self.m
    }

    /// True when every record is assigned.
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.m == 0
    }

    /// The record at position `p`.
    pub fn row(&self, p: usize) -> Vec<T> {
        self.ws.row(p)
    }

    /// Position of the unassigned record with the lowest original id.
    pub fn lowest_id_position(&self) -> usize {
        (0..self.m)
            .min_by_key(|&p| self.ws.ids()[p])
            .expect("no unassigned record")
    }

    /// Centroid of the unassigned records: from the running sum (F-MDAV §3.4, "centroid by
    /// subtraction"), or recomputed from scratch (the traditional way).
    pub fn centroid(&self, by_subtraction: bool) -> Vec<T> {
        let recomputed;
        let sum = if by_subtraction {
            &self.sum
        } else {
            recomputed = self.ws.prefix_sums(self.m);
            &recomputed
        };
        sum.iter()
            .map(|s| T::from_f64_lossy(s / self.m as f64))
            .collect()
    }

    /// Scores every unassigned record against `reference` (kept for reuse) and returns the
    /// farthest one.
    pub fn score_and_farthest(&mut self, reference: &[T], metric: Metric) -> Pick<T> {
        let ws = &self.ws;
        self.exec
            .map_chunks_mut(
                &mut self.scores[..self.m],
                |off, out| {
                    kernels::fill_scores(ws, off, reference, metric, out);
                    kernels::farthest(out, ws.ids(), off).expect("chunk is not empty")
                },
                Pick::farther,
            )
            .expect("no unassigned record")
    }

    /// The farthest unassigned record according to the scores already in the buffer
    /// (F-MDAV §3.2: reuse of the distances to P for Q).
    pub fn farthest_by_kept_scores(&self) -> Pick<T> {
        let ids = self.ws.ids();
        self.exec
            .map_chunks(
                &self.scores[..self.m],
                |off, vals| kernels::farthest(vals, ids, off).expect("chunk is not empty"),
                Pick::farther,
            )
            .expect("no unassigned record")
    }

    /// Forms a group of `seed` and its `size − 1` nearest unassigned records by the scores in
    /// the buffer (ties to the lowest id), labels it and removes it from the prefix.
    pub fn take_group(&mut self, seed: usize, size: usize, selection: Selection) {
        let count = size - 1;
        let ids = self.ws.ids();
        let mut members = match selection {
            Selection::Partial => self
                .exec
                .map_chunks(
                    &self.scores[..self.m],
                    |off, vals| {
                        let mut sel = Nearest::new(count);
                        sel.scan(vals, ids, off, seed);
                        sel
                    },
                    Nearest::merge,
                )
                .map_or_else(Vec::new, Nearest::into_positions),
            Selection::FullSort => {
                kernels::nearest_by_sort(&self.scores[..self.m], ids, seed, count)
            }
        };
        members.push(seed);
        self.remove_group(&members);
    }

    /// Labels every unassigned record as one last group.
    pub fn take_rest(&mut self) {
        let all: Vec<usize> = (0..self.m).collect();
        self.remove_group(&all);
    }

    /// Labels the records at `positions` as a new group and swaps them to the tail of the
    /// prefix, which then shrinks by their number.
    fn remove_group(&mut self, positions: &[usize]) {
        let g = positions.len();
        let tail = self.m - g;
        let mut in_tail = vec![false; g];
        let mut outside = Vec::with_capacity(g);
        for &p in positions {
            if p >= tail {
                in_tail[p - tail] = true;
            } else {
                outside.push(p);
            }
        }
        let holes = in_tail
            .iter()
            .enumerate()
            .filter(|(_, t)| !**t)
            .map(|(i, _)| tail + i);
        for (p, h) in outside.into_iter().zip(holes) {
            self.ws.swap(p, h);
            self.scores.swap(p, h);
        }
        for p in tail..self.m {
            self.labels[self.ws.ids()[p] as usize] = self.n_groups;
            self.ws.subtract_row_from(p, &mut self.sum);
        }
        self.n_groups += 1;
        self.m = tail;
        self.progress.add(g);
    }

    /// The finished partition (all records must be assigned).
    pub fn into_partition(self) -> Partition {
        debug_assert_eq!(self.m, 0);
        Partition::new_unchecked(self.labels, self.n_groups as usize)
    }
}
