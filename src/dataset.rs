//! Validation of the caller's data and the working copy the algorithms run on.
//!
//! The input is read through its strides (any memory order). The working copy is
//! **column-major** (one contiguous slice per attribute) and **centered** on the column means
//! (optionally scaled to unit population variance, docs/architecture.md#what-microagg-computes).
//! Column-major storage lets the distance kernels vectorize across records, which is what matters
//! when d is small (3..30); centering keeps F-MDAV's ½‖x‖² − ⟨x, c⟩ comparison (papers/f-mdav §3.1)
//! accurate in f32.
//!
//! Invariant: `ids[p]` is the original index of the record stored at position `p`. Algorithms
//! move records with [`WorkingSet::swap`] to keep the unassigned ones in a contiguous prefix.

use crate::error::{Error, Result};
use crate::float::Float;
use crate::parallel::Exec;
use ndarray::ArrayView2;

/// Per-attribute affine map from the caller's units to the units the algorithms see:
/// `z = (x - mean) / scale`. With `standardize=false` the scale is 1.
#[derive(Debug, Clone, PartialEq)]
pub struct Scaling {
    /// Column means (f64, two-pass).
    pub mean: Vec<f64>,
    /// Column population standard deviations (ddof = 0); 1 for constant columns or when
    /// standardization is off, so constant columns simply become zero.
    pub scale: Vec<f64>,
}

/// Checks the shape and finiteness of the caller's data.
pub fn validate<T: Float>(x: ArrayView2<T>) -> Result<()> {
    check(x, false).map(|_| ())
}

/// Checks the shape of the caller's data and that no value is ±∞; NaN marks a missing value.
/// Returns whether any value is missing.
pub fn validate_missing<T: Float>(x: ArrayView2<T>) -> Result<bool> {
    check(x, true)
}

fn check<T: Float>(x: ArrayView2<T>, allow_nan: bool) -> Result<bool> {
    let (n, d) = x.dim();
    if n == 0 || d == 0 {
        return Err(Error::EmptyInput { n_records: n, n_attributes: d });
    }
    if n > u32::MAX as usize {
        return Err(Error::InvalidParameter {
            name: "data".into(),
            reason: format!("at most {} records are supported, got {n}", u32::MAX),
        });
    }
    let mut any_nan = false;
    for (i, row) in x.rows().into_iter().enumerate() {
        if let Some(j) = row.iter().position(|v| !(v.is_finite() || allow_nan && v.is_nan())) {
            return Err(Error::NonFinite { record: i, attribute: j });
        }
        any_nan = any_nan || (allow_nan && row.iter().any(|v| v.is_nan()));
    }
    Ok(any_nan)
}

/// Validates `k` against the number of records; k = 1 (no protection) is refused.
pub fn validate_k(k: usize, n_records: usize) -> Result<()> {
    if k < 2 || k > n_records {
        return Err(Error::InvalidK { k, n_records });
    }
    Ok(())
}

impl Scaling {
    /// The column means of `x` and a given per-attribute `scale` (finite, positive; one per
    /// attribute): `x` grouped in the units of a larger file it is part of
    /// (docs/scaling.md#partitioned-runs).
    pub fn with_scale<T: Float>(x: ArrayView2<T>, scale: &[f64]) -> Result<Scaling> {
        if scale.len() != x.ncols() || !scale.iter().all(|s| s.is_finite() && *s > 0.0) {
            return Err(Error::InvalidParameter {
                name: "scale".into(),
                reason: format!("must be {} finite positive numbers, one per attribute", x.ncols()),
            });
        }
        Ok(Scaling { mean: Scaling::fit(x, false).mean, scale: scale.to_vec() })
    }

    /// Column means and (if `standardize`) population standard deviations of validated data.
    /// Sums that would overflow (values near `f64::MAX`) are taken on rescaled values, so
    /// standardization works at any magnitude. Missing values (NaN) are left out: each column
    /// is described by its observed values; a column with none gets mean 0, scale 1.
    pub fn fit<T: Float>(x: ArrayView2<T>, standardize: bool) -> Scaling {
        fn all<T: Float>(c: ndarray::ArrayView1<'_, T>) -> impl Iterator<Item = f64> + Clone + '_ {
            c.into_iter().map(|v| v.as_f64())
        }
        let n = x.nrows() as f64;
        let (mean, counts): (Vec<f64>, Vec<f64>) =
            x.columns().into_iter().map(|c| column_mean(all(c), n)).unzip();
        let scale = if standardize {
            x.columns()
                .into_iter()
                .zip(mean.iter().zip(&counts))
                .map(|(c, (&mu, &count))| {
                    // A column without missing values takes the plain pass.
                    let sd = if count == n {
                        column_sd(all(c), mu, n)
                    } else {
                        column_sd(all(c).filter(|v| !v.is_nan()), mu, count)
                    };
                    if sd > 0.0 && sd.is_finite() { sd } else { 1.0 }
                })
                .collect()
        } else {
            vec![1.0; mean.len()]
        };
        Scaling { mean, scale }
    }

    /// The transformed records as f64 rows (row-major, n × d), each value rounded through
    /// the working precision `T`: the input of the algorithms that never use the column-major
    /// working copy (the Mondrian family). Fails like [`WorkingSet::new`] on overflow.
    pub fn rows_of<S: Float, T: Float>(&self, x: ArrayView2<S>) -> Result<Vec<f64>> {
        let mut rows = Vec::with_capacity(x.len());
        let mut total = 0.0;
        for (i, r) in x.rows().into_iter().enumerate() {
            for (j, v) in r.iter().enumerate() {
                let z = T::from_f64_lossy(self.apply(j, v.as_f64())).as_f64();
                if !z.is_finite() {
                    return Err(Error::Overflow { record: i });
                }
                total += z * z;
                rows.push(z);
            }
        }
        check_total_square(total)?;
        Ok(rows)
    }

    /// The transformed value of attribute `j`.
    #[inline]
    pub fn apply(&self, j: usize, v: f64) -> f64 {
        (v - self.mean[j]) / self.scale[j]
    }
}

/// The mean of `values` (n of them); when their plain sum overflows, the mean of the values
/// divided by the largest magnitude, times it.
/// The mean of the observed (non-NaN) ones of the `n` `values` (0 when there are none) and
/// their number. A column without NaN costs the plain pass it always did (a NaN sum is the
/// only sign of a missing value: finite values overflow to ±∞, never to NaN).
fn column_mean(values: impl Iterator<Item = f64> + Clone, n: f64) -> (f64, f64) {
    let plain = values.clone().sum::<f64>() / n;
    if plain.is_finite() {
        return (plain, n);
    }
    if !plain.is_nan() {
        return (rescaled_mean(values, n), n);
    }
    let observed = values.filter(|v| !v.is_nan());
    match observed.clone().count() as f64 {
        0.0 => (0.0, 0.0),
        count => (rescaled_mean(observed, count), count),
    }
}

/// The population standard deviation of `values` (n of them) around `mu`; values whose
/// deviations overflow are halved first.
fn column_sd(values: impl Iterator<Item = f64> + Clone, mu: f64, n: f64) -> f64 {
    let sd = rescaled_mean(values.clone().map(|v| (v - mu).powi(2)), n).sqrt();
    if sd.is_finite() {
        return sd;
    }
    let half = values.map(|v| v / 2.0 - mu / 2.0);
    let unit = half.clone().fold(0.0, |m, h| f64::max(m, h.abs()));
    2.0 * unit * rescaled_mean(half.map(|h| (h / unit).powi(2)), n).sqrt()
}

fn rescaled_mean(values: impl Iterator<Item = f64> + Clone, n: f64) -> f64 {
    let plain = values.clone().sum::<f64>() / n;
    if plain.is_finite() {
        return plain;
    }
    let unit = values.clone().fold(0.0, |m, v| f64::max(m, v.abs()));
    unit * (values.map(|v| v / unit).sum::<f64>() / n)
}

/// Refuses transformed data whose total sum of squares leaves less than a 16× margin below
/// `f64::MAX`. Every sum of squares the algorithms and the evaluation take (around any
/// mean of the data) is at most 4 times that total, so none can overflow.
fn check_total_square(total: f64) -> Result<()> {
    if total.is_finite() && total <= f64::MAX / 16.0 { Ok(()) } else { Err(Error::SumOverflow) }
}

/// The algorithms' working copy: centered (and scaled) values in column-major order, the
/// precomputed ½‖x‖² of every record (F-MDAV §3.1) and the original index of each position.
#[derive(Debug, Clone)]
pub struct WorkingSet<T> {
    n: usize,
    d: usize,
    cols: Vec<T>,
    half_norms: Vec<T>,
    ids: Vec<u32>,
    positions: Vec<u32>,
}

impl<T: Float> WorkingSet<T> {
    /// Builds the working copy of validated data. Fails with [`Error::Overflow`] when a
    /// squared norm does not fit the precision `T` (e.g. unscaled values above 1e19 in f32).
    pub fn new<S: Float>(x: ArrayView2<S>, scaling: &Scaling) -> Result<Self> {
        let (n, d) = x.dim();
        let mut cols = Vec::with_capacity(n * d);
        for (j, c) in x.columns().into_iter().enumerate() {
            cols.extend(c.iter().map(|v| T::from_f64_lossy(scaling.apply(j, v.as_f64()))));
        }
        let mut half_norms = vec![0.0f64; n];
        for c in cols.chunks_exact(n) {
            for (h, v) in half_norms.iter_mut().zip(c) {
                *h += v.as_f64() * v.as_f64();
            }
        }
        check_total_square(half_norms.iter().sum())?;
        let half_norms: Vec<T> = half_norms.iter().map(|&h| T::from_f64_lossy(0.5 * h)).collect();
        if let Some(record) = half_norms.iter().position(|h| !h.is_finite()) {
            return Err(Error::Overflow { record });
        }
        let ids: Vec<u32> = (0..n as u32).collect();
        Ok(WorkingSet { n, d, cols, half_norms, positions: ids.clone(), ids })
    }

    /// Number of records.
    #[inline]
    pub fn n(&self) -> usize {
        self.n
    }

    /// Number of attributes.
    #[inline]
    pub fn d(&self) -> usize {
        self.d
    }

    /// Attribute `j` of every position.
    #[inline]
    pub fn column(&self, j: usize) -> &[T] {
        &self.cols[j * self.n..(j + 1) * self.n]
    }

    /// ½‖x‖² of every position.
    #[inline]
    pub fn half_norms(&self) -> &[T] {
        &self.half_norms
    }

    /// Original record index of every position.
    #[inline]
    pub fn ids(&self) -> &[u32] {
        &self.ids
    }

    /// Current position of the record with original index `id`.
    #[inline]
    pub fn position_of(&self, id: u32) -> usize {
        self.positions[id as usize] as usize
    }

    /// Asks the caches for the position of record `id` (for lookups known ahead).
    #[inline]
    pub fn prefetch_position(&self, id: u32) {
        crate::prefetch::prefetch(&self.positions[id as usize]);
    }

    /// Asks the caches, for writing, for what [`Self::swap_keys`] changes at position `p`:
    /// its id and its ½‖x‖² (see `prefetch::prefetch_for_write`).
    #[inline]
    pub fn prefetch_keys(&self, p: usize) {
        crate::prefetch::prefetch_for_write(&self.ids[p]);
        crate::prefetch::prefetch_for_write(&self.half_norms[p]);
    }

    /// Asks the caches, for writing, for the position of record `id` (which
    /// [`Self::swap_keys`] changes when it moves the record).
    #[inline]
    pub fn prefetch_position_for_write(&self, id: u32) {
        crate::prefetch::prefetch_for_write(&self.positions[id as usize]);
    }

    /// F-MDAV's score ½‖x‖² − ⟨x, r⟩ of the record at position `p`, bit-identical to the
    /// blocked kernel (same operations in the same order, no contraction).
    #[inline]
    pub fn algebraic_score(&self, p: usize, reference: &[T]) -> T {
        let mut s = self.half_norms[p];
        for (j, &r) in reference.iter().enumerate() {
            s -= r * self.cols[j * self.n + p];
        }
        s
    }

    /// The record at position `p` (gathered from the columns).
    pub fn row(&self, p: usize) -> Vec<T> {
        (0..self.d).map(|j| self.cols[j * self.n + p]).collect()
    }

    /// Subtracts the record at position `p` from an f64 accumulator of length d.
    pub fn subtract_row_from(&self, p: usize, acc: &mut [f64]) {
        for (j, a) in acc.iter_mut().enumerate() {
            *a -= self.cols[j * self.n + p].as_f64();
        }
    }

    /// Exchanges the records at positions `a` and `b` (values, norms and ids).
    #[inline]
    pub fn swap(&mut self, a: usize, b: usize) {
        if a == b {
            return;
        }
        for c in self.cols.chunks_exact_mut(self.n) {
            c.swap(a, b);
        }
        self.half_norms.swap(a, b);
        self.ids.swap(a, b);
        self.positions[self.ids[a] as usize] = a as u32;
        self.positions[self.ids[b] as usize] = b as u32;
    }

    /// Exchanges only the order keys of positions `a` and `b` (norms and ids), leaving the
    /// attribute values where they are: for a caller that reads values by id from a copy of
    /// its own (exact MDAV's compact copy, `algorithms/mdav/compact/`) and so saves d scattered
    /// writes per swap. Afterwards [`Self::column`], [`Self::row`] and the scores of this
    /// working set no longer describe the positions.
    #[inline]
    pub fn swap_keys(&mut self, a: usize, b: usize) {
        self.half_norms.swap(a, b);
        self.ids.swap(a, b);
        self.positions[self.ids[a] as usize] = a as u32;
        self.positions[self.ids[b] as usize] = b as u32;
    }

    /// Writes every position's attribute values from its record's row (`row(id)`, d
    /// values): after [`Self::swap_keys`] left them stale, [`Self::swap`], [`Self::row`]
    /// and the scores describe the positions again. Every position, not only the
    /// unassigned ones: exact MDAV may put back a group that left since its last checkpoint
    /// (`Remaining::restore`).
    pub fn place_rows<'r>(&mut self, row: impl Fn(u32) -> &'r [T])
    where
        T: 'r,
    {
        let ids = &self.ids;
        for (j, c) in self.cols.chunks_exact_mut(self.n).enumerate() {
            c.iter_mut().zip(ids).for_each(|(v, &id)| *v = row(id)[j]);
        }
    }

    /// All records as f64 rows (row-major, n × d), indexed by original id: the layout the
    /// algorithms that access records at random (MD, MHM paths, ONA, Mondrian) work on.
    pub fn rows_by_id(&self) -> Vec<f64> {
        let mut x = vec![0.0; self.n * self.d];
        for (j, c) in self.cols.chunks_exact(self.n).enumerate() {
            for (p, v) in c.iter().enumerate() {
                x[self.ids[p] as usize * self.d + j] = v.as_f64();
            }
        }
        x
    }

    /// Column sums (f64) over the positions `0..m`.
    pub fn prefix_sums(&self, m: usize) -> Vec<f64> {
        self.column_sums(m, Exec::SEQUENTIAL)
    }

    /// [`Self::prefix_sums`], one column per task where `exec` allows: each column is still
    /// summed in position order, so the sums are the same bits (at 200 000 × 15 on 2
    /// threads, 1.6 → 0.9 ms of exact MDAV's set-up).
    pub fn column_sums(&self, m: usize, exec: Exec) -> Vec<f64> {
        exec.map_indices(self.d, |j| self.column(j)[..m].iter().map(|v| v.as_f64()).sum())
    }

    /// Column means over the positions `0..m` (`m ≥ 1`).
    pub fn prefix_means(&self, m: usize) -> Vec<T> {
        means(&self.prefix_sums(m), m)
    }
}

/// Means from column `sums` over `m` records, in the working precision.
pub fn means<T: Float>(sums: &[f64], m: usize) -> Vec<T> {
    sums.iter().map(|s| T::from_f64_lossy(s / m as f64)).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use ndarray::array;

    #[test]
    fn rejects_empty_and_non_finite() {
        let e = ndarray::Array2::<f64>::zeros((0, 3));
        assert!(matches!(validate(e.view()), Err(Error::EmptyInput { .. })));
        let x = array![[1.0, 2.0], [3.0, f64::NAN]];
        assert_eq!(validate(x.view()), Err(Error::NonFinite { record: 1, attribute: 1 }));
        let x = array![[1.0, f64::NEG_INFINITY]];
        assert_eq!(validate(x.view()), Err(Error::NonFinite { record: 0, attribute: 1 }));
    }

    #[test]
    fn missing_values_are_left_out_of_the_scaling() {
        let nan = f64::NAN;
        let x = array![[1.0, nan, nan], [3.0, 5.0, nan], [nan, 7.0, nan]];
        assert_eq!(validate_missing(x.view()), Ok(true));
        assert_eq!(validate_missing(array![[1.0, 2.0]].view()), Ok(false));
        let inf = array![[nan, f64::INFINITY]];
        assert_eq!(validate_missing(inf.view()), Err(Error::NonFinite { record: 0, attribute: 1 }));
        let s = Scaling::fit(x.view(), true);
        assert_eq!((s.mean, s.scale.clone()), (vec![2.0, 6.0, 0.0], vec![1.0, 1.0, 1.0]));
    }

    #[test]
    fn placed_rows_follow_the_keys_swapped_over_them() {
        // Keys swapped without the values (as exact MDAV's compact copy does), then the
        // values put back from rows by id: every position reads as if swapped fully.
        let x = array![[1.0, 2.0], [3.0, 4.0], [5.0, 6.0], [7.0, 8.0]];
        let s = Scaling::fit(x.view(), false);
        let (mut keys_only, mut full) = (
            WorkingSet::<f64>::new(x.view(), &s).unwrap(),
            WorkingSet::<f64>::new(x.view(), &s).unwrap(),
        );
        let by_id = full.rows_by_id();
        for (a, b) in [(0, 3), (1, 3), (2, 0)] {
            keys_only.swap_keys(a, b);
            full.swap(a, b);
        }
        keys_only.place_rows(|id| &by_id[id as usize * 2..id as usize * 2 + 2]);
        for p in 0..4 {
            assert_eq!(keys_only.row(p), full.row(p), "position {p}");
        }
        assert_eq!(keys_only.ids(), full.ids());
    }

    #[test]
    fn standardizes_with_population_std_and_keeps_constant_columns() {
        let x = array![[1.0, 5.0], [3.0, 5.0]];
        let s = Scaling::fit(x.view(), true);
        assert_eq!(s.mean, vec![2.0, 5.0]);
        assert_eq!(s.scale, vec![1.0, 1.0]); // std of [1,3] is 1; constant column -> 1
        let ws = WorkingSet::<f64>::new(x.view(), &s).unwrap();
        assert_eq!(ws.column(0), &[-1.0, 1.0]);
        assert_eq!(ws.column(1), &[0.0, 0.0]);
        assert_eq!(ws.half_norms(), &[0.5, 0.5]);
    }

    #[test]
    fn reads_fortran_order_like_c_order() {
        let x = array![[1.0, 2.0, 3.0], [4.0, 5.0, 7.0], [0.5, 1.0, 9.0]];
        let f = x.t().as_standard_layout().into_owned().reversed_axes();
        assert!(f.t().is_standard_layout());
        assert_eq!(f, x);
        let s = Scaling::fit(x.view(), true);
        let a = WorkingSet::<f64>::new(x.view(), &s).unwrap();
        let b = WorkingSet::<f64>::new(f.view(), &Scaling::fit(f.view(), true)).unwrap();
        assert_eq!(a.cols, b.cols);
    }

    #[test]
    fn swap_moves_everything_together() {
        let x = array![[1.0, 10.0], [2.0, 20.0], [3.0, 30.0]];
        let mut ws = WorkingSet::<f32>::new(x.view(), &Scaling::fit(x.view(), false)).unwrap();
        let h0 = ws.half_norms()[0];
        ws.swap(0, 2);
        assert_eq!(ws.ids(), &[2, 1, 0]);
        assert_eq!((ws.position_of(2), ws.position_of(0)), (0, 2));
        assert_eq!(ws.row(2), vec![-1.0, -10.0]);
        assert_eq!(ws.half_norms()[2], h0);
    }

    #[test]
    fn overflow_in_single_precision_is_an_error() {
        let x = array![[0.0], [1e25]];
        let s = Scaling::fit(x.view(), false);
        assert!(matches!(WorkingSet::<f32>::new(x.view(), &s), Err(Error::Overflow { .. })));
        assert!(WorkingSet::<f64>::new(x.view(), &s).is_ok());
    }

    #[test]
    fn standardizes_values_near_the_largest_float() {
        let small = array![[1.0, 0.5], [-3.0, 0.25], [2.0, -1.0], [0.5, 0.0]];
        let huge = small.mapv(|v| v * 5e307);
        let (a, b) = (Scaling::fit(small.view(), true), Scaling::fit(huge.view(), true));
        assert!(b.scale.iter().all(|s| s.is_finite() && *s > 1e307));
        let (za, zb) = (a.rows_of::<f64, f64>(small.view()), b.rows_of::<f64, f64>(huge.view()));
        for (u, v) in za.unwrap().iter().zip(zb.unwrap()) {
            assert!((u - v).abs() < 1e-12, "{u} vs {v}");
        }
        let near_max = array![[1.5e308], [1.7e308]]; // their plain sum overflows
        let s = Scaling::fit(near_max.view(), true);
        assert!(
            (s.mean[0] / 1.6e308 - 1.0).abs() < 1e-15 && (s.scale[0] / 1e307 - 1.0).abs() < 1e-12
        );
    }

    #[test]
    fn sums_of_squares_that_overflow_are_refused() {
        let x = array![[1e200, 0.0], [-1e200, 1.0]];
        let s = Scaling::fit(x.view(), false);
        assert_eq!(WorkingSet::<f64>::new(x.view(), &s).unwrap_err(), Error::SumOverflow);
        assert_eq!(s.rows_of::<f64, f64>(x.view()).unwrap_err(), Error::SumOverflow);
        // 1e150 squared fits, but not 16 times the total of a few of them.
        let x = array![[1.3e154], [-1.3e154], [1.3e154]];
        let s = Scaling::fit(x.view(), false);
        assert_eq!(s.rows_of::<f64, f64>(x.view()).unwrap_err(), Error::SumOverflow);
        assert!(Scaling::fit(x.view(), true).rows_of::<f64, f64>(x.view()).is_ok());
    }
}
