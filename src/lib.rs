//! # microagg
//!
//! Fast k-anonymous microaggregation of numerical microdata. Records are partitioned into
//! groups of at least `k`; publishing each record's group centroid makes every record
//! indistinguishable from at least k−1 others, at the cost of the within-group sum of
//! squares (SSE), reported as information loss IL = SSE / SST.
//!
//! The crate is the pure-Rust core of the `microagg` Python package (bindings behind the
//! `python` feature). Every algorithm is generic over `f32`/`f64`, runs on one thread
//! (the papers' fair mode) or on a rayon pool with identical results, and returns a
//! [`Partition`].
//!
//! ```
//! use microagg::{microaggregate, Method, Options, Progress};
//! let x = ndarray::array![[1.0, 2.0], [1.5, 1.8], [8.0, 8.0], [8.5, 9.0], [1.2, 2.2]];
//! let method = Method::parse("mdav", &[]).unwrap();
//! let out = microaggregate::<f64, f64>(x.view(), 2, &method, &Options::default(), &Progress::new()).unwrap();
//! assert_eq!(out.partition.group_sizes().iter().min(), Some(&2));
//! ```
//!
//! The public API is what a caller of the library needs: the entry points
//! ([`microaggregate()`], [`t_close_microaggregate()`], [`Incremental`], [`link_nearest()`]),
//! their options and results, re-exported here; and [`engine`], the pieces the benches time
//! on their own. Every module is private to the crate (docs/architecture.md#what-is-public):
//! internals can move without breaking a caller.

mod algorithms;
mod assess;
mod cache_line;
mod centroid_table;
mod dataset;
mod dense;
mod error;
mod float;
mod incremental;
mod index;
mod kernels;
mod method;
mod microaggregate;
mod missing;
mod mixed;
mod parallel;
mod partition;
mod prefetch;
mod progress;
mod rng;
mod tcloseness;
mod tcloseness_workflow;
mod width;
mod workflow;

#[cfg(feature = "python")]
mod python;

pub use assess::{NearestLinks, RowIds, link_nearest, link_nearest_mixed};
pub use error::{Error, Result};
pub use float::Float;
pub use incremental::{Incremental, IncrementalOptions, Plan, Strategy, critical_head_start, plan};
pub use index::IndexChoice;
pub use method::{METHODS, Method, ParamValue};
pub use microaggregate::{
    Options, Outcome, complete_missing, evaluate, microaggregate, microaggregate_with,
};
pub use missing::{MISSING_MODES, Missing};
pub use parallel::Parallelism;
pub use partition::Partition;
pub use progress::Progress;
pub use tcloseness::{SensitiveAttribute, T_METHODS, TCloseOutcome, TCloseness, TMethod};
pub use tcloseness_workflow::t_close_microaggregate;
pub use workflow::aggregate::AGGREGATIONS;
pub use workflow::evaluation::Evaluation;
pub use workflow::strata::SMALL_STRATA;
pub use workflow::{Aggregation, Merge, NominalKey, SmallStrata, Strata, Workflow};

/// The engine pieces the benches time or inspect on their own, below the entry point: the
/// working copy of the data, the farthest-point scan, exact MDAV and Mondrian on a prepared
/// working set, the execution context of one pass, and t-first's classes before their
/// verification (`benches/t_first_bound.rs`).
pub mod engine {
    pub use crate::algorithms::mdav::{MdavOptions, mdav};
    pub use crate::algorithms::mondrian::{CutRule, mondrian};
    pub use crate::assess::scores::{PanelRun, Panels, ScoreKernel, TILE};
    pub use crate::dataset::{Scaling, WorkingSet};
    pub use crate::kernels::{Farthest, Metric, scan};
    pub use crate::parallel::Exec;
    pub use crate::tcloseness::budget::Budget;
    pub use crate::tcloseness::confidential::Confidential;
    pub use crate::tcloseness::emd::Reference;
    pub use crate::tcloseness::space::Dense;
    pub use crate::tcloseness::{k_first, t_first, verify};
}
