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
//! Modules: [`dataset`] (validation, working copy), [`kernels`] (hot loops), [`partition`]
//! (result and quality), [`parallel`] (threads), [`algorithms`] (one file per family),
//! [`method`] (the catalogue), [`workflow`] (strata, parts, weights, aggregation: docs/workflow.md,
//! docs/scaling.md#partitioned-runs), [`missing`] and [`workflow::completion`] (missing values), [`dense`] (small d × d
//! solves), [`index`] and [`assess`] (nearest-neighbour indexes, record linkage: docs/assessment.md#risk),
//! [`microaggregate()`] (the entry point), [`tcloseness`] and [`tcloseness_workflow`] (t-closeness
//! of confidential attributes, docs/workflow.md#t-closeness-of-confidential-attributes).

pub mod algorithms;
pub mod assess;
mod cache_line;
pub mod centroid_table;
pub mod dataset;
pub mod dense;
pub mod error;
pub mod float;
pub mod incremental;
pub mod index;
pub mod kernels;
pub mod method;
mod microaggregate;
pub mod missing;
pub mod parallel;
pub mod partition;
mod prefetch;
pub mod progress;
pub mod rng;
pub mod tcloseness;
pub mod tcloseness_workflow;
mod width;
pub mod workflow;

#[cfg(feature = "python")]
mod python;

pub use error::{Error, Result};
pub use float::Float;
pub use method::{METHODS, Method, ParamValue};
pub use microaggregate::{Options, Outcome, evaluate, microaggregate, microaggregate_with};
pub use missing::Missing;
pub use parallel::Parallelism;
pub use partition::Partition;
pub use progress::Progress;
pub use workflow::Workflow;
pub use workflow::evaluation::Evaluation;
