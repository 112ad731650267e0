//! Strata (docs/workflow.md#strata): records of different strata (region, sex, ...) must never
//! share a group. The records are split by stratum, each stratum is grouped on its own, and
//! strata of fewer than k records are either refused (naming each) or merged into the
//! nearest stratum by centroid, one at a time, until every stratum has k records or more.

use crate::dataset::Scaling;
use crate::error::{Error, Result};
use crate::float::Float;
use ndarray::ArrayView2;

/// The stratum of every record, as codes `0..s` with a display name per code (the caller's
/// original value, used in messages).
#[derive(Debug, Clone, PartialEq)]
pub struct Strata {
    codes: Vec<u32>,
    names: Vec<String>,
}

impl Strata {
    /// `codes[i]` is record i's stratum, below `names.len()` (checked); `names[c]` is how
    /// messages name stratum `c`.
    pub fn new(codes: Vec<u32>, names: Vec<String>) -> Result<Self> {
        if let Some(i) = codes.iter().position(|&c| c as usize >= names.len()) {
            return Err(Error::InvalidParameter {
                name: "by".into(),
                reason: format!(
                    "stratum code {} of record {i} has no name ({} names)",
                    codes[i],
                    names.len()
                ),
            });
        }
        Ok(Strata { codes, names })
    }

    /// Strata named by their codes.
    pub fn from_codes(codes: Vec<u32>) -> Self {
        let count = codes.iter().map(|&c| c as usize + 1).max().unwrap_or(0);
        Strata { codes, names: (0..count).map(|c| c.to_string()).collect() }
    }

    /// The stratum code of every record.
    pub fn codes(&self) -> &[u32] {
        &self.codes
    }

    /// The display name of every code.
    pub fn names(&self) -> &[String] {
        &self.names
    }
}

/// What to do with a stratum of fewer than k records (`small_strata=`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum SmallStrata {
    /// Refuse the request, naming every undersized stratum and its size (the default:
    /// sdcMicro silently forms groups below k there).
    #[default]
    Error,
    /// Merge each into the stratum with the nearest centroid, and report the merges.
    Merge,
}

/// The `small_strata=` values, in documentation order (the bindings export them once for the
/// CLI and the Dask engine).
pub const SMALL_STRATA: [&str; 2] = ["error", "merge"];

impl SmallStrata {
    /// Parses `"error"` or `"merge"`.
    pub fn parse(name: &str) -> Result<Self> {
        match name {
            "error" => Ok(SmallStrata::Error),
            "merge" => Ok(SmallStrata::Merge),
            _ => Err(Error::InvalidParameter {
                name: "small_strata".into(),
                reason: format!("must be 'error' or 'merge', got '{name}'"),
            }),
        }
    }
}

/// One merge of an undersized stratum into another (codes of [`Strata`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Merge {
    /// The undersized stratum (with whatever was merged into it before).
    pub stratum: u32,
    /// The stratum it joined, nearest by centroid.
    pub into: u32,
    /// Records of `stratum` when it was merged.
    pub size: usize,
}

/// The strata to group: record ids (ascending) of each, in order of code, after undersized
/// strata are merged.
#[derive(Debug, Clone, PartialEq)]
pub struct Split {
    /// Record ids of each stratum that is grouped.
    pub parts: Vec<Vec<u32>>,
    /// The merges done, in order.
    pub merges: Vec<Merge>,
}

/// Splits the records of `x` by stratum. Strata of fewer than `k` records are an
/// [`Error::SmallStrata`] or, with [`SmallStrata::Merge`], merged: the smallest undersized
/// stratum (lowest code on ties) joins the stratum whose centroid (in the units of
/// `scaling`) is nearest (lowest code on ties), and so on until none is undersized. `k`
/// must not exceed the number of records.
pub fn split<S: Float>(
    x: ArrayView2<S>,
    strata: &Strata,
    k: usize,
    policy: SmallStrata,
    scaling: &Scaling,
) -> Result<Split> {
    let n = x.nrows();
    if strata.codes.len() != n {
        return Err(Error::InvalidParameter {
            name: "by".into(),
            reason: format!("need one stratum per record ({n}), got {}", strata.codes.len()),
        });
    }
    let mut members = vec![Vec::new(); strata.names.len()];
    for (i, &c) in strata.codes.iter().enumerate() {
        members[c as usize].push(i as u32);
    }
    let small: Vec<usize> = (0..members.len()).filter(|&c| undersized(&members[c], k)).collect();
    let mut merges = Vec::new();
    if !small.is_empty() {
        if policy == SmallStrata::Error {
            let strata = small.iter().map(|&c| (strata.names[c].clone(), members[c].len()));
            return Err(Error::SmallStrata { k, strata: strata.collect() });
        }
        merges = merge_small(x, &mut members, k, scaling);
    }
    Ok(Split { parts: members.into_iter().filter(|m| !m.is_empty()).collect(), merges })
}

fn undersized(members: &[u32], k: usize) -> bool {
    !members.is_empty() && members.len() < k
}

/// Merges undersized strata until none is left (see [`split`]); merged strata end empty.
fn merge_small<S: Float>(
    x: ArrayView2<S>,
    members: &mut [Vec<u32>],
    k: usize,
    scaling: &Scaling,
) -> Vec<Merge> {
    let d = x.ncols();
    let mut centroids: Vec<Vec<f64>> = members
        .iter()
        .map(|ids| {
            // Means of the observed values; a column the stratum never observes sits at
            // the file's mean (0 in scaled units), so missing values never make a NaN.
            let mut sums = vec![(0.0, 0usize); d];
            for &i in ids {
                for (j, (s, v)) in sums.iter_mut().zip(x.row(i as usize)).enumerate() {
                    let z = scaling.apply(j, v.as_f64());
                    if !z.is_nan() {
                        *s = (s.0 + z, s.1 + 1);
                    }
                }
            }
            sums.iter().map(|&(s, m)| if m > 0 { s / m as f64 } else { 0.0 }).collect()
        })
        .collect();
    let mut merges = Vec::new();
    while let Some(from) = (0..members.len())
        .filter(|&c| undersized(&members[c], k))
        .min_by_key(|&c| (members[c].len(), c))
    {
        let distance = |c: usize| {
            centroids[c].iter().zip(&centroids[from]).map(|(a, b)| (a - b) * (a - b)).sum::<f64>()
        };
        let into = (0..members.len())
            .filter(|&c| c != from && !members[c].is_empty())
            .min_by(|&a, &b| distance(a).total_cmp(&distance(b)).then(a.cmp(&b)))
            .expect("k <= n, so an undersized stratum is never the only one");
        let (m_from, m_into) = (members[from].len() as f64, members[into].len() as f64);
        let moved = std::mem::take(&mut members[from]);
        let merged: Vec<f64> = (0..d)
            .map(|j| {
                (centroids[into][j] * m_into + centroids[from][j] * m_from) / (m_into + m_from)
            })
            .collect();
        centroids[into] = merged;
        merges.push(Merge { stratum: from as u32, into: into as u32, size: moved.len() });
        members[into].extend(moved);
        members[into].sort_unstable();
    }
    merges
}

#[cfg(test)]
mod tests {
    use super::*;
    use ndarray::array;

    fn names(list: &[&str]) -> Vec<String> {
        list.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn splits_by_code_in_record_order() {
        let x = array![[0.0], [1.0], [2.0], [3.0], [4.0]];
        let strata = Strata::from_codes(vec![1, 0, 1, 0, 1]);
        let s = split(x.view(), &strata, 2, SmallStrata::Error, &Scaling::fit(x.view(), true));
        assert_eq!(s.unwrap(), Split { parts: vec![vec![1, 3], vec![0, 2, 4]], merges: vec![] });
    }

    #[test]
    fn undersized_strata_are_named_with_their_sizes() {
        let x = array![[0.0], [1.0], [2.0], [3.0], [4.0], [5.0]];
        let strata = Strata::new(vec![0, 1, 1, 1, 2, 1], names(&["'a'", "'b'", "'c'"])).unwrap();
        let err = split(x.view(), &strata, 3, SmallStrata::Error, &Scaling::fit(x.view(), true));
        let err = err.unwrap_err();
        assert_eq!(
            err,
            Error::SmallStrata { k: 3, strata: vec![("'a'".into(), 1), ("'c'".into(), 1)] }
        );
        assert!(err.to_string().contains("'a' (1 record), 'c' (1 record)"), "{err}");
    }

    #[test]
    fn merges_into_the_nearest_stratum_until_none_is_small() {
        // Stratum 0 near 0, stratum 1 near 10, stratum 2 (one record at 9) and stratum 3
        // (one record at 1) are small: 2 joins 1, then 3 joins 0.
        let x = array![[0.0], [0.5], [10.0], [10.5], [9.0], [1.0], [0.2]];
        let strata = Strata::from_codes(vec![0, 0, 1, 1, 2, 3, 0]);
        let s = split(x.view(), &strata, 2, SmallStrata::Merge, &Scaling::fit(x.view(), false));
        let s = s.unwrap();
        assert_eq!(s.parts, vec![vec![0, 1, 5, 6], vec![2, 3, 4]]);
        assert_eq!(
            s.merges,
            vec![Merge { stratum: 2, into: 1, size: 1 }, Merge { stratum: 3, into: 0, size: 1 }]
        );
        // Two small strata that only reach k together merge with each other first.
        let x = array![[0.0], [0.1], [50.0], [100.0], [100.2], [100.4]];
        let strata = Strata::from_codes(vec![0, 0, 1, 2, 2, 2]);
        let s = split(x.view(), &strata, 3, SmallStrata::Merge, &Scaling::fit(x.view(), false));
        assert_eq!(s.unwrap().parts, vec![vec![0, 1, 2], vec![3, 4, 5]]);
    }

    #[test]
    fn bad_strata_are_refused() {
        assert!(Strata::new(vec![0, 2], names(&["a", "b"])).is_err());
        let x = array![[0.0], [1.0]];
        let s = Strata::from_codes(vec![0]);
        assert!(split(x.view(), &s, 1, SmallStrata::Error, &Scaling::fit(x.view(), true)).is_err());
        assert!(SmallStrata::parse("drop").is_err());
        assert_eq!(SmallStrata::parse("merge").unwrap(), SmallStrata::Merge);
    }
}
