//! The workflow options of both entry points (docs/workflow.md): strata codes and names,
//! weights, `small_strata`, `aggregation`, `trim`, `max_part` (docs/scaling.md#partitioned-runs)
//! and the scale of a part's file, as one dict extracted once into [`WorkflowOptions`] and
//! checked in one place ([`WorkflowOptions::build`]) into a [`Workflow`].

use super::to_u32;
use crate::{Aggregation, NominalKey, SmallStrata, Strata, Workflow};
use numpy::{PyReadonlyArray1, PyReadonlyArray2};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;

/// The workflow around the method, as the Python layer passes it (every key present, `None`
/// where unused). A new workflow option is a new field here and a new key at the call sites.
#[derive(FromPyObject)]
#[pyo3(from_item_all)]
pub(super) struct WorkflowOptions<'py> {
    /// A stratum code (0..len(by_names)) per record (`by=`).
    by: Option<PyReadonlyArray1<'py, i64>>,
    /// Each stratum's display name, for the messages and the merges.
    by_names: Option<Vec<String>>,
    /// A name of `SMALL_STRATA`.
    small_strata: String,
    /// A sampling weight per record.
    weights: Option<PyReadonlyArray1<'py, f64>>,
    /// A name of `AGGREGATIONS`.
    aggregation: String,
    /// The trimmed fraction of `aggregation="trimmed"`.
    trim: Option<f64>,
    /// Largest part a stratum is cut into.
    max_part: Option<usize>,
    /// The units of a part's file (the Dask engine's parts), instead of the data's own.
    scale: Option<PyReadonlyArray1<'py, f64>>,
    /// Nominal key columns as codes (n × c), grouped natively with the numeric ones
    /// (docs/algorithms.md#mixed-keys); absent for a numeric key.
    #[pyo3(default)]
    nominal_codes: Option<PyReadonlyArray2<'py, i64>>,
    /// One weight per nominal column.
    #[pyo3(default)]
    nominal_weights: Option<Vec<f64>>,
}

impl WorkflowOptions<'_> {
    /// The checked workflow; a ValueError naming the option that is wrong.
    pub(super) fn build(self) -> PyResult<Workflow> {
        let strata = match self.by {
            None => None,
            Some(codes) => {
                let codes = to_u32(&codes, "by: stratum codes must be in 0..2**32-1")?;
                Some(match self.by_names {
                    Some(names) => Strata::new(codes, names)?,
                    None => Strata::from_codes(codes),
                })
            }
        };
        Ok(Workflow {
            strata,
            small_strata: SmallStrata::parse(&self.small_strata)?,
            weights: self.weights.map(|w| w.as_array().to_vec()),
            aggregation: Aggregation::parse(&self.aggregation, self.trim)?,
            max_part: self.max_part,
            scale: self.scale.map(|s| s.as_array().to_vec()),
            nominal: match (self.nominal_codes, self.nominal_weights) {
                (Some(codes), Some(weights)) => {
                    Some(NominalKey { codes: codes.as_array().to_owned(), weights })
                }
                (None, None) => None,
                _ => {
                    return Err(PyValueError::new_err(
                        "nominal_codes and nominal_weights go together",
                    ));
                }
            },
        })
    }
}
