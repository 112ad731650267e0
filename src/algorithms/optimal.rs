//! The exact minimum-SSE k-partition of tiny data sets (n ≤ [`MAX_N`]), for checking
//! heuristics against the optimum (mhm paper Example 1 and Table 6).
//!
//! Dynamic programming over subsets: the cost of a set of remaining records is the best,
//! over the groups of k..2k−1 records that contain its lowest record (some optimal
//! partition has groups of at most 2k−1 records, and fixing the lowest record counts every
//! partition once), of the group's SSE plus the cost of what remains (empty or ≥ k
//! records). Memoized on bitmasks; exponential, hence the size limit.

use crate::dataset::WorkingSet;
use crate::float::Float;
use crate::partition::Partition;
use std::collections::HashMap;

/// The largest n the exact solver accepts.
pub const MAX_N: usize = 20;

struct Solver<'a> {
    d: usize,
    x: &'a [f64],
    k: usize,
    memo: HashMap<u32, (f64, u32)>,
}

impl Solver<'_> {
    fn sse(&self, group: u32) -> f64 {
        let mut sum = vec![0.0; self.d];
        let mut sq = 0.0;
        let mut m = 0.0;
        let mut g = group;
        while g != 0 {
            let i = g.trailing_zeros() as usize;
            g &= g - 1;
            let row = &self.x[i * self.d..][..self.d];
            for (s, v) in sum.iter_mut().zip(row) {
                *s += v;
                sq += v * v;
            }
            m += 1.0;
        }
        (sq - sum.iter().map(|s| s * s).sum::<f64>() / m).max(0.0)
    }

    /// Best cost of partitioning `mask`, and the group containing its lowest record.
    fn solve(&mut self, mask: u32) -> f64 {
        if mask == 0 {
            return 0.0;
        }
        if let Some(&(c, _)) = self.memo.get(&mask) {
            return c;
        }
        let lowest = mask & mask.wrapping_neg();
        let others: Vec<u32> =
            (0..32).map(|b| 1u32 << b).filter(|&b| b != lowest && mask & b != 0).collect();
        let m = mask.count_ones() as usize;
        let mut best = (f64::INFINITY, 0u32);
        for size in self.k..=(2 * self.k - 1).min(m) {
            let rest_len = m - size;
            if rest_len != 0 && rest_len < self.k {
                continue;
            }
            // every choice of size−1 companions among `others`
            let mut idx: Vec<usize> = (0..size - 1).collect();
            loop {
                let group = idx.iter().fold(lowest, |g, &i| g | others[i]);
                let cost = self.sse(group) + self.solve(mask & !group);
                if cost < best.0 {
                    best = (cost, group);
                }
                // next combination (lexicographic)
                let Some(pos) =
                    (0..idx.len()).rev().find(|&p| idx[p] < others.len() - (idx.len() - p))
                else {
                    break;
                };
                idx[pos] += 1;
                for q in pos + 1..idx.len() {
                    idx[q] = idx[q - 1] + 1;
                }
            }
        }
        self.memo.insert(mask, best);
        best.0
    }
}

/// The optimal partition (`1 ≤ k ≤ n ≤ MAX_N`, checked by the caller); groups are labelled
/// in order of their lowest record.
pub fn optimal<T: Float>(ws: &WorkingSet<T>, k: usize) -> Partition {
    let n = ws.n();
    let x = ws.rows_by_id();
    let mut s = Solver { d: ws.d(), x: &x, k, memo: HashMap::new() };
    let full = if n == 32 { u32::MAX } else { (1u32 << n) - 1 };
    s.solve(full);
    let mut labels = vec![0u32; n];
    let (mut mask, mut g) = (full, 0u32);
    while mask != 0 {
        let group = s.memo[&mask].1;
        for (i, l) in labels.iter_mut().enumerate() {
            if group & (1 << i) != 0 {
                *l = g;
            }
        }
        mask &= !group;
        g += 1;
    }
    Partition::new_unchecked(labels, g as usize)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dataset::Scaling;
    use crate::workflow::evaluation::Evaluation;
    use ndarray::{Array2, array};

    #[test]
    fn sme_example_of_the_mhm_paper() {
        // Table 1: surface (m²) and employees of 11 SMEs, standardized, k = 3.
        let x = array![
            [790.0, 55.0],
            [710.0, 44.0],
            [730.0, 32.0],
            [810.0, 17.0],
            [950.0, 3.0],
            [510.0, 25.0],
            [400.0, 45.0],
            [330.0, 50.0],
            [510.0, 5.0],
            [760.0, 52.0],
            [50.0, 12.0]
        ];
        let s = Scaling::fit(x.view(), true);
        let ws = WorkingSet::<f64>::new(x.view(), &s).unwrap();
        let p = optimal(&ws, 3);
        let e = Evaluation::new(x.view(), &p, &s).unwrap();
        assert!((e.sse - 7.4848).abs() < 1e-4, "{}", e.sse);
        assert!((e.sst - 22.0).abs() < 1e-9);
        // {A,B,C,J}, {D,E,I}, {F,G,H,K}
        let l = p.labels();
        assert!([0, 1, 2, 9].iter().all(|&i| l[i] == l[0]));
        assert!([3, 4, 8].iter().all(|&i| l[i] == l[3]));
        assert!([5, 6, 7, 10].iter().all(|&i| l[i] == l[5]));
    }

    #[test]
    fn never_worse_than_any_heuristic_on_small_random_sets() {
        let x = Array2::from_shape_fn((9, 2), |(i, j)| ((i * 7 + j * 3) % 11) as f64);
        let s = Scaling::fit(x.view(), true);
        let ws = WorkingSet::<f64>::new(x.view(), &s).unwrap();
        let sse = |p: &Partition| Evaluation::new(x.view(), p, &s).unwrap().sse;
        let best = sse(&optimal(&ws, 2));
        let mdav = crate::algorithms::mdav::mdav(
            ws.clone(),
            2,
            Default::default(),
            crate::parallel::Exec::SEQUENTIAL,
            &crate::progress::Progress::new(),
        );
        assert!(best <= sse(&mdav) + 1e-12);
    }
}
