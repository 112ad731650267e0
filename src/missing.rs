//! Missing values (NaN in the data): the `missing=` setting.
//!
//! With `missing = "fill"` or `"keep"` the matrix is completed once, for grouping only, by
//! the conditional expectation of each missing cell under a normal fitted by EM
//! ([`crate::workflow::completion`]); every method then groups the completed records as it
//! groups complete data. Standardization uses the observed values of each column, and
//! SSE/SST (hence IL) are taken on the observed cells. "fill" and "keep" group alike; they
//! differ only in what a release shows in the cells that were missing (the group's value, or
//! still missing), which the bindings build from the group values.

use crate::dataset::{validate, validate_missing};
use crate::error::{Error, Result};
use crate::float::Float;
use ndarray::ArrayView2;

/// What to do with missing values (NaN) in the data.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Missing {
    /// Refuse data with NaN (the default; the message of [`Error::NonFinite`]).
    #[default]
    Error,
    /// Group on completed coordinates; a release shows the group's value in every cell.
    Fill,
    /// Group on completed coordinates; a release leaves missing cells missing.
    Keep,
}

/// The `missing=` values, in documentation order.
pub const MISSING_MODES: &[&str] = &["error", "fill", "keep"];

impl Missing {
    /// Parses `"error"`, `"fill"` or `"keep"`.
    pub fn parse(name: &str) -> Result<Missing> {
        match name {
            "error" => Ok(Missing::Error),
            "fill" => Ok(Missing::Fill),
            "keep" => Ok(Missing::Keep),
            _ => Err(Error::InvalidParameter {
                name: "missing".into(),
                reason: format!("must be one of '{}', got {name:?}", MISSING_MODES.join("', '")),
            }),
        }
    }

    /// Validates `x` under this setting: whether it holds missing values (NaN), which
    /// [`Missing::Error`] refuses; infinity is always an error.
    pub fn check<T: Float>(self, x: ArrayView2<T>) -> Result<bool> {
        match self {
            Missing::Error => validate(x).map(|_| false),
            Missing::Fill | Missing::Keep => validate_missing(x),
        }
    }

    /// The name [`Missing::parse`] reads.
    pub fn name(self) -> &'static str {
        match self {
            Missing::Error => "error",
            Missing::Fill => "fill",
            Missing::Keep => "keep",
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_modes() {
        for name in MISSING_MODES {
            assert_eq!(Missing::parse(name).unwrap().name(), *name);
        }
        assert!(
            Missing::parse("drop").unwrap_err().to_string().contains("'error', 'fill', 'keep'")
        );
    }
}
