//! The confidential attributes of the records one job groups (a stratum, or the whole file),
//! with the whole file's distributions they are compared to, and the distributions of a
//! class of those records ([`Profile`]): a class is t-close when its EMD to the file is at
//! most t for every confidential attribute, so its distance is the largest of them.

use super::emd::{Hist, Reference};

/// The confidential values of a job's records (local indices 0..n) and the file's
/// distributions.
#[derive(Debug, Clone)]
pub struct Confidential<'a> {
    /// Per attribute, the code (rank or category) of each record.
    pub codes: Vec<Vec<u32>>,
    /// Each record's weight in the SSE that `"auto"` and the merges compare (1 without
    /// weights). The distributions count records, whatever the weights: an attacker sees
    /// released records, so t, like k, counts records (docs/workflow.md).
    pub mass: Vec<f64>,
    /// Per attribute, the whole file's distribution.
    pub references: &'a [Reference],
}

/// One class's distributions, one histogram per confidential attribute.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Profile(Vec<Hist>);

impl<'a> Confidential<'a> {
    /// The confidential values of the file's records `ids` (in that order): each attribute's
    /// `codes` over the whole file, each record's `mass` (1 each when `None`), and the file's
    /// distributions.
    pub fn of<'c>(
        codes: impl IntoIterator<Item = &'c [u32]>,
        ids: &[u32],
        mass: Option<&[f64]>,
        references: &'a [Reference],
    ) -> Self {
        Confidential {
            codes: codes
                .into_iter()
                .map(|c| ids.iter().map(|&i| c[i as usize]).collect())
                .collect(),
            mass: ids.iter().map(|&i| mass.map_or(1.0, |m| m[i as usize])).collect(),
            references,
        }
    }

    /// Number of records.
    pub fn n(&self) -> usize {
        self.mass.len()
    }

    /// An empty class.
    pub fn empty(&self) -> Profile {
        Profile(vec![Hist::default(); self.codes.len()])
    }

    /// The class of the records `ids`.
    pub fn profile(&self, ids: impl IntoIterator<Item = usize>) -> Profile {
        let mut p = self.empty();
        for i in ids {
            self.add(&mut p, i);
        }
        p
    }

    /// Adds record `i` to class `p`.
    pub fn add(&self, p: &mut Profile, i: usize) {
        for (h, codes) in p.0.iter_mut().zip(&self.codes) {
            h.add(codes[i], 1.0);
        }
    }

    /// The class's EMD for each confidential attribute.
    pub fn emd_per_attribute<'p>(&'p self, p: &'p Profile) -> impl Iterator<Item = f64> + 'p {
        p.0.iter().zip(self.references).map(|(h, r)| r.emd(h))
    }

    /// The largest EMD of the class over the confidential attributes.
    pub fn emd(&self, p: &Profile) -> f64 {
        self.emd_per_attribute(p).fold(0.0, f64::max)
    }

    /// The EMD the class would have with record `i` added (the class left as it was, bit
    /// for bit).
    pub fn emd_with(&self, p: &mut Profile, i: usize) -> f64 {
        let per_attribute = p.0.iter_mut().zip(&self.codes).zip(self.references);
        per_attribute.map(|((h, c), r)| h.emd_with(r, c[i], 1.0)).fold(0.0, f64::max)
    }
}

impl Profile {
    /// Merges class `other` into this one.
    pub fn absorb(&mut self, other: &Profile) {
        for (h, o) in self.0.iter_mut().zip(&other.0) {
            h.absorb(o);
        }
    }
}
