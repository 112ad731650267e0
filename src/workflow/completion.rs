//! Completed coordinates for grouping records with missing values (NaN cells).
//!
//! Each missing cell is replaced, for grouping only, by its conditional expectation given the
//! record's observed attributes under a multivariate normal fitted by EM to the standardized
//! data (Little & Rubin, *Statistical Analysis with Missing Data*, §11.2). The completed
//! matrix then goes through the ordinary complete-data path of every method. Grouping on
//! completed coordinates replaces the partial distance, under which a record with a missing
//! cell looked close to the extreme records that MDAV groups first, so filled values were
//! pulled toward the extremes.
//!
//! The fit: start at the observed means and the available-case (pairwise) covariance (its
//! diagonal alone when that is not positive definite), then alternate E-steps (each missing
//! block's conditional mean, and its conditional covariance added to the sufficient
//! statistics) and M-steps until the largest parameter change is below 1e-8 of the largest
//! parameter, or 100 iterations. A singular covariance block gets a ridge of 1e-9·trace/d.
//! Records are grouped by missingness pattern: each pattern of at least d records keeps the
//! sums and cross-products of its observed cells (computed once, at most the data's own size
//! in all), so an iteration costs one small regression per pattern, whatever the number of
//! records; a smaller pattern sums its records again at each iteration, which costs less
//! than its regression. Records with every attribute
//! missing carry no information: they are left out of the fit and completed with its means.
//! The fit is unweighted, as the grouping is (sampling weights only change released values).

use crate::dense::{Cholesky, SquareMatrix};
use crate::error::{Error, Result};
use crate::float::Float;
use ndarray::{Array2, ArrayView2};
use std::borrow::Cow;
use std::collections::BTreeMap;

/// Most EM iterations.
const MAX_ITERATIONS: usize = 100;
/// Convergence: the largest change of a mean or covariance, relative to the largest one.
const TOLERANCE: f64 = 1e-8;
/// The ridge added to a singular covariance block, per unit of its mean variance.
const RIDGE: f64 = 1e-9;

/// The records sharing one missingness pattern, and (for d records or more) their [`Sums`].
struct Pattern {
    observed: Vec<usize>,
    missing: Vec<usize>,
    records: Vec<usize>,
    stored: Option<Sums>,
}

/// What the E-step needs of a pattern's records (standardized): Σ x_O and Σ x_O x_Oᵀ, zero
/// on the missing attributes.
#[derive(Clone)]
struct Sums {
    sum: Vec<f64>,
    cross: SquareMatrix,
}

impl Pattern {
    /// The pattern's sums: stored, or taken from `z` now.
    fn sums(&self, z: &Array2<f64>) -> Cow<'_, Sums> {
        match &self.stored {
            Some(sums) => Cow::Borrowed(sums),
            None => Cow::Owned(self.sum_over(z)),
        }
    }

    fn sum_over(&self, z: &Array2<f64>) -> Sums {
        let d = z.ncols();
        let mut out = Sums { sum: vec![0.0; d], cross: SquareMatrix::zeros(d) };
        for &i in &self.records {
            let row = z.row(i);
            for &a in &self.observed {
                out.sum[a] += row[a];
                for &b in &self.observed {
                    *out.cross.at_mut(a, b) += row[a] * row[b];
                }
            }
        }
        out
    }
}

/// A multivariate normal: mean and covariance.
#[derive(Clone, Debug, PartialEq)]
struct Normal {
    mean: Vec<f64>,
    cov: SquareMatrix,
}

/// The linear regression of a pattern's missing block on its observed block under a
/// [`Normal`]: `x_M = intercept + coef · x_O`, with residual covariance `residual`.
struct Regression {
    intercept: Vec<f64>,
    /// |M| × |O|, row-major.
    coef: Vec<f64>,
    residual: SquareMatrix,
}

/// Returns `x` with each missing cell (NaN) replaced by its conditional expectation under the
/// normal fitted by EM (see the module doc), in the caller's units; the input unchanged when
/// nothing is missing. Fails with [`Error::NoObservedValue`] naming a column with no observed
/// value.
pub fn complete<S: Float>(x: ArrayView2<S>) -> Result<Array2<S>> {
    let (z, mean, scale) = standardized(x)?;
    let patterns = patterns(&z);
    let normal = fit(&z, &patterns);
    let mut out = x.to_owned();
    for (i, row) in z.rows().into_iter().enumerate() {
        if row.iter().all(|v| v.is_nan()) {
            for (j, m) in normal.mean.iter().enumerate() {
                out[[i, j]] = S::from_f64_lossy(mean[j] + scale[j] * m);
            }
        }
    }
    for p in patterns.iter().filter(|p| !p.missing.is_empty()) {
        let r = regression(&normal, p);
        for &i in &p.records {
            for (a, &j) in p.missing.iter().enumerate() {
                let coef = &r.coef[a * p.observed.len()..(a + 1) * p.observed.len()];
                let v = r.intercept[a]
                    + coef.iter().zip(&p.observed).map(|(c, &o)| c * z[[i, o]]).sum::<f64>();
                out[[i, j]] = S::from_f64_lossy(mean[j] + scale[j] * v);
            }
        }
    }
    Ok(out)
}

/// `x` standardized by the mean and population sd of each column's observed values (NaN
/// kept), with those means and sds (1 for a constant column).
fn standardized<S: Float>(x: ArrayView2<S>) -> Result<(Array2<f64>, Vec<f64>, Vec<f64>)> {
    let d = x.ncols();
    let (mut mean, mut scale) = (vec![0.0; d], vec![1.0; d]);
    for (j, col) in x.columns().into_iter().enumerate() {
        let seen: Vec<f64> = col.iter().map(|v| v.as_f64()).filter(|v| !v.is_nan()).collect();
        if seen.is_empty() {
            return Err(Error::NoObservedValue { attribute: j });
        }
        let m = seen.iter().sum::<f64>() / seen.len() as f64;
        let sd = (seen.iter().map(|v| (v - m) * (v - m)).sum::<f64>() / seen.len() as f64).sqrt();
        mean[j] = m;
        if sd > 0.0 && sd.is_finite() {
            scale[j] = sd;
        }
    }
    let z = Array2::from_shape_fn(x.dim(), |(i, j)| (x[[i, j]].as_f64() - mean[j]) / scale[j]);
    Ok((z, mean, scale))
}

/// The records with at least one observed value, by missingness pattern (patterns in the
/// order of their first record, so the sums are added in a fixed order).
fn patterns(z: &Array2<f64>) -> Vec<Pattern> {
    let d = z.ncols();
    let mut index: BTreeMap<Vec<bool>, usize> = BTreeMap::new();
    let mut out: Vec<Pattern> = Vec::new();
    for (i, row) in z.rows().into_iter().enumerate() {
        let seen: Vec<bool> = row.iter().map(|v| !v.is_nan()).collect();
        if !seen.contains(&true) {
            continue;
        }
        let p = *index.entry(seen.clone()).or_insert_with(|| {
            out.push(Pattern {
                observed: (0..d).filter(|&j| seen[j]).collect(),
                missing: (0..d).filter(|&j| !seen[j]).collect(),
                records: Vec::new(),
                stored: None,
            });
            out.len() - 1
        });
        out[p].records.push(i);
    }
    for p in out.iter_mut().filter(|p| p.records.len() >= d) {
        p.stored = Some(p.sum_over(z));
    }
    out
}

/// EM from the observed means and available-case covariance (module doc).
fn fit(z: &Array2<f64>, patterns: &[Pattern]) -> Normal {
    let mut normal = start(z, patterns);
    for _ in 0..MAX_ITERATIONS {
        let next = em_step(z, &normal, patterns);
        let change = max_abs_difference(&next, &normal);
        let size = next.mean.iter().chain(next.cov.values()).fold(0.0f64, |m, v| m.max(v.abs()));
        normal = next;
        if change <= TOLERANCE * size.max(f64::MIN_POSITIVE) {
            break;
        }
    }
    normal
}

/// The observed means, and the covariance of each pair over the records observing both
/// (around those means); only its diagonal when that is not positive definite.
fn start(z: &Array2<f64>, patterns: &[Pattern]) -> Normal {
    let d = z.ncols();
    let (mut sum, mut count) = (vec![0.0; d], vec![0.0; d]);
    for p in patterns {
        let sums = p.sums(z);
        for &j in &p.observed {
            sum[j] += sums.sum[j];
            count[j] += p.records.len() as f64;
        }
    }
    let mean: Vec<f64> = sum.iter().zip(&count).map(|(s, c)| s / c).collect();
    let (mut cov, mut pairs) = (SquareMatrix::zeros(d), SquareMatrix::zeros(d));
    for p in patterns {
        let (m, sums) = (p.records.len() as f64, p.sums(z));
        for &a in &p.observed {
            for &b in &p.observed {
                *cov.at_mut(a, b) +=
                    sums.cross.at(a, b) - mean[a] * sums.sum[b] - mean[b] * sums.sum[a]
                        + m * mean[a] * mean[b];
                *pairs.at_mut(a, b) += m;
            }
        }
    }
    for (c, &m) in cov.values_mut().iter_mut().zip(pairs.values()) {
        *c = if m > 0.0 { *c / m } else { 0.0 };
    }
    if Cholesky::of(&cov).is_none() {
        cov = SquareMatrix::from_fn(d, |a, b| if a == b { cov.at(a, a) } else { 0.0 });
    }
    Normal { mean, cov }
}

/// One E-step and M-step: the expected sums and cross-products of the complete data given
/// the observed cells under `normal`, turned into the next mean and covariance.
fn em_step(z: &Array2<f64>, normal: &Normal, patterns: &[Pattern]) -> Normal {
    let d = normal.mean.len();
    let (mut t1, mut t2) = (vec![0.0; d], SquareMatrix::zeros(d));
    let mut n = 0.0;
    for p in patterns {
        let m = p.records.len() as f64;
        let sums = p.sums(z);
        let (sum, cross) = (&sums.sum, &sums.cross);
        n += m;
        for &a in &p.observed {
            t1[a] += sum[a];
            for &b in &p.observed {
                *t2.at_mut(a, b) += cross.at(a, b);
            }
        }
        if p.missing.is_empty() {
            continue;
        }
        let r = regression(normal, p);
        let o = p.observed.len();
        let coef = |a: usize| &r.coef[a * o..(a + 1) * o];
        // Σ x̂_M = m·intercept + coef·Σ x_O.
        let coef_sum: Vec<f64> = (0..p.missing.len())
            .map(|a| coef(a).iter().zip(&p.observed).map(|(c, &j)| c * sum[j]).sum())
            .collect();
        // coef · Σ x_O x_Oᵀ, |M| × |O|.
        let coef_cross: Vec<f64> = (0..p.missing.len())
            .flat_map(|a| {
                p.observed.iter().map(move |&b| {
                    coef(a).iter().zip(&p.observed).map(|(c, &j)| c * cross.at(j, b)).sum()
                })
            })
            .collect();
        for (a, &ja) in p.missing.iter().enumerate() {
            let (ia, sa) = (r.intercept[a], coef_sum[a]);
            t1[ja] += m * ia + sa;
            // Σ x̂_a x_b = intercept_a Σ x_b + (coef Σ x_O x_Oᵀ)_ab.
            for (bi, &jb) in p.observed.iter().enumerate() {
                let v = ia * sum[jb] + coef_cross[a * o + bi];
                *t2.at_mut(ja, jb) += v;
                *t2.at_mut(jb, ja) += v;
            }
            // Σ x̂_a x̂_b + m·residual_ab.
            for (b, &jb) in p.missing.iter().enumerate() {
                let quad: f64 =
                    coef(b).iter().enumerate().map(|(c, &cb)| coef_cross[a * o + c] * cb).sum();
                *t2.at_mut(ja, jb) += m * ia * r.intercept[b]
                    + ia * coef_sum[b]
                    + sa * r.intercept[b]
                    + quad
                    + m * r.residual.at(a, b);
            }
        }
    }
    let mean: Vec<f64> = t1.iter().map(|s| s / n).collect();
    let cov = SquareMatrix::from_fn(d, |a, b| t2.at(a, b) / n - mean[a] * mean[b]);
    Normal { mean, cov }
}

/// The regression of pattern `p`'s missing block on its observed block under `normal`:
/// coef = Σ_MO Σ_OO⁻¹, intercept = μ_M − coef·μ_O, residual = Σ_MM − coef·Σ_OM.
fn regression(normal: &Normal, p: &Pattern) -> Regression {
    let (o, m) = (p.observed.len(), p.missing.len());
    let oo = SquareMatrix::from_fn(o, |a, b| normal.cov.at(p.observed[a], p.observed[b]));
    let chol = Cholesky::of_with_ridge(&oo, RIDGE);
    let mut coef = vec![0.0; m * o];
    for (a, &ja) in p.missing.iter().enumerate() {
        let rhs: Vec<f64> = p.observed.iter().map(|&jb| normal.cov.at(jb, ja)).collect();
        coef[a * o..(a + 1) * o].copy_from_slice(&chol.solve(&rhs));
    }
    let row = |a: usize| &coef[a * o..(a + 1) * o];
    let intercept = (0..m)
        .map(|a| {
            normal.mean[p.missing[a]]
                - row(a).iter().zip(&p.observed).map(|(c, &j)| c * normal.mean[j]).sum::<f64>()
        })
        .collect();
    let residual = SquareMatrix::from_fn(m, |a, b| {
        normal.cov.at(p.missing[a], p.missing[b])
            - row(a)
                .iter()
                .zip(&p.observed)
                .map(|(c, &j)| c * normal.cov.at(j, p.missing[b]))
                .sum::<f64>()
    });
    Regression { intercept, coef, residual }
}

/// The largest absolute difference between two normals' parameters.
fn max_abs_difference(a: &Normal, b: &Normal) -> f64 {
    let means = a.mean.iter().zip(&b.mean);
    means
        .chain(a.cov.values().iter().zip(b.cov.values()))
        .fold(0.0, |m, (x, y)| m.max((x - y).abs()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rng::SplitMix64;
    use ndarray::array;

    /// Uniform in [0, 1).
    fn uniform(rng: &mut SplitMix64) -> f64 {
        (rng.next_u64() >> 11) as f64 / (1u64 << 53) as f64
    }

    /// n records of 3 correlated attributes (x1 = x0 + noise, x2 = x0 − x1 + noise), on
    /// different scales.
    fn correlated(n: usize, seed: u64) -> Array2<f64> {
        let mut rng = SplitMix64::new(seed);
        let mut normal = || (0..12).map(|_| uniform(&mut rng)).sum::<f64>() - 6.0;
        let mut x = Array2::zeros((n, 3));
        for mut row in x.rows_mut() {
            let a = normal();
            let b = a + 0.5 * normal();
            let c = a - b + 0.3 * normal();
            row.assign(&ndarray::arr1(&[10.0 + 3.0 * a, 100.0 * b, c]));
        }
        x
    }

    /// The least-squares coefficients (intercept first) of column `y` on columns `xs`, over
    /// the rows `rows`.
    fn ols(x: &Array2<f64>, rows: &[usize], xs: &[usize], y: usize) -> Vec<f64> {
        let p = xs.len() + 1;
        let design = |i: usize, a: usize| if a == 0 { 1.0 } else { x[[i, xs[a - 1]]] };
        let gram = SquareMatrix::from_fn(p, |a, b| {
            rows.iter().map(|&i| design(i, a) * design(i, b)).sum()
        });
        let rhs: Vec<f64> =
            (0..p).map(|a| rows.iter().map(|&i| design(i, a) * x[[i, y]]).sum()).collect();
        Cholesky::of(&gram).unwrap().solve(&rhs)
    }

    #[test]
    fn complete_data_comes_back_unchanged() {
        let x = correlated(50, 1);
        assert_eq!(complete(x.view()).unwrap(), x);
    }

    /// One attribute missing, the others observed everywhere (a monotone pattern): the ML fit
    /// has a closed form (Anderson 1957; Little & Rubin §7.2), in which the missing cell's
    /// conditional expectation is the least-squares prediction fitted on the complete records.
    #[test]
    fn one_missing_attribute_gets_the_complete_records_regression() {
        let mut x = correlated(400, 2);
        let missing: Vec<usize> = (0..400).filter(|i| i % 5 == 0).collect();
        for &i in &missing {
            x[[i, 2]] = f64::NAN;
        }
        let complete_rows: Vec<usize> = (0..400).filter(|i| i % 5 != 0).collect();
        let beta = ols(&x, &complete_rows, &[0, 1], 2);
        let got = complete(x.view()).unwrap();
        for &i in &missing {
            let want = beta[0] + beta[1] * x[[i, 0]] + beta[2] * x[[i, 1]];
            assert!(
                (got[[i, 2]] - want).abs() < 1e-6 * want.abs().max(1.0),
                "{i}: {}",
                got[[i, 2]]
            );
        }
        for &i in &complete_rows {
            assert_eq!(got.row(i), x.row(i));
        }
    }

    #[test]
    fn a_record_with_nothing_observed_gets_the_fitted_means() {
        // Monotone again: the ML mean of x1 is the regression's prediction at the mean of x0.
        let mut x = correlated(300, 3).slice(ndarray::s![.., 0..2]).to_owned();
        for i in (0..300).filter(|i| i % 4 == 1) {
            x[[i, 1]] = f64::NAN;
        }
        x[[7, 0]] = f64::NAN;
        x[[7, 1]] = f64::NAN;
        let rows: Vec<usize> = (0..300).filter(|&i| i % 4 != 1 && i != 7).collect();
        let all: Vec<usize> = (0..300).filter(|&i| i != 7).collect();
        let beta = ols(&x, &rows, &[0], 1);
        let mean0 = all.iter().map(|&i| x[[i, 0]]).sum::<f64>() / all.len() as f64;
        let got = complete(x.view()).unwrap();
        assert!((got[[7, 0]] - mean0).abs() < 1e-9 * mean0.abs());
        let mean1 = beta[0] + beta[1] * mean0;
        assert!((got[[7, 1]] - mean1).abs() < 1e-6 * mean1.abs().max(1.0), "{}", got[[7, 1]]);
    }

    #[test]
    fn em_reaches_a_fixed_point_of_its_own_step() {
        let mut x = correlated(500, 4);
        let mut rng = SplitMix64::new(9);
        x.mapv_inplace(|v| if uniform(&mut rng) < 0.2 { f64::NAN } else { v });
        let (z, _, _) = standardized(x.view()).unwrap();
        let patterns = patterns(&z);
        let normal = fit(&z, &patterns);
        let again = em_step(&z, &normal, &patterns);
        // Sums taken again at each iteration are the stored ones, bit for bit.
        let mut unstored = super::patterns(&z);
        unstored.iter_mut().for_each(|p| p.stored = None);
        assert!(patterns.iter().all(|p| p.stored.is_some()));
        assert_eq!(fit(&z, &unstored), normal);
        assert!(max_abs_difference(&normal, &again) < 1e-7, "{normal:?} vs {again:?}");
        // And it is a proper covariance: symmetric, positive definite.
        assert!(Cholesky::of(&normal.cov).is_some());
        for a in 0..3 {
            for b in 0..3 {
                assert!((normal.cov.at(a, b) - normal.cov.at(b, a)).abs() < 1e-12);
            }
        }
    }

    #[test]
    fn a_singular_covariance_is_ridged_not_fatal() {
        // The second column is twice the first: Σ is singular, the regression exact.
        let mut x = Array2::from_shape_fn((40, 2), |(i, j)| (i as f64).sin() * (j + 1) as f64);
        x[[3, 1]] = f64::NAN;
        x[[8, 0]] = f64::NAN;
        let got = complete(x.view()).unwrap();
        assert!((got[[3, 1]] - 2.0 * x[[3, 0]]).abs() < 1e-4, "{}", got[[3, 1]]);
        assert!((got[[8, 0]] - x[[8, 1]] / 2.0).abs() < 1e-4, "{}", got[[8, 0]]);
        // A constant column: its missing cell is the constant.
        let y = array![[1.0, 5.0], [2.0, 5.0], [3.0, f64::NAN], [4.0, 5.0]];
        assert_eq!(complete(y.view()).unwrap()[[2, 1]], 5.0);
    }

    #[test]
    fn a_column_with_nothing_observed_is_named() {
        let x = array![[1.0, f64::NAN, 2.0], [3.0, f64::NAN, f64::NAN]];
        assert_eq!(complete(x.view()), Err(Error::NoObservedValue { attribute: 1 }));
        assert!(Error::NoObservedValue { attribute: 1 }.to_string().contains("column 1 of X"));
    }

    #[test]
    fn f32_input_is_completed_in_its_own_type() {
        let x = array![[1.0f32, 2.0], [2.0, 4.1], [3.0, f32::NAN], [4.0, 8.2]];
        let got = complete(x.view()).unwrap();
        assert!((got[[2, 1]] - 6.1).abs() < 0.2, "{}", got[[2, 1]]);
    }
}
