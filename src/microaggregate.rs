//! The one entry point the bindings and Rust users call: validate, split into strata, build
//! the working copy, run the chosen method on the requested threads, aggregate and evaluate
//! the result (docs/architecture.md#the-pipeline; the steps live in [`crate::workflow`]).

use crate::algorithms::cbfs::cbfs;
use crate::algorithms::md::md;
use crate::algorithms::mdav::mixed::mixed_mdav;
use crate::algorithms::mdav::{MdavOptions, mdav};
use crate::algorithms::mdav_star::mdav_star;
use crate::algorithms::mhm::{grouping_path, md_path, mhm_on_order, npn_path, univariate};
use crate::algorithms::mona::mona;
use crate::algorithms::mondrian::mondrian;
use crate::algorithms::ona::{OnaOptions, ona};
use crate::algorithms::ona_star::ona_star;
use crate::algorithms::optimal::{MAX_N, optimal};
use crate::algorithms::vmdav::vmdav;
use crate::dataset::{Scaling, WorkingSet, validate, validate_k, validate_missing};
use crate::error::{Error, Result};
use crate::float::Float;
use crate::method::{Method, Path};
use crate::missing::Missing;
use crate::mixed::MixedKey;
use crate::parallel::{Exec, Parallelism};
use crate::partition::Partition;
use crate::progress::Progress;
use crate::workflow::completion;
use crate::workflow::evaluation::Evaluation;
use crate::workflow::jobs::group_parts;
use crate::workflow::level_completion::complete_levels;
use crate::workflow::parts::{cut_into_parts, cut_mixed_into_parts};
use crate::workflow::strata;
use crate::workflow::weights::validate_weights;
use crate::workflow::{Merge, NominalKey, Workflow};
use ndarray::{ArrayView2, Axis};
use std::borrow::Cow;

/// Settings shared by every method.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Options {
    /// z-score every attribute (population std) before partitioning; SSE/SST/IL are then
    /// measured on the standardized data (docs/architecture.md#what-microagg-computes).
    pub standardize: bool,
    /// Threads to use; every setting gives the same partition.
    pub parallelism: Parallelism,
    /// Seed of randomized methods (ONA); `None` means 0, so results are reproducible.
    pub seed: Option<u64>,
    /// Missing values (NaN): refused, or grouped on completed coordinates and released as
    /// [`Missing`] says.
    pub missing: Missing,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            standardize: true,
            parallelism: Parallelism::Sequential,
            seed: None,
            missing: Missing::Error,
        }
    }
}

/// A k-anonymous partition and its quality.
#[derive(Debug, Clone)]
pub struct Outcome {
    /// The groups.
    pub partition: Partition,
    /// Centroids and released values (caller's units), SSE, SST.
    pub evaluation: Evaluation,
    /// Undersized strata merged into their nearest stratum (`small_strata="merge"`).
    pub merges: Vec<Merge>,
}

/// Microaggregates `x` (n records × d attributes, any memory layout) into groups of at least
/// `k` records, computing in precision `T` (f32 = F-MDAV §3.5) whatever the input type `S`.
/// `progress` counts assigned records for callers that poll it from another thread.
/// Plain microaggregation: [`microaggregate_with`] and the default [`Workflow`].
pub fn microaggregate<S: Float, T: Float>(
    x: ArrayView2<S>,
    k: usize,
    method: &Method,
    options: &Options,
    progress: &Progress,
) -> Result<Outcome> {
    microaggregate_with::<S, T>(x, k, method, options, &Workflow::default(), progress)
}

/// Microaggregation inside the disclosure-control workflow (docs/architecture.md#the-pipeline), in
/// its order: validate → split into strata (merging undersized ones if asked) → cut each stratum
/// into parts of at most `max_part` records (docs/scaling.md#partitioned-runs) → group each stratum
/// or part with the method (in parallel under [`Parallelism::Threads`]) → aggregate each
/// group (weighted) → assemble one result. Every stratum is grouped in the units of one
/// scaling fitted on the whole file (centered on the stratum's own mean, which changes
/// nothing but rounding), so IL is comparable across strata. With missing values allowed
/// (`options.missing`), the scaling comes from the observed values, every step up to the
/// grouping sees the matrix completed once by EM (`completion::complete`), and the
/// evaluation releases and scores the observed cells ([`Evaluation::weighted`]). A mixed
/// key's missing codes (−1) are grouped at their most probable levels
/// (`level_completion::complete_levels`), its numeric columns completed by the same EM.
pub fn microaggregate_with<S: Float, T: Float>(
    x: ArrayView2<S>,
    k: usize,
    method: &Method,
    options: &Options,
    workflow: &Workflow,
    progress: &Progress,
) -> Result<Outcome> {
    let has_missing = options.missing.check(x)?;
    validate_k(k, x.nrows())?;
    if let Some(w) = &workflow.weights {
        validate_weights(w, x.nrows())?;
    }
    if *method == Method::Univariate && x.ncols() != 1 {
        return Err(Error::InvalidParameter {
            name: "X".into(),
            reason: format!("method 'univariate' needs exactly one attribute, got {}", x.ncols()),
        });
    }
    workflow.check_max_part(k)?;
    if let Some(nominal) = &workflow.nominal {
        check_nominal(nominal, method, options.missing, x.nrows())?;
    }
    let scaling = workflow.scaling(x, options.standardize)?;
    // Grouping sees the completed coordinates; the release and IL, the observed cells.
    let completed = if has_missing { Some(completion::complete(x)?) } else { None };
    let observed = x;
    let x = completed.as_ref().map_or(x, |c| c.view());
    // A mixed key's missing codes: its most probable levels (level_completion), for grouping.
    let nominal = match &workflow.nominal {
        Some(key) if key.codes.iter().any(|&v| v < 0) => {
            let codes = complete_levels(observed, &scaling, key.codes.view())?;
            Some(Cow::Owned(NominalKey { codes, weights: key.weights.clone() }))
        }
        key => key.as_ref().map(Cow::Borrowed),
    };
    let split = match &workflow.strata {
        Some(strata) => Some(strata::split(x, strata, k, workflow.small_strata, &scaling)?),
        None => None,
    };
    if *method == Method::Optimal {
        // With max_part, no part is larger than the bound (the exact sizes come later).
        let bound = workflow.max_part.unwrap_or(usize::MAX);
        let largest = split
            .as_ref()
            .map_or(x.nrows(), |s| s.parts.iter().map(Vec::len).max().unwrap_or(0))
            .min(bound);
        if largest > MAX_N {
            return Err(Error::InvalidParameter {
                name: "X".into(),
                reason: format!(
                    "method 'optimal' is exact and exponential: at most {MAX_N} records, got \
                     {largest}{}",
                    if workflow.max_part.is_some() {
                        " (max_part)"
                    } else if split.is_some() {
                        " in the largest stratum"
                    } else {
                        ""
                    }
                ),
            });
        }
    }
    progress.reset();
    let job =
        |part: ArrayView2<S>, rows: Option<&[usize]>, scaling: &Scaling, exec: Exec| match &nominal
        {
            None => group::<S, T>(part, k, method, scaling, options.seed, exec, progress),
            Some(nominal) => {
                let codes = rows.map(|r| nominal.codes.select(Axis(0), r));
                let codes = codes.as_ref().map_or(nominal.codes.view(), |c| c.view());
                let Method::Mdav(opts) = *method else { unreachable!("checked above") };
                let key = MixedKey::<T>::new(part, scaling, codes, &nominal.weights)?;
                Ok(mixed_mdav(key, k, opts, exec, progress))
            }
        };
    let (partition, evaluation) = options.parallelism.install(|exec| {
        let jobs = match (workflow.max_part, &split) {
            (None, None) => None,
            (None, Some(split)) => Some(Cow::Borrowed(&split.parts)),
            (Some(max_part), _) => {
                let all = || vec![(0..x.nrows() as u32).collect()];
                let units = split.as_ref().map_or_else(all, |s| s.parts.clone());
                let parts: Vec<Vec<u32>> = units
                    .into_iter()
                    .flat_map(|ids| match &nominal {
                        None => cut_into_parts(x, &scaling, ids, max_part, exec),
                        Some(nominal) => {
                            let levels = nominal.levels();
                            cut_mixed_into_parts(x, &scaling, levels, ids, max_part, exec)
                        }
                    })
                    .collect();
                (split.is_some() || parts.len() > 1).then_some(Cow::Owned(parts))
            }
        };
        let partition = match jobs {
            None => job(x, None, &scaling, exec),
            Some(parts) => group_parts(x.nrows(), &parts, exec, |ids, exec| {
                let rows: Vec<usize> = ids.iter().map(|&i| i as usize).collect();
                let part = x.select(Axis(0), &rows);
                let centered =
                    Scaling { mean: Scaling::fit(part.view(), false).mean, ..scaling.clone() };
                job(part.view(), Some(&rows), &centered, exec).map_err(|e| match e {
                    Error::Overflow { record } => Error::Overflow { record: rows[record] },
                    e => e,
                })
            }),
        }?;
        debug_assert!(partition.check(k, method.max_group_size(k)).is_ok());
        progress.finish(x.nrows());
        let (weights, aggregation) = (workflow.weights.as_deref(), workflow.aggregation);
        let completed = completed.as_ref().map(|c| c.view());
        let evaluation = Evaluation::weighted(
            observed,
            completed,
            &partition,
            &scaling,
            weights,
            aggregation,
            exec,
        )?;
        Ok::<_, Error>((partition, evaluation))
    })??;
    let merges = split.map_or_else(Vec::new, |s| s.merges);
    Ok(Outcome { partition, evaluation, merges })
}

/// Refuses a mixed key (`workflow.nominal`) that does not fit the data, with a method other
/// than exact MDAV (the one that takes it natively; for t-closeness, what `"merge"` starts
/// from), or with a missing code (−1) that `missing` does not allow.
pub(crate) fn check_nominal(
    nominal: &NominalKey,
    method: &Method,
    missing: Missing,
    n: usize,
) -> Result<()> {
    let refuse = |reason: String| Err(Error::InvalidParameter { name: "nominal".into(), reason });
    if nominal.codes.nrows() != n {
        return refuse(format!(
            "needs one row of codes per record ({n}), got {}",
            nominal.codes.nrows()
        ));
    }
    if !matches!(method, Method::Mdav(_)) {
        return refuse(format!(
            "a mixed key is grouped natively by {NATIVE_MIXED:?} only, not {}",
            method.name()
        ));
    }
    if let Some(&code) = nominal.codes.iter().find(|&&v| v < -1) {
        return refuse(format!("codes are 0.. (−1 for a missing cell), got {code}"));
    }
    if missing == Missing::Error && nominal.codes.iter().any(|&v| v < 0) {
        return refuse("a missing nominal cell (code −1) needs missing='fill' or 'keep'".into());
    }
    Ok(())
}

/// The methods that group a mixed key natively, without its one-hot embedding.
pub const NATIVE_MIXED: &[&str] = &["mdav"];

/// Groups the records of `x` (one stratum, or the whole file; complete data) with `method`,
/// in the units of `scaling`. The Mondrian family works on row-major records and needs no
/// column-major copy.
pub(crate) fn group<S: Float, T: Float>(
    x: ArrayView2<S>,
    k: usize,
    method: &Method,
    scaling: &Scaling,
    seed: Option<u64>,
    exec: Exec,
    progress: &Progress,
) -> Result<Partition> {
    let d = x.ncols();
    Ok(match *method {
        Method::Mondrian(rule) => mondrian(scaling.rows_of::<S, T>(x)?, d, k, rule, exec, progress),
        Method::Mona(opts) => mona(scaling.rows_of::<S, T>(x)?, d, k, opts, exec, progress),
        _ => on_working_set(WorkingSet::<T>::new(x, scaling)?, k, method, seed, exec, progress),
    })
}

/// Runs a method that works on the column-major working copy (all but the Mondrian family).
fn on_working_set<T: Float>(
    ws: WorkingSet<T>,
    k: usize,
    method: &Method,
    seed: Option<u64>,
    exec: Exec,
    progress: &Progress,
) -> Partition {
    match *method {
        Method::Mdav(opts) => mdav(ws, k, opts, exec, progress),
        Method::Mondrian(_) | Method::Mona(_) => unreachable!("the Mondrian family runs on rows"),
        Method::Mhm => mhm_on_order(&ws, &(0..ws.n() as u32).collect::<Vec<_>>(), k),
        Method::Univariate => univariate(&ws, k),
        Method::Md { spatial_index } => md(&ws, k, spatial_index, progress),
        Method::Cbfs => cbfs(ws, k, exec, progress),
        Method::Optimal => optimal(&ws, k),
        Method::Vmdav { gamma } => vmdav(&ws, k, gamma, progress),
        Method::PathMhm(path) => {
            let order = match path {
                Path::Npn => npn_path(&ws, progress),
                Path::Md => md_path(&ws, k, progress),
                Path::Cbfs => grouping_path(&ws, &cbfs(ws.clone(), k, exec, progress)),
            };
            mhm_on_order(&ws, &order, k)
        }
        Method::MdavMhm => {
            let grouping = mdav(ws.clone(), k, MdavOptions::default(), exec, progress);
            mhm_on_order(&ws, &grouping_path(&ws, &grouping), k)
        }
        Method::MdavStar { plus, accelerators } => {
            mdav_star(ws, k, plus, accelerators, exec, progress)
        }
        Method::OnaStar { max_rounds } => ona_star(ws, k, max_rounds, exec, progress),
        Method::Ona { max_rounds, n_init } => {
            let seed = seed.unwrap_or(0);
            ona(ws, k, OnaOptions { seed, max_rounds, n_init }, exec, progress)
        }
    }
}

/// SSE, SST and centroids of `x` grouped by `labels` (for `information_loss(X, labels)`);
/// with `allow_missing`, NaN cells are accepted and left out (observed cells only,
/// docs/workflow.md#missing-values; ±∞ is always refused).
pub fn evaluate<S: Float>(
    x: ArrayView2<S>,
    labels: Vec<u32>,
    standardize: bool,
    allow_missing: bool,
) -> Result<Evaluation> {
    if allow_missing {
        validate_missing(x)?;
    } else {
        validate(x)?;
    }
    let partition = Partition::from_labels(labels)?;
    Evaluation::new(x, &partition, &Scaling::fit(x, standardize))
}

/// `x` with each missing cell (NaN) at its conditional expectation under the normal fitted
/// by EM: the coordinates `missing="fill"` and `"keep"` group on
/// (docs/workflow.md#missing-values). The data is validated first (±∞ and empty data are
/// refused; a column with no observed value is an error).
pub fn complete_missing<S: Float>(x: ArrayView2<S>) -> Result<ndarray::Array2<S>> {
    validate_missing(x)?;
    completion::complete(x)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::index::IndexChoice;
    use crate::workflow::Strata;
    use ndarray::Array2;

    #[test]
    fn a_mixed_key_is_grouped_by_exact_mdav_within_strata_and_refused_by_other_methods() {
        let n = 90;
        let x = Array2::from_shape_fn((n, 2), |(i, j)| ((i * (j + 3)) as f64 * 0.37).sin());
        let codes = Array2::from_shape_fn((n, 2), |(i, j)| ((i * (j + 1)) % (3 + 4 * j)) as i64);
        let strata: Vec<u32> = (0..n as u32).map(|i| i % 2).collect();
        let workflow = Workflow {
            strata: Some(Strata::from_codes(strata.clone())),
            nominal: Some(NominalKey { codes, weights: vec![1.0, 2.0] }),
            ..Workflow::default()
        };
        let run = |method: &Method| {
            microaggregate_with::<f64, f64>(
                x.view(),
                3,
                method,
                &Options::default(),
                &workflow,
                &Progress::new(),
            )
        };
        let out = run(&Method::Mdav(MdavOptions::default())).unwrap();
        out.partition.check(3, Some(5)).unwrap();
        let labels = out.partition.labels();
        for i in 0..n {
            for j in 0..n {
                assert!(labels[i] != labels[j] || strata[i] == strata[j], "a group crosses strata");
            }
        }
        // The release is the numeric columns'.
        assert_eq!(out.evaluation.centroids.ncols(), 2);
        let md = Method::Md { spatial_index: IndexChoice::Off };
        assert!(matches!(run(&md), Err(Error::InvalidParameter { name, .. }) if name == "nominal"));
    }
}
