//! The crate's single error type. Every fallible entry point returns `Result<_, Error>`;
//! the Python bindings map each variant to a precise exception (`TypeError` for a
//! parameter of the wrong type, `ValueError` for everything else; see `python/mod.rs`).

use std::fmt;

/// Why a request was refused. Messages name the offending value so a user can fix the call.
#[derive(Debug, Clone, PartialEq)]
pub enum Error {
    /// The data has no records or no attributes.
    EmptyInput { n_records: usize, n_attributes: usize },
    /// A value is NaN or ±inf (0-based record and attribute index).
    NonFinite { record: usize, attribute: usize },
    /// Values are so large that squared norms overflow the working precision.
    Overflow { record: usize },
    /// Values are so large that the data's total sum of squares (after the optional
    /// standardization) does not fit comfortably in f64.
    SumOverflow,
    /// `k` is outside `2..=n` (k = 1 releases every record as it is).
    InvalidK { k: usize, n_records: usize },
    /// The method name is not in [`crate::METHODS`].
    UnknownMethod(String),
    /// A method parameter is unknown for that method.
    UnknownParameter { method: String, name: String, allowed: Vec<&'static str> },
    /// A parameter has the wrong type (maps to Python's `TypeError`).
    ParameterType { name: String, expected: &'static str, got: &'static str },
    /// A parameter has a value outside its allowed range.
    InvalidParameter { name: String, reason: String },
    /// Labels do not describe a partition of the data (length or range wrong).
    InvalidLabels(String),
    /// Strata with fewer than `k` records under `small_strata="error"`: each stratum's
    /// name and size (docs/workflow.md#small-and-merged-strata).
    SmallStrata { k: usize, strata: Vec<(String, usize)> },
    /// A column has no observed value (every cell NaN): nothing to complete its missing
    /// cells from, nothing to release (0-based attribute index).
    NoObservedValue { attribute: usize },
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::EmptyInput { n_records, n_attributes } => write!(
                f,
                "the data is empty ({n_records} records x {n_attributes} attributes); \
                 microaggregation needs at least one record and one attribute"
            ),
            Error::NonFinite { record, attribute } => write!(
                f,
                "the data contains NaN or infinity (first at record {record}, attribute {attribute}); \
                 remove or impute missing values first"
            ),
            Error::Overflow { record } => write!(
                f,
                "values are too large for the working precision (squared norm of record {record} \
                 overflows in the units the method works in, after any scaling): use \
                 dtype='float64', divide the data by a constant, or standardize it \
                 (standardize=True) if it was not"
            ),
            Error::SumOverflow => write!(
                f,
                "values are too large: the sum of squares of the data, in the units the method \
                 works in (after any scaling), overflows float64; divide the data by a \
                 constant, or standardize it (standardize=True) if it was not"
            ),
            Error::InvalidK { k, .. } if *k < 2 => write!(
                f,
                "k must be at least 2 (k = 1 is no protection: every record is released as it is), \
                 got k={k}"
            ),
            Error::InvalidK { k, n_records } => {
                write!(f, "k must be between 2 and the number of records ({n_records}), got k={k}")
            }
            Error::UnknownMethod(name) => {
                write!(f, "unknown method '{name}'; choose one of: {}", crate::METHODS.join(", "))
            }
            Error::UnknownParameter { method, name, allowed } => {
                if allowed.is_empty() {
                    write!(f, "method '{method}' takes no parameter, got '{name}'")
                } else {
                    write!(
                        f,
                        "unknown parameter '{name}' for method '{method}'; allowed: {}",
                        allowed.join(", ")
                    )
                }
            }
            Error::ParameterType { name, expected, got } => {
                write!(f, "parameter '{name}' must be of type {expected}, got {got}")
            }
            Error::InvalidParameter { name, reason } => write!(f, "invalid {name}: {reason}"),
            Error::InvalidLabels(reason) => write!(f, "invalid labels: {reason}"),
            Error::SmallStrata { k, strata } => {
                let plural = |m: usize, one: &str, many: &str| {
                    format!("{m} {}", if m == 1 { one } else { many })
                };
                let listed: Vec<String> = strata
                    .iter()
                    .take(20)
                    .map(|(name, m)| format!("{name} ({})", plural(*m, "record", "records")))
                    .collect();
                let more = strata.len().saturating_sub(listed.len());
                write!(
                    f,
                    "{} fewer than k={k} records: {}{}; merge each into its nearest stratum \
                     with small_strata='merge', or choose a smaller k",
                    plural(strata.len(), "stratum has", "strata have"),
                    listed.join(", "),
                    if more > 0 { format!(" and {more} more") } else { String::new() }
                )
            }
            Error::NoObservedValue { attribute } => write!(
                f,
                "column {attribute} of X has no observed value (every cell is missing); \
                 drop that column"
            ),
        }
    }
}

impl std::error::Error for Error {}

/// Shorthand for results of this crate.
pub type Result<T> = std::result::Result<T, Error>;
