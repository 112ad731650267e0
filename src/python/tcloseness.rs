//! Binding of t-closeness through microaggregation (`crate::tcloseness`): the Python layer
//! passes the keys as float64 and each confidential attribute as integer codes (ranks of
//! its distinct values when ordered, categories when nominal).

use super::options::RunOptions;
use super::workflow::WorkflowOptions;
use super::{Progress, Released, progress_counter, released_to_py, run_detached, to_u32};
use crate::{SensitiveAttribute, T_METHODS, TCloseness, TMethod, t_close_microaggregate};
use numpy::{PyReadonlyArray1, PyReadonlyArray2};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::PyTuple;

/// `(released, chosen, max_emd)`: what `microaggregate_array` returns, the algorithm of each
/// stratum and the largest EMD per confidential attribute.
type TClosed<'py> = (Released<'py>, Vec<&'static str>, Vec<f64>);

/// k-anonymous, t-close microaggregation of the keys `x` for the confidential attributes
/// `sensitive` (codes 0..n_values[i], ordered or not, named `names`), with the method and run
/// `options` inside the `workflow` (missing key values and `max_part` included), as
/// `microaggregate_array` takes them.
#[pyfunction]
#[pyo3(signature = (x, k, sensitive, n_values, ordered, names, t, t_method, options, workflow, *, progress=None))]
#[allow(clippy::too_many_arguments)]
fn t_close_array<'py>(
    py: Python<'py>,
    x: PyReadonlyArray2<'py, f64>,
    k: usize,
    sensitive: Vec<PyReadonlyArray1<'py, i64>>,
    n_values: Vec<usize>,
    ordered: Vec<bool>,
    names: Vec<String>,
    t: f64,
    t_method: &str,
    options: RunOptions<'py>,
    workflow: WorkflowOptions<'py>,
    progress: Option<&Bound<'py, Progress>>,
) -> PyResult<TClosed<'py>> {
    if n_values.len() != sensitive.len()
        || ordered.len() != sensitive.len()
        || names.len() != sensitive.len()
    {
        return Err(PyValueError::new_err(
            "sensitive, n_values, ordered and names differ in length",
        ));
    }
    let mut attributes = Vec::with_capacity(sensitive.len());
    for (((codes, m), o), name) in sensitive.iter().zip(n_values).zip(ordered).zip(names) {
        let codes = to_u32(codes, "sensitive: codes must be in 0..2**32-1")?;
        attributes.push(SensitiveAttribute { name, codes, n_values: m, ordered: o });
    }
    let tc = TCloseness { sensitive: attributes, t, method: TMethod::parse(t_method)? };
    let workflow = workflow.build()?;
    let (method, options) = options.build()?;
    let view = x.as_array();
    let counter = progress_counter(progress);
    let out = run_detached(py, || {
        t_close_microaggregate(view, k, &method, &tc, &options, &workflow, &counter)
    })?;
    let chosen = out.chosen.iter().map(|m| m.name()).collect();
    Ok((released_to_py(py, out.outcome), chosen, out.max_emd))
}

/// Adds the t-closeness function to the extension module.
pub(super) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(t_close_array, m)?)?;
    m.add("T_METHODS", PyTuple::new(m.py(), T_METHODS)?)
}
