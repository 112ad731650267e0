//! MHM, the multivariate Hansen–Mukherjee algorithm (papers/data-oriented-microaggregation-
//! mhm.txt §4.1), the optimal univariate partition, and the path constructions of §4.2
//! (NPN, and the group-level + point-level paths through MD, MDAV and CBFS groups).
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
//! so `x-mhm` never has a larger SSE than `x` (x = md, mdav, cbfs) on the same data.

use super::md::md_groups;
use crate::dataset::WorkingSet;
use crate::float::Float;
use crate::index::IndexChoice;
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

/// The groups of a partition, as lists of ids, in label order.
fn groups_of(p: &Partition) -> Vec<Vec<u32>> {
    let mut groups = vec![Vec::new(); p.n_groups()];
    for (id, &l) in p.labels().iter().enumerate() {
        groups[l as usize].push(id as u32);
    }
    groups
}

/// Rows as f64 by id, and squared distances between them.
struct Geometry {
    d: usize,
    x: Vec<f64>,
}

impl Geometry {
    fn new<T: Float>(ws: &WorkingSet<T>) -> Self {
        Geometry { d: ws.d(), x: ws.rows_by_id() }
    }

    fn row(&self, id: u32) -> &[f64] {
        &self.x[id as usize * self.d..][..self.d]
    }

    fn dist2(a: &[f64], b: &[f64]) -> f64 {
        a.iter().zip(b).map(|(x, y)| (x - y).powi(2)).sum()
    }

    fn centroid(&self, ids: &[u32]) -> Vec<f64> {
        let mut c = vec![0.0; self.d];
        for &id in ids {
            for (s, v) in c.iter_mut().zip(self.row(id)) {
                *s += v;
            }
        }
        c.iter().map(|s| s / ids.len() as f64).collect()
    }

    /// The id in `ids` farthest from `to` (ties to the lowest id).
    fn farthest(&self, ids: impl Iterator<Item = u32>, to: &[f64]) -> Option<u32> {
        ids.max_by(|&a, &b| {
            Self::dist2(self.row(a), to).total_cmp(&Self::dist2(self.row(b), to)).then(b.cmp(&a))
        })
    }

    /// The id in `ids` nearest to `to` (ties to the lowest id).
    fn nearest(&self, ids: impl Iterator<Item = u32>, to: &[f64]) -> Option<u32> {
        ids.min_by(|&a, &b| {
            Self::dist2(self.row(a), to).total_cmp(&Self::dist2(self.row(b), to)).then(a.cmp(&b))
        })
    }
}

/// The path of §4.2.2 steps 5–6 / §4.2.3 steps 6–7 through fixed-size groups: groups in
/// nearest-centroid (NPN) order from the first group; inside the first group `first`, then
/// the rest by distance to it; inside every other group the member nearest to the previous
/// group's centroid, then the rest by distance to that member.
pub fn group_path<T: Float>(ws: &WorkingSet<T>, groups: &[Vec<u32>], first: u32) -> Vec<u32> {
    let geo = Geometry::new(ws);
    let centroids: Vec<Vec<f64>> = groups.iter().map(|g| geo.centroid(g)).collect();
    let mut left: Vec<usize> = (1..groups.len()).collect();
    let mut seq = vec![0usize];
    while !left.is_empty() {
        let cur = &centroids[*seq.last().expect("non-empty")];
        let near = |g: &usize| Geometry::dist2(cur, &centroids[*g]);
        let (i, _) = left
            .iter()
            .enumerate()
            .min_by(|a, b| near(a.1).total_cmp(&near(b.1)).then(a.1.cmp(b.1)))
            .expect("non-empty");
        seq.push(left.remove(i));
    }
    let mut order = Vec::with_capacity(ws.n());
    for (step, &g) in seq.iter().enumerate() {
        let lead = if step == 0 {
            first
        } else {
            geo.nearest(groups[g].iter().copied(), &centroids[seq[step - 1]]).expect("non-empty")
        };
        let l = geo.row(lead).to_vec();
        let mut rest: Vec<u32> = groups[g].iter().copied().filter(|&id| id != lead).collect();
        rest.sort_by(|&a, &b| {
            Geometry::dist2(geo.row(a), &l)
                .total_cmp(&Geometry::dist2(geo.row(b), &l))
                .then(a.cmp(&b))
        });
        order.push(lead);
        order.extend(rest);
    }
    order
}

/// The MDAV and CBFS paths of §4.2.3: the groups of `grouping` (MDAV's or CBFS's), the
/// first one led by its seed (the member farthest from the data's centroid).
pub fn grouping_path<T: Float>(ws: &WorkingSet<T>, grouping: &Partition) -> Vec<u32> {
    path_from_centroid_seed(ws, &groups_of(grouping))
}

/// The MD path of §4.2.2: MD's groups (counted in `progress`), the first one led by its
/// seed r.
pub fn md_path<T: Float>(ws: &WorkingSet<T>, k: usize, progress: &Progress) -> Vec<u32> {
    let groups = md_groups(ws, k, IndexChoice::Auto, progress);
    group_path(ws, &groups, groups[0][0])
}

fn path_from_centroid_seed<T: Float>(ws: &WorkingSet<T>, groups: &[Vec<u32>]) -> Vec<u32> {
    let geo = Geometry::new(ws);
    let all: Vec<u32> = (0..ws.n() as u32).collect();
    let center = geo.centroid(&all);
    let seed = geo.farthest(groups[0].iter().copied(), &center).expect("groups are not empty");
    group_path(ws, groups, seed)
}

/// The NPN path (§4.2.1): start at the record farthest from the centroid, then always go
/// to the nearest record not yet on the path (ties to the lowest id). O(n²·d). Counts the
/// records on the path in `progress`.
pub fn npn_path<T: Float>(ws: &WorkingSet<T>, progress: &Progress) -> Vec<u32> {
    let geo = Geometry::new(ws);
    let n = ws.n();
    let all: Vec<u32> = (0..n as u32).collect();
    let center = geo.centroid(&all);
    let mut free = vec![true; n];
    let mut cur = geo.farthest(all.iter().copied(), &center).expect("n >= 1");
    let mut order = vec![cur];
    free[cur as usize] = false;
    while order.len() < n {
        let here = geo.row(cur).to_vec();
        cur =
            geo.nearest((0..n as u32).filter(|&b| free[b as usize]), &here).expect("records left");
        free[cur as usize] = false;
        order.push(cur);
        progress.add(1);
    }
    order
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::algorithms::mdav::{MdavOptions, mdav};
    use crate::dataset::Scaling;
    use crate::parallel::Exec;
    use crate::workflow::evaluation::Evaluation;
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
            let base = mdav(w.clone(), k, MdavOptions::default(), Exec::SEQUENTIAL, &Progress::new());
            let combined = mhm_on_order(&w, &grouping_path(&w, &base), k);
            combined.check(k, Some(2 * k - 1)).unwrap();
            let sse = |p: &Partition| Evaluation::new(x.view(), p, &s).unwrap().sse;
            prop_assert!(sse(&combined) <= sse(&base) * (1.0 + 1e-12) + 1e-9);
        }
    }
}
