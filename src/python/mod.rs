//! PyO3 bindings (feature `python`): the `microagg._core` extension module.
//!
//! Thin by design: arrays are borrowed without copies (`as_array()` reads any strides), the
//! GIL is released while the core runs, and every [`Error`] becomes a precise Python
//! exception. Argument coercion (lists, pandas, integer dtypes) is done by the Python layer
//! in `python/microagg/_api.py`; this module accepts 2-D float32/float64 arrays only.

mod assess;
mod options;
mod tcloseness;
mod workflow;

use crate::{
    AGGREGATIONS, Error, Evaluation, Float, Incremental, IncrementalOptions, IndexChoice, METHODS,
    MISSING_MODES, Method, Missing, Options, Outcome, Parallelism, SMALL_STRATA, Strategy,
    Workflow, critical_head_start, evaluate, microaggregate_with, plan,
};
use numpy::{IntoPyArray, PyArray1, PyArray2, PyReadonlyArray1, PyReadonlyArray2};
use options::RunOptions;
use pyo3::exceptions::{PyRuntimeError, PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyTuple};
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::Arc;
use workflow::WorkflowOptions;

/// The extension's allocator. The threads of a pass free what the others allocated (each
/// thread's selections end on the thread that merges them); the system allocator then takes
/// a lock on the other thread's arena, mimalloc a lock-free list.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// Every core error as the Python exception a caller expects: `TypeError` for a parameter of
/// the wrong type, `ValueError` for every other refused request (each message names the
/// value to fix). The binding functions pass errors on with `?`.
impl From<Error> for PyErr {
    fn from(e: Error) -> PyErr {
        match e {
            Error::ParameterType { .. } => PyTypeError::new_err(e.to_string()),
            _ => PyValueError::new_err(e.to_string()),
        }
    }
}

/// Non-negative integer codes that fit u32 (labels, strata), else a ValueError `message`.
fn to_u32(codes: &PyReadonlyArray1<'_, i64>, message: &str) -> PyResult<Vec<u32>> {
    codes
        .as_array()
        .iter()
        .map(|&c| u32::try_from(c))
        .collect::<Result<_, _>>()
        .map_err(|_| PyValueError::new_err(message.to_string()))
}

/// Runs core work without the GIL; a panic (a bug) becomes a RuntimeError, never an abort.
fn run_detached<R: Send>(
    py: Python<'_>,
    f: impl FnOnce() -> Result<R, Error> + Send,
) -> PyResult<R> {
    py.detach(|| catch_unwind(AssertUnwindSafe(f)))
        .map_err(|_| PyRuntimeError::new_err("internal error in microagg (please report it)"))?
        .map_err(PyErr::from)
}

/// A 2-D float array in either precision.
#[derive(FromPyObject)]
enum Data<'py> {
    F64(PyReadonlyArray2<'py, f64>),
    F32(PyReadonlyArray2<'py, f32>),
}

/// Progress of a run (records assigned, improvement rounds done), readable while
/// `microaggregate` runs in another thread.
#[pyclass(frozen, module = "microagg._core")]
struct Progress {
    inner: Arc<crate::progress::Progress>,
}

#[pymethods]
impl Progress {
    #[new]
    fn new() -> Self {
        Progress { inner: Arc::new(crate::progress::Progress::new()) }
    }

    /// Records assigned to groups so far.
    #[getter]
    fn assigned(&self) -> usize {
        self.inner.get()
    }

    /// Improvement rounds done so far (ONA, ONA*; 0 for the other methods).
    #[getter]
    fn rounds(&self) -> usize {
        self.inner.rounds()
    }

    /// Bytes of working data read by the streaming passes so far (MDAV, MDAV*; a full pass
    /// of exact MDAV reads d + 1 values per record, a pass of the compact copy d bytes and one
    /// value). It counts one read per pass, however many references the pass serves. Split
    /// among threads, a pass over the compact copy that serves two references reads the
    /// records twice.
    #[getter]
    fn bytes_scanned(&self) -> usize {
        self.inner.bytes_scanned()
    }
}

#[allow(clippy::too_many_arguments)]
fn run_typed<S: Float + numpy::Element, T: Float>(
    py: Python<'_>,
    x: &PyReadonlyArray2<'_, S>,
    k: usize,
    method: &Method,
    options: &Options,
    workflow: &Workflow,
    progress: &crate::progress::Progress,
) -> PyResult<Outcome> {
    let view = x.as_array();
    run_detached(py, || microaggregate_with::<S, T>(view, k, method, options, workflow, progress))
}

type Evaluated<'py> = (Bound<'py, PyArray2<f64>>, f64, f64);
/// `(labels, n_groups, centroids, sse, sst)`.
type Microaggregated<'py> = (Bound<'py, PyArray1<i64>>, usize, Bound<'py, PyArray2<f64>>, f64, f64);
/// `(labels, n_groups, centroids, sse, sst, released, merges)`: the released group values
/// where they are not the centroids, and the strata merges as `(stratum, into, size)` codes.
type Released<'py> = (
    Bound<'py, PyArray1<i64>>,
    usize,
    Bound<'py, PyArray2<f64>>,
    f64,
    f64,
    Option<Bound<'py, PyArray2<f64>>>,
    Vec<(u32, u32, usize)>,
);

fn evaluation_to_py(py: Python<'_>, e: Evaluation) -> Evaluated<'_> {
    (e.centroids.into_pyarray(py), e.sse, e.sst)
}

/// Microaggregates `x` with the method and run `options` inside the `workflow`
/// (docs/workflow.md); returns `(labels, n_groups, centroids, sse, sst, released, merges)`.
#[pyfunction]
#[pyo3(signature = (x, k, options, workflow, *, single_precision, progress=None))]
fn microaggregate_array<'py>(
    py: Python<'py>,
    x: Data<'py>,
    k: usize,
    options: RunOptions<'py>,
    workflow: WorkflowOptions<'py>,
    single_precision: bool,
    progress: Option<&Bound<'py, Progress>>,
) -> PyResult<Released<'py>> {
    let workflow = workflow.build()?;
    let (method, options) = options.build()?;
    let counter = progress_counter(progress);
    let (o, w, c) = (&options, &workflow, &counter);
    let out = match (&x, single_precision) {
        (Data::F64(a), false) => run_typed::<f64, f64>(py, a, k, &method, o, w, c),
        (Data::F64(a), true) => run_typed::<f64, f32>(py, a, k, &method, o, w, c),
        (Data::F32(a), false) => run_typed::<f32, f64>(py, a, k, &method, o, w, c),
        (Data::F32(a), true) => run_typed::<f32, f32>(py, a, k, &method, o, w, c),
    }?;
    Ok(released_to_py(py, out))
}

/// The work counter a run reports to: the caller's `Progress`, or a fresh one.
fn progress_counter(progress: Option<&Bound<'_, Progress>>) -> Arc<crate::progress::Progress> {
    progress.map_or_else(|| Arc::new(crate::progress::Progress::new()), |p| p.get().inner.clone())
}

/// An outcome as the `Released` tuple.
fn released_to_py(py: Python<'_>, mut out: Outcome) -> Released<'_> {
    let labels: Vec<i64> = out.partition.labels().iter().map(|&l| l as i64).collect();
    let n_groups = out.partition.n_groups();
    let released = out.evaluation.released.take().map(|r| r.into_pyarray(py));
    let merges = out.merges.iter().map(|m| (m.stratum, m.into, m.size)).collect();
    let (centroids, sse, sst) = evaluation_to_py(py, out.evaluation);
    (labels.into_pyarray(py), n_groups, centroids, sse, sst, released, merges)
}

/// Centroids, SSE and SST of `x` grouped by `labels` (0..g−1, every group used).
#[pyfunction]
#[pyo3(signature = (x, labels, *, standardize, missing="error"))]
fn evaluate_labels<'py>(
    py: Python<'py>,
    x: Data<'py>,
    labels: PyReadonlyArray1<'py, i64>,
    standardize: bool,
    missing: &str,
) -> PyResult<Evaluated<'py>> {
    let observed = Missing::parse(missing)? != Missing::Error;
    let labels = to_u32(&labels, "labels must be integers in 0..n_groups-1")?;
    let e = match &x {
        Data::F64(a) => {
            let v = a.as_array();
            run_detached(py, || evaluate(v, labels, standardize, observed))
        }
        Data::F32(a) => {
            let v = a.as_array();
            run_detached(py, || evaluate(v, labels, standardize, observed))
        }
    }?;
    Ok(evaluation_to_py(py, e))
}

/// `x` (float64; NaN marks a missing cell) with each missing cell at its conditional
/// expectation under the normal fitted by EM: the coordinates `missing="fill"` and
/// `"keep"` group on (`crate::workflow::completion`).
#[pyfunction]
fn complete_missing<'py>(
    py: Python<'py>,
    x: PyReadonlyArray2<'py, f64>,
) -> PyResult<Bound<'py, PyArray2<f64>>> {
    let v = x.as_array();
    let out = run_detached(py, || crate::complete_missing(v))?;
    Ok(out.into_pyarray(py))
}

/// An incremental microaggregation in progress (see `crate::incremental`).
#[pyclass(module = "microagg._core")]
struct IncrementalState {
    inner: Incremental,
}

#[pymethods]
impl IncrementalState {
    /// Microaggregates the base part.
    #[new]
    #[pyo3(signature = (x, k, base_method, *, strategy, inertial, standardize, refit_scaling, n_jobs, spatial_index=None))]
    #[allow(clippy::too_many_arguments)]
    fn new(
        py: Python<'_>,
        x: Data<'_>,
        k: usize,
        base_method: &str,
        strategy: &str,
        inertial: bool,
        standardize: bool,
        refit_scaling: bool,
        n_jobs: i64,
        spatial_index: Option<bool>,
    ) -> PyResult<Self> {
        let base = Method::parse(base_method, &[])?;
        let opts = IncrementalOptions {
            strategy: Strategy::parse(strategy)?,
            inertial,
            standardize,
            refit_scaling,
            parallelism: Parallelism::from_n_jobs(n_jobs)?,
            spatial_index: match spatial_index {
                None => IndexChoice::Auto,
                Some(true) => IndexChoice::On,
                Some(false) => IndexChoice::Off,
            },
        };
        let inner = match &x {
            Data::F64(a) => {
                let v = a.as_array();
                run_detached(py, || Incremental::fit(v, k, base, opts))
            }
            Data::F32(a) => {
                let v = a.as_array();
                run_detached(py, || Incremental::fit(v, k, base, opts))
            }
        }?;
        Ok(IncrementalState { inner })
    }

    /// Folds new records in.
    fn extend(&mut self, py: Python<'_>, x: Data<'_>) -> PyResult<()> {
        let inner = &mut self.inner;
        match &x {
            Data::F64(a) => {
                let v = a.as_array();
                run_detached(py, || inner.extend(v))
            }
            Data::F32(a) => {
                let v = a.as_array();
                run_detached(py, || inner.extend(v))
            }
        }
    }

    /// `(labels, n_groups, centroids, sse, sst)` of all records seen.
    fn result<'py>(&self, py: Python<'py>) -> PyResult<Microaggregated<'py>> {
        let p = self.inner.partition();
        let e = self.inner.evaluation()?;
        let labels: Vec<i64> = p.labels().iter().map(|&l| l as i64).collect();
        let (centroids, sse, sst) = evaluation_to_py(py, e);
        Ok((labels.into_pyarray(py), p.n_groups(), centroids, sse, sst))
    }
}

/// The planner's quantities as a dict (see `crate::incremental::plan`).
#[pyfunction]
#[pyo3(signature = (head_start, deadline=None))]
fn plan_incremental(
    py: Python<'_>,
    head_start: f64,
    deadline: Option<f64>,
) -> PyResult<Bound<'_, PyDict>> {
    let p = plan(head_start, deadline)?;
    let d = PyDict::new(py);
    d.set_item("head_start", p.head_start)?;
    d.set_item("critical_ratio", p.critical_ratio)?;
    d.set_item("optimal_ratio", p.optimal_ratio)?;
    d.set_item("time_gain", p.time_gain)?;
    d.set_item("base_time", p.base_time)?;
    d.set_item("incremental_time", p.incremental_time)?;
    d.set_item("head_start_time", p.head_start_time)?;
    d.set_item("min_deadline", p.min_deadline)?;
    d.set_item("deadline_ratio", p.deadline_ratio)?;
    Ok(d)
}

/// The parameter names `method` accepts.
#[pyfunction]
fn method_parameters<'py>(py: Python<'py>, method: &str) -> PyResult<Bound<'py, PyTuple>> {
    PyTuple::new(py, Method::parameter_names(method)?)
}

/// The `microagg._core` extension module.
#[pymodule]
fn _core(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    m.add("METHODS", PyTuple::new(m.py(), METHODS)?)?;
    m.add("AGGREGATIONS", PyTuple::new(m.py(), AGGREGATIONS)?)?;
    m.add("MISSING_MODES", PyTuple::new(m.py(), MISSING_MODES)?)?;
    m.add("SMALL_STRATA", PyTuple::new(m.py(), SMALL_STRATA)?)?;
    m.add_class::<Progress>()?;
    m.add_function(wrap_pyfunction!(microaggregate_array, m)?)?;
    m.add_function(wrap_pyfunction!(evaluate_labels, m)?)?;
    m.add_function(wrap_pyfunction!(complete_missing, m)?)?;
    m.add_function(wrap_pyfunction!(method_parameters, m)?)?;
    m.add_function(wrap_pyfunction!(plan_incremental, m)?)?;
    m.add_class::<IncrementalState>()?;
    m.add("CRITICAL_HEAD_START", critical_head_start())?;
    assess::register(m)?;
    tcloseness::register(m)?;
    Ok(())
}
