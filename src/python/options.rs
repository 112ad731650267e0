//! The method and run options of both entry points (`microaggregate_array`, `t_close_array`):
//! one dict from the Python layer, extracted once into [`RunOptions`] and checked in one place
//! ([`RunOptions::build`]) into the core's [`Method`] and [`Options`].

use crate::{Method, Missing, Options, Parallelism, ParamValue};
use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyDict, PyFloat, PyInt};

/// The method, its parameters and the run options, as the Python layer passes them (every
/// key present; the Python layer has checked their types and names the parameter in its
/// errors). A new option is a new field here and a new key at the call sites.
#[derive(FromPyObject)]
#[pyo3(from_item_all)]
pub(super) struct RunOptions<'py> {
    /// A name of `METHODS`.
    method: String,
    /// The method's parameters (`method_params=`), `None` for none.
    params: Option<Bound<'py, PyDict>>,
    /// Standardize the attributes before grouping.
    standardize: bool,
    /// Threads (`n_jobs=`, joblib's convention).
    n_jobs: i64,
    /// Seed of the randomized methods.
    seed: Option<u64>,
    /// A name of `MISSING_MODES`.
    missing: String,
}

impl RunOptions<'_> {
    /// The parsed method and the core's run options; a clear ValueError or TypeError for
    /// an unknown method, parameter, missing mode or thread count.
    pub(super) fn build(&self) -> PyResult<(Method, Options)> {
        let missing = Missing::parse(&self.missing)?;
        let method = Method::parse(&self.method, &parse_params(self.params.as_ref())?)?;
        let parallelism = Parallelism::from_n_jobs(self.n_jobs)?;
        Ok((
            method,
            Options { standardize: self.standardize, parallelism, seed: self.seed, missing },
        ))
    }
}

/// The method parameters as the core's typed values: bools, integers (a ValueError beyond
/// i64) and floats; any other type is a TypeError naming the parameter.
fn parse_params(params: Option<&Bound<'_, PyDict>>) -> PyResult<Vec<(String, ParamValue)>> {
    let Some(params) = params else {
        return Ok(Vec::new());
    };
    params
        .iter()
        .map(|(key, value)| {
            let key: String = key.extract()?;
            let v = if value.is_instance_of::<PyBool>() {
                ParamValue::Bool(value.extract()?)
            } else if value.is_instance_of::<PyInt>() {
                ParamValue::Int(value.extract().map_err(|_| {
                    PyValueError::new_err(format!("parameter {key:?} is out of range"))
                })?)
            } else if value.is_instance_of::<PyFloat>() {
                ParamValue::Float(value.extract()?)
            } else {
                return Err(PyTypeError::new_err(format!(
                    "parameter {key:?} must be a bool, int or float, got {}",
                    value.get_type().name()?
                )));
            };
            Ok((key, v))
        })
        .collect()
}
