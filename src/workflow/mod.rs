//! The disclosure-control workflow around the algorithms (docs/workflow.md): strata, weights and
//! the value each group releases. One module per step; the algorithms know nothing of them.
//!
//! [`crate::microaggregate()`] calls the steps in the order of
//! docs/architecture.md#the-pipeline: validate (the data, the [`weights`]) → split into
//! [`strata`] (merging undersized ones if asked) → group each stratum, or each part of at most
//! `max_part` records ([`parts`]), with the method ([`jobs`], in parallel when threads are
//! allowed) → aggregate each group ([`aggregate`], inside the evaluation) → assemble the
//! result.

pub mod aggregate;
pub mod completion;
pub mod evaluation;
pub mod jobs;
pub mod level_completion;
pub mod parts;
pub mod strata;
pub mod weights;

pub use aggregate::Aggregation;
pub use strata::{Merge, SmallStrata, Strata};

use crate::dataset::Scaling;
use crate::error::{Error, Result};
use crate::float::Float;
use ndarray::ArrayView2;

/// Everything the workflow adds around a method (docs/workflow.md). The default is plain
/// microaggregation: one stratum, unit weights, groups released as their means.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Workflow {
    /// Stratum of every record; no group crosses a stratum (`by=`).
    pub strata: Option<Strata>,
    /// What to do with strata of fewer than k records (`small_strata=`).
    pub small_strata: SmallStrata,
    /// Sampling weight of every record (`weights=`): weighted group values and SSE/SST.
    pub weights: Option<Vec<f64>>,
    /// The value a group releases (`aggregation=`).
    pub aggregation: Aggregation,
    /// Cut every stratum into parts of at most this many records (Mondrian-V, ties by row
    /// index; `parts`) and group each part on its own (`max_part=`,
    /// docs/scaling.md#partitioned-runs; ≥ 2k).
    pub max_part: Option<usize>,
    /// Divide attribute j by `scale[j]` instead of the data's own standard deviation: a
    /// part of a larger file grouped in that file's units (the Dask engine's parts).
    pub scale: Option<Vec<f64>>,
    /// Nominal key columns beside the numeric ones (docs/algorithms.md#mixed-keys): grouped
    /// natively by exact MDAV; the release and the evaluation stay the numeric columns'.
    pub nominal: Option<NominalKey>,
}

/// Nominal quasi-identifiers as integer codes (n × c, each in 0..L−1) and one weight per
/// column: the part of a mixed key that is not numeric (docs/algorithms.md#mixed-keys).
#[derive(Debug, Clone, PartialEq)]
pub struct NominalKey {
    /// A code per record and nominal column.
    pub codes: ndarray::Array2<i64>,
    /// Each nominal column's weight w (its one-hot block scaled by w/√2).
    pub weights: Vec<f64>,
}

impl NominalKey {
    /// The codes and weights as the cuts of a partitioned run see them.
    pub fn levels(&self) -> parts::LevelColumns<'_> {
        parts::LevelColumns { codes: self.codes.view(), weights: &self.weights }
    }
}

impl Workflow {
    /// Refuses a `max_part` below 2k: each half of a cut must keep k records.
    pub fn check_max_part(&self, k: usize) -> Result<()> {
        match self.max_part {
            Some(m) if m < 2 * k => Err(Error::InvalidParameter {
                name: "max_part".into(),
                reason: format!(
                    "must be at least 2k = {} (each half of a cut has k), got {m}",
                    2 * k
                ),
            }),
            _ => Ok(()),
        }
    }

    /// The units every stratum and part of `x` is grouped in: the given [`Workflow::scale`],
    /// else the data's own (each column's observed values; standard deviations when
    /// `standardize`), cut to `parts::shared_scale` in a partitioned run so that the Dask
    /// engine's parts are grouped alike.
    pub fn scaling<S: Float>(&self, x: ArrayView2<S>, standardize: bool) -> Result<Scaling> {
        match (&self.scale, self.max_part) {
            (Some(scale), _) => Scaling::with_scale(x, scale),
            (None, None) => Ok(Scaling::fit(x, standardize)),
            (None, Some(_)) => {
                let fitted = Scaling::fit(x, standardize);
                let scale = fitted.scale.iter().map(|&s| parts::shared_scale(s)).collect();
                Ok(Scaling { scale, ..fitted })
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Method, Options, Parallelism, Progress, microaggregate_with};
    use ndarray::Array2;

    fn data(n: usize, d: usize) -> Array2<f64> {
        let mut state = 12345u64;
        Array2::from_shape_fn((n, d), |_| {
            state = state.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            (state >> 11) as f64 / (1u64 << 53) as f64
        })
    }

    fn run(x: &Array2<f64>, method: &str, workflow: &Workflow, n_jobs: i64) -> crate::Outcome {
        let options = Options {
            parallelism: Parallelism::from_n_jobs(n_jobs).unwrap(),
            ..Options::default()
        };
        let method = Method::parse(method, &[]).unwrap();
        microaggregate_with::<f64, f64>(x.view(), 3, &method, &options, workflow, &Progress::new())
            .unwrap()
    }

    #[test]
    fn groups_stay_inside_strata_with_global_labels_on_any_thread_count() {
        let x = data(300, 3);
        let codes: Vec<u32> = (0..300).map(|i| (i * 7 % 5) as u32).collect();
        let workflow =
            Workflow { strata: Some(Strata::from_codes(codes.clone())), ..Default::default() };
        for method in ["mdav", "mondrian-v", "ona-star"] {
            let out = run(&x, method, &workflow, 1);
            let p = &out.partition;
            p.check(3, None).unwrap();
            let mut stratum_of_group = vec![None; p.n_groups()];
            for (&l, &c) in p.labels().iter().zip(&codes) {
                let s = stratum_of_group[l as usize].get_or_insert(c);
                assert_eq!(*s, c, "{method}: group {l} crosses strata");
            }
            assert_eq!(run(&x, method, &workflow, 2).partition, out.partition, "{method}");
        }
    }

    #[test]
    fn a_single_stratum_is_plain_microaggregation() {
        let x = data(200, 4);
        let one = Workflow { strata: Some(Strata::from_codes(vec![0; 200])), ..Default::default() };
        let (a, b) = (run(&x, "mdav", &one, 1), run(&x, "mdav", &Workflow::default(), 1));
        assert_eq!(a.partition, b.partition);
        assert_eq!((a.evaluation.sse, a.evaluation.sst), (b.evaluation.sse, b.evaluation.sst));
    }

    #[test]
    fn weights_and_aggregation_change_the_values_not_the_groups() {
        let x = data(120, 2);
        let weights: Vec<f64> = (0..120).map(|i| (i % 4) as f64).collect();
        let plain = run(&x, "mdav", &Workflow::default(), 1);
        let workflow = Workflow {
            weights: Some(weights),
            aggregation: Aggregation::Median,
            ..Default::default()
        };
        let out = run(&x, "mdav", &workflow, 1);
        assert_eq!(out.partition, plain.partition);
        assert!(out.evaluation.released.is_some());
        assert!(plain.evaluation.released.is_none());
        assert_ne!(out.evaluation.sse, plain.evaluation.sse);
    }
}
