//! The value a group releases for one attribute (docs/workflow.md#aggregation, sdcMicro's
//! `aggr` measures): it never changes the grouping, only what is published.
//!
//! Every measure works on the group's `(value, weight)` pairs of one attribute, so weights
//! are honoured wherever the measure has a weighted reading, and a caller that must skip
//! some cells (missing values) simply leaves them out of the slice. Pairs of weight zero
//! count for nothing; a group whose weights are all zero is aggregated unweighted.

use crate::error::{Error, Result};

/// R's consistency constant of `mad()`: the MAD of a normal sample times this estimates σ.
const MAD_CONSTANT: f64 = 1.4826;
/// sdcMicro's clipping constant of "onestep": values beyond median ± (3/1.486)·MAD are clipped.
const ONESTEP_CONSTANT: f64 = 3.0 / 1.486;

/// What a group releases.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub enum Aggregation {
    /// Weighted mean (the centroid; the default).
    #[default]
    Mean,
    /// Weighted median: the smallest value whose cumulative weight reaches half the total;
    /// when it reaches exactly half, the mean of that value and the next (with unit
    /// weights: the ordinary median).
    Median,
    /// Trimmed mean with this fraction in [0, 0.5]: the weight `fraction × total` is cut
    /// from each end (whole records only: with unit weights ⌊fraction·m⌋ records per end,
    /// R's `mean(x, trim=)`), then the weighted mean of the rest; 0.5 gives the median, as in R.
    Trim(f64),
    /// sdcMicro's one-step estimator: clip every value to median ± (3/1.486)·MAD, MAD being
    /// R's `mad()` (1.4826 × the median absolute deviation from the median; weighted medians
    /// where weighted), then take the weighted mean.
    Onestep,
}

/// The names `aggregation=` accepts.
pub const AGGREGATIONS: [&str; 4] = ["mean", "median", "trim", "onestep"];

/// `trim=`'s default: a tenth of the weight cut from each end.
pub const DEFAULT_TRIM: f64 = 0.1;

impl Aggregation {
    /// Parses `aggregation=` and its `trim=` fraction (`None`: `DEFAULT_TRIM`; only
    /// `"trim"` takes one).
    pub fn parse(name: &str, trim: Option<f64>) -> Result<Self> {
        let how = match name {
            "mean" => Aggregation::Mean,
            "median" => Aggregation::Median,
            "onestep" => Aggregation::Onestep,
            "trim" => {
                let t = trim.unwrap_or(DEFAULT_TRIM);
                if !(0.0..=0.5).contains(&t) {
                    return Err(Error::InvalidParameter {
                        name: "trim".into(),
                        reason: format!("the share cut from each end must be in [0, 0.5], got {t}"),
                    });
                }
                Aggregation::Trim(t)
            }
            _ => {
                return Err(Error::InvalidParameter {
                    name: "aggregation".into(),
                    reason: format!(
                        "unknown aggregation '{name}'; choose one of: {}",
                        AGGREGATIONS.join(", ")
                    ),
                });
            }
        };
        if trim.is_some() && !matches!(how, Aggregation::Trim(_)) {
            return Err(Error::InvalidParameter {
                name: "trim".into(),
                reason: format!("trim applies to aggregation='trim' only, not '{name}'"),
            });
        }
        Ok(how)
    }

    /// True when the released value is the weighted mean (the centroid itself).
    pub fn is_mean(self) -> bool {
        self == Aggregation::Mean
    }
}

/// The weighted mean of `pairs` (value, weight); the plain mean when every weight is zero.
/// The weights are first brought to the largest one's binade ([`Rescale`]), so weights at either
/// end of the float range (subnormal, or near `f64::MAX`) neither underflow nor overflow their
/// sums; the result is clamped into the range of the values it averages, which rounding can leave
/// by an ulp. With unit weights the result has the bits of `Σ v / m` (clamped). Takes any
/// re-iterable sequence, so a caller needs no buffer for it.
pub fn weighted_mean(pairs: impl IntoIterator<Item = (f64, f64)> + Clone) -> f64 {
    let top = pairs.clone().into_iter().fold(0.0, |t, (_, w)| f64::max(t, w));
    let scale = (top > 0.0).then(|| Rescale::to(top));
    let (sum, total) = pairs.clone().into_iter().fold((0.0, 0.0), |(s, t), (v, w)| {
        let w = scale.map_or(1.0, |scale| scale.apply(w));
        (s + w * v, t + w)
    });
    let (low, high) = pairs
        .into_iter()
        .filter(|&(_, w)| w > 0.0 || top == 0.0)
        .fold((f64::INFINITY, f64::NEG_INFINITY), |(l, h), (v, _)| (l.min(v), h.max(v)));
    (sum / total).clamp(low, high)
}

/// Multiplication by the power of two that brings a largest weight into [1, 2): exact (the
/// weights' ratios, and ties between their sums, are kept, unlike a division by the largest
/// weight, which rounds), so weights at either end of the float range sum like unit weights.
#[derive(Clone, Copy)]
struct Rescale(f64, f64);

impl Rescale {
    /// The factor for weights whose largest is `top` (> 0), as two powers of two (2^1074,
    /// for a subnormal `top`, is no f64).
    fn to(top: f64) -> Self {
        let e = top.log2().floor() as i32;
        let half = -e / 2;
        Rescale(2f64.powi(half), 2f64.powi(-e - half))
    }

    fn apply(self, w: f64) -> f64 {
        w * self.0 * self.1
    }
}

/// The weights times the power of two that brings the largest into [1, 2) ([`Rescale`]):
/// what an evaluation takes, so that weights at either end of the float range neither
/// overflow nor vanish from its sums of squares, while their ratios (and the ties a weighted
/// median looks for) stay exact. `None` when every weight is zero.
pub fn rescaled_weights(weights: &[f64]) -> Option<Vec<f64>> {
    let top = weights.iter().fold(0.0, |t, &w| f64::max(t, w));
    let scale = (top > 0.0).then(|| Rescale::to(top))?;
    Some(weights.iter().map(|&w| scale.apply(w)).collect())
}

/// The value a group releases for one attribute, from its non-empty `(value, weight)` pairs
/// (reordered in place).
pub fn group_value(pairs: &mut [(f64, f64)], how: Aggregation) -> f64 {
    debug_assert!(!pairs.is_empty());
    let pairs = positive_weights(pairs);
    match how {
        Aggregation::Mean => weighted_mean(pairs.iter().copied()),
        Aggregation::Trim(t) if t < 0.5 => trimmed_mean(sort_by_value(pairs), t),
        Aggregation::Median | Aggregation::Trim(_) => sorted_median(sort_by_value(pairs), |v| v),
        Aggregation::Onestep => onestep(pairs),
    }
}

/// The pairs of positive weight (moved to the front), their weights brought to the binade
/// of 1 ([`Rescale`]: sums of weights neither overflow nor vanish whatever their scale), or
/// all of them with unit weights when every weight is zero.
fn positive_weights(pairs: &mut [(f64, f64)]) -> &mut [(f64, f64)] {
    let mut kept = 0;
    for i in 0..pairs.len() {
        if pairs[i].1 > 0.0 {
            pairs.swap(kept, i);
            kept += 1;
        }
    }
    if kept == 0 {
        pairs.iter_mut().for_each(|p| p.1 = 1.0);
        kept = pairs.len();
    }
    let pairs = &mut pairs[..kept];
    let scale = Rescale::to(pairs.iter().fold(0.0, |t, p| f64::max(t, p.1)));
    pairs.iter_mut().for_each(|p| p.1 = scale.apply(p.1));
    pairs
}

fn sort_by_value(pairs: &mut [(f64, f64)]) -> &mut [(f64, f64)] {
    pairs.sort_unstable_by(|a, b| a.0.total_cmp(&b.0));
    pairs
}

/// Weighted median of `key(value)` over pairs sorted by it, all weights positive: the first
/// pair whose weight up to it reaches the weight after it. The weight after is summed from
/// the other end, so equal weights tie as unit weights do whatever rounding their sums take.
fn sorted_median(pairs: &[(f64, f64)], key: impl Fn(f64) -> f64) -> f64 {
    let mut after = vec![0.0; pairs.len()];
    for i in (0..pairs.len() - 1).rev() {
        after[i] = after[i + 1] + pairs[i + 1].1;
    }
    let mut cumulative = 0.0;
    for (i, &(v, w)) in pairs.iter().enumerate() {
        cumulative += w;
        if cumulative >= after[i] {
            return match pairs.get(i + 1) {
                Some(&(next, _)) if cumulative == after[i] => key(v).midpoint(key(next)),
                _ => key(v),
            };
        }
    }
    key(pairs[pairs.len() - 1].0)
}

/// Weighted mean of pairs sorted by value after cutting whole records worth at most
/// `fraction × total` weight from each end (`fraction < 0.5`, so something remains).
fn trimmed_mean(pairs: &[(f64, f64)], fraction: f64) -> f64 {
    let cut = fraction * pairs.iter().map(|p| p.1).sum::<f64>();
    // Each end holds at most `cut` < half the total; the bounds only guard against rounding.
    let low = records_within(pairs.iter().map(|p| p.1), cut).min(pairs.len() - 1);
    let high = records_within(pairs.iter().rev().map(|p| p.1), cut).min(pairs.len() - 1 - low);
    weighted_mean(pairs[low..pairs.len() - high].iter().copied())
}

/// How many leading records have a cumulative weight of at most `cut`.
fn records_within(weights: impl Iterator<Item = f64>, cut: f64) -> usize {
    let mut total = 0.0;
    weights
        .take_while(|&w| {
            total += w;
            total <= cut
        })
        .count()
}

/// sdcMicro's "onestep": clip to median ± (3/1.486)·MAD, then the weighted mean.
fn onestep(pairs: &mut [(f64, f64)]) -> f64 {
    let median = sorted_median(sort_by_value(pairs), |v| v);
    // Deviations from the median, kept signed for the clipping, sorted by magnitude for MAD.
    pairs.iter_mut().for_each(|p| p.0 -= median);
    pairs.sort_unstable_by(|a, b| a.0.abs().total_cmp(&b.0.abs()));
    let limit = ONESTEP_CONSTANT * MAD_CONSTANT * sorted_median(pairs, f64::abs);
    pairs.iter_mut().for_each(|p| p.0 = median + p.0.clamp(-limit, limit));
    weighted_mean(pairs.iter().copied())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn unit(values: &[f64]) -> Vec<(f64, f64)> {
        values.iter().map(|&v| (v, 1.0)).collect()
    }

    fn value(values: &[(f64, f64)], how: Aggregation) -> f64 {
        group_value(&mut values.to_vec(), how)
    }

    #[test]
    fn unit_weights_give_the_ordinary_measures() {
        let v = unit(&[7.0, 1.0, 3.0, 100.0, 2.0, 4.0]);
        assert_eq!(value(&v, Aggregation::Mean), 117.0 / 6.0);
        assert_eq!(value(&v, Aggregation::Median), 3.5);
        assert_eq!(value(&v[..5], Aggregation::Median), 3.0);
        // R: mean(c(7,1,3,100,2,4), trim=0.2) drops floor(1.2) = 1 value per end.
        assert_eq!(value(&v, Aggregation::Trim(0.2)), (2.0 + 3.0 + 4.0 + 7.0) / 4.0);
        assert_eq!(value(&v, Aggregation::Trim(0.0)), 117.0 / 6.0);
        assert_eq!(value(&v, Aggregation::Trim(0.5)), 3.5);
    }

    #[test]
    fn onestep_clips_like_sdcmicro() {
        // median 3.5; |x - 3.5| = 3.5 2.5 0.5 96.5 1.5 0.5 -> median 2, mad = 1.4826 * 2.
        let v = unit(&[7.0, 1.0, 3.0, 100.0, 2.0, 4.0]);
        let limit = 3.0 / 1.486 * 1.4826 * 2.0;
        let clipped =
            [7.0f64, 1.0, 3.0, 100.0, 2.0, 4.0].map(|x| x.clamp(3.5 - limit, 3.5 + limit));
        let want = clipped.iter().sum::<f64>() / 6.0;
        assert!((value(&v, Aggregation::Onestep) - want).abs() < 1e-12);
        assert!(value(&v, Aggregation::Onestep) < 10.0);
    }

    #[test]
    fn weights_count_like_repeated_records() {
        let weighted = [(1.0, 2.0), (5.0, 1.0), (2.0, 3.0), (9.0, 1.0)];
        let repeated = unit(&[1.0, 1.0, 5.0, 2.0, 2.0, 2.0, 9.0]);
        for how in [Aggregation::Mean, Aggregation::Median, Aggregation::Onestep] {
            let (a, b) = (value(&weighted, how), value(&repeated, how));
            assert!((a - b).abs() < 1e-12, "{how:?}: {a} vs {b}");
        }
    }

    #[test]
    fn trim_cuts_whole_records_and_ignores_the_scale_of_the_weights() {
        // Total 7, 0.15 of it is 1.05: the top record (weight 1) goes, the bottom one
        // (weight 2) stays.
        let weighted = [(1.0, 2.0), (5.0, 1.0), (2.0, 3.0), (9.0, 1.0)];
        assert_eq!(value(&weighted, Aggregation::Trim(0.15)), 13.0 / 6.0);
        let scaled = weighted.map(|(v, w)| (v, w * 10.0));
        assert_eq!(value(&scaled, Aggregation::Trim(0.15)), 13.0 / 6.0);
        // 0.3 of 7 is 2.1: the bottom record and the two top ones go.
        assert_eq!(value(&weighted, Aggregation::Trim(0.3)), 2.0);
    }

    #[test]
    fn zero_weights_count_for_nothing_unless_all_are_zero() {
        let v = [(1.0, 0.0), (4.0, 1.0), (6.0, 1.0), (100.0, 0.0)];
        assert_eq!(value(&v, Aggregation::Mean), 5.0);
        assert_eq!(value(&v, Aggregation::Median), 5.0);
        let zero = [(1.0, 0.0), (2.0, 0.0), (6.0, 0.0)];
        assert_eq!(value(&zero, Aggregation::Mean), 3.0);
        assert_eq!(value(&zero, Aggregation::Median), 2.0);
        assert_eq!(weighted_mean(zero), 3.0);
    }

    #[test]
    fn weights_at_the_ends_of_the_float_range_release_values_in_the_group_range() {
        let v = [7.0, 1.0, 3.0, 100.0, 2.0, 4.0];
        let hows = [Aggregation::Mean, Aggregation::Median, Aggregation::Trim(0.2)];
        for w in [5e-324, 1e-310, 1.7e308, f64::MAX] {
            let same: Vec<(f64, f64)> = v.iter().map(|&x| (x, w)).collect();
            for how in hows.into_iter().chain([Aggregation::Onestep]) {
                let (got, want) = (value(&same, how), value(&unit(&v), how));
                assert!((got - want).abs() <= 1e-14 * want.abs(), "{w:e} {how:?}: {got} {want}");
            }
            // Mixed with ordinary and zero weights: no NaN, nothing outside [1, 100].
            let mixed: Vec<(f64, f64)> =
                v.iter().zip([w, 1.0, 0.0, w, 3.0, w]).map(|(&x, w)| (x, w)).collect();
            for how in hows.into_iter().chain([Aggregation::Onestep, Aggregation::Trim(0.49)]) {
                let got = value(&mixed, how);
                assert!((1.0..=100.0).contains(&got), "{w} {how:?}: {got}");
            }
        }
    }

    #[test]
    fn a_mean_never_leaves_the_range_of_its_values() {
        // Σ of three 0.1 is 0.30000000000000004: divided by 3 it rounds above 0.1.
        assert_eq!(weighted_mean(unit(&[0.1, 0.1, 0.1])), 0.1);
        assert_eq!(value(&unit(&[0.1, 0.1, 0.1]), Aggregation::Onestep), 0.1);
    }

    #[test]
    fn parses_names_and_checks_trim() {
        assert_eq!(Aggregation::parse("median", None).unwrap(), Aggregation::Median);
        assert_eq!(Aggregation::parse("trim", None).unwrap(), Aggregation::Trim(DEFAULT_TRIM));
        assert_eq!(Aggregation::parse("trim", Some(0.25)).unwrap(), Aggregation::Trim(0.25));
        let name = |r: Result<Aggregation>| match r {
            Err(Error::InvalidParameter { name, .. }) => name,
            other => panic!("{other:?}"),
        };
        assert_eq!(name(Aggregation::parse("average", None)), "aggregation");
        assert_eq!(name(Aggregation::parse("trim", Some(0.6))), "trim");
        assert_eq!(name(Aggregation::parse("trim", Some(f64::NAN))), "trim");
        assert_eq!(name(Aggregation::parse("mean", Some(0.1))), "trim");
    }
}
