//! MHM, the multivariate Hansen–Mukherjee algorithm (papers/data-oriented-microaggregation-
//! mhm.txt §4.1), the optimal univariate partition, and the MDAV path construction (§4.2.3).
//!
//! MHM returns the k-partition with the lowest SSE among those whose groups are runs of
//! k..2k−1 consecutive records of a given order: a shortest path from node 0 to node n
//! where arc (i, j), k ≤ j − i ≤ 2k − 1, costs the SSE of records i+1..j. With prefix sums
//! of the records and of their squared norms an arc costs O(d), so MHM is O(n·k·d) time and
//! O(n·d) memory. Ties between paths go to the one whose last group is largest (the first
//! minimum found scanning i upwards). On the sorted records of a single attribute this is
//! the optimal univariate partition (Hansen & Mukherjee 2003).
//!
//! Any fixed-size partition whose groups are consecutive in the order is one of the paths,
//! so `mdav-mhm` never has a larger SSE than `mdav` on the same data.

use super::mdav::{MdavOptions, mdav};
use crate::dataset::WorkingSet;
use crate::float::Float;
use crate::parallel::Exec;
use crate::partition::Partition;
use crate::progress::Progress;

/// The best partition into runs of k..2k−1 consecutive records of `order` (original ids).
pub fn mhm_on_order<T: Float>(ws: &WorkingSet<T>, order: &[u32], k: usize) -> Partition {
    let (n, d) = (order.len(), ws.d());
    let row = |id: u32| -> Vec<f64> {
        ws.row(ws.position_of(id)).into_iter().map(Float::as_f64).collect()
    };
    // prefix sums of records (d per entry) and of squared norms
    let mut s1 = vec![0.0; (n + 1) * d];
    let mut s2 = vec![0.0; n + 1];
    for (h, &id) in order.iter().enumerate() {
        let x = row(id);
        for j in 0..d {
            s1[(h + 1) * d + j] = s1[h * d + j] + x[j];
        }
        s2[h + 1] = s2[h] + x.iter().map(|v| v * v).sum::<f64>();
    }
    let sse = |i: usize, j: usize| -> f64 {
        let m = (j - i) as f64;
        let norm2: f64 = (0..d).map(|t| (s1[j * d + t] - s1[i * d + t]).powi(2)).sum();
        ((s2[j] - s2[i]) - norm2 / m).max(0.0)
    };
    let mut best = vec![f64::INFINITY; n + 1];
    let mut from = vec![usize::MAX; n + 1];
    best[0] = 0.0;
    for j in k..=n {
        for i in j.saturating_sub(2 * k - 1)..=j - k {
            if best[i].is_finite() {
                let c = best[i] + sse(i, j);
                if c < best[j] {
                    best[j] = c;
                    from[j] = i;
                }
            }
        }
    }
    // Walk the path back, then label groups in path order.
    let mut cuts = vec![n];
    while let Some(&j) = cuts.last().filter(|&&j| j > 0) {
        cuts.push(from[j]);
    }
    cuts.reverse();
    let mut labels = vec![0u32; n];
    for (g, w) in cuts.windows(2).enumerate() {
        for &id in &order[w[0]..w[1]] {
            labels[id as usize] = g as u32;
        }
    }
    Partition::new_unchecked(labels, cuts.len() - 1)
}

/// The optimal partition of one-attribute data: sort (ties by id), then MHM.
pub fn univariate<T: Float>(ws: &WorkingSet<T>, k: usize) -> Partition {
    let mut order: Vec<u32> = (0..ws.n() as u32).collect();
    let col = ws.column(0);
    order.sort_by(|&a, &b| {
        col[ws.position_of(a)]
            .partial_cmp(&col[ws.position_of(b)])
            .unwrap_or(std::cmp::Ordering::Equal)
    });
    mhm_on_order(ws, &order, k)
}

/// The MDAV path (mhm paper §4.2.3 steps 6–7): MDAV's groups, ordered by nearest-centroid
/// chaining from the first group; inside the first group its seed (the member farthest
/// from the data's centroid) then the rest by distance to it; inside every other group the
/// member nearest to the previous group's centroid, then the rest by distance to it.
pub fn mdav_path<T: Float>(ws: &WorkingSet<T>, k: usize, exec: Exec) -> Vec<u32> {
    let groups_part = mdav(ws.clone(), k, MdavOptions::default(), exec, &Progress::new());
    let row = |id: u32| -> Vec<f64> {
        ws.row(ws.position_of(id)).into_iter().map(Float::as_f64).collect()
    };
    let dist2 = |a: &[f64], b: &[f64]| a.iter().zip(b).map(|(x, y)| (x - y).powi(2)).sum::<f64>();
    let mut groups: Vec<Vec<u32>> = vec![Vec::new(); groups_part.n_groups()];
    for (id, &l) in groups_part.labels().iter().enumerate() {
        groups[l as usize].push(id as u32);
    }
    let centroid = |g: &[u32]| -> Vec<f64> {
        let mut c = vec![0.0; ws.d()];
        for &id in g {
            for (s, v) in c.iter_mut().zip(row(id)) {
                *s += v;
            }
        }
        c.iter().map(|s| s / g.len() as f64).collect()
    };
    let centroids: Vec<Vec<f64>> = groups.iter().map(|g| centroid(g)).collect();
    let center = centroid(&(0..ws.n() as u32).collect::<Vec<_>>());
    // group-level NPN path from group 0 (ties to the lowest group id)
    let mut left: Vec<usize> = (1..groups.len()).collect();
    let mut path = vec![0usize];
    while !left.is_empty() {
        let cur = &centroids[*path.last().expect("non-empty")];
        let (i, _) = left
            .iter()
            .enumerate()
            .min_by(|a, b| {
                dist2(cur, &centroids[*a.1])
                    .total_cmp(&dist2(cur, &centroids[*b.1]))
                    .then(a.1.cmp(b.1))
            })
            .expect("non-empty");
        path.push(left.remove(i));
    }
    // point-level order
    let mut order = Vec::with_capacity(ws.n());
    for (step, &g) in path.iter().enumerate() {
        let members = &groups[g];
        let anchor = if step == 0 { center.clone() } else { centroids[path[step - 1]].clone() };
        // first point: farthest from the data's centroid (group 0) or nearest to the anchor
        let key = |id: &u32| dist2(&row(*id), &anchor);
        let first = *if step == 0 {
            members.iter().max_by(|a, b| key(a).total_cmp(&key(b)).then(b.cmp(a)))
        } else {
            members.iter().min_by(|a, b| key(a).total_cmp(&key(b)).then(a.cmp(b)))
        }
        .expect("groups are not empty");
        let f = row(first);
        let mut rest: Vec<u32> = members.iter().copied().filter(|&id| id != first).collect();
        rest.sort_by(|a, b| dist2(&row(*a), &f).total_cmp(&dist2(&row(*b), &f)).then(a.cmp(b)));
        order.push(first);
        order.extend(rest);
    }
    order
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dataset::Scaling;
    use crate::partition::Evaluation;
    use ndarray::Array2;
    use proptest::prelude::*;

    fn ws(x: &Array2<f64>) -> WorkingSet<f64> {
        WorkingSet::new(x.view(), &Scaling::fit(x.view(), false)).unwrap()
    }

    /// Minimum SSE over all partitions of sorted 1-D values into runs of k..2k−1 — and,
    /// for d = 1, over all partitions at all (contiguity of optimal groups).
    fn brute_force_1d(v: &[f64], k: usize) -> f64 {
        fn rec(v: &[f64], k: usize) -> f64 {
            if v.is_empty() {
                return 0.0;
            }
            (k..=(2 * k - 1).min(v.len()))
                .filter(|&s| v.len() - s == 0 || v.len() - s >= k)
                .map(|s| {
                    let g = &v[..s];
                    let m = g.iter().sum::<f64>() / s as f64;
                    g.iter().map(|x| (x - m).powi(2)).sum::<f64>() + rec(&v[s..], k)
                })
                .fold(f64::INFINITY, f64::min)
        }
        let mut s = v.to_vec();
        s.sort_by(f64::total_cmp);
        rec(&s, k)
    }

    proptest! {
        #[test]
        fn univariate_equals_brute_force(values in prop::collection::vec(-20i32..20, 1..16), k in 1usize..5) {
            prop_assume!(values.len() >= k);
            let x = Array2::from_shape_fn((values.len(), 1), |(i, _)| values[i] as f64 / 3.0);
            let w = ws(&x);
            let p = univariate(&w, k);
            p.check(k, Some(2 * k - 1)).unwrap();
            let sse = Evaluation::new(x.view(), &p, &Scaling::fit(x.view(), false)).unwrap().sse;
            let col: Vec<f64> = x.column(0).to_vec();
            prop_assert!((sse - brute_force_1d(&col, k)).abs() < 1e-9);
        }

        #[test]
        fn mdav_mhm_never_worse_than_mdav(values in prop::collection::vec(-30i32..30, 4..400), k in 1usize..6, d in 1usize..4) {
            let n = values.len() / d;
            prop_assume!(n >= k);
            let x = Array2::from_shape_fn((n, d), |(i, j)| values[i * d + j] as f64 / 7.0);
            let w = ws(&x);
            let s = Scaling::fit(x.view(), false);
            let order = mdav_path(&w, k, Exec::SEQUENTIAL);
            let combined = mhm_on_order(&w, &order, k);
            combined.check(k, Some(2 * k - 1)).unwrap();
            let base = mdav(w.clone(), k, MdavOptions::default(), Exec::SEQUENTIAL, &Progress::new());
            let sse = |p: &Partition| Evaluation::new(x.view(), p, &s).unwrap().sse;
            prop_assert!(sse(&combined) <= sse(&base) * (1.0 + 1e-12) + 1e-9);
        }
    }
}
