//! V-MDAV, variable-size MDAV (Solanas & Martínez-Ballesté 2006), with the extension rule
//! stated in issue #3:
//!
//! While ≥ 2k records are unassigned: e = the record farthest from the centroid of the
//! unassigned records; G = e and its k−1 nearest unassigned records. Then, while G has
//! fewer than 2k−1 records, let u be the unassigned record nearest to G (d_in(u) = its
//! distance to the nearest member of G) and d_out(u) its distance to the nearest other
//! unassigned record: if d_in(u) < γ·d_out(u), u joins G, otherwise G is closed. Then
//! k..2k−1 remaining records form one group; each of fewer than k leftovers (in id order)
//! joins the group with the nearest centroid (so a group may exceed 2k−1 there). Euclidean
//! distances, ties to the lowest id. O(n²·d) time (the extension scans), O(n·d) memory.

use crate::dataset::WorkingSet;
use crate::float::Float;
use crate::partition::Partition;
use crate::progress::Progress;

/// Runs V-MDAV with extension factor `gamma` (≥ 0) on a working set (`1 ≤ k ≤ n`).
pub fn vmdav<T: Float>(ws: &WorkingSet<T>, k: usize, gamma: f64, progress: &Progress) -> Partition {
    let (n, d) = (ws.n(), ws.d());
    let x = ws.rows_by_id();
    let row = |a: usize| &x[a * d..][..d];
    let dist2 =
        |a: usize, b: &[f64]| row(a).iter().zip(b).map(|(u, v)| (u - v).powi(2)).sum::<f64>();
    let mut free = vec![true; n];
    let mut labels = vec![u32::MAX; n];
    let mut groups: Vec<Vec<usize>> = Vec::new();
    let mut left = n;
    // the free record minimizing `score`, ties to the lowest id
    let argmin = |free: &[bool], score: &dyn Fn(usize) -> f64| -> Option<usize> {
        (0..n).filter(|&a| free[a]).min_by(|&a, &b| score(a).total_cmp(&score(b)).then(a.cmp(&b)))
    };
    while left >= 2 * k {
        let mut c = vec![0.0; d];
        for a in (0..n).filter(|&a| free[a]) {
            for (s, v) in c.iter_mut().zip(row(a)) {
                *s += v / left as f64;
            }
        }
        let e = argmin(&free, &|a| -dist2(a, &c)).expect("records left");
        free[e] = false;
        let mut g = vec![e];
        for _ in 1..k {
            let next = argmin(&free, &|a| dist2(a, row(e))).expect("k records left");
            free[next] = false;
            g.push(next);
        }
        // d_in of every free record: distance² to its nearest member of g
        let mut din: Vec<f64> = (0..n)
            .map(|a| g.iter().map(|&m| dist2(a, row(m))).fold(f64::INFINITY, f64::min))
            .collect();
        while g.len() < 2 * k - 1 && left - g.len() > 0 {
            let u = argmin(&free, &|a| din[a]).expect("records left");
            free[u] = false;
            let dout = argmin(&free, &|a| dist2(a, row(u))).map(|o| dist2(o, row(u)));
            if dout.is_some_and(|o| din[u].sqrt() < gamma * o.sqrt()) {
                g.push(u);
                for (a, da) in din.iter_mut().enumerate() {
                    *da = da.min(dist2(a, row(u)));
                }
            } else {
                free[u] = true;
                break;
            }
        }
        left -= g.len();
        progress.add(g.len());
        for &a in &g {
            labels[a] = groups.len() as u32;
        }
        groups.push(g);
    }
    let rest: Vec<usize> = (0..n).filter(|&a| free[a]).collect();
    if rest.len() >= k {
        for &a in &rest {
            labels[a] = groups.len() as u32;
        }
        groups.push(rest);
    } else {
        let centroids: Vec<Vec<f64>> = groups
            .iter()
            .map(|g| {
                (0..d).map(|j| g.iter().map(|&a| row(a)[j]).sum::<f64>() / g.len() as f64).collect()
            })
            .collect();
        for a in rest {
            let g = (0..groups.len())
                .min_by(|&p, &q| {
                    dist2(a, &centroids[p]).total_cmp(&dist2(a, &centroids[q])).then(p.cmp(&q))
                })
                .expect("k <= n: a group exists");
            labels[a] = g as u32;
            groups[g].push(a);
        }
    }
    progress.add(left);
    Partition::new_unchecked(labels, groups.len())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dataset::Scaling;
    use ndarray::Array2;
    use proptest::prelude::*;

    fn run(x: &Array2<f64>, k: usize, gamma: f64) -> Partition {
        let ws = WorkingSet::<f64>::new(x.view(), &Scaling::fit(x.view(), false)).unwrap();
        vmdav(&ws, k, gamma, &Progress::new())
    }

    #[test]
    fn extends_a_group_with_a_close_record_only_when_gamma_allows() {
        // 0,1 | 1.5 (close to the first group) | 10, 11, 20, 21
        let x =
            Array2::from_shape_vec((7, 1), vec![0.0, 1.0, 1.5, 10.0, 11.0, 20.0, 21.0]).unwrap();
        assert_eq!(run(&x, 2, 0.0).group_sizes(), vec![2, 2, 3]);
        let wide = run(&x, 2, 10.0);
        wide.check(2, None).unwrap();
        assert!(wide.group_sizes().contains(&3));
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(48))]
        #[test]
        fn valid_groups(values in prop::collection::vec(-9i8..9, 2..200), k in 1usize..6, gamma in 0.0f64..3.0) {
            let n = values.len();
            prop_assume!(n >= k);
            let x = Array2::from_shape_fn((n, 1), |(i, _)| values[i] as f64);
            run(&x, k, gamma).check(k, None).unwrap();
        }
    }
}
