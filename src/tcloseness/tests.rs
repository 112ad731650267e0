//! Every method's classes have at least k records and, by the EMD of the definition
//! (computed densely, independently of the sparse incremental one), are within t.

use super::emd::tests::direct_emd;
use super::*;
use crate::index::IndexChoice;
use crate::workflow::Strata;
use ndarray::Array2;
use proptest::prelude::*;

fn attribute(codes: Vec<u32>, ordered: bool) -> SensitiveAttribute {
    let n_values = *codes.iter().max().unwrap() as usize + 1;
    SensitiveAttribute { name: "s".into(), codes, n_values, ordered }
}

fn run(x: &Array2<f64>, k: usize, tc: &TCloseness, workflow: &Workflow) -> Result<TCloseOutcome> {
    let method = Method::parse("mdav", &[]).unwrap();
    let options = Options::default();
    crate::t_close_microaggregate(x.view(), k, &method, tc, &options, workflow, &Progress::new())
}

/// Checks sizes and, per attribute, every class's EMD counting records (and the reported
/// largest): t, like k, counts records, whatever the weights.
pub(super) fn check(
    out: &TCloseOutcome,
    k: usize,
    tc: &TCloseness,
) -> std::result::Result<(), TestCaseError> {
    let p = &out.outcome.partition;
    let mass = &vec![1.0; p.labels().len()];
    prop_assert!(p.group_sizes().iter().all(|&s| s >= k));
    for (a, attr) in tc.sensitive.iter().enumerate() {
        let mut largest = 0.0f64;
        for g in 0..p.n_groups() {
            let class: Vec<usize> =
                (0..attr.codes.len()).filter(|&i| p.labels()[i] as usize == g).collect();
            let e = direct_emd(&attr.codes, mass, &class, attr.n_values, attr.ordered);
            prop_assert!(e <= tc.t + 1e-9, "class {g} at {e} > t = {}", tc.t);
            largest = largest.max(e);
        }
        prop_assert!((largest - out.max_emd[a]).abs() < 1e-9);
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    /// Random keys, confidential values with many ties (few distinct values), every method.
    #[test]
    fn every_class_is_k_anonymous_and_t_close(
        rows in prop::collection::vec((-5.0f64..5.0, -5.0f64..5.0, 0u32..6, 0u32..4), 8..80),
        k in 2usize..5,
        t in 0.02f64..0.6,
        ordered in any::<bool>(),
        weighted in any::<bool>(),
        second in any::<bool>(),
        which in 0usize..4,
    ) {
        prop_assume!(rows.len() >= k);
        let x = Array2::from_shape_fn((rows.len(), 2), |(i, j)| if j == 0 { rows[i].0 } else { rows[i].1 });
        let mut sensitive = vec![attribute(rows.iter().map(|r| r.2).collect(), ordered)];
        if second {
            sensitive.push(attribute(rows.iter().map(|r| r.3).collect(), !ordered));
        }
        // Weights 1..4: some record weighs more than another, never all zero.
        let weights: Vec<f64> = rows.iter().map(|r| (r.3 + 1) as f64).collect();
        let method = TMethod::parse(T_METHODS[which]).unwrap();
        let tc = TCloseness { sensitive, t, method };
        let workflow = Workflow { weights: weighted.then_some(weights), ..Workflow::default() };
        let out = run(&x, k, &tc, &workflow).unwrap();
        check(&out, k, &tc)?;
        if method != TMethod::Auto {
            prop_assert_eq!(&out.chosen, &vec![method]);
        }
    }

    /// The indexed searches (k-d trees of the remaining records, by kind for k-first and by
    /// run for t-first) give the scans' labels, with many tied distances (small integer
    /// keys, duplicates), tied confidential values, several attributes and masses that round;
    /// on a numeric key and a mixed one (numbers and codes in the trees).
    #[test]
    fn indexed_searches_give_the_scans_labels(
        rows in prop::collection::vec((0u8..5, 0u8..5, 0u32..5, 0u32..3), 4..160),
        k in 2usize..5,
        t in 0.01f64..0.5,
        ordered in any::<bool>(),
        weighted in any::<bool>(),
        second in any::<bool>(),
    ) {
        prop_assume!(rows.len() >= k);
        let n = rows.len();
        let keys: Vec<f64> = rows.iter().flat_map(|r| [r.0 as f64 * 0.5, r.1 as f64]).collect();
        let mut codes = vec![rows.iter().map(|r| r.2).collect::<Vec<u32>>()];
        if second {
            codes.push(rows.iter().map(|r| r.3).collect());
        }
        let mass: Vec<f64> =
            rows.iter().map(|r| if weighted { (r.3 + 1) as f64 / 3.0 } else { 1.0 }).collect();
        let refs: Vec<Reference> = codes
            .iter()
            .enumerate()
            .map(|(a, c)| Reference::new(c, 5, &mass, ordered == (a == 0)))
            .collect();
        let conf = Confidential { codes, mass, references: &refs };
        let free = &mut Budget::unlimited();
        let scan = k_first::k_first(&Dense::new(&keys, 2), k, &conf, t, IndexChoice::Off, free);
        prop_assert_eq!(k_first::k_first(&Dense::new(&keys, 2), k, &conf, t, IndexChoice::On, free), scan);
        let scan = t_first::t_first(&Dense::new(&keys, 2), k, &conf, t, false, free);
        prop_assert_eq!(t_first::t_first(&Dense::new(&keys, 2), k, &conf, t, true, free), scan);
        // A mixed key (one number, two nominal columns): trees of numbers and code ranges.
        let numbers = rows.iter().map(|r| r.0 as f64 * 0.5).collect();
        let levels = rows.iter().flat_map(|r| [u32::from(r.1), u32::from(r.0 % 2)]).collect();
        let mixed = MixedSpace::new(numbers, 1, n, levels, &[1.5, 0.75]);
        let scan = k_first::k_first(&mixed, k, &conf, t, IndexChoice::Off, free);
        prop_assert_eq!(k_first::k_first(&mixed, k, &conf, t, IndexChoice::On, free), scan);
        let scan = t_first::t_first(&mixed, k, &conf, t, false, free);
        prop_assert_eq!(t_first::t_first(&mixed, k, &conf, t, true, free), scan);
        prop_assert_eq!(conf.n(), n);
    }

    /// "auto" (the cheapest first, later candidates dropped once costlier than the best)
    /// releases the partition of least SSE among the three methods run alone, and exactly
    /// the one of the method it names.
    #[test]
    fn auto_is_the_best_of_the_three(
        rows in prop::collection::vec((-5.0f64..5.0, -5.0f64..5.0, 0u32..4, 1u32..4), 8..80),
        k in 2usize..4,
        t in 0.05f64..0.5,
        ordered in any::<bool>(),
        weighted in any::<bool>(),
    ) {
        let x = Array2::from_shape_fn((rows.len(), 2), |(i, j)| if j == 0 { rows[i].0 } else { rows[i].1 });
        let mass: Vec<f64> = rows.iter().map(|r| if weighted { r.3 as f64 / 3.0 } else { 1.0 }).collect();
        let workflow = Workflow { weights: weighted.then(|| mass.clone()), ..Workflow::default() };
        let sensitive = vec![attribute(rows.iter().map(|r| r.2).collect(), ordered)];
        let out = |method| {
            let tc = TCloseness { sensitive: sensitive.clone(), t, method };
            run(&x, k, &tc, &workflow).unwrap()
        };
        let auto = out(TMethod::Auto);
        let alone = out(auto.chosen[0]);
        prop_assert_eq!(auto.outcome.partition.labels(), alone.outcome.partition.labels());
        for m in [TMethod::Merge, TMethod::KFirst, TMethod::TFirst] {
            let sse = out(m).outcome.evaluation.sse;
            prop_assert!(auto.outcome.evaluation.sse <= sse * (1.0 + 1e-9), "{:?} beats auto", m);
        }
    }

    /// Distinct confidential values and n a multiple of k′: every class holds one record of
    /// each run, which meets the bound, so no merge is needed.
    #[test]
    fn t_first_with_distinct_values_needs_no_merge(
        runs in 2usize..8,
        per_run in 2usize..15,
        seed in 0u32..1000,
    ) {
        let n = runs * per_run;
        let t = (per_run as f64 - 1.0) / (2.0 * (n as f64 - 1.0)) * (1.0 + 1e-9);
        prop_assert_eq!(t_first::run_count(n, 2, t), runs);
        let keys: Vec<f64> = (0..n).map(|i| ((i as u32 * 7919 + seed) % 101) as f64).collect();
        let codes: Vec<u32> = (0..n as u32).map(|i| (i * 37 + seed) % n as u32).collect();
        prop_assume!({ let mut c = codes.clone(); c.sort_unstable(); c.dedup(); c.len() == n });
        let refs = [Reference::new(&codes, n, &vec![1.0; n], true)];
        let conf = Confidential { codes: vec![codes], mass: vec![1.0; n], references: &refs };
        let free = &mut Budget::unlimited();
        let built = t_first::t_first(&Dense::new(&keys, 1), 2, &conf, t, false, free).unwrap();
        let (_, merges) = verify::merge_until_close(&Dense::new(&keys, 1), &built, &conf, t, free).unwrap();
        prop_assert_eq!(merges, 0);
    }
}

#[test]
fn strata_keep_the_file_as_reference_and_name_a_stratum_too_far() {
    // Stratum "a" holds only value 0, stratum "b" only value 1: each is at nominal EMD 0.5.
    let n = 20;
    let x = Array2::from_shape_fn((n, 1), |(i, _)| i as f64);
    let codes: Vec<u32> = (0..n as u32).map(|i| u32::from(i >= 10)).collect();
    let strata = Strata::new(codes.clone(), vec!["a".into(), "b".into()]).unwrap();
    let workflow = Workflow { strata: Some(strata), ..Workflow::default() };
    let tc = |t| TCloseness {
        sensitive: vec![attribute(codes.clone(), false)],
        t,
        method: TMethod::Auto,
    };
    let err = run(&x, 2, &tc(0.3), &workflow).unwrap_err().to_string();
    assert!(err.contains("stratum a") && err.contains("t = 0.3"), "{err}");
    let out = run(&x, 2, &tc(0.5), &workflow).unwrap();
    assert!((out.max_emd[0] - 0.5).abs() < 1e-12);
}

#[test]
fn bad_t_and_codes_are_errors() {
    let x = Array2::from_shape_fn((6, 1), |(i, _)| i as f64);
    for t in [0.0, -0.1, 1.5, f64::NAN] {
        let tc = TCloseness {
            sensitive: vec![attribute(vec![0, 1, 0, 1, 0, 1], true)],
            t,
            method: TMethod::Auto,
        };
        assert!(
            run(&x, 2, &tc, &Workflow::default()).unwrap_err().to_string().contains("invalid t")
        );
    }
    let short =
        TCloseness { sensitive: vec![attribute(vec![0, 1], true)], t: 0.5, method: TMethod::Auto };
    assert!(run(&x, 2, &short, &Workflow::default()).is_err());
    assert!(TMethod::parse("fast").is_err());
}

/// k-first's `IndexChoice::Auto` at a size where it starts with the trees by kind: with few
/// kinds it keeps them, with many it goes over to the scan after the first groups (as
/// `benches/k_first_kinds.rs` times); either way the labels are the scan's.
#[test]
fn auto_k_first_gives_the_scans_labels_whether_it_keeps_the_trees_or_not() {
    use rand::{RngExt, SeedableRng};
    use rand_distr::{Distribution, StandardNormal};
    let (n, d) = (20_000, 2);
    assert!(IndexChoice::Auto.uses(n, d));
    let mut rng = rand::rngs::StdRng::seed_from_u64(3);
    let keys: Vec<f64> = (0..n * d).map(|_| StandardNormal.sample(&mut rng)).collect();
    for kinds in [4u32, 64] {
        // A few common values and a long tail (log-uniform, about 1/r), every value present.
        let codes: Vec<u32> = (0..n as u32)
            .map(|i| if i < kinds { i } else { (kinds as f64).powf(rng.random::<f64>()) as u32 })
            .collect();
        let refs = [Reference::new(&codes, kinds as usize, &vec![1.0; n], false)];
        let conf = Confidential { codes: vec![codes], mass: vec![1.0; n], references: &refs };
        let run = |index| {
            k_first::k_first(&Dense::new(&keys, d), 5, &conf, 0.15, index, &mut Budget::unlimited())
        };
        assert_eq!(run(IndexChoice::Auto), run(IndexChoice::Off), "{kinds} kinds");
    }
}
