//! The method catalogue (the `method=` strings of the API, docs/algorithms.md#the-catalogue) and
//! the parsing and validation of each method's parameters. Bindings pass names and values through;
//! every check lives here so Rust and Python users get the same messages.

use crate::algorithms::mdav::MdavOptions;
use crate::algorithms::mona::MonaOptions;
use crate::algorithms::mondrian::CutRule;
use crate::algorithms::spatial::Accelerators;
use crate::error::{Error, Result};
use crate::index::IndexChoice;

/// Every method name the library accepts, in catalogue order.
pub const METHODS: &[&str] = &[
    "mdav",
    "mdav-star",
    "mdav-star-plus",
    "ona",
    "ona-star",
    "mondrian",
    "mondrian-v",
    "mondrian-v2d",
    "mona",
    "mona-2d",
    "mhm",
    "mdav-mhm",
    "univariate",
    "md",
    "cbfs",
    "npn-mhm",
    "md-mhm",
    "cbfs-mhm",
    "optimal",
    "vmdav",
];

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
}

/// The path constructions of the mhm paper §4.2 (MDAV's is [`Method::MdavMhm`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Path {
    /// Nearest point next (§4.2.1).
    Npn,
    /// Maximum distance groups (§4.2.2).
    Md,
    /// CBFS groups (§4.2.3).
    Cbfs,
}

/// A method with validated parameters.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Method {
    /// MDAV-generic / F-MDAV (`"mdav"`).
    Mdav(MdavOptions),
    /// MDAV* (`"mdav-star"`) or, with `plus`, MDAV*+ (`"mdav-star-plus"`).
    MdavStar {
        /// No group reaches 2k (MDAV*+).
        plus: bool,
        /// The k-d tree and the compact copy (MDAV's options of the same names).
        accelerators: Accelerators,
    },
    /// ONA (`"ona"`); the seed comes from [`crate::Options::seed`].
    Ona {
        /// Round limit per run.
        max_rounds: usize,
        /// Randomized runs, best kept.
        n_init: usize,
    },
    /// ONA* (`"ona-star"`).
    OnaStar {
        /// Round limit.
        max_rounds: usize,
    },
    /// Mondrian median cuts (`"mondrian"`, `"mondrian-v"`, `"mondrian-v2d"`).
    Mondrian(CutRule),
    /// Maximum distance (`"md"`).
    Md {
        /// Whether the farthest/nearest queries use the k-d tree (as MDAV's option).
        spatial_index: IndexChoice,
    },
    /// Variable-size MDAV (`"vmdav"`).
    Vmdav {
        /// Extension factor γ ≥ 0.
        gamma: f64,
    },
    /// The exact optimum for n ≤ 20 (`"optimal"`).
    Optimal,
    /// Centroid-based fixed size (`"cbfs"`).
    Cbfs,
    /// A path construction, then MHM (`"npn-mhm"`, `"md-mhm"`, `"cbfs-mhm"`).
    PathMhm(Path),
    /// MHM on the records in the order given (`"mhm"`).
    Mhm,
    /// The MDAV path, then MHM (`"mdav-mhm"`).
    MdavMhm,
    /// The optimal partition of one-attribute data (`"univariate"`).
    Univariate,
    /// Mondrian-V (`"mona"`) or -V2D (`"mona-2d"`) cuts, then ONA* on parts of ≤ n^rho.
    Mona(MonaOptions),
}

const MDAV_PARAMS: &[&str] = &[
    "algebraic_distance",
    "distance_reuse",
    "partial_sort",
    "centroid_by_subtraction",
    "norm_pruning",
    "spatial_index",
    "compact_scan",
];

/// Typed access to the parameters a caller passed (the last value of a name wins).
struct Params<'a>(&'a [(String, ParamValue)]);

impl Params<'_> {
    fn get(&self, name: &str) -> Option<ParamValue> {
        self.0.iter().rev().find(|(k, _)| k == name).map(|(_, v)| *v)
    }

    fn flag(&self, name: &str, default: bool) -> Result<bool> {
        match self.get(name) {
            None => Ok(default),
            Some(ParamValue::Bool(b)) => Ok(b),
            Some(v) => Err(type_error(name, "bool", v)),
        }
    }

    /// An on/off switch (`spatial_index`, `compact_scan`): unset is [`IndexChoice::Auto`], a
    /// bool forces it on or off.
    fn choice(&self, name: &str) -> Result<IndexChoice> {
        Ok(match self.get(name) {
            None => IndexChoice::Auto,
            Some(_) if self.flag(name, true)? => IndexChoice::On,
            Some(_) => IndexChoice::Off,
        })
    }

    fn real(&self, name: &str, default: f64, lo: f64, hi: f64) -> Result<f64> {
        let v = match self.get(name) {
            None => return Ok(default),
            Some(ParamValue::Float(v)) => v,
            Some(ParamValue::Int(v)) => v as f64,
            Some(v) => return Err(type_error(name, "float", v)),
        };
        if (lo..=hi).contains(&v) {
            return Ok(v);
        }
        let range = if hi == f64::MAX {
            format!("a finite number of at least {lo}")
        } else {
            format!("in [{lo}, {hi}]")
        };
        Err(Error::InvalidParameter {
            name: name.to_string(),
            reason: format!("must be {range}, got {}", readable(v)),
        })
    }

    fn count(&self, name: &str, default: usize, min: usize) -> Result<usize> {
        match self.get(name) {
            None => Ok(default),
            Some(ParamValue::Int(v)) if v >= min as i64 => Ok(v as usize),
            Some(ParamValue::Int(v)) => Err(Error::InvalidParameter {
                name: name.to_string(),
                reason: format!("must be an integer >= {min}, got {v}"),
            }),
            Some(v) => Err(type_error(name, "int", v)),
        }
    }
}

/// `v` as a user reads it: in scientific notation when large (Rust's `{}` writes every
/// digit of 1e308).
fn readable(v: f64) -> String {
    if v.abs() >= 1e16 { format!("{v:e}") } else { format!("{v}") }
}

fn type_error(name: &str, expected: &'static str, got: ParamValue) -> Error {
    Error::ParameterType { name: name.to_string(), expected, got: got.type_name() }
}

impl Method {
    /// Parses a method name and its parameters, rejecting unknown names and bad values.
    pub fn parse(name: &str, params: &[(String, ParamValue)]) -> Result<Method> {
        let allowed = Self::parameter_names(name)?;
        if let Some((key, _)) = params.iter().find(|(k, _)| !allowed.contains(&k.as_str())) {
            return Err(unknown_parameter(name, key, allowed));
        }
        let p = Params(params);
        Ok(match name {
            "mdav" => Method::Mdav(MdavOptions {
                algebraic_distance: p.flag("algebraic_distance", true)?,
                distance_reuse: p.flag("distance_reuse", true)?,
                partial_sort: p.flag("partial_sort", true)?,
                centroid_by_subtraction: p.flag("centroid_by_subtraction", true)?,
                norm_pruning: p.flag("norm_pruning", true)?,
                spatial_index: p.choice("spatial_index")?,
                compact_scan: p.choice("compact_scan")?,
            }),
            "mdav-star" | "mdav-star-plus" => Method::MdavStar {
                plus: name == "mdav-star-plus",
                accelerators: Accelerators {
                    spatial_index: p.choice("spatial_index")?,
                    compact_scan: p.choice("compact_scan")?,
                },
            },
            "ona" => Method::Ona {
                max_rounds: p.count("max_rounds", 30, 1)?,
                n_init: p.count("n_init", 1, 1)?,
            },
            "ona-star" => Method::OnaStar { max_rounds: p.count("max_rounds", 30, 1)? },
            "mona" | "mona-2d" => Method::Mona(MonaOptions {
                rule: if name == "mona" { CutRule::Variance } else { CutRule::Variance2DScaled },
                rho: p.real("rho", 0.5, 0.0, 1.0)?,
                max_rounds: p.count("max_rounds", 30, 1)?,
            }),
            "mhm" => Method::Mhm,
            "md" => Method::Md { spatial_index: p.choice("spatial_index")? },
            "cbfs" => Method::Cbfs,
            "optimal" => Method::Optimal,
            "vmdav" => Method::Vmdav { gamma: p.real("gamma", 0.2, 0.0, f64::MAX)? },
            "npn-mhm" => Method::PathMhm(Path::Npn),
            "md-mhm" => Method::PathMhm(Path::Md),
            "cbfs-mhm" => Method::PathMhm(Path::Cbfs),
            "mdav-mhm" => Method::MdavMhm,
            "univariate" => Method::Univariate,
            "mondrian" => Method::Mondrian(CutRule::Range),
            "mondrian-v" => Method::Mondrian(CutRule::Variance),
            _ => Method::Mondrian(CutRule::Variance2D),
        })
    }

    /// The method's name (its `method=` string).
    pub fn name(&self) -> &'static str {
        match self {
            Method::Mdav(_) => "mdav",
            Method::MdavStar { plus: false, .. } => "mdav-star",
            Method::MdavStar { plus: true, .. } => "mdav-star-plus",
            Method::Ona { .. } => "ona",
            Method::OnaStar { .. } => "ona-star",
            Method::Mondrian(CutRule::Range) => "mondrian",
            Method::Mondrian(CutRule::Variance) => "mondrian-v",
            // The scaled pair reading is MONA-2D's; as a plain Mondrian it is still V2D.
            Method::Mondrian(CutRule::Variance2D | CutRule::Variance2DScaled) => "mondrian-v2d",
            Method::Md { .. } => "md",
            Method::Vmdav { .. } => "vmdav",
            Method::Optimal => "optimal",
            Method::Cbfs => "cbfs",
            Method::PathMhm(Path::Npn) => "npn-mhm",
            Method::PathMhm(Path::Md) => "md-mhm",
            Method::PathMhm(Path::Cbfs) => "cbfs-mhm",
            Method::Mhm => "mhm",
            Method::MdavMhm => "mdav-mhm",
            Method::Univariate => "univariate",
            Method::Mona(o) if o.rule == CutRule::Variance2DScaled => "mona-2d",
            Method::Mona(_) => "mona",
        }
    }

    /// The largest group size the method guarantees for a given `k` (`None`: no bound).
    pub fn max_group_size(&self, k: usize) -> Option<usize> {
        match self {
            Method::Mdav(_)
            | Method::MdavStar { plus: true, .. }
            | Method::OnaStar { .. }
            | Method::Mhm
            | Method::MdavMhm
            | Method::PathMhm(_)
            | Method::Cbfs
            | Method::Optimal
            | Method::Univariate => Some((2 * k - 1).max(k)),
            Method::Mondrian(_) | Method::Mona(_) => Some(2 * k),
            Method::MdavStar { plus: false, .. }
            | Method::Ona { .. }
            | Method::Md { .. }
            | Method::Vmdav { .. } => None,
        }
    }

    /// The parameter names `method` accepts.
    pub fn parameter_names(name: &str) -> Result<&'static [&'static str]> {
        match name {
            "mdav" => Ok(MDAV_PARAMS),
            "ona" => Ok(&["max_rounds", "n_init"]),
            "ona-star" => Ok(&["max_rounds"]),
            "mona" | "mona-2d" => Ok(&["rho", "max_rounds"]),
            "vmdav" => Ok(&["gamma"]),
            "mdav-star" | "mdav-star-plus" => Ok(&["spatial_index", "compact_scan"]),
            "md" => Ok(&["spatial_index"]),
            "mondrian" | "mondrian-v" | "mondrian-v2d" | "mhm" | "mdav-mhm" | "univariate"
            | "cbfs" | "npn-mhm" | "md-mhm" | "cbfs-mhm" | "optimal" => Ok(&[]),
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
        assert!(matches!(
            Method::parse("ona", &[("n_init".into(), ParamValue::Int(0))]),
            Err(Error::InvalidParameter { .. })
        ));
        assert_eq!(
            Method::parse("ona", &[("n_init".into(), ParamValue::Int(5))]).unwrap(),
            Method::Ona { max_rounds: 30, n_init: 5 }
        );
        for name in METHODS {
            assert_eq!(Method::parse(name, &[]).unwrap().name(), *name);
        }
    }

    #[test]
    fn real_bounds_read_as_numbers() {
        let reason =
            |v: f64| match Method::parse("vmdav", &[("gamma".into(), ParamValue::Float(v))]) {
                Err(Error::InvalidParameter { name, reason }) if name == "gamma" => reason,
                other => panic!("{other:?}"),
            };
        assert_eq!(reason(-1.0), "must be a finite number of at least 0, got -1");
        assert_eq!(reason(f64::INFINITY), "must be a finite number of at least 0, got inf");
        assert_eq!(reason(-1e300), "must be a finite number of at least 0, got -1e300");
    }
}
