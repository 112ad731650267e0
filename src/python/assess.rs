//! Bindings of the assessment measures (docs/assessment.md#risk): nearest-record linkage and
//! the distinct rows the class counting groups records by.

use super::run_detached;
use crate::{Parallelism, RowIds, link_nearest_mixed};
use numpy::{IntoPyArray, PyArray1, PyReadonlyArray2};
use pyo3::prelude::*;

/// `(tie_counts, own_among)` arrays.
type Links<'py> = (Bound<'py, PyArray1<u64>>, Bound<'py, PyArray1<bool>>);

/// Links every row of `x` to its nearest rows of `xm` (both already scaled; the last
/// `len(mismatch_costs)` columns nominal level codes, [`link_nearest_mixed`]); returns
/// `(tie_counts, own_among)`, one entry per record.
#[pyfunction]
#[pyo3(signature = (x, xm, *, n_jobs, mismatch_costs = Vec::new()))]
fn link_nearest_arrays<'py>(
    py: Python<'py>,
    x: PyReadonlyArray2<'py, f64>,
    xm: PyReadonlyArray2<'py, f64>,
    n_jobs: i64,
    mismatch_costs: Vec<f64>,
) -> PyResult<Links<'py>> {
    let parallelism = Parallelism::from_n_jobs(n_jobs)?;
    let (a, b) = (x.as_array(), xm.as_array());
    let links = run_detached(py, || link_nearest_mixed(a, b, &mismatch_costs, parallelism))?;
    Ok((links.tie_counts.into_pyarray(py), links.own_among.into_pyarray(py)))
}

/// `(first, inverse, counts)` arrays.
type Rows<'py> = (Bound<'py, PyArray1<i64>>, Bound<'py, PyArray1<i64>>, Bound<'py, PyArray1<i64>>);

/// The distinct rows of `a` (n, d), numbered by first record ([`RowIds`]): each row's first
/// record, each record's row and each row's count, as int64 arrays.
#[pyfunction]
fn distinct_rows<'py>(py: Python<'py>, a: PyReadonlyArray2<'py, f64>) -> PyResult<Rows<'py>> {
    let x = a.as_array();
    let ids = run_detached(py, || Ok(RowIds::new(x)))?;
    let ints = |v: Vec<usize>| v.into_iter().map(|i| i as i64).collect::<Vec<_>>().into_pyarray(py);
    Ok((ints(ids.first), ints(ids.of_record), ints(ids.counts)))
}

/// Adds the assessment functions to the extension module.
pub(super) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(link_nearest_arrays, m)?)?;
    m.add_function(wrap_pyfunction!(distinct_rows, m)?)
}
