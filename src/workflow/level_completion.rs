//! Completed levels for grouping a native mixed key with missing nominal cells
//! (docs/workflow.md#missing-values), without the one-hot block the EM of
//! [`super::completion`] would need (its covariance is quadratic in the levels).
//!
//! A missing cell of a nominal column gets, for grouping only, the level most probable given
//! the record's observed attributes under a naive Bayes model fitted on the records that
//! observed the column (a discriminant analysis with the attributes independent within a
//! level, so that no attribute pair's table is needed): the level's share (add-one smoothed), times, for each
//! observed numeric column, a normal density around the level's mean of the standardized
//! values with the column's pooled within-level variance, times, for each observed other
//! nominal column, the smoothed share of the record's level among that level's records.
//! Ties go to the lowest level; levels no record observed are never chosen.
//!
//! Cost: one pass over the data per nominal column with missing cells to fit (the
//! co-occurrences of its levels with another column's, stored as one sorted list per level
//! of the other column: O(n) entries, never a levels × levels table), then O(L × attributes
//! plus the co-occurrence lists of the record's levels) per missing cell.

use crate::dataset::Scaling;
use crate::error::{Error, Result};
use crate::float::Float;
use ndarray::{Array2, ArrayView2};

/// Smallest pooled variance of a numeric column (in standardized units).
const MIN_VARIANCE: f64 = 1e-9;

/// `codes` (n × c, −1 for a missing cell) with every missing cell at its most probable level
/// given the record's observed numeric values in `x` (NaN where missing; standardized by
/// `scaling`) and observed codes. Fails naming a nominal column with no observed code.
pub fn complete_levels<S: Float>(
    x: ArrayView2<S>,
    scaling: &Scaling,
    codes: ArrayView2<i64>,
) -> Result<Array2<i64>> {
    let mut out = codes.to_owned();
    for c in 0..codes.ncols() {
        if codes.column(c).iter().all(|&v| v >= 0) {
            continue;
        }
        let model = LevelModel::fit(x, scaling, codes, c)?;
        let mut scores = vec![0.0; model.count.len()];
        for i in (0..codes.nrows()).filter(|&i| codes[[i, c]] < 0) {
            model.score(x, scaling, codes, i, &mut scores);
            out[[i, c]] = best_level(&scores, &model.count);
        }
    }
    Ok(out)
}

/// The naive Bayes model of one nominal column's level given the other attributes.
struct LevelModel {
    /// Records that observed each level.
    count: Vec<f64>,
    /// Per numeric column: each level's mean standardized value (the column's mean where the
    /// level has no observed value) and the pooled within-level variance.
    numeric: Vec<(Vec<f64>, f64)>,
    /// Per other nominal column (`None` for the completed one itself).
    nominal: Vec<Option<CoOccurrence>>,
}

/// How the levels of the completed column co-occur with those of another column `c'`.
struct CoOccurrence {
    /// ln(records with level l that observed c' + levels of c'), per level l.
    denominator: Vec<f64>,
    /// Per level x of c': (l, ln(1 + records with l and x)) for every level l seen with x.
    with: Vec<Vec<(usize, f64)>>,
}

impl LevelModel {
    fn fit<S: Float>(
        x: ArrayView2<S>,
        scaling: &Scaling,
        codes: ArrayView2<i64>,
        column: usize,
    ) -> Result<LevelModel> {
        let own = codes.column(column);
        let levels = own.iter().map(|&v| v + 1).max().unwrap_or(0).max(0) as usize;
        if levels == 0 {
            return Err(Error::InvalidParameter {
                name: "nominal".into(),
                reason: format!("nominal column {column} has no observed value"),
            });
        }
        let seen: Vec<(usize, usize)> = own
            .iter()
            .enumerate()
            .filter(|(_, v)| **v >= 0)
            .map(|(i, &v)| (i, v as usize))
            .collect();
        let mut count = vec![0.0; levels];
        for &(_, l) in &seen {
            count[l] += 1.0;
        }
        let numeric = (0..x.ncols())
            .map(|j| {
                let (mut sum, mut squares, mut n) =
                    (vec![0.0; levels], vec![0.0; levels], vec![0.0; levels]);
                for &(i, l) in &seen {
                    let z = scaling.apply(j, x[[i, j]].as_f64());
                    if !z.is_nan() {
                        sum[l] += z;
                        squares[l] += z * z;
                        n[l] += 1.0;
                    }
                }
                let total: f64 = n.iter().sum();
                let overall = if total > 0.0 { sum.iter().sum::<f64>() / total } else { 0.0 };
                let within: f64 = (0..levels)
                    .filter(|&l| n[l] > 0.0)
                    .map(|l| (squares[l] - sum[l] * sum[l] / n[l]).max(0.0))
                    .sum();
                let filled = n.iter().filter(|&&m| m > 0.0).count() as f64;
                let variance = (within / (total - filled).max(1.0)).max(MIN_VARIANCE);
                let mean =
                    (0..levels).map(|l| if n[l] > 0.0 { sum[l] / n[l] } else { overall }).collect();
                (mean, variance)
            })
            .collect();
        let nominal = (0..codes.ncols())
            .map(|other| (other != column).then(|| co_occurrence(codes, other, &seen, levels)))
            .collect();
        Ok(LevelModel { count, numeric, nominal })
    }

    /// The log-probability (up to a constant) of each level for record `i`.
    fn score<S: Float>(
        &self,
        x: ArrayView2<S>,
        scaling: &Scaling,
        codes: ArrayView2<i64>,
        i: usize,
        scores: &mut [f64],
    ) {
        for (s, &n) in scores.iter_mut().zip(&self.count) {
            *s = (n + 1.0).ln();
        }
        for (j, (mean, variance)) in self.numeric.iter().enumerate() {
            let z = scaling.apply(j, x[[i, j]].as_f64());
            if !z.is_nan() {
                for (s, &m) in scores.iter_mut().zip(mean) {
                    *s -= (z - m) * (z - m) / (2.0 * variance);
                }
            }
        }
        for (other, co) in self.nominal.iter().enumerate() {
            let (Some(co), level) = (co, codes[[i, other]]) else { continue };
            if level < 0 {
                continue;
            }
            for (s, &d) in scores.iter_mut().zip(&co.denominator) {
                *s -= d;
            }
            for &(l, ln_joint) in co.with.get(level as usize).map_or(&[][..], Vec::as_slice) {
                scores[l] += ln_joint;
            }
        }
    }
}

/// The co-occurrences of the completed column's `levels` (its observed records `seen`, as
/// (record, level)) with `other`'s.
fn co_occurrence(
    codes: ArrayView2<i64>,
    other: usize,
    seen: &[(usize, usize)],
    levels: usize,
) -> CoOccurrence {
    let other_levels =
        codes.column(other).iter().map(|&v| v + 1).max().unwrap_or(0).max(0) as usize;
    let mut pairs: Vec<(usize, usize)> = seen
        .iter()
        .filter(|&&(i, _)| codes[[i, other]] >= 0)
        .map(|&(i, l)| (codes[[i, other]] as usize, l))
        .collect();
    let mut observed = vec![0.0; levels];
    for &(_, l) in &pairs {
        observed[l] += 1.0;
    }
    pairs.sort_unstable();
    let mut with = vec![Vec::new(); other_levels];
    for run in pairs.chunk_by(|a, b| a == b) {
        let (x, l) = run[0];
        with[x].push((l, (1.0 + run.len() as f64).ln()));
    }
    let denominator = observed.iter().map(|&n| (n + other_levels as f64).ln()).collect();
    CoOccurrence { denominator, with }
}

/// The level with the highest score among those some record observed (ties: the lowest).
fn best_level(scores: &[f64], count: &[f64]) -> i64 {
    let mut best: Option<usize> = None;
    for (l, &s) in scores.iter().enumerate() {
        if count[l] > 0.0 && best.is_none_or(|b| s > scores[b]) {
            best = Some(l);
        }
    }
    best.expect("a column with an observed value has an observed level") as i64
}

#[cfg(test)]
mod tests {
    use super::*;
    use ndarray::array;

    fn complete(x: &Array2<f64>, codes: &Array2<i64>) -> Array2<i64> {
        complete_levels(x.view(), &Scaling::fit(x.view(), true), codes.view()).unwrap()
    }

    #[test]
    fn observed_codes_stay_and_complete_keys_come_back_unchanged() {
        let x = array![[0.0], [1.0], [2.0], [3.0]];
        let codes = array![[0, 1], [1, 0], [0, 0], [1, 1]];
        assert_eq!(complete(&x, &codes), codes);
    }

    #[test]
    fn a_missing_level_follows_the_numbers() {
        // Level 0 lives near 0, level 1 near 10: a record at 9.5 gets level 1, one at 0.2
        // level 0, although level 0 is three times as frequent.
        let mut x = Array2::zeros((14, 1));
        let mut codes = Array2::zeros((14, 1));
        for i in 0..12 {
            x[[i, 0]] = if i < 9 { i as f64 * 0.1 } else { 10.0 + i as f64 * 0.1 };
            codes[[i, 0]] = i64::from(i >= 9);
        }
        x[[12, 0]] = 9.5;
        x[[13, 0]] = 0.2;
        codes[[12, 0]] = -1;
        codes[[13, 0]] = -1;
        let out = complete(&x, &codes);
        assert_eq!((out[[12, 0]], out[[13, 0]]), (1, 0));
    }

    #[test]
    fn a_missing_level_follows_another_nominal_column() {
        // Column 1's level 2 always comes with column 0's level 1; numbers say nothing.
        let x = Array2::from_elem((9, 1), 1.0);
        let mut codes =
            array![[0, 0], [0, 0], [0, 1], [0, 1], [0, 0], [1, 2], [1, 2], [-1, 2], [-1, 0]];
        let out = complete(&x, &codes);
        assert_eq!((out[[7, 0]], out[[8, 0]]), (1, 0));
        codes[[7, 1]] = -1; // nothing observed but the number: the most frequent level
        assert_eq!(complete(&x, &codes)[[7, 0]], 0);
    }

    #[test]
    fn a_mixed_key_with_missing_codes_is_grouped_when_missing_values_are_allowed() {
        use crate::{
            Method, Missing, NominalKey, Options, Progress, Workflow, microaggregate_with,
        };
        let n = 120;
        let x = Array2::from_shape_fn((n, 2), |(i, j)| {
            if (i + j) % 17 == 3 { f64::NAN } else { ((i * (j + 3)) as f64 * 0.37).sin() }
        });
        let codes = Array2::from_shape_fn((n, 2), |(i, j)| {
            if i % (7 + j) == 2 { -1 } else { ((i * (j + 1)) % (3 + 4 * j)) as i64 }
        });
        let workflow = |max_part| Workflow {
            nominal: Some(NominalKey { codes: codes.clone(), weights: vec![1.0, 2.0] }),
            max_part,
            ..Workflow::default()
        };
        let run = |missing, max_part| {
            let options = Options { missing, ..Options::default() };
            let mdav = Method::parse("mdav", &[]).unwrap();
            let w = workflow(max_part);
            microaggregate_with::<f64, f64>(x.view(), 3, &mdav, &options, &w, &Progress::new())
        };
        for max_part in [None, Some(30)] {
            let out = run(Missing::Fill, max_part).unwrap();
            out.partition.check(3, None).unwrap();
            assert_eq!(out.partition, run(Missing::Keep, max_part).unwrap().partition);
        }
        // Without a missing mode, NaN cells and missing codes are refused.
        let err = run(Missing::Error, None).unwrap_err().to_string();
        assert!(err.contains("missing") || err.contains("NaN"), "{err}");
        let x = x.mapv(|v| if v.is_nan() { 0.5 } else { v });
        let options = Options::default();
        let mdav = Method::parse("mdav", &[]).unwrap();
        let err = microaggregate_with::<f64, f64>(
            x.view(),
            3,
            &mdav,
            &options,
            &workflow(None),
            &Progress::new(),
        )
        .unwrap_err()
        .to_string();
        assert!(err.contains("missing nominal cell"), "{err}");
    }

    #[test]
    fn an_unobserved_column_is_named() {
        let x = array![[0.0], [1.0]];
        let err = complete_levels(
            x.view(),
            &Scaling::fit(x.view(), true),
            array![[0, -1], [1, -1]].view(),
        );
        assert!(err.unwrap_err().to_string().contains("nominal column 1"));
    }
}
