//! The workflow arguments of `microaggregate_array` (docs/workflow.md): strata codes and names,
//! weights, `small_strata`, `aggregation`, `trim`, `max_part` (docs/scaling.md#partitioned-runs)
//! and the scale of a part's file, checked into a [`Workflow`].

use super::{to_py_err, to_u32};
use crate::workflow::{Aggregation, SmallStrata, Strata, Workflow};
use numpy::PyReadonlyArray1;
use pyo3::prelude::*;

/// Builds the workflow: `by` holds a stratum code (0..len(by_names)) per record,
/// `by_names` each stratum's display name.
#[allow(clippy::too_many_arguments)]
pub(super) fn build(
    by: Option<PyReadonlyArray1<'_, i64>>,
    by_names: Option<Vec<String>>,
    small_strata: &str,
    weights: Option<PyReadonlyArray1<'_, f64>>,
    aggregation: &str,
    trim: Option<f64>,
    max_part: Option<usize>,
    scale: Option<PyReadonlyArray1<'_, f64>>,
) -> PyResult<Workflow> {
    let strata = match by {
        None => None,
        Some(codes) => {
            let codes = to_u32(&codes, "by: stratum codes must be in 0..2**32-1")?;
            Some(match by_names {
                Some(names) => Strata::new(codes, names).map_err(to_py_err)?,
                None => Strata::from_codes(codes),
            })
        }
    };
    Ok(Workflow {
        strata,
        small_strata: SmallStrata::parse(small_strata).map_err(to_py_err)?,
        weights: weights.map(|w| w.as_array().to_vec()),
        aggregation: Aggregation::parse(aggregation, trim).map_err(to_py_err)?,
        max_part,
        scale: scale.map(|s| s.as_array().to_vec()),
    })
}
