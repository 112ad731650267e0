//! t-closeness of confidential attributes through microaggregation (Soria-Comas,
//! Domingo-Ferrer, Sánchez and Martínez, "t-Closeness through Microaggregation", IEEE TKDE
//! 27(11), 2015): every class of at least k records must also hold each confidential
//! attribute within earth mover's distance t of its distribution over the whole file.
//!
//! A workflow step around the algorithms: each stratum (or the whole file) is grouped on its
//! standardized keys by `"merge"` (the chosen method, then merging), `"k-first"` or
//! `"t-first"` ([`k_first`], [`t_first`]), every result verified and merged until t-close
//! ([`verify`]), and `"auto"` keeps the one of least SSE. The partition then goes through the
//! ordinary release (weights, aggregation) of [`Evaluation::weighted`].

pub mod buckets;
pub mod budget;
pub mod confidential;
pub mod emd;
pub mod k_first;
pub mod mixed_space;
mod mixed_trees;
pub mod pool;
pub mod space;
pub mod t_first;
pub mod verify;

use crate::algorithms::mdav::mixed::mixed_mdav;
use crate::dataset::Scaling;
use crate::error::{Error, Result};
use crate::float::Float;
use crate::index::IndexChoice;
use crate::method::Method;
use crate::microaggregate::{Options, Outcome, group};
use crate::missing::Missing;
use crate::mixed::MixedKey;
use crate::partition::Partition;
use crate::progress::{Progress, Share};
use crate::workflow::evaluation::Evaluation;
use crate::workflow::jobs::group_parts;
use crate::workflow::{Workflow, strata};
use budget::Budget;
use confidential::Confidential;
use emd::Reference;
use mixed_space::MixedSpace;
use ndarray::{ArrayView2, Axis};
use space::{Dense, Space};
use std::sync::Mutex;

/// One confidential attribute: each record's code, 0..n_values (the rank of its value
/// among the file's distinct values when `ordered`, else its category).
#[derive(Debug, Clone, PartialEq)]
pub struct SensitiveAttribute {
    /// The attribute's name, for messages.
    pub name: String,
    /// Code of every record.
    pub codes: Vec<u32>,
    /// Number of distinct values m.
    pub n_values: usize,
    /// Ordered (numerical) distance, or nominal.
    pub ordered: bool,
}

/// How the t-close partition is built (`t_method=`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TMethod {
    /// The chosen k-anonymous method, then merging (TKDE 2015 §4).
    Merge,
    /// k-anonymity-first (§5.1).
    KFirst,
    /// t-closeness-first (§5.2).
    TFirst,
    /// All three, the t-close partition of least SSE.
    Auto,
}

/// The names `t_method=` accepts.
pub const T_METHODS: [&str; 4] = ["auto", "merge", "k-first", "t-first"];

impl TMethod {
    /// Parses a `t_method=` name.
    pub fn parse(name: &str) -> Result<Self> {
        Ok(match name {
            "auto" => TMethod::Auto,
            "merge" => TMethod::Merge,
            "k-first" => TMethod::KFirst,
            "t-first" => TMethod::TFirst,
            _ => {
                return Err(Error::InvalidParameter {
                    name: "t_method".into(),
                    reason: format!("unknown {name:?}; one of {}", T_METHODS.join(", ")),
                });
            }
        })
    }

    /// The `t_method=` name.
    pub fn name(self) -> &'static str {
        match self {
            TMethod::Auto => "auto",
            TMethod::Merge => "merge",
            TMethod::KFirst => "k-first",
            TMethod::TFirst => "t-first",
        }
    }
}

/// The t-closeness request: the confidential attributes, t and the algorithm.
#[derive(Debug, Clone, PartialEq)]
pub struct TCloseness {
    /// The confidential attributes (at least one).
    pub sensitive: Vec<SensitiveAttribute>,
    /// The bound on every class's EMD, 0 < t ≤ 1.
    pub t: f64,
    /// The algorithm.
    pub method: TMethod,
}

/// A k-anonymous, t-close partition, its release, and what was done.
#[derive(Debug, Clone)]
pub struct TCloseOutcome {
    /// Partition, evaluation and strata merges, as plain microaggregation returns them.
    pub outcome: Outcome,
    /// The algorithm that built each stratum's classes (in stratum order; one entry
    /// without strata): `t_method`, or what `"auto"` chose.
    pub chosen: Vec<TMethod>,
    /// Per confidential attribute, the largest EMD of a released class.
    pub max_emd: Vec<f64>,
}

impl TCloseness {
    /// Checks t and that every attribute has `n` codes below its `n_values`.
    pub fn validate(&self, n: usize) -> Result<()> {
        let bad =
            |name: &str, reason: String| Err(Error::InvalidParameter { name: name.into(), reason });
        if !(self.t > 0.0 && self.t <= 1.0) {
            return bad("t", format!("must be in (0, 1], got {}", self.t));
        }
        if self.sensitive.is_empty() {
            return bad("sensitive", "name at least one confidential attribute".into());
        }
        for a in &self.sensitive {
            if a.codes.len() != n {
                return bad(
                    "sensitive",
                    format!("{}: {} values for {n} records", a.name, a.codes.len()),
                );
            }
            if a.codes.iter().any(|&c| c as usize >= a.n_values) {
                return bad("sensitive", format!("{}: codes must be below {}", a.name, a.n_values));
            }
        }
        Ok(())
    }

    /// Each confidential attribute's distribution over the whole file, counting records
    /// (sampling weights change released values only): what every class's EMD is measured
    /// against.
    pub fn references(&self) -> Vec<Reference> {
        self.sensitive
            .iter()
            .map(|a| Reference::new(&a.codes, a.n_values, &vec![1.0; a.codes.len()], a.ordered))
            .collect()
    }
}

/// Microaggregates `x` (complete keys, grouped in the units of `workflow.scaling`; with
/// `workflow.nominal`, a mixed key of these numeric columns and nominal codes, grouped in its
/// one-hot embedding's geometry without building it, [`mixed_space`]) into classes of at
/// least `k` records, each t-close for every confidential attribute of `tc`, inside
/// the workflow: strata (the file's distribution stays the reference; a stratum farther than t from
/// it is an error naming it), weights (a weighted release; the distributions count records)
/// and aggregation.
/// `method` is what `"merge"` (and `"auto"`'s merge candidate) starts from. The parameters are
/// [`crate::tcloseness_workflow::t_close_microaggregate`]'s, which checks them, completes missing
/// key values and cuts `max_part` parts into strata first.
pub fn t_close_complete_keys<S: Float>(
    x: ArrayView2<S>,
    k: usize,
    method: &Method,
    tc: &TCloseness,
    options: Options,
    workflow: Workflow,
    progress: &Progress,
) -> Result<TCloseOutcome> {
    debug_assert!(options.missing == Missing::Error && workflow.max_part.is_none());
    let scaling = &workflow.scaling(x, options.standardize)?;
    let n = x.nrows();
    debug_assert!(tc.validate(n).is_ok() && (2..=n).contains(&k));
    let mass = workflow.weights.clone().unwrap_or_else(|| vec![1.0; n]);
    let references = tc.references();
    let split = match &workflow.strata {
        Some(s) => Some(strata::split(x, s, k, workflow.small_strata, scaling)?),
        None => None,
    };
    let parts = split.as_ref().map_or_else(|| vec![(0..n as u32).collect()], |s| s.parts.clone());
    let sensitive = || tc.sensitive.iter().map(|a| a.codes.as_slice());
    let confs: Vec<Confidential> = parts
        .iter()
        .map(|ids| Confidential::of(sensitive(), ids, Some(&mass), &references))
        .collect();
    if let Some(s) = &workflow.strata {
        for (ids, conf) in parts.iter().zip(&confs) {
            check_stratum(conf, tc.t, s, ids)?; // every stratum before any grouping
        }
    }
    let nominal = workflow.nominal.as_ref();
    let chosen = Mutex::new(vec![TMethod::Auto; parts.len()]);
    progress.reset();
    let (partition, evaluation) = options.parallelism.install(|exec| {
        let partition = group_parts(n, &parts, exec, |ids, exec| {
            let p = parts.iter().position(|q| q.first() == ids.first()).expect("a part");
            let rows: Vec<usize> = ids.iter().map(|&i| i as usize).collect();
            let part = x.select(Axis(0), &rows);
            let centered =
                Scaling { mean: Scaling::fit(part.view(), false).mean, ..scaling.clone() };
            let keys = centered.rows_of::<S, f64>(part.view())?;
            let codes = nominal.map(|key| key.codes.select(Axis(0), &rows));
            // What "merge" starts from: `method` on the part's keys.
            let start = |counted: &Progress| match (nominal, &codes) {
                (Some(key), Some(codes)) => {
                    let Method::Mdav(opts) = *method else {
                        unreachable!("t_close_microaggregate checks the method of a mixed key")
                    };
                    let mixed =
                        MixedKey::<f64>::new(part.view(), &centered, codes.view(), &key.weights)?;
                    Ok(mixed_mdav(mixed, k, opts, exec, counted))
                }
                _ => {
                    group::<S, f64>(part.view(), k, method, &centered, options.seed, exec, counted)
                }
            };
            let (conf, t) = (&confs[p], tc.t);
            let (labels, used) = match (nominal, &codes) {
                (Some(key), Some(codes)) => {
                    let codes = codes.iter().map(|&c| c as u32).collect();
                    let space = MixedSpace::new(keys, x.ncols(), ids.len(), codes, &key.weights);
                    Job { space: &space, k, conf, t }.run(tc.method, start, progress)?
                }
                _ => {
                    let space = Dense::new(&keys, x.ncols());
                    Job { space: &space, k, conf, t }.run(tc.method, start, progress)?
                }
            };
            chosen.lock().expect("no panic while held")[p] = used;
            Partition::from_labels(labels)
        })?;
        progress.finish(n);
        let weights = workflow.weights.as_deref();
        let evaluation = Evaluation::weighted(
            x,
            None,
            &partition,
            scaling,
            weights,
            workflow.aggregation,
            exec,
        )?;
        Ok::<_, Error>((partition, evaluation))
    })??;
    let whole =
        Confidential::of(sensitive(), &(0..n as u32).collect::<Vec<_>>(), Some(&mass), &references);
    let max_emd = max_emd(&whole, partition.labels(), partition.n_groups());
    let merges = split.map_or_else(Vec::new, |s| s.merges);
    Ok(TCloseOutcome {
        outcome: Outcome { partition, evaluation, merges },
        chosen: chosen.into_inner().expect("no panic while held"),
        max_emd,
    })
}

/// Refuses a stratum (the records `ids`, whose confidential values `conf` holds) that is
/// itself farther than `t` from the file: no partition of it into classes can then be
/// t-close (merging it whole is the best it gets). O(|ids| × confidential attributes); the
/// distributions count records.
pub fn check_stratum(
    conf: &Confidential,
    t: f64,
    strata: &strata::Strata,
    ids: &[u32],
) -> Result<()> {
    let e = conf.emd(&conf.profile(0..conf.n()));
    if e > t + verify::SLACK {
        let mut names: Vec<&str> = ids
            .iter()
            .map(|&i| strata.names()[strata.codes()[i as usize] as usize].as_str())
            .collect();
        names.sort_unstable();
        names.dedup();
        return Err(Error::InvalidParameter {
            name: "by".into(),
            reason: format!(
                "stratum {} is at EMD {e:.4} from the whole file's distribution of the confidential \
                 attributes, above t = {t}: no class of it can be t-close",
                names.join(" + "),
            ),
        });
    }
    Ok(())
}

/// Per confidential attribute, the largest EMD of the classes `labels` (0..g).
fn max_emd(conf: &Confidential, labels: &[u32], g: usize) -> Vec<f64> {
    let mut profiles = vec![conf.empty(); g];
    for (i, &l) in labels.iter().enumerate() {
        conf.add(&mut profiles[l as usize], i);
    }
    let mut largest = vec![0.0f64; conf.codes.len()];
    for p in &profiles {
        for (m, e) in largest.iter_mut().zip(conf.emd_per_attribute(p)) {
            *m = m.max(e);
        }
    }
    largest
}

/// One stratum (or the whole file) to group.
struct Job<'a, K> {
    space: &'a K,
    k: usize,
    conf: &'a Confidential<'a>,
    t: f64,
}

impl<K: Space> Job<'_, K> {
    /// The verified t-close labels of `t_method` (of least SSE among the three for
    /// `"auto"`), and the algorithm that built them. `start` is the k-anonymous partition
    /// `"merge"` starts from, counting its records on the progress it is given.
    fn run(
        &self,
        t_method: TMethod,
        start: impl Fn(&Progress) -> Result<Partition>,
        progress: &Progress,
    ) -> Result<(Vec<u32>, TMethod)> {
        let space = self.space;
        // "auto" runs the cheapest first (on Adult t-first, k-first, then merge: 1.2×, 1.7×
        // and 2.2× plain MDAV) and drops a later one as soon as its classes cost more than
        // the best so far; on equal SSE the order merge, k-first, t-first decides.
        let candidates = match t_method {
            TMethod::Auto => vec![TMethod::TFirst, TMethod::KFirst, TMethod::Merge],
            m => vec![m],
        };
        let preference = |m: TMethod| {
            [TMethod::Merge, TMethod::KFirst, TMethod::TFirst].iter().position(|&p| p == m)
        };
        let mut best: Option<(f64, Vec<u32>, TMethod)> = None;
        // Each candidate counts its records as 1/|candidates| of the stratum's progress.
        let share = Share::new(progress, candidates.len());
        let alone = candidates.len() == 1;
        for m in candidates {
            let mut budget = best
                .as_ref()
                .map_or_else(Budget::unlimited, |b| Budget::below(b.0))
                .counting(&share);
            let (k, conf, t) = (self.k, self.conf, self.t);
            let built = match m {
                TMethod::Merge => {
                    // MDAV counts on a Progress of its own; a candidate's comes at its end.
                    let own = Progress::new();
                    let partition = start(if alone { progress } else { &own })?;
                    if !alone {
                        share.add(conf.n());
                    }
                    Some(partition.labels().to_vec())
                }
                TMethod::KFirst => {
                    k_first::k_first(space, k, conf, t, IndexChoice::Auto, &mut budget)
                }
                TMethod::TFirst => {
                    let indexed = IndexChoice::Auto.uses(conf.n(), space.index_dim());
                    t_first::t_first(space, k, conf, t, indexed, &mut budget)
                }
                TMethod::Auto => unreachable!("auto is the three others"),
            };
            let Some(built) = built else { continue };
            if !budget.restart(weighted_sse(space, &built, &conf.mass)) {
                continue;
            }
            let Some((labels, _)) = verify::merge_until_close(space, &built, conf, t, &mut budget)
            else {
                continue;
            };
            let sse = weighted_sse(space, &labels, &conf.mass);
            if best.as_ref().is_none_or(|b| (sse, preference(m)) < (b.0, preference(b.2))) {
                best = Some((sse, labels, m));
            }
        }
        let (_, labels, m) = best.expect("one candidate at least");
        Ok((labels, m))
    }
}

/// SSE of the records of `space` around their class means, each record counting with its
/// `mass` (the plain mean for a class of zero total mass, as the release uses): what
/// `"auto"` minimizes.
fn weighted_sse<K: Space>(space: &K, labels: &[u32], mass: &[f64]) -> f64 {
    let g = labels.iter().map(|&l| l as usize + 1).max().unwrap_or(0);
    let mut totals = vec![0.0; g];
    for (i, &l) in labels.iter().enumerate() {
        totals[l as usize] += mass[i];
    }
    let by_count: Vec<bool> = totals.iter().map(|&w| w <= 0.0).collect();
    let mut sums = vec![space.no_sums(); g];
    let mut weights = vec![0.0; g];
    for (i, &l) in labels.iter().enumerate() {
        let l = l as usize;
        let w = if by_count[l] { 1.0 } else { mass[i] };
        space.add(&mut sums[l], i, w);
        weights[l] += w;
    }
    let means: Vec<K::Point> = sums.iter().zip(&weights).map(|(s, &w)| space.mean(s, w)).collect();
    labels.iter().enumerate().map(|(i, &l)| mass[i] * space.dist2(i, &means[l as usize])).sum()
}

#[cfg(test)]
mod mixed_tests;
#[cfg(test)]
mod tests;
