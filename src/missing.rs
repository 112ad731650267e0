//! Missing values (NaN in the data; docs/workflow.md#missing-values): the `missing=` setting, which
//! methods take missing values, and the records with every attribute missing.
//!
//! With `missing = "fill"` or `"keep"` the methods group records by the partial distance
//! (`kernels_masked.rs`): the sum over the attributes observed in both records, scaled by
//! d / (their number); to a centroid, over the record's observed attributes. Centroids are
//! means of the observed values, standardization uses the observed values of each column,
//! and SSE/SST (hence IL) are taken on the observed cells. "fill" and "keep" group alike;
//! they differ only in what a release shows in the cells that were missing (the group's
//! value, or still missing), which the bindings build from the centroids.
//!
//! A record with every attribute missing has no distance to anything: it is set aside, the
//! method runs on the other records, and it joins the **last group created** (counting
//! toward that group's size, never toward its centroid). If fewer than k records have an
//! observed value, all records form one group.

use crate::error::{Error, Result};
use crate::method::Method;
use crate::partition::Partition;
use ndarray::{Array2, ArrayView2, Axis};

/// What to do with missing values (NaN) in the data.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Missing {
    /// Refuse data with NaN (the default; the message of [`Error::NonFinite`]).
    #[default]
    Error,
    /// Group by partial distances; a release shows the group's value in every cell.
    Fill,
    /// Group by partial distances; a release leaves missing cells missing.
    Keep,
}

/// The `missing=` values, in documentation order.
pub const MISSING_MODES: &[&str] = &["error", "fill", "keep"];

/// The methods that take missing values (docs/workflow.md#missing-values).
pub const MISSING_METHODS: &[&str] = &[
    "mdav",
    "md",
    "mdav-star",
    "ona-star",
    "mondrian",
    "mondrian-v",
    "mondrian-v2d",
    "mona",
    "mona-2d",
];

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

    /// The name [`Missing::parse`] reads.
    pub fn name(self) -> &'static str {
        match self {
            Missing::Error => "error",
            Missing::Fill => "fill",
            Missing::Keep => "keep",
        }
    }
}

/// Refuses a method that cannot take missing values, naming those that can.
pub fn check_method(method: &Method) -> Result<()> {
    let name = method.name();
    if MISSING_METHODS.contains(&name) {
        Ok(())
    } else {
        Err(Error::MissingUnsupported { method: name })
    }
}

/// Runs `partition_of` on the records with at least one observed value and places the
/// records with none in the last group (see the module doc). `partition_of` gets the data
/// of those records (`None`: all of them, the usual case).
pub fn with_empty_records<S: Copy>(
    x: ArrayView2<S>,
    k: usize,
    is_missing: impl Fn(&S) -> bool,
    partition_of: impl FnOnce(Option<ArrayView2<S>>) -> Result<Partition>,
) -> Result<Partition> {
    let empty: Vec<bool> = x.rows().into_iter().map(|r| r.iter().all(&is_missing)).collect();
    if !empty.contains(&true) {
        return partition_of(None);
    }
    let kept: Vec<usize> = (0..empty.len()).filter(|&i| !empty[i]).collect();
    if kept.len() < k {
        return Ok(Partition::new_unchecked(vec![0; empty.len()], 1));
    }
    let sub: Array2<S> = x.select(Axis(0), &kept);
    let inner = partition_of(Some(sub.view()))?;
    let last = inner.n_groups() as u32 - 1;
    let mut labels = vec![last; empty.len()];
    for (&i, &l) in kept.iter().zip(inner.labels()) {
        labels[i] = l;
    }
    Ok(Partition::new_unchecked(labels, inner.n_groups()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::algorithms::mdav::{MdavOptions, mdav};
    use crate::algorithms::spatial::{Accelerators, IndexChoice};
    use crate::algorithms::{md::md, mdav_star::mdav_star, ona_star::ona_star};
    use crate::dataset::{Scaling, WorkingSet};
    use crate::float::Float;
    use crate::kernels_masked::test_data as data;
    use crate::parallel::Exec;
    use crate::progress::Progress;
    use crate::{Options, microaggregate};
    use ndarray::array;

    /// Runs each masked-capable algorithm on a working set.
    fn partitions<T: Float>(ws: &WorkingSet<T>, k: usize) -> Vec<(String, Partition)> {
        let (e, p) = (Exec::SEQUENTIAL, Progress::new());
        let modes = [
            MdavOptions::default(),
            MdavOptions::TRADITIONAL,
            MdavOptions { distance_reuse: false, ..MdavOptions::default() },
            MdavOptions {
                centroid_by_subtraction: false,
                partial_sort: false,
                ..MdavOptions::default()
            },
        ];
        let mut out: Vec<(String, Partition)> =
            modes.iter().map(|&o| (format!("mdav {o:?}"), mdav(ws.clone(), k, o, e, &p))).collect();
        out.push(("md".into(), md(ws, k, IndexChoice::Auto, &p)));
        out.push((
            "mdav-star".into(),
            mdav_star(ws.clone(), k, false, Accelerators::default(), e, &p),
        ));
        out.push((
            "mdav-star-plus".into(),
            mdav_star(ws.clone(), k, true, Accelerators::default(), e, &p),
        ));
        out.push(("ona-star".into(), ona_star(ws.clone(), k, 30, e, &p)));
        out
    }

    #[test]
    fn masked_kernels_on_complete_data_give_the_complete_partitions() {
        for (n, d, k) in [(97, 3, 3), (240, 5, 4), (60, 2, 7)] {
            let x = data(n, d, 0.0, n as u64);
            let s = Scaling::fit(x.view(), true);
            let complete = partitions(&WorkingSet::<f64>::new(x.view(), &s).unwrap(), k);
            let masked = partitions(&WorkingSet::<f64>::with_missing(x.view(), &s).unwrap(), k);
            for ((name, a), (_, b)) in complete.iter().zip(&masked) {
                assert_eq!(a.labels(), b.labels(), "{name}, n={n}");
            }
        }
    }

    fn valid_with_missing<T: Float>() {
        for (n, d, k, share) in [(150, 4, 3, 0.05), (211, 6, 5, 0.2), (40, 2, 2, 0.15)] {
            let x = data(n, d, share, 7 + n as u64);
            let opts = Options { missing: Missing::Fill, ..Options::default() };
            for name in MISSING_METHODS {
                let method = Method::parse(name, &[]).unwrap();
                let out = microaggregate::<f64, T>(x.view(), k, &method, &opts, &Progress::new())
                    .unwrap_or_else(|e| panic!("{name}: {e}"));
                out.partition.check(k, None).unwrap_or_else(|e| panic!("{name}: {e}"));
                assert_eq!(out.partition.labels().len(), n);
                assert!(out.evaluation.sse.is_finite() && out.evaluation.sst > 0.0, "{name}");
            }
            // Every F-MDAV mode, straight on the masked working set (all-missing rows included).
            let ws =
                WorkingSet::<T>::with_missing(x.view(), &Scaling::fit(x.view(), true)).unwrap();
            for (name, p) in partitions(&ws, k) {
                p.check(k, None).unwrap_or_else(|e| panic!("{name}: {e}"));
            }
        }
    }

    #[test]
    fn every_listed_method_takes_missing_values_f64() {
        valid_with_missing::<f64>();
    }

    #[test]
    fn every_listed_method_takes_missing_values_f32() {
        valid_with_missing::<f32>();
    }

    #[test]
    fn parses_modes_and_refuses_other_methods() {
        for name in MISSING_MODES {
            assert_eq!(Missing::parse(name).unwrap().name(), *name);
        }
        assert!(
            Missing::parse("drop").unwrap_err().to_string().contains("'error', 'fill', 'keep'")
        );
        for name in MISSING_METHODS {
            check_method(&Method::parse(name, &[]).unwrap()).unwrap();
        }
        let err = check_method(&Method::parse("ona", &[]).unwrap()).unwrap_err().to_string();
        assert!(err.contains("'ona'") && err.contains("mdav, md, mdav-star"), "{err}");
    }

    #[test]
    fn records_with_nothing_observed_join_the_last_group() {
        let nan = f64::NAN;
        let x = array![[1.0, nan], [nan, nan], [2.0, 3.0], [4.0, nan], [nan, nan]];
        let p = with_empty_records(
            x.view(),
            1,
            |v: &f64| v.is_nan(),
            |sub| {
                assert_eq!(sub.unwrap().nrows(), 3);
                Ok(Partition::new_unchecked(vec![0, 1, 1], 2))
            },
        )
        .unwrap();
        assert_eq!(p.labels(), &[0, 1, 1, 1, 1]);
        // Fewer than k observed records: one group.
        let p = with_empty_records(x.view(), 4, |v: &f64| v.is_nan(), |_| unreachable!()).unwrap();
        assert_eq!(p.labels(), &[0; 5]);
    }
}
