//! A textbook MDAV, for tests only: the algorithm as f-mdav-fast-mdav.txt §2 (Algorithm 1)
//! and docs/algorithms.md state it, on plain vectors of rows, with none of the engine's
//! pool, norm order, kernels, index or threads. Every exact mode of the engine must give
//! its partition on data without distance ties; being independent, it catches an error
//! that the modes of one engine would share.

/// Squared Euclidean distance of two rows.
fn distance(a: &[f64], b: &[f64]) -> f64 {
    a.iter().zip(b).map(|(x, y)| (x - y) * (x - y)).sum()
}

/// The mean of the rows `ids` of `x`.
fn centroid(x: &[Vec<f64>], ids: &[usize]) -> Vec<f64> {
    let mut c = vec![0.0; x[0].len()];
    for &i in ids {
        for (cj, xj) in c.iter_mut().zip(&x[i]) {
            *cj += xj;
        }
    }
    c.iter().map(|s| s / ids.len() as f64).collect()
}

/// The record of `ids` farthest from `r` (ties to the lowest id).
fn farthest(x: &[Vec<f64>], ids: &[usize], r: &[f64]) -> usize {
    let (mut best, mut best_distance) = (ids[0], distance(&x[ids[0]], r));
    for &i in ids {
        let di = distance(&x[i], r);
        if di > best_distance || (di == best_distance && i < best) {
            (best, best_distance) = (i, di);
        }
    }
    best
}

/// Takes `seed` and its `k − 1` nearest other records (ties to the lowest id) out of
/// `remaining`, and returns them.
fn take_group(x: &[Vec<f64>], remaining: &mut Vec<usize>, seed: usize, k: usize) -> Vec<usize> {
    let mut others: Vec<(f64, usize)> =
        remaining.iter().filter(|&&i| i != seed).map(|&i| (distance(&x[i], &x[seed]), i)).collect();
    others.sort_by(|a, b| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1)));
    let mut group = vec![seed];
    group.extend(others[..k - 1].iter().map(|&(_, i)| i));
    remaining.retain(|i| !group.contains(i));
    group
}

/// The MDAV partition of the rows `x` (n ≥ k ≥ 1) as group labels in order of creation:
/// while 3k or more records remain, the record P farthest from their centroid takes its
/// k − 1 nearest, then the record Q farthest from P does; then 2k..3k − 1 remaining records
/// make one group around the one farthest from their centroid and one of the rest, and
/// k..2k − 1 make one group.
pub(crate) fn textbook_mdav(x: &[Vec<f64>], k: usize) -> Vec<u32> {
    let mut remaining: Vec<usize> = (0..x.len()).collect();
    let mut groups: Vec<Vec<usize>> = Vec::new();
    while remaining.len() >= 3 * k {
        let p = farthest(x, &remaining, &centroid(x, &remaining));
        groups.push(take_group(x, &mut remaining, p, k));
        let q = farthest(x, &remaining, &x[p]);
        groups.push(take_group(x, &mut remaining, q, k));
    }
    if remaining.len() >= 2 * k {
        let p = farthest(x, &remaining, &centroid(x, &remaining));
        groups.push(take_group(x, &mut remaining, p, k));
    }
    groups.push(remaining);
    let mut labels = vec![0; x.len()];
    for (g, members) in groups.iter().enumerate() {
        for &i in members {
            labels[i] = g as u32;
        }
    }
    labels
}

#[cfg(test)]
mod tests {
    use super::textbook_mdav;
    use crate::algorithms::mdav::{MdavOptions, mdav};
    use crate::algorithms::test_shapes::{cases, shaped};
    use crate::dataset::{Scaling, WorkingSet};
    use crate::float::Float;
    use crate::index::IndexChoice;
    use crate::parallel::Parallelism;
    use crate::progress::Progress;
    use ndarray::Array2;
    use proptest::prelude::*;

    /// The exact modes of the engine: the traditional MDAV, each F-MDAV strategy alone and
    /// all of them, the spatial index, the compact scan.
    fn exact_modes() -> Vec<MdavOptions> {
        let t = MdavOptions::TRADITIONAL;
        let all = MdavOptions {
            compact_scan: IndexChoice::Off,
            spatial_index: IndexChoice::Off,
            ..Default::default()
        };
        vec![
            t,
            MdavOptions { algebraic_distance: true, ..t },
            MdavOptions { distance_reuse: true, ..t },
            MdavOptions { partial_sort: true, ..t },
            MdavOptions { centroid_by_subtraction: true, ..t },
            MdavOptions { algebraic_distance: true, norm_pruning: true, ..t },
            MdavOptions { spatial_index: IndexChoice::On, ..t },
            all,
            MdavOptions { spatial_index: IndexChoice::On, ..all },
            MdavOptions { compact_scan: IndexChoice::On, ..all },
            MdavOptions::default(),
        ]
    }

    /// The engine's labels in `T` precision on `jobs` threads (data centred, not scaled).
    fn engine<T: Float>(x: &Array2<f64>, k: usize, opts: MdavOptions, jobs: i64) -> Vec<u32> {
        let ws = WorkingSet::<T>::new(x.view(), &Scaling::fit(x.view(), false)).unwrap();
        let par = Parallelism::from_n_jobs(jobs).unwrap();
        par.install(|e| mdav(ws, k, opts, e, &Progress::new())).unwrap().labels().to_vec()
    }

    fn rows(x: &Array2<f64>) -> Vec<Vec<f64>> {
        x.rows().into_iter().map(|r| r.to_vec()).collect()
    }

    #[test]
    fn textbook_by_hand() {
        // 0,1,2 | 10,11,12 | 20,21,22 with k = 3: P = 0 (tied with 22, lowest id), Q = 22.
        let x: Vec<Vec<f64>> =
            [0.0, 1.0, 2.0, 10.0, 11.0, 12.0, 20.0, 21.0, 22.0].iter().map(|&v| vec![v]).collect();
        assert_eq!(textbook_mdav(&x, 3), vec![0, 0, 0, 2, 2, 2, 1, 1, 1]);
        // 2k <= 5 < 3k: a group of 2 around the record farthest from the centroid, then 3.
        let x: Vec<Vec<f64>> = [0.0, 1.0, 5.0, 6.0, 100.0].iter().map(|&v| vec![v]).collect();
        assert_eq!(textbook_mdav(&x, 2), vec![1, 1, 1, 0, 0]);
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(32))]
        /// Every exact mode, in float64, one and two threads, gives the textbook partition on
        /// continuous data (no distance ties), Gaussian, log-normal and clustered.
        #[test]
        fn every_exact_mode_gives_the_textbook_partition(c in cases(1500, 21, 2, 3)) {
            let (x, k) = (c.data(), c.k);
            let want = textbook_mdav(&rows(&x), k);
            for opts in exact_modes() {
                prop_assert_eq!(&engine::<f64>(&x, k, opts, 1), &want, "{:?}", opts);
            }
            let fast = MdavOptions { compact_scan: IndexChoice::On, ..Default::default() };
            prop_assert_eq!(&engine::<f64>(&x, k, fast, 2), &want, "two threads");
        }
    }

    #[test]
    fn threaded_compact_scan_gives_the_textbook_partition_at_20000() {
        // Large enough for passes split among threads (a thread team, records claimed from
        // both ends).
        let x = shaped(20_000, 15, 0, 3);
        let want = textbook_mdav(&rows(&x), 10);
        let fast = MdavOptions { compact_scan: IndexChoice::On, ..Default::default() };
        for jobs in [1, 2, 3] {
            assert_eq!(engine::<f64>(&x, 10, fast, jobs), want, "{jobs} threads");
        }
    }
}
