//! The method catalogue (the `method=` strings of the API, DESIGN §4) and the parsing and
//! validation of each method's parameters. Bindings pass names and values through; every
//! check lives here so Rust and Python users get the same messages.

use crate::algorithms::mdav::MdavOptions;
use crate::algorithms::mondrian::CutRule;
use crate::error::{Error, Result};

/// Every method name the library accepts, in catalogue order.
pub const METHODS: &[&str] =
    &["mdav", "mdav-star", "mdav-star-plus", "mondrian", "mondrian-v", "mondrian-v2d"];

/// A parameter value as given by a caller (Python `bool`/`int`/`float`).
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum ParamValue {
    /// A boolean flag.
    Bool(bool),
    /// An integer.
    Int(i64),
    /// A real number.
    Float(f64),
}

impl ParamValue {
    fn type_name(self) -> &'static str {
        match self {
            ParamValue::Bool(_) => "bool",
            ParamValue::Int(_) => "int",
            ParamValue::Float(_) => "float",
        }
    }

    fn as_bool(self, name: &str) -> Result<bool> {
        match self {
            ParamValue::Bool(b) => Ok(b),
            other => Err(Error::ParameterType {
                name: name.to_string(),
                expected: "bool",
                got: other.type_name(),
            }),
        }
    }
}

/// A method with validated parameters.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Method {
    /// MDAV-generic / F-MDAV (`"mdav"`).
    Mdav(MdavOptions),
    /// MDAV* (`"mdav-star"`) or, with `plus`, MDAV*+ (`"mdav-star-plus"`).
    MdavStar { plus: bool },
    /// Mondrian median cuts (`"mondrian"`, `"mondrian-v"`, `"mondrian-v2d"`).
    Mondrian(CutRule),
}

const MDAV_PARAMS: &[&str] =
    &["algebraic_distance", "distance_reuse", "partial_sort", "centroid_by_subtraction"];

impl Method {
    /// Parses a method name and its parameters, rejecting unknown names and bad values.
    pub fn parse(name: &str, params: &[(String, ParamValue)]) -> Result<Method> {
        match name {
            "mdav" => {
                let mut o = MdavOptions::default();
                for (key, value) in params {
                    let flag = match key.as_str() {
                        "algebraic_distance" => &mut o.algebraic_distance,
                        "distance_reuse" => &mut o.distance_reuse,
                        "partial_sort" => &mut o.partial_sort,
                        "centroid_by_subtraction" => &mut o.centroid_by_subtraction,
                        "norm_pruning" => &mut o.norm_pruning,
                        _ => return Err(unknown_parameter(name, key, MDAV_PARAMS)),
                    };
                    *flag = value.as_bool(key)?;
                }
                Ok(Method::Mdav(o))
            }
            "mdav-star" | "mdav-star-plus" | "mondrian" | "mondrian-v" | "mondrian-v2d" => {
                if let Some((key, _)) = params.first() {
                    return Err(unknown_parameter(name, key, &[]));
                }
                if let Some(plus) = name.strip_prefix("mdav-star").map(|s| s == "-plus") {
                    return Ok(Method::MdavStar { plus });
                }
                Ok(Method::Mondrian(match name {
                    "mondrian" => CutRule::Range,
                    "mondrian-v" => CutRule::Variance,
                    _ => CutRule::Variance2D,
                }))
            }
            _ => Err(Error::UnknownMethod(name.to_string())),
        }
    }

    /// The largest group size the method guarantees for a given `k` (`None`: no bound).
    pub fn max_group_size(&self, k: usize) -> Option<usize> {
        match self {
            Method::Mdav(_) => Some((2 * k).saturating_sub(1).max(k)),
            Method::Mondrian(_) => Some(2 * k),
            Method::MdavStar { plus: true } => Some((2 * k - 1).max(k)),
            Method::MdavStar { plus: false } => None,
        }
    }

    /// The parameter names the method accepts.
    pub fn parameter_names(name: &str) -> Result<&'static [&'static str]> {
        match name {
            "mdav" => Ok(MDAV_PARAMS),
            "mdav-star" | "mdav-star-plus" | "mondrian" | "mondrian-v" | "mondrian-v2d" => Ok(&[]),
            _ => Err(Error::UnknownMethod(name.to_string())),
        }
    }
}

fn unknown_parameter(method: &str, name: &str, allowed: &[&'static str]) -> Error {
    Error::UnknownParameter {
        method: method.to_string(),
        name: name.to_string(),
        allowed: allowed.to_vec(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_and_validates() {
        let m = Method::parse("mdav", &[("partial_sort".into(), ParamValue::Bool(false))]).unwrap();
        assert_eq!(m, Method::Mdav(MdavOptions { partial_sort: false, ..Default::default() }));
        assert!(matches!(Method::parse("nope", &[]), Err(Error::UnknownMethod(_))));
        assert!(matches!(
            Method::parse("mdav", &[("gamma".into(), ParamValue::Float(0.2))]),
            Err(Error::UnknownParameter { .. })
        ));
        assert!(matches!(
            Method::parse("mdav", &[("partial_sort".into(), ParamValue::Int(1))]),
            Err(Error::ParameterType { .. })
        ));
    }
}
