//! Two-step (incremental) microaggregation and its planner
//! (papers/incremental-microaggregation-thesis.txt §3–4).
//!
//! A base part of the data is microaggregated as soon as it has arrived; records arriving
//! later are folded in by a cheap incremental step, and the released table is always one
//! k-anonymous partition of every record seen. Strategies (thesis Table 4.1):
//! * [`Strategy::TwoStep`] (2MDAV): the base method on the new records alone; if they are
//!   fewer than k, each joins its nearest group;
//! * [`Strategy::Nn`]: each new record joins the group with the nearest centroid, which is
//!   updated at once;
//! * [`Strategy::NnSplitMid`]: as `Nn`, and a group that reaches 2k records is split by MDAV
//!   immediately;
//! * [`Strategy::NnSplitEnd`]: as `Nn`, then every group of ≥ 2k records is split by MDAV.
//!
//! With `inertial`, a record joins the group minimizing n_q/(n_q+1)·‖y − x̂_q‖², the SSE
//! increase, instead of the nearest centroid (§3.2.6). A split group keeps its label for
//! its first piece; the other pieces get new labels. In low dimension the nearest-group
//! query goes to a k-d tree of the centroids (`centroid_table.rs`, option `spatial_index`),
//! with the same answers.
//!
//! Standardization uses the base part's statistics; with `refit_scaling` every call to
//! [`Incremental::extend`] recomputes them over all records seen (groups are kept, only
//! the assignment of the new records sees the new scale).

use crate::algorithms::clusters::ClusterStats;
use crate::algorithms::mdav::MdavOptions;
use crate::centroid_table::CentroidTable;
use crate::dataset::{Scaling, validate, validate_k};
use crate::error::{Error, Result};
use crate::float::Float;
use crate::index::IndexChoice;
use crate::method::Method;
use crate::microaggregate::{Options, microaggregate};
use crate::parallel::Parallelism;
use crate::partition::Partition;
use crate::progress::Progress;
use crate::workflow::evaluation::Evaluation;
use ndarray::{Array2, ArrayView2, Axis};

/// How late records are folded into an existing partition (thesis Table 4.1).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Strategy {
    /// The base method on the new records alone (2MDAV).
    TwoStep,
    /// Nearest group, no split.
    Nn,
    /// Nearest group, split a group by MDAV as soon as it reaches 2k.
    NnSplitMid,
    /// Nearest group, then split every group of ≥ 2k by MDAV.
    NnSplitEnd,
}

impl Strategy {
    /// The names of the API, in this order.
    pub const NAMES: [&'static str; 4] = ["two-step", "nn", "nn-split-mid", "nn-split-end"];

    /// Parses a strategy name.
    pub fn parse(name: &str) -> Result<Self> {
        match name {
            "two-step" => Ok(Strategy::TwoStep),
            "nn" => Ok(Strategy::Nn),
            "nn-split-mid" => Ok(Strategy::NnSplitMid),
            "nn-split-end" => Ok(Strategy::NnSplitEnd),
            _ => Err(Error::InvalidParameter {
                name: "strategy".into(),
                reason: format!("must be one of {}, got '{name}'", Self::NAMES.join(", ")),
            }),
        }
    }
}

/// Settings of an incremental microaggregation.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct IncrementalOptions {
    /// The folding strategy.
    pub strategy: Strategy,
    /// Join the group whose SSE rises least instead of the nearest centroid.
    pub inertial: bool,
    /// z-score the attributes (with the base part's statistics unless `refit_scaling`).
    pub standardize: bool,
    /// Recompute the standardization over all records at every `extend`.
    pub refit_scaling: bool,
    /// Threads for the base method and the splits.
    pub parallelism: Parallelism,
    /// Whether the nearest-group queries use a k-d tree of the centroids (`Auto`: with
    /// `crate::centroid_table::auto_min_groups` groups, in d ≤ 8); same groups.
    pub spatial_index: IndexChoice,
}

/// A k-anonymous partition of all records seen so far, extended as records arrive.
#[derive(Debug, Clone)]
pub struct Incremental {
    k: usize,
    base: Method,
    opts: IncrementalOptions,
    raw: Array2<f64>,
    scaling: Scaling,
    labels: Vec<u32>,
    members: Vec<Vec<u32>>,
    stats: ClusterStats,
    table: CentroidTable,
}

impl Incremental {
    /// Microaggregates the base part `x` with `base` (any method of the catalogue).
    pub fn fit<S: Float>(
        x: ArrayView2<S>,
        k: usize,
        base: Method,
        opts: IncrementalOptions,
    ) -> Result<Self> {
        validate(x)?;
        validate_k(k, x.nrows())?;
        let raw = x.mapv(Float::as_f64);
        let scaling = Scaling::fit(raw.view(), opts.standardize);
        let mut inc = Incremental {
            k,
            base,
            opts,
            raw,
            scaling,
            labels: Vec::new(),
            members: Vec::new(),
            stats: ClusterStats::new(x.ncols()),
            table: CentroidTable::new(x.ncols(), opts.spatial_index),
        };
        let ids: Vec<u32> = (0..inc.raw.nrows() as u32).collect();
        inc.labels = vec![0; ids.len()];
        for group in inc.groups_by(base, &ids)? {
            inc.push_group(group);
        }
        Ok(inc)
    }

    /// Folds the records `x` in with the configured strategy.
    pub fn extend<S: Float>(&mut self, x: ArrayView2<S>) -> Result<()> {
        validate(x)?;
        if x.ncols() != self.raw.ncols() {
            return Err(Error::InvalidParameter {
                name: "X_new".into(),
                reason: format!(
                    "has {} attributes, the fitted data has {}",
                    x.ncols(),
                    self.raw.ncols()
                ),
            });
        }
        let first = self.raw.nrows() as u32;
        self.raw.append(Axis(0), x.mapv(Float::as_f64).view()).expect("same width");
        self.labels.resize(self.raw.nrows(), u32::MAX);
        if self.opts.refit_scaling {
            self.scaling = Scaling::fit(self.raw.view(), self.opts.standardize);
            self.restat();
        }
        let new: Vec<u32> = (first..self.raw.nrows() as u32).collect();
        match self.opts.strategy {
            Strategy::TwoStep if new.len() >= self.k => {
                for group in self.groups_by(self.base, &new)? {
                    self.push_group(group);
                }
            }
            strategy => {
                for &id in &new {
                    let g = self.choose_group(id);
                    self.join(id, g);
                    if strategy == Strategy::NnSplitMid && self.members[g].len() >= 2 * self.k {
                        self.split(g)?;
                    }
                }
                if strategy == Strategy::NnSplitEnd {
                    for g in 0..self.members.len() {
                        if self.members[g].len() >= 2 * self.k {
                            self.split(g)?;
                        }
                    }
                }
            }
        }
        Ok(())
    }

    /// The partition of all records seen (labels in order of creation).
    pub fn partition(&self) -> Partition {
        Partition::new_unchecked(self.labels.clone(), self.members.len())
    }

    /// Centroids (caller's units), SSE and SST of all records seen, with the current scaling.
    pub fn evaluation(&self) -> Result<Evaluation> {
        Evaluation::new(self.raw.view(), &self.partition(), &self.scaling)
    }

    fn z(&self, id: u32) -> Vec<f64> {
        self.raw
            .row(id as usize)
            .iter()
            .enumerate()
            .map(|(j, &v)| self.scaling.apply(j, v))
            .collect()
    }

    fn restat(&mut self) {
        self.stats = ClusterStats::new(self.raw.ncols());
        for g in 0..self.members.len() {
            self.stats.push();
            for &id in &self.members[g] {
                self.stats.add(g, &self.z(id));
            }
            self.refresh(g);
        }
    }

    /// Copies group `g`'s centroid and size into the query table.
    fn refresh(&mut self, g: usize) {
        let size = self.members[g].len();
        let centroid = if size > 0 { self.stats.centroid(g) } else { vec![0.0; self.raw.ncols()] };
        self.table.set(g, &centroid, size);
    }

    /// The groups `method` forms on the records `ids` (scaled), as lists of ids.
    fn groups_by(&self, method: Method, ids: &[u32]) -> Result<Vec<Vec<u32>>> {
        let z = Array2::from_shape_fn((ids.len(), self.raw.ncols()), |(i, j)| {
            self.scaling.apply(j, self.raw[[ids[i] as usize, j]])
        });
        let options = Options {
            standardize: false,
            parallelism: self.opts.parallelism,
            ..Options::default()
        };
        let out =
            microaggregate::<f64, f64>(z.view(), self.k, &method, &options, &Progress::new())?;
        let mut groups = vec![Vec::new(); out.partition.n_groups()];
        for (&id, &l) in ids.iter().zip(out.partition.labels()) {
            groups[l as usize].push(id);
        }
        Ok(groups)
    }

    fn push_group(&mut self, ids: Vec<u32>) -> usize {
        let g = self.stats.push();
        for &id in &ids {
            self.stats.add(g, &self.z(id));
            self.labels[id as usize] = g as u32;
        }
        self.members.push(ids);
        self.refresh(g);
        g
    }

    fn join(&mut self, id: u32, g: usize) {
        self.stats.add(g, &self.z(id));
        self.labels[id as usize] = g as u32;
        self.members[g].push(id);
        self.refresh(g);
    }

    fn choose_group(&mut self, id: u32) -> usize {
        let y = self.z(id);
        self.table.nearest(&y, self.opts.inertial).expect("the base part has a group")
    }

    /// Splits group `g` with MDAV: the first piece keeps label g, the others are new.
    fn split(&mut self, g: usize) -> Result<()> {
        let mut ids = std::mem::take(&mut self.members[g]);
        ids.sort_unstable();
        for &id in &ids {
            self.stats.remove(g, &self.z(id));
        }
        self.refresh(g);
        let mut pieces = self.groups_by(Method::Mdav(MdavOptions::default()), &ids)?.into_iter();
        for id in pieces.next().expect("a group is never empty") {
            self.join(id, g);
        }
        for piece in pieces {
            self.push_group(piece);
        }
        Ok(())
    }
}

/// The thesis' planning quantities for MDAV as both base and incremental algorithm under
/// uniform arrivals (§3.2, §4.2.1). Times are relative to one MDAV run on all the data.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Plan {
    /// ς: the time over which the data arrives, relative to one MDAV run on all of it.
    pub head_start: f64,
    /// ν−: the incremental fraction at which the base run ends exactly when the last
    /// record arrives, (2 + ς − √(ς(4 + ς)))/2.
    pub critical_ratio: f64,
    /// ν*: the incremental fraction maximizing the time gain ((2 + ς)/4 up to ς−, then ν−).
    pub optimal_ratio: f64,
    /// Δτ at ν*: min{ν(2 + ς − ν), 1} − ν².
    pub time_gain: f64,
    /// τ0 = (1 − ν*)²: the base run's time.
    pub base_time: f64,
    /// τ+ = ν*²: the incremental run's time.
    pub incremental_time: f64,
    /// τ− = ς·ν*: the head start.
    pub head_start_time: f64,
    /// The earliest deadline the method can meet, 1 − Δτ(ν*).
    pub min_deadline: f64,
    /// With a deadline τ_end: ν_end = (2 + ς − √((2 + ς)² − 8(1 − τ_end)))/4, the smallest
    /// incremental fraction (least distortion) that still finishes at τ_end.
    pub deadline_ratio: Option<f64>,
}

/// ς− = 2(2/√3 − 1) ≈ 0.309: below it the best ratio leaves part of the head start unused.
pub fn critical_head_start() -> f64 {
    2.0 * (2.0 / 3f64.sqrt() - 1.0)
}

/// Plans an incremental MDAV run for head-start coefficient ς ≥ 0 and, optionally, a
/// relative deadline 0 < τ_end ≤ 1 (at least [`Plan::min_deadline`]).
pub fn plan(head_start: f64, deadline: Option<f64>) -> Result<Plan> {
    let s = head_start;
    if !(s.is_finite() && s >= 0.0) {
        return Err(Error::InvalidParameter {
            name: "head_start".into(),
            reason: format!("must be a finite number >= 0, got {s}"),
        });
    }
    let critical = (2.0 + s - (s * (4.0 + s)).sqrt()) / 2.0;
    let optimal = if s <= critical_head_start() { (2.0 + s) / 4.0 } else { critical };
    let gain = (optimal * (2.0 + s - optimal)).min(1.0) - optimal * optimal;
    let min_deadline = 1.0 - gain;
    let deadline_ratio = match deadline {
        None => None,
        Some(t) if !(t > 0.0 && t <= 1.0) => {
            return Err(Error::InvalidParameter {
                name: "deadline".into(),
                reason: format!("must be in (0, 1] (a time relative to one MDAV run), got {t}"),
            });
        }
        Some(t) if t < min_deadline - 1e-12 => {
            return Err(Error::InvalidParameter {
                name: "deadline".into(),
                reason: format!(
                    "{t} is below the earliest finish {min_deadline:.6} for head_start {s}"
                ),
            });
        }
        Some(t) => {
            let disc = ((2.0 + s).powi(2) - 8.0 * (1.0 - t)).max(0.0);
            Some((2.0 + s - disc.sqrt()) / 4.0)
        }
    };
    Ok(Plan {
        head_start: s,
        critical_ratio: critical,
        optimal_ratio: optimal,
        time_gain: gain,
        base_time: (1.0 - optimal).powi(2),
        incremental_time: optimal * optimal,
        head_start_time: s * optimal,
        min_deadline,
        deadline_ratio,
    })
}

#[cfg(test)]
mod tests {
    use super::{Strategy as S, *};
    use ndarray::Array2;
    use proptest::prelude::*;

    #[test]
    fn planner_reproduces_the_thesis() {
        let p = plan(5.0, None).unwrap();
        assert!((p.critical_ratio - 0.1459).abs() < 1e-4);
        assert_eq!(p.optimal_ratio, p.critical_ratio);
        let d = plan(5.0, Some(0.5)).unwrap().deadline_ratio.unwrap();
        assert!((d - 0.0730).abs() < 1e-4, "{d}");
        // The two branches of nu* meet at the critical head start.
        let s = critical_head_start();
        assert!((s - 0.309).abs() < 1e-3);
        let below = plan(s - 1e-9, None).unwrap().optimal_ratio;
        let above = plan(s + 1e-9, None).unwrap().optimal_ratio;
        assert!((below - above).abs() < 1e-6);
        assert!(plan(-1.0, None).is_err());
        assert!(plan(5.0, Some(0.0)).is_err());
        assert!(plan(5.0, Some(1.5)).is_err());
        assert!(plan(0.1, Some(0.2)).is_err()); // below the earliest finish
    }

    fn opts(strategy: S, inertial: bool) -> IncrementalOptions {
        IncrementalOptions {
            strategy,
            inertial,
            standardize: true,
            refit_scaling: false,
            parallelism: Parallelism::Sequential,
            spatial_index: IndexChoice::Auto,
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(40))]
        #[test]
        fn every_strategy_keeps_a_valid_k_partition(
            values in prop::collection::vec(-50i16..50, 6..600),
            split in 0.0f64..1.0, k in 2usize..6, s in 0usize..4, inertial: bool, refit: bool,
        ) {
            let n = values.len() / 2;
            prop_assume!(n >= k);
            let n0 = ((n as f64 * split) as usize).clamp(k, n);
            let x = Array2::from_shape_fn((n, 2), |(i, j)| values[2 * i + j] as f64 / 7.0);
            let strategy = [S::TwoStep, S::Nn, S::NnSplitMid, S::NnSplitEnd][s];
            let mut o = opts(strategy, inertial);
            o.refit_scaling = refit;
            let mdav = Method::Mdav(MdavOptions::default());
            let mut inc = Incremental::fit(x.slice(ndarray::s![..n0, ..]), k, mdav, o).unwrap();
            let mid = n0 + (n - n0) / 2;
            for part in [ndarray::s![n0..mid, ..], ndarray::s![mid.., ..]] {
                let xs = x.slice(part);
                if xs.nrows() > 0 {
                    inc.extend(xs).unwrap();
                }
            }
            let p = inc.partition();
            prop_assert_eq!(p.labels().len(), n);
            p.check(k, None).unwrap();
            if matches!(strategy, S::NnSplitMid | S::NnSplitEnd) {
                p.check(k, Some(2 * k - 1)).unwrap();
            }
        }
    }

    /// The labels after folding `x[n0..]` into `x[..n0]` in two calls.
    fn folded(x: &Array2<f64>, n0: usize, k: usize, o: IncrementalOptions) -> Vec<u32> {
        let mdav = Method::Mdav(MdavOptions::default());
        let mut inc = Incremental::fit(x.slice(ndarray::s![..n0, ..]), k, mdav, o).unwrap();
        let mid = n0 + (x.nrows() - n0) / 2;
        for part in [ndarray::s![n0..mid, ..], ndarray::s![mid.., ..]] {
            inc.extend(x.slice(part)).unwrap();
        }
        inc.partition().labels().to_vec()
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(24))]
        /// The k-d tree over the centroids chooses every record's group as the brute force
        /// does, while centroids move, groups split and (with refit) the scale changes.
        #[test]
        fn the_centroid_tree_gives_the_brute_force_partition(
            n in 40usize..3000, d in 1usize..9, k in 2usize..6, shape in 0u8..4, seed: u64,
            s in 1usize..4, inertial: bool, refit: bool,
        ) {
            let x = crate::algorithms::test_shapes::shaped(n, d, shape, seed);
            let strategy = [S::TwoStep, S::Nn, S::NnSplitMid, S::NnSplitEnd][s];
            let mut o = opts(strategy, inertial);
            o.refit_scaling = refit;
            let on = IncrementalOptions { spatial_index: IndexChoice::On, ..o };
            let off = IncrementalOptions { spatial_index: IndexChoice::Off, ..o };
            prop_assert_eq!(folded(&x, n / 2, k, on), folded(&x, n / 2, k, off));
        }
    }
}
