//! t-closeness inside the whole workflow (docs/workflow.md#t-closeness-of-confidential-attributes):
//! what [`t_close_microaggregate`] adds around [`t_close_complete_keys`], which groups
//! complete keys.
//!
//! * Missing key values (`missing="fill"` / `"keep"`) mean what they mean for plain
//!   microaggregation: the keys are completed once by EM ([`completion::complete`]), the
//!   classes are built on the completed coordinates, and the release and IL are of the
//!   observed cells. The t-close grouping never sees a missing value. A mixed key's missing
//!   codes are grouped at their most probable levels ([`complete_levels`]), as plain
//!   microaggregation groups them.
//! * A partitioned run (`max_part`) cuts every stratum into parts of at most `max_part`
//!   records as plain microaggregation does ([`cut_into_parts`], a mixed key
//!   [`cut_mixed_into_parts`]) and makes each part t-close
//!   on its own, against the whole file's distribution of every confidential attribute, so
//!   each class keeps the guarantee it has without parts. The EMD to the file is convex in
//!   the class's distribution (a norm of P − Q: ordered, of the cumulative distributions;
//!   nominal, of the shares), so a part farther than t from the file has no t-close
//!   partition, while a part within t has one (itself, one class, at worst). Parts farther
//!   than t are therefore joined to the part of nearest key centroid first, repeatedly
//!   ([`verify::merge_until_close`] applied to parts, in the key's geometry: a mixed key's
//!   [`MixedSpace`]), until each is within t: a joined part
//!   may exceed `max_part`. A stratum farther than t stays one part, which is refused
//!   naming the stratum, as without parts.

use crate::dataset::{Scaling, validate_k};
use crate::error::Result;
use crate::float::Float;
use crate::method::Method;
use crate::microaggregate::{Options, check_nominal};
use crate::missing::Missing;
use crate::mixed::MixedKey;
use crate::parallel::Exec;
use crate::progress::Progress;
use crate::tcloseness::budget::Budget;
use crate::tcloseness::confidential::Confidential;
use crate::tcloseness::mixed_space::MixedSpace;
use crate::tcloseness::space::{Dense, Space};
use crate::tcloseness::{TCloseOutcome, TCloseness, check_stratum, t_close_complete_keys, verify};
use crate::workflow::completion;
use crate::workflow::evaluation::Evaluation;
use crate::workflow::level_completion::complete_levels;
use crate::workflow::parts::{cut_into_parts, cut_mixed_into_parts};
use crate::workflow::weights::validate_weights;
use crate::workflow::{Merge, NominalKey, SmallStrata, Strata, Workflow, strata};
use ndarray::{ArrayView2, Axis};

/// k-anonymous, t-close microaggregation of `x` (n × d keys; NaN a missing cell where
/// `options.missing` allows it) inside the whole workflow: missing key values and
/// partitioned runs as the module says, everything else as `t_close_complete_keys`.
/// With `max_part`, `chosen` has one entry per part grouped (strata in order, each
/// stratum's parts left to right).
pub fn t_close_microaggregate<S: Float>(
    x: ArrayView2<S>,
    k: usize,
    method: &Method,
    tc: &TCloseness,
    options: &Options,
    workflow: &Workflow,
    progress: &Progress,
) -> Result<TCloseOutcome> {
    let n = x.nrows();
    let has_missing = options.missing.check(x)?;
    validate_k(k, n)?;
    workflow.check_max_part(k)?;
    tc.validate(n)?;
    if let Some(w) = &workflow.weights {
        validate_weights(w, n)?;
    }
    let scaling = workflow.scaling(x, options.standardize)?;
    // A mixed key's missing codes: their most probable levels (level_completion), as for
    // plain microaggregation; the grouping, the cuts and the merges see the completed codes.
    let nominal = match &workflow.nominal {
        Some(key) => {
            check_nominal(key, method, options.missing, n)?;
            let codes = if key.codes.iter().any(|&v| v < 0) {
                complete_levels(x, &scaling, key.codes.view())?
            } else {
                key.codes.clone()
            };
            Some(NominalKey { codes, weights: key.weights.clone() })
        }
        None => None,
    };
    if let Some(s) = &workflow.strata {
        check_strata_early(tc, s, k, workflow.small_strata)?;
    }
    let completed = if has_missing { Some(completion::complete(x)?) } else { None };
    let keys = completed.as_ref().map_or(x, |c| c.view());
    if let Some(key) = &nominal {
        MixedKey::<f64>::new(keys, &scaling, key.codes.view(), &key.weights)?;
    }
    let workflow = &Workflow { nominal, ..workflow.clone() };
    let parts =
        match workflow.max_part {
            Some(max_part) => Some(options.parallelism.install(|exec| {
                t_close_parts(keys, k, tc, workflow, &scaling, max_part, exec)
            })??),
            None => None,
        };
    let merges = parts.as_ref().map(|p| p.1.clone());
    let grouping = Workflow {
        strata: parts.map_or_else(|| workflow.strata.clone(), |p| Some(p.0)),
        small_strata: if merges.is_some() { SmallStrata::Error } else { workflow.small_strata },
        max_part: None,
        scale: Some(scaling.scale.clone()),
        ..workflow.clone()
    };
    let complete = Options { missing: Missing::Error, ..*options };
    let mut out = t_close_complete_keys(keys, k, method, tc, complete, grouping, progress)?;
    if let Some(merges) = merges {
        out.outcome.merges = merges;
    }
    if let Some(completed) = &completed {
        // The grouping scored its completed coordinates; the release and IL are of the
        // observed cells (the same evaluation as plain microaggregation's).
        let partition = &out.outcome.partition;
        let (weights, aggregation) = (workflow.weights.as_deref(), workflow.aggregation);
        out.outcome.evaluation = options.parallelism.install(|exec| {
            Evaluation::weighted(
                x,
                Some(completed.view()),
                partition,
                &scaling,
                weights,
                aggregation,
                exec,
            )
        })??;
    }
    Ok(out)
}

/// Refuses a stratum farther than t from the file ([`check_stratum`]) before the keys are
/// completed or anything is grouped, wherever no merge of small strata can change its
/// records: with `small_strata="error"`, or when no stratum has fewer than `k` records.
/// (With merges pending, the grouping checks the merged strata.) O(n).
fn check_strata_early(
    tc: &TCloseness,
    strata: &Strata,
    k: usize,
    small: SmallStrata,
) -> Result<()> {
    let mut members: Vec<Vec<u32>> = vec![Vec::new(); strata.names().len()];
    for (i, &c) in strata.codes().iter().enumerate() {
        members[c as usize].push(i as u32);
    }
    if small == SmallStrata::Merge && members.iter().any(|m| !m.is_empty() && m.len() < k) {
        return Ok(());
    }
    let references = tc.references();
    members.iter().filter(|m| m.len() >= k).try_for_each(|ids| {
        let codes = tc.sensitive.iter().map(|a| a.codes.as_slice());
        check_stratum(&Confidential::of(codes, ids, None, &references), tc.t, strata, ids)
    })
}

/// The parts of a partitioned t-close run as strata (each named by the strata it holds,
/// for messages), and the merges of undersized strata: every stratum (or the whole file) is
/// cut into parts of at most `max_part` records, and its parts farther than t from the
/// file are joined to the nearest until every part is within t (see the module).
fn t_close_parts<S: Float>(
    x: ArrayView2<S>,
    k: usize,
    tc: &TCloseness,
    workflow: &Workflow,
    scaling: &Scaling,
    max_part: usize,
    exec: Exec,
) -> Result<(Strata, Vec<Merge>)> {
    let n = x.nrows();
    let split = match &workflow.strata {
        Some(s) => Some(strata::split(x, s, k, workflow.small_strata, scaling)?),
        None => None,
    };
    let units = split.as_ref().map_or_else(|| vec![(0..n as u32).collect()], |s| s.parts.clone());
    let mass = workflow.weights.clone().unwrap_or_else(|| vec![1.0; n]);
    let references = tc.references();
    let mut codes = vec![0u32; n];
    let mut names: Vec<String> = Vec::new();
    for ids in units {
        let name = unit_name(workflow.strata.as_ref(), &ids);
        let parts = match &workflow.nominal {
            Some(key) => {
                cut_mixed_into_parts(x, scaling, key.levels(), ids.clone(), max_part, exec)
            }
            None => cut_into_parts(x, scaling, ids.clone(), max_part, exec),
        };
        for (p, part) in parts.iter().enumerate() {
            part.iter().for_each(|&i| codes[i as usize] = p as u32);
        }
        let labels: Vec<u32> = ids.iter().map(|&i| codes[i as usize]).collect();
        let joined = if parts.len() > 1 {
            let codes = tc.sensitive.iter().map(|a| a.codes.as_slice());
            let conf = Confidential::of(codes, &ids, Some(&mass), &references);
            let rows: Vec<usize> = ids.iter().map(|&i| i as usize).collect();
            let keys = scaling.rows_of::<S, f64>(x.select(Axis(0), &rows).view())?;
            match &workflow.nominal {
                Some(key) => {
                    let codes =
                        key.codes.select(Axis(0), &rows).iter().map(|&c| c as u32).collect();
                    join_far_parts(
                        &MixedSpace::new(keys, x.ncols(), ids.len(), codes, &key.weights),
                        &labels,
                        &conf,
                        tc.t,
                    )
                }
                None => join_far_parts(&Dense::new(&keys, x.ncols()), &labels, &conf, tc.t),
            }
        } else {
            labels
        };
        let offset = names.len() as u32;
        let count = joined.iter().map(|&l| l as usize + 1).max().unwrap_or(0);
        for (&i, &l) in ids.iter().zip(&joined) {
            codes[i as usize] = offset + l;
        }
        names.extend(std::iter::repeat_n(name, count));
    }
    Ok((Strata::new(codes, names)?, split.map_or_else(Vec::new, |s| s.merges)))
}

/// The parts `labels` with every part farther than t from the file joined to the nearest
/// ([`verify::merge_until_close`] in the key's geometry, `space`).
fn join_far_parts<Sp: Space>(space: &Sp, labels: &[u32], conf: &Confidential, t: f64) -> Vec<u32> {
    verify::merge_until_close(space, labels, conf, t, &mut Budget::unlimited())
        .expect("an unlimited budget is never exceeded")
        .0
}

/// How messages name the records `ids` (a stratum, or strata merged into one): their strata
/// names joined by " + ", or "the file" without strata.
fn unit_name(strata: Option<&Strata>, ids: &[u32]) -> String {
    let Some(s) = strata else {
        return "the file".into();
    };
    let mut names: Vec<&str> =
        ids.iter().map(|&i| s.names()[s.codes()[i as usize] as usize].as_str()).collect();
    names.sort_unstable();
    names.dedup();
    names.join(" + ")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tcloseness::emd::tests::direct_emd;
    use crate::tcloseness::{SensitiveAttribute, TMethod};
    use ndarray::Array2;
    use proptest::prelude::*;

    fn run(
        x: &Array2<f64>,
        k: usize,
        tc: &TCloseness,
        missing: Missing,
        workflow: &Workflow,
    ) -> TCloseOutcome {
        let method = Method::parse("mdav", &[]).unwrap();
        let options = Options { missing, ..Options::default() };
        t_close_microaggregate(x.view(), k, &method, tc, &options, workflow, &Progress::new())
            .unwrap()
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(32))]

        /// Keys with missing cells, cut into parts, the confidential attribute tied to the
        /// first key (so that parts stray from the file): every class has k records and,
        /// by the EMD of the definition, is within t of the whole file.
        #[test]
        fn parts_of_completed_keys_are_k_anonymous_and_t_close(
            rows in prop::collection::vec((-5.0f64..5.0, -5.0f64..5.0, any::<bool>(), 0u32..3), 40..160),
            k in 2usize..5,
            t in 0.05f64..0.5,
            ordered in any::<bool>(),
            method in prop::sample::select(vec![TMethod::Merge, TMethod::KFirst, TMethod::TFirst]),
        ) {
            prop_assume!(rows.iter().any(|r| !r.2)); // the second key observed somewhere
            let n = rows.len();
            let x = Array2::from_shape_fn((n, 2), |(i, j)| match j {
                0 => rows[i].0,
                _ if rows[i].2 => f64::NAN,
                _ => rows[i].1,
            });
            let codes: Vec<u32> = rows.iter().map(|r| (r.0 + 5.0) as u32 / 4 + r.3).collect();
            let n_values = *codes.iter().max().unwrap() as usize + 1;
            let attribute = SensitiveAttribute { name: "s".into(), codes, n_values, ordered };
            let tc = TCloseness { sensitive: vec![attribute], t, method };
            let workflow = Workflow { max_part: Some(4 * k), ..Workflow::default() };
            let out = run(&x, k, &tc, Missing::Fill, &workflow);
            let p = &out.outcome.partition;
            prop_assert!(p.group_sizes().iter().all(|&s| s >= k));
            let a = &tc.sensitive[0];
            for g in 0..p.n_groups() {
                let class: Vec<usize> = (0..n).filter(|&i| p.labels()[i] as usize == g).collect();
                let e = direct_emd(&a.codes, &vec![1.0; n], &class, a.n_values, a.ordered);
                prop_assert!(e <= t + 1e-9, "class {g} at {e} > t = {t}");
            }
        }
    }

    /// Missing key values are refused unless `missing` allows them, and a partitioned run
    /// needs parts of 2k.
    #[test]
    fn refuses_what_the_workflow_refuses() {
        let x = ndarray::array![[1.0, f64::NAN], [2.0, 1.0], [3.0, 2.0], [4.0, 0.0]];
        let attribute = SensitiveAttribute {
            name: "s".into(),
            codes: vec![0, 1, 0, 1],
            n_values: 2,
            ordered: false,
        };
        let tc = TCloseness { sensitive: vec![attribute], t: 0.5, method: TMethod::Merge };
        let method = Method::parse("mdav", &[]).unwrap();
        let go = |options: &Options, workflow: &Workflow| {
            t_close_microaggregate(x.view(), 2, &method, &tc, options, workflow, &Progress::new())
        };
        assert!(go(&Options::default(), &Workflow::default()).is_err());
        let fill = Options { missing: Missing::Fill, ..Options::default() };
        assert!(go(&fill, &Workflow::default()).is_ok());
        let parts = Workflow { max_part: Some(3), ..Workflow::default() };
        assert!(
            matches!(go(&fill, &parts), Err(crate::Error::InvalidParameter { name, .. }) if name == "max_part")
        );
    }
}
