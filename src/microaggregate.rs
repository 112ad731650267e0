//! The one entry point the bindings and Rust users call: validate, build the working copy,
//! run the chosen method on the requested threads, evaluate the result.

use crate::algorithms::cbfs::cbfs;
use crate::algorithms::md::md;
use crate::algorithms::mdav::mdav;
use crate::algorithms::mdav_star::mdav_star;
use crate::algorithms::mhm::{cbfs_path, md_path, mdav_path, mhm_on_order, npn_path, univariate};
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
use crate::missing::{self, Missing};
use crate::parallel::{Exec, Parallelism};
use crate::partition::{Evaluation, Partition};
use crate::progress::Progress;
use ndarray::ArrayView2;

/// Settings shared by every method.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Options {
    /// z-score every attribute (population std) before partitioning; SSE/SST/IL are then
    /// measured on the standardized data (DESIGN §1).
    pub standardize: bool,
    /// Threads to use; every setting gives the same partition.
    pub parallelism: Parallelism,
    /// Seed of randomized methods (ONA); `None` means 0, so results are reproducible.
    pub seed: Option<u64>,
    /// Missing values (NaN): refused, or grouped by partial distances (DESIGN §8).
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
    /// Centroids (caller's units), SSE, SST.
    pub evaluation: Evaluation,
}

/// Microaggregates `x` (n records × d attributes, any memory layout) into groups of at least
/// `k` records, computing in precision `T` (f32 = F-MDAV §3.5) whatever the input type `S`.
/// `progress` counts assigned records for callers that poll it from another thread.
pub fn microaggregate<S: Float, T: Float>(
    x: ArrayView2<S>,
    k: usize,
    method: &Method,
    options: &Options,
    progress: &Progress,
) -> Result<Outcome> {
    let has_missing = match options.missing {
        Missing::Error => validate(x).map(|_| false)?,
        Missing::Fill | Missing::Keep => validate_missing(x)?,
    };
    validate_k(k, x.nrows())?;
    if has_missing {
        missing::check_method(method)?;
    }
    if *method == Method::Optimal && x.nrows() > MAX_N {
        return Err(Error::InvalidParameter {
            name: "X".into(),
            reason: format!(
                "method 'optimal' is exact and exponential: at most {MAX_N} records, got {}",
                x.nrows()
            ),
        });
    }
    if *method == Method::Univariate && x.ncols() != 1 {
        return Err(Error::InvalidParameter {
            name: "X".into(),
            reason: format!("method 'univariate' needs exactly one attribute, got {}", x.ncols()),
        });
    }
    let scaling = Scaling::fit(x, options.standardize);
    progress.reset();
    let run = |x: ArrayView2<S>| {
        options.parallelism.install(|exec| {
            partition_of::<S, T>(x, k, method, &scaling, has_missing, options.seed, exec, progress)
        })?
    };
    let partition = if has_missing {
        missing::with_empty_records(x, k, |v| v.is_nan(), |sub| run(sub.unwrap_or(x)))?
    } else {
        run(x)?
    };
    debug_assert!(partition.check(k, method.max_group_size(k)).is_ok() || has_missing);
    progress.finish(x.nrows());
    let evaluation = if has_missing {
        Evaluation::observed(x, &partition, &scaling)?
    } else {
        Evaluation::new(x, &partition, &scaling)?
    };
    Ok(Outcome { partition, evaluation })
}

/// Groups the records of `x` with `method`; with `has_missing`, on the masked working set (the
/// Mondrian family: on rows with NaN cells).
#[allow(clippy::too_many_arguments)]
fn partition_of<S: Float, T: Float>(
    x: ArrayView2<S>,
    k: usize,
    method: &Method,
    scaling: &Scaling,
    has_missing: bool,
    seed: Option<u64>,
    exec: Exec,
    progress: &Progress,
) -> Result<Partition> {
    let d = x.ncols();
    // The Mondrian family works on row-major records and needs no column-major copy.
    let rows = |x| {
        if has_missing { scaling.rows_of_missing::<S, T>(x) } else { scaling.rows_of::<S, T>(x) }
    };
    Ok(match *method {
        Method::Mondrian(rule) => mondrian(rows(x)?, has_missing, d, k, rule, exec, progress),
        Method::Mona(opts) => mona(rows(x)?, has_missing, d, k, opts, exec, progress),
        _ => {
            let ws = if has_missing {
                WorkingSet::<T>::with_missing(x, scaling)?
            } else {
                WorkingSet::<T>::new(x, scaling)?
            };
            on_working_set(ws, k, method, seed, exec, progress)
        }
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
        Method::Md => md(&ws, k, progress),
        Method::Cbfs => cbfs(ws, k, exec, progress),
        Method::Optimal => optimal(&ws, k),
        Method::Vmdav { gamma } => vmdav(&ws, k, gamma, progress),
        Method::PathMhm(path) => {
            let order = match path {
                Path::Npn => npn_path(&ws, progress),
                Path::Md => md_path(&ws, k, progress),
                Path::Cbfs => cbfs_path(&ws, k, exec, progress),
            };
            mhm_on_order(&ws, &order, k)
        }
        Method::MdavMhm => mhm_on_order(&ws, &mdav_path(&ws, k, exec, progress), k),
        Method::MdavStar { plus } => mdav_star(ws, k, plus, exec, progress),
        Method::OnaStar { max_rounds } => ona_star(ws, k, max_rounds, exec, progress),
        Method::Ona { max_rounds, n_init } => {
            let seed = seed.unwrap_or(0);
            ona(ws, k, OnaOptions { seed, max_rounds, n_init }, exec, progress)
        }
    }
}

/// SSE, SST and centroids of `x` grouped by `labels` (for `information_loss(X, labels)`).
pub fn evaluate<S: Float>(
    x: ArrayView2<S>,
    labels: Vec<u32>,
    standardize: bool,
) -> Result<Evaluation> {
    validate(x)?;
    let partition = Partition::from_labels(labels)?;
    Evaluation::new(x, &partition, &Scaling::fit(x, standardize))
}

/// [`evaluate`] for data that may have missing values (NaN; ±∞ is still refused): centroids,
/// SSE and SST on the observed cells ([`Evaluation::observed`]).
pub fn evaluate_missing<S: Float>(
    x: ArrayView2<S>,
    labels: Vec<u32>,
    standardize: bool,
) -> Result<Evaluation> {
    validate_missing(x)?;
    let partition = Partition::from_labels(labels)?;
    Evaluation::observed(x, &partition, &Scaling::fit(x, standardize))
}
