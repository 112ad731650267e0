//! The quality and release of a partition (docs/architecture.md#what-microagg-computes): group
//! centroids and released values in the caller's units, SSE / SST / information loss in the
//! standardized units, weighted and with missing cells left out.

use crate::dataset::Scaling;
use crate::error::{Error, Result};
use crate::float::Float;
use crate::parallel::Exec;
use crate::partition::Partition;
use crate::workflow::aggregate::{Aggregation, group_value, rescaled_weights, weighted_mean};
use ndarray::{Array2, ArrayView2};

/// Quality of a partition of some data: centroids in the caller's units, and SSE / SST in
/// the (standardized, if asked) units the algorithms work in.
#[derive(Debug, Clone)]
pub struct Evaluation {
    /// Group means in the caller's units, `(n_groups, d)`: the centroids the algorithms
    /// group around, which never see weights.
    pub centroids: Array2<f64>,
    /// What each group releases when that is not its centroid (weights, or an aggregation
    /// other than the mean, docs/workflow.md#aggregation), `(n_groups, d)`; `None` when every group
    /// releases its centroid.
    pub released: Option<Array2<f64>>,
    /// Within-group (weighted) sum of squares around the released values.
    pub sse: f64,
    /// Total (weighted) sum of squares around the overall (weighted) mean.
    pub sst: f64,
}

impl Evaluation {
    /// [`Evaluation::weighted`] with unit weights and mean aggregation, on this thread.
    pub fn new<T: Float>(
        x: ArrayView2<T>,
        partition: &Partition,
        scaling: &Scaling,
    ) -> Result<Self> {
        Self::weighted(x, None, partition, scaling, None, Aggregation::Mean, Exec::SEQUENTIAL)
    }

    /// Computes centroids (f64, plain means), the released values of `aggregation` (with
    /// the weights), SSE and SST of `x` grouped by `partition`, each record counted in the
    /// sums with its weight (1 without `weights`) times the power of two that brings the
    /// largest weight into [1, 2) (`rescaled_weights`): SSE and SST stay finite whatever
    /// the weights' scale. The records are first grouped by a counting sort (ids ascending within a
    /// group), so each group's rows are read together: one random pass over `x`. Each group value
    /// comes from the group's (value, weight) pairs of one attribute (`group_value`).
    ///
    /// Missing values (NaN) are left out: centroids and group values come from the observed
    /// values, SSE and SST are sums over the observed cells (SST around the observed column
    /// means). An attribute no member of a group observes gets the aggregate of the members'
    /// `completed` values (the coordinates they were grouped on), or without them the
    /// column's observed mean; it adds nothing to SSE, and a filled release has no gap. On
    /// data without NaN this is the plain computation (bit for bit up to 4 096 groups).
    /// Groups are evaluated in chunks of 4 096 (in parallel where `exec` allows) whose sums
    /// are added in chunk order, so every thread count gives the same bits. Fails with
    /// [`Error::SumOverflow`] if the sums of squares overflow.
    pub fn weighted<T: Float>(
        x: ArrayView2<T>,
        completed: Option<ArrayView2<T>>,
        partition: &Partition,
        scaling: &Scaling,
        weights: Option<&[f64]>,
        aggregation: Aggregation,
        exec: Exec,
    ) -> Result<Self> {
        let (n, d) = x.dim();
        partition.check_len(n)?;
        let (bounds, by_group) = partition.members_by_group();
        let weights = weights.and_then(rescaled_weights);
        let weights = weights.as_deref();
        let weight = |i: usize| weights.map_or(1.0, |w| w[i]);
        // SST is around the data's own mean (which is the scaling's mean unless the scaling
        // came from other data, as in incremental microaggregation).
        let mean = observed_means(x, weights);
        let centroid_only = aggregation.is_mean() && weights.is_none();
        let chunk = |c: usize| {
            let groups =
                c * GROUPS_PER_CHUNK..((c + 1) * GROUPS_PER_CHUNK).min(partition.n_groups());
            let mut sums = ChunkSums {
                centroids: Vec::with_capacity(groups.len() * d),
                released: Vec::with_capacity(if centroid_only { 0 } else { groups.len() * d }),
                sse: 0.0,
                sst: 0.0,
            };
            let mut pairs: Vec<(f64, f64)> = Vec::new();
            let mut value = vec![0.0; d];
            for g in groups {
                let members = &by_group[bounds[g]..bounds[g + 1]];
                for (j, value) in value.iter_mut().enumerate() {
                    pairs.clear();
                    pairs.extend(members.iter().filter_map(|&i| {
                        let v = x[[i as usize, j]].as_f64();
                        (!v.is_nan()).then(|| (v, weight(i as usize)))
                    }));
                    if pairs.is_empty()
                        && let Some(c) = completed
                    {
                        let value = |&i: &u32| (c[[i as usize, j]].as_f64(), weight(i as usize));
                        pairs.extend(members.iter().map(value));
                    }
                    let (centroid, v) = if pairs.is_empty() {
                        (mean[j], mean[j])
                    } else if centroid_only {
                        let c = weighted_mean(pairs.iter().copied());
                        (c, c)
                    } else {
                        let c = weighted_mean(pairs.iter().map(|&(v, _)| (v, 1.0)));
                        (c, group_value(&mut pairs, aggregation))
                    };
                    sums.centroids.push(centroid);
                    if !centroid_only {
                        sums.released.push(v);
                    }
                    *value = v;
                }
                for &i in members {
                    let w = weight(i as usize);
                    for (j, v) in x.row(i as usize).iter().enumerate() {
                        let v = v.as_f64();
                        if !v.is_nan() {
                            sums.sse += w * ((v - value[j]) / scaling.scale[j]).powi(2);
                            sums.sst += w * ((v - mean[j]) / scaling.scale[j]).powi(2);
                        }
                    }
                }
            }
            sums
        };
        let chunks = partition.n_groups().div_ceil(GROUPS_PER_CHUNK);
        let parts: Vec<ChunkSums> = exec.map_indices(chunks, chunk);
        let (mut centroids, mut released) = (Vec::new(), Vec::new());
        let (mut sse, mut sst) = (0.0, 0.0);
        for part in parts {
            centroids.extend(part.centroids);
            released.extend(part.released);
            sse += part.sse;
            sst += part.sst;
        }
        if !sst.is_finite() {
            return Err(Error::SumOverflow);
        }
        let table =
            |v| Array2::from_shape_vec((partition.n_groups(), d), v).expect("one row a group");
        let centroids = table(centroids);
        let released = (!centroid_only).then(|| table(released));
        Ok(Evaluation { centroids, released, sse, sst })
    }

    /// SSE / SST in [0, 1]; 0 when every record is identical (SST = 0).
    pub fn information_loss(&self) -> f64 {
        if self.sst > 0.0 { (self.sse / self.sst).clamp(0.0, 1.0) } else { 0.0 }
    }
}

/// Groups per chunk of an evaluation: the chunks' sums are added in chunk order, so the
/// result is the same on every number of threads (and, up to this many groups, the plain
/// sum in group order).
const GROUPS_PER_CHUNK: usize = 4096;

/// What one chunk of groups adds to an [`Evaluation`]: its groups' centroids (and released
/// values, unless they are the centroids), row after row, and their SSE and SST.
struct ChunkSums {
    centroids: Vec<f64>,
    released: Vec<f64>,
    sse: f64,
    sst: f64,
}

/// The (weighted) mean of every column over its observed (non-NaN) values, 0 where none
/// is: [`weighted_mean`] of each column bit for bit when the largest weight is in [1, 2) (as
/// the evaluation passes them) and the mean needs no clamping, read row by row (one pass
/// over `x`).
fn observed_means<T: Float>(x: ArrayView2<T>, weights: Option<&[f64]>) -> Vec<f64> {
    let d = x.ncols();
    // Per column: Σ w·v, Σ w, Σ v and the count, added in row order like `weighted_mean`.
    let (mut weighted, mut total, mut plain, mut count) =
        (vec![0.0; d], vec![0.0; d], vec![0.0; d], vec![0usize; d]);
    for (i, row) in x.outer_iter().enumerate() {
        let w = weights.map_or(1.0, |w| w[i]);
        for (j, v) in row.iter().enumerate() {
            let v = v.as_f64();
            if !v.is_nan() {
                weighted[j] += w * v;
                total[j] += w;
                plain[j] += v;
                count[j] += 1;
            }
        }
    }
    (0..d)
        .map(|j| match count[j] {
            0 => 0.0,
            _ if total[j] > 0.0 => weighted[j] / total[j],
            m => plain[j] / m as f64,
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dataset::Scaling;
    use ndarray::array;

    #[test]
    fn evaluates_hand_computed_example() {
        let x = array![[0.0, 0.0], [2.0, 0.0], [10.0, 4.0], [12.0, 4.0]];
        let p = Partition::from_labels(vec![0, 0, 1, 1]).unwrap();
        let s = Scaling::fit(x.view(), false);
        let e = Evaluation::new(x.view(), &p, &s).unwrap();
        assert_eq!(e.centroids, array![[1.0, 0.0], [11.0, 4.0]]);
        assert_eq!(e.sse, 4.0);
        assert_eq!(e.sst, 4.0 * 25.0 + 4.0 * 1.0 + 4.0 * 4.0);
        assert!((e.information_loss() - 4.0 / 120.0).abs() < 1e-15);
    }

    #[test]
    fn chunked_evaluation_is_the_same_on_every_thread_count() {
        // 12 000 groups of 5: three chunks of groups, added in chunk order.
        let (n, d) = (60_000, 3);
        let x = Array2::from_shape_fn((n, d), |(i, j)| ((i * 7919 + j * 104_729) % 1000) as f64);
        // Weights whose largest is in [1, 2), so that the plain sums below need no rescaling.
        let weights: Vec<f64> = (0..n).map(|i| (i % 4) as f64 / 2.0).collect();
        let p = Partition::from_labels((0..n).map(|i| (i / 5) as u32).collect()).unwrap();
        let s = Scaling::fit(x.view(), true);
        for how in [Aggregation::Mean, Aggregation::Median] {
            let on = |exec| Evaluation::weighted(x.view(), None, &p, &s, Some(&weights), how, exec);
            let one = on(Exec::SEQUENTIAL).unwrap();
            for jobs in [2, 3] {
                let par = crate::Parallelism::from_n_jobs(jobs).unwrap();
                let many = par.install(on).unwrap().unwrap();
                assert_eq!((many.sse, many.sst), (one.sse, one.sst), "{how:?} {jobs}");
                assert_eq!((&many.centroids, &many.released), (&one.centroids, &one.released));
            }
            // Against the plain sums, in group order.
            let released = one.released.as_ref().unwrap_or(&one.centroids);
            let (mut sse, mut sst) = (0.0, 0.0);
            let mean: Vec<f64> = (0..d)
                .map(|j| {
                    (0..n).map(|i| weights[i] * x[[i, j]]).sum::<f64>()
                        / weights.iter().sum::<f64>()
                })
                .collect();
            for i in 0..n {
                for j in 0..d {
                    let g = p.labels()[i] as usize;
                    sse += weights[i] * ((x[[i, j]] - released[[g, j]]) / s.scale[j]).powi(2);
                    sst += weights[i] * ((x[[i, j]] - mean[j]) / s.scale[j]).powi(2);
                }
            }
            assert!((one.sse - sse).abs() <= 1e-9 * sse && (one.sst - sst).abs() <= 1e-9 * sst);
        }
    }

    #[test]
    fn weights_at_the_ends_of_the_float_range_evaluate_like_unit_weights() {
        let x = array![[0.0, 3.0], [2.0, 1.0], [10.0, 4.0], [12.0, 4.5], [7.0, 8.0]];
        let p = Partition::from_labels(vec![0, 0, 1, 1, 1]).unwrap();
        let s = Scaling::fit(x.view(), true);
        for w in [5e-324, 1e-310, 1.7e308, f64::MAX] {
            for how in [Aggregation::Mean, Aggregation::Median, Aggregation::Trim(0.2)] {
                let on = |w: Option<&[f64]>| {
                    Evaluation::weighted(x.view(), None, &p, &s, w, how, Exec::SEQUENTIAL).unwrap()
                };
                let (e, unit) = (on(Some(&[w; 5])), on(None));
                // Equal weights, brought into [1, 2): SSE and SST scaled alike, finite.
                let close = |a: f64, b: f64| (a - b).abs() <= 1e-14 * b.abs();
                let ratio = e.sst / unit.sst;
                assert!((1.0 - 1e-12..2.0).contains(&ratio), "{w:e} {how:?}: {ratio}");
                assert!(close(e.information_loss(), unit.information_loss()), "{w:e} {how:?}");
                let same = e.centroids.iter().zip(&unit.centroids).all(|(&a, &b)| close(a, b));
                assert!(same, "{w:e} {how:?}");
            }
        }
    }

    #[test]
    fn column_means_are_weighted_means_of_the_observed_values() {
        // Column 0 with a NaN; column 1 observed only where the weight is zero (the plain
        // mean); column 2 never observed (0).
        let nan = f64::NAN;
        let x = array![[1.5, nan, nan], [nan, 2.0, nan], [4.25, nan, nan], [0.1, 7.0, nan]];
        let weights = [0.3, 0.0, 1.0, 0.0];
        let got = observed_means(x.view(), Some(&weights));
        let column0 = weighted_mean([(1.5, 0.3), (4.25, 1.0), (0.1, 0.0)]);
        assert_eq!(got[0].to_bits(), column0.to_bits());
        assert_eq!(got[1..], [4.5, 0.0]);
    }

    #[test]
    fn single_group_loses_everything_and_constant_data_nothing() {
        let x = array![[1.0], [2.0], [4.0]];
        let p = Partition::from_labels(vec![0, 0, 0]).unwrap();
        let e = Evaluation::new(x.view(), &p, &Scaling::fit(x.view(), true)).unwrap();
        assert!((e.information_loss() - 1.0).abs() < 1e-12);
        let c = array![[5.0], [5.0], [5.0]];
        let e = Evaluation::new(c.view(), &p, &Scaling::fit(c.view(), true)).unwrap();
        assert_eq!(e.information_loss(), 0.0);
    }
}
