//! Distance-based record linkage, nearest-record form (docs/assessment.md#risk).
//!
//! Every original record is linked to its nearest released records (squared Euclidean
//! distance of the rows as given; the caller scales them). When `t` released records tie at
//! the minimum, an intruder picks one of them at random, so the link is correct with
//! probability 1/t when the record's own release is among them. Ties are exact: equal
//! computed [`squared_distance`]s, the same function for every candidate.
//!
//! The search runs over the release's distinct rows ([`DistinctRows`]), each standing for
//! all the records equal to it: a [`KdTree`] up to [`KD_TREE_MAX_DIM`] attributes, a
//! [`BlockIndex`] up to [`BLOCKS_MAX_DIM`], above it a scan of every distinct row by f32
//! scores with an exact re-check ([`link_by_scan`]; the blocks again for data whose
//! magnitudes do not fit its f32 copy, and on an x86-64 CPU without AVX2 and FMA). Each query
//! starts from the exact distance to its own release, so the indexes prune from the first node on
//! and the scan re-checks little more than the ties. Queries run in parallel with per-query
//! results: the same answer for every thread count.
//!
//! Missing values (NaN, left by `missing="keep"`): a table with any NaN is searched by brute
//! force over the distinct rows with the partial distance of docs/assessment.md#risk (the sum over
//! the attributes observed in both rows, times d / their number; +∞ when there is none).
//!
//! A mixed key ([`link_nearest_mixed`]): its last columns hold nominal level codes and the
//! distance is [`MixedMetric::distance`], the one-hot embedding's without its columns; the
//! distinct rows are searched by a k-d tree whose code ranges prune ([`MixedIndex`]).

use super::distinct::{DistinctRows, row_major};
use super::links::NearestLinks;
use super::mixed_index::MixedIndex;
use super::mixed_metric::MixedMetric;
use super::scan::link_by_scan;
use crate::error::{Error, Result};
use crate::float::Float;
use crate::index::blocks::BlockIndex;
use crate::index::kdtree::KdTree;
use crate::index::{NearestIndex, Ties, squared_distance};
use crate::parallel::Parallelism;
use ndarray::ArrayView2;
use rayon::prelude::*;

/// Up to this many attributes the k-d tree is used, above it the block index (measured on
/// 10⁵ Gaussian records released by MDAV k = 10, CPU seconds, tree vs blocks: d = 3 0.088
/// vs 0.103 (blocks without groups), d = 4 0.153 vs 0.075, d = 8 1.52 vs 0.27, d = 15 14.4
/// vs 1.83).
pub const KD_TREE_MAX_DIM: usize = 3;

/// Up to this many attributes the block index is used, above it the scan of every distinct
/// row ([`link_by_scan`]). Measured as above, CPU seconds, blocks vs scan: d = 4 0.06 vs
/// 0.15, d = 6 0.15 vs 0.19, d = 7 0.20 vs 0.22, d = 8 0.30 vs 0.23, d = 15 1.72 vs 0.38;
/// at 10⁶ records d = 8 8.7 vs 18.1, d = 9 12.3 vs 13.2, d = 10 19.9 vs 15.9, d = 12 51.4
/// vs 19.0, d = 14 102.1 vs 22.4, d = 15 149.6 vs 28.9. The blocks prune less as d grows
/// and better as the release grows; the scan's cost grows as d + 1 and n²/k. The crossover
/// moves from 7–8 to 9 between 10⁵ and 10⁶ records: one bound is within 7% of the better.
pub const BLOCKS_MAX_DIM: usize = 8;

/// Queries per parallel task.
const CHUNK: usize = 512;

/// Links every row of `original` to its nearest rows of `release` (record i's own release
/// is release row i; see the module docs). Errors: shapes differ, no records or attributes,
/// ±∞ anywhere, more than 2³² − 1 records.
pub fn link_nearest<T: Float>(
    original: ArrayView2<T>,
    release: ArrayView2<T>,
    parallelism: Parallelism,
) -> Result<NearestLinks> {
    link_nearest_mixed(original, release, &[], parallelism)
}

/// [`link_nearest`] over a mixed key: the last `costs.len()` columns of both tables hold
/// nominal level codes (whole numbers ≥ 0, NaN where missing), a mismatch on column j
/// costing `costs[j]` (> 0, finite), and the distance is [`MixedMetric::distance`] (the
/// partial one with missing cells). Errors as [`link_nearest`], and for a cost or code out
/// of range.
pub fn link_nearest_mixed<T: Float>(
    original: ArrayView2<T>,
    release: ArrayView2<T>,
    costs: &[T],
    parallelism: Parallelism,
) -> Result<NearestLinks> {
    let (n, d) = original.dim();
    check_tables(original, release)?;
    if costs.len() > d {
        return Err(invalid("costs", format!("{} nominal columns of {d}", costs.len())));
    }
    if let Some(c) = costs.iter().find(|c| !(c.is_finite() && **c > T::zero())) {
        return Err(invalid("costs", format!("must be positive and finite, got {c:?}")));
    }
    let numeric = d - costs.len();
    let mut has_nan = false;
    for (name, table) in [("original", original), ("release", release)] {
        for ((record, attribute), v) in table.indexed_iter() {
            if v.is_infinite() {
                return Err(Error::NonFinite { record, attribute });
            }
            has_nan |= v.is_nan();
            if attribute >= numeric && !v.is_nan() && !(*v >= T::zero() && v.floor() == *v) {
                return Err(invalid(
                    name,
                    format!("column {attribute} holds level codes; record {record} has {v:?}"),
                ));
            }
        }
    }
    debug_assert!(n > 0);
    let metric = MixedMetric::new(numeric, costs.to_vec());
    let queries = row_major(original);
    parallelism.install(|exec| {
        let distinct = DistinctRows::new(release, exec);
        if has_nan {
            let partial = |a: &[T], b: &[T]| metric.partial(a, b);
            link_all(
                &queries,
                &distinct,
                &Brute { distinct: &distinct, distance: partial },
                partial,
            )
        } else if !costs.is_empty() {
            let index = MixedIndex::new(&distinct.rows, &metric);
            link_all(&queries, &distinct, &index, |a, b| metric.distance(a, b))
        } else if d <= KD_TREE_MAX_DIM {
            link_all(&queries, &distinct, &KdTree::new(&distinct.rows, d), squared_distance)
        } else {
            let blocks = || {
                link_all(&queries, &distinct, &BlockIndex::new(&distinct.rows, d), squared_distance)
            };
            if d <= BLOCKS_MAX_DIM {
                blocks()
            } else {
                link_by_scan(&queries, &distinct).unwrap_or_else(blocks)
            }
        }
    })
}

/// Both tables n × d with n ≥ 1, d ≥ 1 and n < 2³² − 1.
fn check_tables<T: Float>(original: ArrayView2<T>, release: ArrayView2<T>) -> Result<()> {
    let (n, d) = original.dim();
    if release.dim() != (n, d) {
        return Err(invalid(
            "release",
            format!(
                "must have the shape of the original data {:?}, got {:?}",
                (n, d),
                release.dim()
            ),
        ));
    }
    if n == 0 || d == 0 {
        return Err(Error::EmptyInput { n_records: n, n_attributes: d });
    }
    if n >= u32::MAX as usize {
        return Err(invalid("original", format!("{n} records; at most 2^32 - 2")));
    }
    Ok(())
}

fn invalid(name: &str, reason: String) -> Error {
    Error::InvalidParameter { name: name.into(), reason }
}

/// Searches every query (in parallel chunks when a pool is installed).
fn link_all<T: Float, I: NearestIndex<T>>(
    queries: &[T],
    distinct: &DistinctRows<T>,
    index: &I,
    distance: impl Fn(&[T], &[T]) -> T + Sync,
) -> NearestLinks {
    let d = distinct.dim;
    let n = queries.len() / d;
    let mut tie_counts = vec![0u64; n];
    let mut own_among = vec![false; n];
    let work = |c: usize, (counts, owns): (&mut [u64], &mut [bool])| {
        let mut ties = Ties::within(T::zero());
        for (r, (count, own)) in counts.iter_mut().zip(owns.iter_mut()).enumerate() {
            let i = c * CHUNK + r;
            let q = &queries[i * d..(i + 1) * d];
            let mine = distinct.of_record[i];
            ties.reset(distance(q, distinct.row(mine)));
            index.search(q, &mut ties);
            *count = ties.ids().iter().map(|&id| u64::from(distinct.counts[id as usize])).sum();
            *own = ties.ids().contains(&mine);
        }
    };
    tie_counts
        .par_chunks_mut(CHUNK)
        .zip(own_among.par_chunks_mut(CHUNK))
        .enumerate()
        .for_each(|(c, pair)| work(c, pair));
    NearestLinks { tie_counts, own_among }
}

/// Brute force over the distinct rows by `distance` (tables with NaN: the partial distance).
struct Brute<'a, T, D> {
    distinct: &'a DistinctRows<T>,
    distance: D,
}

impl<T: Float, D: Fn(&[T], &[T]) -> T + Sync> NearestIndex<T> for Brute<'_, T, D> {
    fn search(&self, query: &[T], ties: &mut Ties<T>) {
        for id in 0..self.distinct.len() as u32 {
            ties.offer(id, (self.distance)(query, self.distinct.row(id)));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ndarray::Array2;
    use proptest::prelude::*;
    use rand::{RngExt, SeedableRng, rngs::StdRng};

    /// Brute force over every released record, the definition (the last `costs.len()`
    /// columns hold codes).
    fn reference<T: Float>(x: &Array2<T>, xm: &Array2<T>, costs: &[T]) -> NearestLinks {
        let metric = MixedMetric::new(x.ncols() - costs.len(), costs.to_vec());
        let nan = x.iter().chain(xm.iter()).any(|v| v.is_nan());
        let (mut tie_counts, mut own_among) = (Vec::new(), Vec::new());
        for (i, q) in x.rows().into_iter().enumerate() {
            let q = q.to_vec();
            let mut t = Ties::within(T::infinity());
            for (j, r) in xm.rows().into_iter().enumerate() {
                let r = r.to_vec();
                t.offer(
                    j as u32,
                    if nan { metric.partial(&q, &r) } else { metric.distance(&q, &r) },
                );
            }
            tie_counts.push(t.ids().len() as u64);
            own_among.push(t.ids().contains(&(i as u32)));
        }
        NearestLinks { tie_counts, own_among }
    }

    /// A release of `x` in groups of `k` consecutive records, rounded to a grid so that
    /// distances tie often.
    fn grouped(x: &Array2<f64>, k: usize) -> Array2<f64> {
        let mut xm = x.clone();
        for mut chunk in xm.axis_chunks_iter_mut(ndarray::Axis(0), k) {
            let mean = chunk.mean_axis(ndarray::Axis(0)).unwrap().mapv(|v| (v * 2.0).round() / 2.0);
            for mut r in chunk.rows_mut() {
                r.assign(&mean);
            }
        }
        xm
    }

    #[test]
    fn index_equals_brute_force_in_every_dimension_and_thread_count() {
        let mut rng = StdRng::seed_from_u64(5);
        for d in [1, 2, 3, 6, 7, 8, 9, 15] {
            let x = Array2::from_shape_fn((700, d), |_| rng.random_range(-3i32..=3) as f64);
            let xm = grouped(&x, 3);
            let want = reference(&x, &xm, &[]);
            for jobs in [1, 3] {
                let got =
                    link_nearest(x.view(), xm.view(), Parallelism::from_n_jobs(jobs).unwrap())
                        .unwrap();
                assert_eq!(got, want, "d={d} jobs={jobs}");
            }
            assert!(want.tie_counts.iter().any(|&t| t > 3), "d={d}: the test wants ties");
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(48))]
        /// Every search (k-d tree, the scan with its single-precision scores and exact
        /// re-check, the partial brute force) gives the all-pairs answer on data with many
        /// exact ties: integer values, duplicated records, releases of group means on a grid
        /// (or the original itself), NaN cells, offsets far above the spread (which the
        /// scan's rounding bound must absorb), in f64 and f32; on one thread and two.
        #[test]
        fn equals_all_pairs_with_ties(
            d in 1usize..=20,
            n in 1usize..260,
            k in 1usize..6,
            spread in 1i32..6,
            scale in prop::sample::select(vec![1.0, 0.1, 1e-3, 37.5]),
            nan_cells in 0usize..4,
            offset in prop::sample::select(vec![0.0, 1e6, -3e9, 1e200]),
            single: bool,
            seed: u64,
        ) {
            let mut rng = StdRng::seed_from_u64(seed);
            let mut x = Array2::from_shape_fn((n, d), |_| {
                offset + f64::from(rng.random_range(-spread..=spread)) * scale
            });
            for i in 1..n {
                if rng.random_range(0..4) == 0 {
                    let from = x.row(rng.random_range(0..i)).to_owned();
                    x.row_mut(i).assign(&from);
                }
            }
            let mut xm = if k == 1 { x.clone() } else { grouped(&x, k) };
            for _ in 0..nan_cells {
                let (i, j) = (rng.random_range(0..n), rng.random_range(0..d));
                if rng.random_range(0..2) == 0 { x[[i, j]] = f64::NAN } else { xm[[i, j]] = f64::NAN }
            }
            let (x32, xm32) = (x.mapv(|v| v as f32), xm.mapv(|v| v as f32));
            let single = single && offset.abs() < 1e30;
            let want = if single { reference(&x32, &xm32, &[]) } else { reference(&x, &xm, &[]) };
            for jobs in [1, 2] {
                let par = Parallelism::from_n_jobs(jobs).unwrap();
                let got = if single {
                    link_nearest(x32.view(), xm32.view(), par)
                } else {
                    link_nearest(x.view(), xm.view(), par)
                };
                prop_assert_eq!(&got.unwrap(), &want, "jobs {}", jobs);
            }
        }
    }

    /// `p` integer numeric columns and nominal columns of `levels` levels, and a release of
    /// groups of `k` consecutive records (numbers to a grid of halves, each code the group's
    /// first record's, as a mode would be), with many exact ties.
    fn mixed_pair(
        rng: &mut StdRng,
        n: usize,
        p: usize,
        levels: &[u32],
        k: usize,
    ) -> (Array2<f64>, Array2<f64>) {
        let x = Array2::from_shape_fn((n, p + levels.len()), |(_, j)| {
            if j < p {
                f64::from(rng.random_range(-3i32..=3))
            } else {
                f64::from(rng.random_range(0..levels[j - p]))
            }
        });
        let mut xm = grouped(&x, k);
        for (g, mut chunk) in xm.axis_chunks_iter_mut(ndarray::Axis(0), k).enumerate() {
            for j in p..x.ncols() {
                chunk.column_mut(j).fill(x[[g * k, j]]);
            }
        }
        (x, xm)
    }

    /// The one-hot embedding of the code columns (value 1, so a mismatch costs 2).
    fn one_hot(x: &Array2<f64>, p: usize, levels: &[u32]) -> Array2<f64> {
        let width = p + levels.iter().sum::<u32>() as usize;
        Array2::from_shape_fn((x.nrows(), width), |(i, j)| {
            if j < p {
                return x[[i, j]];
            }
            let (mut start, mut c) = (p, 0);
            while j >= start + levels[c] as usize {
                start += levels[c] as usize;
                c += 1;
            }
            f64::from(x[[i, p + c]] == (j - start) as f64)
        })
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(48))]
        /// Over a mixed key the links are those of the dense one-hot embedding searched as
        /// numbers (a mismatch costs 2 = 1² + 1²; integer data, so both sums are exact), with
        /// few-level and many-level columns, no numeric column at all, on one thread and two.
        #[test]
        fn mixed_links_equal_the_dense_embeddings(
            n in 1usize..300,
            p in 0usize..4,
            levels in prop::collection::vec(prop::sample::select(vec![2u32, 3, 7, 60]), 1..4),
            k in 1usize..6,
            seed: u64,
        ) {
            let mut rng = StdRng::seed_from_u64(seed);
            let (x, xm) = mixed_pair(&mut rng, n, p, &levels, k);
            let costs = vec![2.0; levels.len()];
            let dense = link_nearest(
                one_hot(&x, p, &levels).view(), one_hot(&xm, p, &levels).view(), Parallelism::Sequential,
            ).unwrap();
            prop_assert_eq!(&dense, &reference(&x, &xm, &costs));
            for jobs in [1, 2] {
                let par = Parallelism::from_n_jobs(jobs).unwrap();
                prop_assert_eq!(&link_nearest_mixed(x.view(), xm.view(), &costs, par).unwrap(), &dense);
            }
        }
    }

    #[test]
    fn mixed_keys_with_missing_cells_use_the_partial_distance() {
        let mut rng = StdRng::seed_from_u64(3);
        let levels = [2, 40];
        let (mut x, mut xm) = mixed_pair(&mut rng, 400, 2, &levels, 3);
        for _ in 0..30 {
            let (i, j) = (rng.random_range(0..400), rng.random_range(0..4));
            if rng.random_range(0..2) == 0 { x[[i, j]] = f64::NAN } else { xm[[i, j]] = f64::NAN }
        }
        let costs = [1.0, 0.5];
        let got = link_nearest_mixed(x.view(), xm.view(), &costs, Parallelism::Sequential).unwrap();
        assert_eq!(got, reference(&x, &xm, &costs));
        assert!(got.tie_counts.iter().any(|&t| t > 3), "the test wants ties");
    }

    #[test]
    fn bad_costs_and_codes_are_errors() {
        let x = ndarray::array![[0.0, 1.0], [2.0, 0.0]];
        let par = Parallelism::Sequential;
        for costs in [&[0.0][..], &[f64::NAN], &[1.0, 1.0, 1.0]] {
            assert!(link_nearest_mixed(x.view(), x.view(), costs, par).is_err(), "{costs:?}");
        }
        for bad in [0.5, -1.0] {
            let mut y = x.clone();
            y[[1, 1]] = bad;
            assert!(link_nearest_mixed(x.view(), y.view(), &[1.0], par).is_err(), "{bad}");
        }
    }

    #[test]
    fn magnitudes_beyond_the_scans_copy_take_the_blocks() {
        let mut rng = StdRng::seed_from_u64(11);
        let x = Array2::from_shape_fn((200, 9), |_| rng.random_range(-3i32..=3) as f64 * 1e307);
        let xm = grouped(&x, 3);
        let got = link_nearest(x.view(), xm.view(), Parallelism::Sequential).unwrap();
        assert_eq!(got, reference(&x, &xm, &[]));
        assert!(got.tie_counts.iter().any(|&t| t > 3), "the test wants ties");
    }

    #[test]
    fn missing_values_use_the_partial_distance() {
        let mut rng = StdRng::seed_from_u64(9);
        let mut x = Array2::from_shape_fn((300, 4), |_| rng.random_range(-2i32..=2) as f64);
        x[[0, 1]] = f64::NAN;
        x[[5, 0]] = f64::NAN;
        let mut xm = grouped(&x, 4);
        xm[[7, 2]] = f64::NAN;
        for v in xm.row_mut(9) {
            *v = f64::NAN;
        }
        let got = link_nearest(x.view(), xm.view(), Parallelism::Sequential).unwrap();
        assert_eq!(got, reference(&x, &xm, &[]));
    }

    #[test]
    fn identical_release_links_every_distinct_record() {
        let x = ndarray::array![[0.0, 1.0], [2.0, 3.0], [0.0, 1.0]];
        let links = link_nearest(x.view(), x.view(), Parallelism::Sequential).unwrap();
        assert_eq!(links.tie_counts, vec![2, 1, 2]);
        assert_eq!(links.expected_correct(), 2.0);
    }

    #[test]
    fn bad_input_is_an_error() {
        let x = Array2::<f64>::zeros((3, 2));
        assert!(
            link_nearest(x.view(), Array2::zeros((2, 2)).view(), Parallelism::Sequential).is_err()
        );
        let mut y = x.clone();
        y[[1, 1]] = f64::INFINITY;
        assert_eq!(
            link_nearest(x.view(), y.view(), Parallelism::Sequential),
            Err(Error::NonFinite { record: 1, attribute: 1 })
        );
        let e = Array2::<f64>::zeros((0, 2));
        assert!(link_nearest(e.view(), e.view(), Parallelism::Sequential).is_err());
    }
}
