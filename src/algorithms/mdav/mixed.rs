//! Exact MDAV (docs/algorithms.md#mdav) on a mixed key (`crate::mixed`): the same rounds as
//! the engine in `mod.rs`, with the F-MDAV strategies that carry over to the mixed metric
//! switchable: the algebraic score (§3.1), distance reuse (§3.2), partial selection (§3.3)
//! and the centroid by subtraction (§3.4), the scans split over threads with exact merges,
//! and the norm pruning of the search for the record farthest from the centroid, in a simple
//! form ([`NormSearch`]). The k-d tree and the int8 compact copy are not used: their index
//! and quantization are built on numeric rows only (docs/algorithms.md#mixed-keys).

use super::MdavOptions;
use crate::float::Float;
use crate::kernels::{self, BLOCK, Farthest, Metric, Nearest, Ranked, ScoreVisitor, Selected};
use crate::mixed::{MixedKey, Reference, Scorer};
use crate::parallel::Exec;
use crate::partition::Partition;
use crate::progress::Progress;

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
    search: Option<NormSearch<T>>,
}

/// The records in decreasing numeric norm, for the search of the record farthest from the
/// centroid: a record's algebraic score is at most h + ‖x‖·‖c_num‖ + Σ (largest nominal
/// term), h = ½‖x_num‖², which falls with ‖x‖; the search scores records in that order,
/// a block of [`BLOCK`] at a time with the scan's kernel, and stops once the bound of a
/// block's first record, widened by a rounding margin, is below the best score (so the
/// answer is the scan's, ties included). The records are a copy of the key in that order,
/// so a search reads them as a stream, not by gathers; a grouped record's score is masked
/// to −∞, and the grouped records are dropped from the copy (in order) once they are an
/// eighth of it (MDAV groups the large-norm records that the searches read first).
struct NormSearch<T> {
    /// The records not known to be grouped, positions `0..len`, by decreasing ½‖x_num‖²
    /// (ties by id).
    by_norm: MixedKey<T>,
    len: usize,
    /// Per position of `by_norm`: 0, or −∞ once the record is grouped.
    mask: Vec<T>,
    /// Records of `0..len` already grouped.
    grouped: usize,
}

impl<T: Float> NormSearch<T> {
    /// A copy of `key` in decreasing numeric norm.
    fn new(key: &MixedKey<T>) -> Self {
        let n = key.n();
        let half_norm = |id: u32| key.numeric().half_norms()[key.position_of(id)].as_f64();
        let mut order: Vec<u32> = (0..n as u32).collect();
        order.sort_by(|&a, &b| half_norm(b).total_cmp(&half_norm(a)).then(a.cmp(&b)));
        let mut by_norm = key.clone();
        for (p, &id) in order.iter().enumerate() {
            let from = by_norm.position_of(id);
            by_norm.swap(p, from);
        }
        NormSearch { by_norm, len: n, mask: vec![T::zero(); n], grouped: 0 }
    }

    /// Masks the records `ids`, now grouped; drops the grouped records, keeping the others'
    /// order, once they are an eighth of the copy.
    fn note_grouped(&mut self, ids: &[u32]) {
        for &id in ids {
            self.mask[self.by_norm.position_of(id)] = T::neg_infinity();
        }
        self.grouped += ids.len();
        if 8 * self.grouped > self.len {
            let mut kept = 0;
            for p in 0..self.len {
                if self.mask[p] == T::zero() {
                    self.by_norm.swap(kept, p);
                    kept += 1;
                }
            }
            self.mask[..self.len].fill(T::zero());
            (self.len, self.grouped) = (kept, 0);
        }
    }
}

/// The farthest record a scan of the norm-ordered copy sees, its scores masked (grouped
/// records to −∞).
struct Masked<'a, T> {
    mask: &'a [T],
    farthest: Farthest<T>,
}

impl<T: Float> ScoreVisitor<T> for Masked<'_, T> {
    #[inline(always)]
    fn visit(&mut self, scores: &[T], ids: &[u32], offset: usize) {
        let mut masked = [T::zero(); BLOCK];
        let masked = &mut masked[..scores.len()];
        for ((m, &s), &mask) in masked.iter_mut().zip(scores).zip(&self.mask[offset..]) {
            *m = s + mask;
        }
        self.farthest.visit(masked, ids, offset);
    }

    fn merge(self, other: Self) -> Self {
        Masked { farthest: self.farthest.merge(other.farthest), ..self }
    }
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
        let search =
            (opts.norm_pruning && metric == Metric::Algebraic).then(|| NormSearch::new(&key));
        Pool { key, m: n, labels, groups: 0, sums, counts, by_subtraction, metric, exec, search }
    }

    /// [`Self::farthest_from_centroid`] by the norm order: the same record.
    fn farthest_by_norm(&self, centroid: &Reference<T>, search: &NormSearch<T>) -> usize {
        let (c_norm, nominal, scale) = centroid.bound_terms();
        let delta = 4.0
            * (self.key.numeric().d() + self.key.n_nominal() + 4) as f64
            * T::epsilon().as_f64();
        let by_norm = &search.by_norm;
        let scorer = Scorer { key: by_norm, reference: centroid };
        let mut far = Masked { mask: &search.mask, farthest: Farthest(None) };
        let mut start = 0;
        while start < search.len {
            // The block's first record has its largest norm, so the largest bound.
            let h = by_norm.numeric().half_norms()[start].as_f64();
            let x_norm = (2.0 * h.max(0.0)).sqrt() * (1.0 + delta);
            let bound = h + x_norm * c_norm + nominal;
            let error = delta * (h.abs() + x_norm * c_norm + scale) + f64::MIN_POSITIVE;
            if far
                .farthest
                .0
                .is_some_and(|b| bound + error + delta * b.score.as_f64().abs() < b.score.as_f64())
            {
                break;
            }
            let end = search.len.min(start + BLOCK);
            kernels::scan_range(by_norm.numeric(), start, end, &scorer, &mut far);
            start = end;
        }
        self.key.position_of(far.farthest.0.expect("records remain").id)
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
        if let Some(search) = &self.search {
            return self.farthest_by_norm(&centroid, search);
        }
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
        if let Some(search) = &mut self.search {
            search.note_grouped(&members);
        }
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

/// Runs exact MDAV on a mixed key (`1 ≤ k ≤ n`, checked by the caller), counting every
/// record it groups in `progress` as it goes. The options that do not apply to a mixed key
/// (the spatial index, the compact scan) are ignored.
pub fn mixed_mdav<T: Float>(
    key: MixedKey<T>,
    k: usize,
    opts: MdavOptions,
    exec: Exec,
    progress: &Progress,
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
        progress.add(2 * k);
    }
    if pool.m >= 2 * k {
        let p = pool.farthest_from_centroid();
        pool.take_group(p, k, opts, false);
        progress.add(k);
    }
    for p in 0..pool.m {
        pool.labels[pool.key.ids()[p] as usize] = pool.groups;
    }
    progress.add(pool.m);
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
            let progress = Progress::new();
            let partition = par.install(|e| mixed_mdav(key, k, opts, e, &progress)).unwrap();
            assert_eq!(progress.get(), self.x.nrows(), "every record is counted once");
            partition.labels().to_vec()
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
            MdavOptions { algebraic_distance: true, norm_pruning: true, ..t },
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
        /// embedding: few-level, many-level (codes in one and two bytes) and weighted nominal
        /// columns.
        #[test]
        fn mixed_key_gives_the_embedding_partition(
            n in 1usize..250,
            d in 1usize..4,
            levels in prop::collection::vec(prop_oneof![2usize..4, 20usize..200, 257usize..600], 0..4),
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

        /// The norm-ordered search for the record farthest from the centroid (its blocks,
        /// masks and compaction) names the scan's record, ties to the lowest id included: on
        /// tie-heavy keys (small integer values, few levels) the partition is the one
        /// without it.
        #[test]
        fn norm_search_gives_the_scan_partition_with_ties(
            n in 1usize..400,
            d in 1usize..3,
            levels in prop::collection::vec(prop_oneof![2usize..4, 20usize..60], 1..4),
            k in 2usize..6,
            seed: u64,
        ) {
            let k = k.min(n);
            let mut m = Mixed::random(n, d, &levels, seed);
            m.x.mapv_inplace(|v| (2.0 * v).round());
            let plain = MdavOptions { norm_pruning: false, ..MdavOptions::default() };
            let want = m.labels::<f64>(k, plain, 1);
            prop_assert_eq!(&m.labels::<f64>(k, MdavOptions::default(), 1), &want);
            let want = m.labels::<f32>(k, plain, 1);
            prop_assert_eq!(&m.labels::<f32>(k, MdavOptions::default(), 1), &want);
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
