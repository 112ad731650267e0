//! A mixed key (numeric columns and nominal codes) gives the t-close partition of its dense
//! one-hot embedding (docs/algorithms.md#mixed-keys) for every method: continuous numeric
//! values (no distance ties, so exact arithmetic decides), few-level, many-level and
//! weighted nominal columns, strata, sampling weights and parts (`max_part`); and every
//! class within t. With missing cells, the partition of the key completed beforehand.

use super::tests::check;
use super::*;
use crate::missing::Missing;
use crate::workflow::level_completion::complete_levels;
use crate::workflow::{NominalKey, Strata};
use ndarray::{Array2, concatenate};
use proptest::prelude::*;
use rand::rngs::StdRng;
use rand::{RngExt, SeedableRng};
use rand_distr::{Distribution, StandardNormal};

/// A mixed key, its embedding and a confidential attribute.
struct Case {
    x: Array2<f64>,
    codes: Array2<i64>,
    weights: Vec<f64>,
    sensitive: Vec<u32>,
}

impl Case {
    fn random(n: usize, d: usize, levels: &[usize], values: u32, seed: u64) -> Case {
        let mut rng = StdRng::seed_from_u64(seed);
        let x = Array2::from_shape_simple_fn((n, d), || StandardNormal.sample(&mut rng));
        let codes = Array2::from_shape_fn((n, levels.len()), |(_, a)| {
            rng.random_range(0..levels[a]) as i64
        });
        let weights =
            (0..levels.len()).map(|a| [1.0, 2.0, 0.5, 1.5][(a + seed as usize) % 4]).collect();
        let sensitive = (0..n).map(|_| rng.random_range(0..values)).collect();
        Case { x, codes, weights, sensitive }
    }

    /// The numeric columns, then each nominal column one-hot scaled by w/√2.
    fn embedding(&self) -> Array2<f64> {
        let blocks = self.codes.columns().into_iter().zip(&self.weights).map(|(col, w)| {
            let levels = *col.iter().max().unwrap() as usize + 1;
            Array2::from_shape_fn((col.len(), levels), |(i, l)| {
                if col[i] as usize == l { w / 2f64.sqrt() } else { 0.0 }
            })
        });
        let mut all = vec![self.x.clone()];
        all.extend(blocks);
        let views: Vec<_> = all.iter().map(|a| a.view()).collect();
        concatenate(ndarray::Axis(1), &views).unwrap()
    }

    fn run(
        &self,
        x: &Array2<f64>,
        k: usize,
        tc: &TCloseness,
        workflow: Workflow,
    ) -> Result<TCloseOutcome> {
        self.run_with(x, k, tc, workflow, Missing::Error)
    }

    fn run_with(
        &self,
        x: &Array2<f64>,
        k: usize,
        tc: &TCloseness,
        workflow: Workflow,
        missing: Missing,
    ) -> Result<TCloseOutcome> {
        let method = Method::parse("mdav", &[]).unwrap();
        // Unscaled: the embedding's columns are the key as given (centring moves nothing).
        let options = Options { standardize: false, missing, ..Options::default() };
        crate::t_close_microaggregate(
            x.view(),
            k,
            &method,
            tc,
            &options,
            &workflow,
            &Progress::new(),
        )
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]

    #[test]
    fn a_mixed_key_gives_its_embeddings_t_close_partition(
        n in 12usize..160,
        d in 1usize..3,
        levels in prop::collection::vec(prop_oneof![2usize..4, 20usize..60], 1..4),
        values in 2u32..5,
        k in 2usize..5,
        t in prop::sample::select(vec![0.05, 0.15, 0.3]),
        ordered: bool,
        method in prop::sample::select(vec![TMethod::Auto, TMethod::Merge, TMethod::KFirst, TMethod::TFirst]),
        strata: bool,
        weighted: bool,
        parts: bool,
        seed: u64,
    ) {
        let case = Case::random(n, d, &levels, values, seed);
        let n_values = *case.sensitive.iter().max().unwrap() as usize + 1;
        let attribute = SensitiveAttribute { name: "s".into(), codes: case.sensitive.clone(), n_values, ordered };
        let tc = TCloseness { sensitive: vec![attribute], t, method };
        let plain = Workflow {
            // Two strata of alternate records: each near the file's distribution, or refused
            // alike by both keys.
            strata: strata.then(|| Strata::new((0..n as u32).map(|i| i % 2).collect(), vec!["a".into(), "b".into()]).unwrap()),
            weights: weighted.then(|| (0..n).map(|i| 0.5 + (i % 3) as f64).collect()),
            max_part: parts.then_some((n / 3).max(2 * k)),
            ..Workflow::default()
        };
        let mixed = Workflow {
            nominal: Some(NominalKey { codes: case.codes.clone(), weights: case.weights.clone() }),
            ..plain.clone()
        };
        let native = case.run(&case.x, k, &tc, mixed);
        let Ok(dense) = case.run(&case.embedding(), k, &tc, plain) else {
            prop_assert!(native.is_err(), "a stratum too far from the file is refused alike");
            return Ok(());
        };
        let native = native.unwrap();
        prop_assert_eq!(native.outcome.partition.labels(), dense.outcome.partition.labels());
        prop_assert_eq!(&native.chosen, &dense.chosen);
        prop_assert_eq!(&native.max_emd, &dense.max_emd);
        check(&native, k, &tc)?;
    }
}

/// Missing key cells (numeric NaN, nominal −1) with `missing="fill"` are grouped as the key
/// completed beforehand (numbers by EM, levels by `complete_levels`) is, and every class is
/// within t; a run with parts too.
#[test]
fn missing_cells_are_grouped_as_their_completed_key() {
    let mut case = Case::random(150, 2, &[3, 40], 3, 7);
    for i in (0..150).step_by(11) {
        case.codes[[i, i % 2]] = -1;
        case.x[[(i + 5) % 150, i % 2]] = f64::NAN;
    }
    let attribute = SensitiveAttribute {
        name: "s".into(),
        codes: case.sensitive.clone(),
        n_values: 3,
        ordered: true,
    };
    let tc = TCloseness { sensitive: vec![attribute], t: 0.2, method: TMethod::Auto };
    let scaling = Workflow::default().scaling(case.x.view(), false).unwrap();
    let codes = complete_levels(case.x.view(), &scaling, case.codes.view()).unwrap();
    let filled = crate::workflow::completion::complete(case.x.view()).unwrap();
    for max_part in [None, Some(60)] {
        let key = |codes: &Array2<i64>| Workflow {
            nominal: Some(NominalKey { codes: codes.clone(), weights: case.weights.clone() }),
            max_part,
            ..Workflow::default()
        };
        let got = case.run_with(&case.x, 3, &tc, key(&case.codes), Missing::Fill).unwrap();
        let want = case.run(&filled, 3, &tc, key(&codes)).unwrap();
        assert_eq!(got.outcome.partition.labels(), want.outcome.partition.labels(), "{max_part:?}");
        check(&got, 3, &tc).unwrap();
    }
    assert!(
        case.run(
            &case.x,
            3,
            &tc,
            Workflow {
                nominal: Some(NominalKey {
                    codes: case.codes.clone(),
                    weights: case.weights.clone()
                }),
                ..Workflow::default()
            }
        )
        .is_err()
    );
}

/// A mixed key is refused with a method other than exact MDAV to start "merge" from, and
/// with codes that do not fit.
#[test]
fn refuses_what_the_mixed_key_does_not_take() {
    let case = Case::random(40, 2, &[3, 30], 3, 1);
    let attribute = SensitiveAttribute {
        name: "s".into(),
        codes: case.sensitive.clone(),
        n_values: 3,
        ordered: false,
    };
    let tc = TCloseness { sensitive: vec![attribute], t: 0.3, method: TMethod::KFirst };
    let nominal = |codes: Array2<i64>| Some(NominalKey { codes, weights: case.weights.clone() });
    let go = |method: &str, workflow: Workflow| {
        let method = Method::parse(method, &[]).unwrap();
        crate::t_close_microaggregate(
            case.x.view(),
            3,
            &method,
            &tc,
            &Options::default(),
            &workflow,
            &Progress::new(),
        )
    };
    let key = Workflow { nominal: nominal(case.codes.clone()), ..Workflow::default() };
    assert!(go("mdav", key.clone()).is_ok());
    assert!(go("mondrian", key.clone()).is_err());
    assert!(go("mdav", Workflow { max_part: Some(20), ..key.clone() }).is_ok());
    let mut negative = case.codes.clone();
    negative[[3, 1]] = -2;
    assert!(go("mdav", Workflow { nominal: nominal(negative), ..Workflow::default() }).is_err());
    let short = case.codes.slice(ndarray::s![..30, ..]).to_owned();
    assert!(go("mdav", Workflow { nominal: nominal(short), ..Workflow::default() }).is_err());
}
