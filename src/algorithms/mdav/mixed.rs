//! Exact MDAV (docs/algorithms.md#mdav) on a mixed key (`crate::mixed`): the same rounds as
//! the engine in `mod.rs`, with the F-MDAV strategies that carry over to the mixed metric
//! switchable: the algebraic score (§3.1), distance reuse (§3.2), partial selection (§3.3)
//! and the centroid by subtraction (§3.4), and the scans split over threads with exact
//! merges. The norm order, the k-d tree and the int8 compact copy are not used: their bounds
//! and index are built on numeric rows only (docs/algorithms.md#mixed-keys).

use super::MdavOptions;
use crate::float::Float;
use crate::kernels::{Farthest, Metric, Nearest, Ranked, Selected};
use crate::mixed::MixedKey;
use crate::parallel::Exec;
use crate::partition::Partition;

/// The records still to group: the prefix `0..m` of the key, with their numeric sums and
/// level counts (kept by subtraction, or recounted for each centroid).
struct Pool<T> {
    key: MixedKey<T>,
    m: usize,
    labels: Vec<u32>,
    groups: u32,
    sums: Vec<f64>,
    counts: Vec<Vec<u64>>,
    by_subtraction: bool,
    metric: Metric,
    exec: Exec,
}

impl<T: Float> Pool<T> {
    fn new(key: MixedKey<T>, opts: MdavOptions, exec: Exec) -> Self {
        let (d, n) = (key.numeric().d(), key.n());
        let (mut sums, mut counts) = (vec![0.0; d], key.no_counts());
        if opts.centroid_by_subtraction {
            for p in 0..n {
                key.count(p, 1, &mut sums, &mut counts);
            }
        }
        let labels = vec![u32::MAX; n];
        let (by_subtraction, metric) = (opts.centroid_by_subtraction, opts.metric());
        Pool { key, m: n, labels, groups: 0, sums, counts, by_subtraction, metric, exec }
    }

    /// The position of the remaining record farthest from their centroid (ties to the
    /// lowest id).
    fn farthest_from_centroid(&self) -> usize {
        let centroid = if self.by_subtraction {
            self.key.centroid(&self.sums, &self.counts, self.m, self.metric)
        } else {
            let (mut sums, mut counts) = (vec![0.0; self.sums.len()], self.key.no_counts());
            for p in 0..self.m {
                self.key.count(p, 1, &mut sums, &mut counts);
            }
            self.key.centroid(&sums, &counts, self.m, self.metric)
        };
        let far = self.key.scan(self.exec, self.m, &centroid, || Farthest(None));
        far.0.expect("records remain").pos
    }

    /// Makes a group of the record at `seed` and its k − 1 nearest remaining records; with
    /// `reuse`, also returns the id of the remaining record then farthest from the seed,
    /// from the same pass.
    fn take_group(&mut self, seed: usize, k: usize, opts: MdavOptions, reuse: bool) -> Option<u32> {
        let reference = self.key.reference_to(seed, self.metric);
        let near = || Nearest::new(opts.selection(), k - 1, seed);
        let (group, far) = if reuse {
            let (near, far) = self
                .key
                .scan(self.exec, self.m, &reference, || (near(), Ranked::farthest(k, seed)));
            (near.into_ids(), Some(far.into_ids()))
        } else {
            (self.key.scan(self.exec, self.m, &reference, near).into_ids(), None)
        };
        let seed_id = self.key.ids()[seed];
        let members: Vec<u32> = std::iter::once(seed_id).chain(group).collect();
        let mut positions: Vec<usize> =
            members.iter().map(|&id| self.key.position_of(id)).collect();
        positions.sort_unstable_by(|a, b| b.cmp(a));
        for p in positions {
            if self.by_subtraction {
                self.key.count(p, -1, &mut self.sums, &mut self.counts);
            }
            self.m -= 1;
            self.key.swap(p, self.m);
        }
        for &id in &members {
            self.labels[id as usize] = self.groups;
        }
        self.groups += 1;
        far.and_then(|ids| ids.into_iter().find(|id| !members.contains(id)))
    }

    /// The position of the remaining record farthest from the record `id` (now grouped).
    fn farthest_from_record(&self, id: u32) -> usize {
        let reference = self.key.reference_to(self.key.position_of(id), self.metric);
        self.key
            .scan(self.exec, self.m, &reference, || Farthest(None))
            .0
            .expect("records remain")
            .pos
    }
}

/// Runs exact MDAV on a mixed key (`1 ≤ k ≤ n`, checked by the caller). The options that do
/// not apply to a mixed key (norm pruning, the spatial index, the compact scan) are ignored.
pub fn mixed_mdav<T: Float>(
    key: MixedKey<T>,
    k: usize,
    opts: MdavOptions,
    exec: Exec,
) -> Partition {
    let mut pool = Pool::new(key, opts, exec);
    while pool.m >= 3 * k {
        let p = pool.farthest_from_centroid();
        let p_id = pool.key.ids()[p];
        let q = match pool.take_group(p, k, opts, opts.distance_reuse) {
            Some(id) => pool.key.position_of(id),
            None => pool.farthest_from_record(p_id),
        };
        pool.take_group(q, k, opts, false);
    }
    if pool.m >= 2 * k {
        let p = pool.farthest_from_centroid();
        pool.take_group(p, k, opts, false);
    }
    for p in 0..pool.m {
        pool.labels[pool.key.ids()[p] as usize] = pool.groups;
    }
    Partition::from_labels(pool.labels).expect("every record is labelled 0..g−1")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::algorithms::mdav::textbook::textbook_mdav;
    use crate::dataset::Scaling;
    use crate::index::IndexChoice;
    use crate::parallel::Parallelism;
    use ndarray::Array2;
    use proptest::prelude::*;
    use rand::rngs::StdRng;
    use rand::{RngExt, SeedableRng};
    use rand_distr::{Distribution, StandardNormal};

    /// A mixed key's data: continuous numeric columns (no distance ties), nominal codes with
    /// their levels and weights.
    struct Mixed {
        x: Array2<f64>,
        codes: Array2<i64>,
        weights: Vec<f64>,
    }

    impl Mixed {
        fn random(n: usize, d: usize, levels: &[usize], seed: u64) -> Mixed {
            let mut rng = StdRng::seed_from_u64(seed);
            let x = Array2::from_shape_simple_fn((n, d), || StandardNormal.sample(&mut rng));
            let codes = Array2::from_shape_fn((n, levels.len()), |(_, a)| {
                rng.random_range(0..levels[a]) as i64
            });
            // Weights whose squares are exact.
            let weights =
                (0..levels.len()).map(|a| [1.0, 2.0, 0.5, 1.5][(a + seed as usize) % 4]).collect();
            Mixed { x, codes, weights }
        }

        /// The dense embedding's rows: the numeric values, then each nominal column one-hot
        /// scaled by w/√2.
        fn embedding(&self) -> Vec<Vec<f64>> {
            let levels: Vec<usize> = self
                .codes
                .columns()
                .into_iter()
                .map(|c| *c.iter().max().unwrap() as usize + 1)
                .collect();
            (0..self.x.nrows())
                .map(|i| {
                    let mut row = self.x.row(i).to_vec();
                    for (a, &l) in levels.iter().enumerate() {
                        let mut block = vec![0.0; l];
                        block[self.codes[[i, a]] as usize] = self.weights[a] / 2f64.sqrt();
                        row.extend(block);
                    }
                    row
                })
                .collect()
        }

        fn labels<T: Float>(&self, k: usize, opts: MdavOptions, jobs: i64) -> Vec<u32> {
            let scaling = Scaling::fit(self.x.view(), false);
            let key = MixedKey::<T>::new(self.x.view(), &scaling, self.codes.view(), &self.weights)
                .unwrap();
            let par = Parallelism::from_n_jobs(jobs).unwrap();
            par.install(|e| mixed_mdav(key, k, opts, e)).unwrap().labels().to_vec()
        }
    }

    /// The strategies of exact MDAV that apply to a mixed key, each alone and all together.
    fn modes() -> Vec<MdavOptions> {
        let t = MdavOptions::TRADITIONAL;
        vec![
            t,
            MdavOptions { algebraic_distance: true, ..t },
            MdavOptions { distance_reuse: true, ..t },
            MdavOptions { partial_sort: true, ..t },
            MdavOptions { centroid_by_subtraction: true, ..t },
            MdavOptions {
                spatial_index: IndexChoice::Off,
                compact_scan: IndexChoice::Off,
                ..Default::default()
            },
            MdavOptions::default(),
        ]
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(40))]
        /// Every mode on the mixed key gives the textbook MDAV's partition of the dense
        /// embedding: few-level, many-level and weighted nominal columns.
        #[test]
        fn mixed_key_gives_the_embedding_partition(
            n in 1usize..250,
            d in 1usize..4,
            levels in prop::collection::vec(prop_oneof![2usize..4, 20usize..200], 0..4),
            k in 2usize..8,
            seed: u64,
        ) {
            let k = k.min(n);
            let m = Mixed::random(n, d, &levels, seed);
            let want = textbook_mdav(&m.embedding(), k);
            for opts in modes() {
                prop_assert_eq!(&m.labels::<f64>(k, opts, 1), &want, "{:?}", opts);
            }
            let p = Partition::from_labels(m.labels::<f32>(k, MdavOptions::default(), 1)).unwrap();
            p.check(k, Some(2 * k - 1)).unwrap();
        }
    }

    #[test]
    fn threads_give_the_sequential_labels() {
        // Passes over PARALLEL_MIN records or more split into chunks.
        let m = Mixed::random(40_000, 3, &[2, 7, 1000], 3);
        for opts in [MdavOptions::default(), MdavOptions::TRADITIONAL] {
            let one = m.labels::<f64>(10, opts, 1);
            assert_eq!(m.labels::<f64>(10, opts, 2), one);
            assert_eq!(m.labels::<f64>(10, opts, 3), one);
            let one = m.labels::<f32>(10, opts, 1);
            assert_eq!(m.labels::<f32>(10, opts, 3), one);
        }
    }

    #[test]
    fn bad_codes_and_weights_are_refused() {
        let m = Mixed::random(10, 1, &[3], 0);
        let s = Scaling::fit(m.x.view(), false);
        let mut codes = m.codes.clone();
        codes[[4, 0]] = -1;
        assert!(MixedKey::<f64>::new(m.x.view(), &s, codes.view(), &m.weights).is_err());
        assert!(MixedKey::<f64>::new(m.x.view(), &s, m.codes.view(), &[0.0]).is_err());
        assert!(MixedKey::<f64>::new(m.x.view(), &s, m.codes.view(), &[]).is_err());
    }
}
