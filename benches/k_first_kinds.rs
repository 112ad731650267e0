//! `cargo bench --bench k_first_kinds`: k-first t-closeness (Soria-Comas et al., TKDE 2015,
//! §5.1) with its searches scanned against indexed by kind of record (one k-d tree per kind,
//! one EMD and one tree query per kind at every step of a growing group), as the number of
//! kinds grows: where the index stops paying is what `k_first::QUERY_COST` (the rule of
//! `IndexChoice::Auto`, which starts indexed and goes over to the scan when a group costs
//! the trees more than a pass) is calibrated on. One thread, seconds of the fastest of
//! three runs; the three must give the same labels (checked).
//!
//! Rows: Gaussian keys (n × 3) with one nominal confidential attribute of K values drawn
//! with Zipf weights 1/r (a few common values and a long tail, like a country of birth),
//! and Adult (`$MICROAGG_SHARED/datasets/adult.csv`, the 45 222 records with every value;
//! keys age, education-num, hours-per-week) with each categorical attribute confidential.
//! k = 5, t = 0.15 (Gaussian) and t = 0.1 (Adult).

use microagg::IndexChoice;
use microagg::engine::{Budget, Confidential, Dense, Reference, Scaling, k_first};
use ndarray::Array2;
use rand::{RngExt, SeedableRng};
use rand_distr::{Distribution, StandardNormal};
use std::collections::HashMap;
use std::time::Instant;

/// The fastest of three runs (seconds) and the labels.
fn timed(run: impl Fn() -> Vec<u32>) -> (f64, Vec<u32>) {
    let mut best = f64::INFINITY;
    let mut labels = Vec::new();
    for _ in 0..3 {
        let start = Instant::now();
        labels = run();
        best = best.min(start.elapsed().as_secs_f64());
    }
    (best, labels)
}

/// One row of the table: k-first scanned and indexed on `keys` with `codes` confidential.
fn row(name: &str, keys: &Array2<f64>, codes: Vec<u32>, k: usize, t: f64) {
    let n = keys.nrows();
    let d = keys.ncols();
    let rows = Scaling::fit(keys.view(), true).rows_of::<f64, f64>(keys.view()).expect("rows");
    let kinds = codes.iter().max().map_or(0, |&m| m as usize + 1);
    let mass = vec![1.0; n];
    let refs = [Reference::new(&codes, kinds, &mass, false)];
    let conf = Confidential { codes: vec![codes], mass, references: &refs };
    let run = |index| {
        let (rows, conf) = (&rows, &conf);
        move || {
            k_first::k_first(&Dense::new(rows, d), k, conf, t, index, &mut Budget::unlimited())
                .expect("free")
        }
    };
    let (scan, scan_labels) = timed(run(IndexChoice::Off));
    let (indexed, indexed_labels) = timed(run(IndexChoice::On));
    let (auto, auto_labels) = timed(run(IndexChoice::Auto));
    assert_eq!(scan_labels, indexed_labels, "{name}: the index changed the labels");
    assert_eq!(scan_labels, auto_labels, "{name}: Auto changed the labels");
    let g = scan_labels.iter().map(|&l| l as usize + 1).max().unwrap_or(0);
    let best = scan.min(indexed);
    println!(
        "| {name} | {n} | {kinds} | {g} | {scan:.3} | {indexed:.3} | {auto:.3} | {:.2} |",
        auto / best
    );
}

/// Adult's complete records: the three numeric keys and the named categorical columns.
fn adult(categorical: &[&str]) -> (Array2<f64>, Vec<Vec<u32>>) {
    let shared = std::env::var("MICROAGG_SHARED").unwrap_or_else(|_| "../shared".into());
    let text = std::fs::read_to_string(format!("{shared}/datasets/adult.csv"))
        .expect("adult.csv under $MICROAGG_SHARED/datasets");
    let mut lines = text.lines();
    let header: Vec<&str> = lines.next().expect("a header").split(',').collect();
    let at = |name: &str| header.iter().position(|h| *h == name).expect("a column");
    let keys = ["age", "education-num", "hours-per-week"].map(at);
    let cats: Vec<usize> = categorical.iter().map(|c| at(c)).collect();
    let records: Vec<Vec<&str>> = lines
        .map(|l| l.split(',').map(str::trim).collect::<Vec<_>>())
        .filter(|r| r.len() == header.len() && !r.iter().any(|v| v.is_empty() || *v == "?"))
        .collect();
    let x = Array2::from_shape_fn((records.len(), 3), |(i, j)| {
        records[i][keys[j]].parse().expect("a number")
    });
    let codes = cats
        .iter()
        .map(|&c| {
            let mut seen: HashMap<&str, u32> = HashMap::new();
            records
                .iter()
                .map(|r| {
                    let next = seen.len() as u32;
                    *seen.entry(r[c]).or_insert(next)
                })
                .collect()
        })
        .collect();
    (x, codes)
}

/// `n` values of `kinds` nominal values drawn with Zipf weights 1/r, each value at least once.
fn zipf_codes(n: usize, kinds: usize, rng: &mut impl rand::Rng) -> Vec<u32> {
    let weights: Vec<f64> = (1..=kinds).map(|r| 1.0 / r as f64).collect();
    let total: f64 = weights.iter().sum();
    let mut codes: Vec<u32> = (0..n)
        .map(|_| {
            let u = rng.random_range(0.0..total);
            let mut cumulative = 0.0;
            weights.iter().position(|w| (cumulative += w, u < cumulative).1).unwrap_or(kinds - 1)
                as u32
        })
        .collect();
    codes[..kinds].iter_mut().enumerate().for_each(|(v, c)| *c = v as u32);
    codes
}

fn main() {
    println!("| data | n | kinds | classes | scanned s | indexed s | auto s | auto / best |");
    println!("|---|---|---|---|---|---|---|---|");
    for (n, all_kinds) in [
        (20_000, &[4usize, 8, 16, 24, 32, 48, 64, 96][..]),
        (100_000, &[16, 32, 64, 96, 128, 192][..]),
    ] {
        let mut rng = rand::rngs::StdRng::seed_from_u64(5);
        let keys = Array2::from_shape_simple_fn((n, 3), || StandardNormal.sample(&mut rng));
        for &kinds in all_kinds {
            row("Gaussian", &keys, zipf_codes(n, kinds, &mut rng), 5, 0.15);
        }
    }
    let columns = ["marital-status", "workclass", "occupation", "education", "native-country"];
    let (x, codes) = adult(&columns);
    for (name, codes) in columns.iter().zip(codes) {
        row(&format!("Adult, {name}"), &x, codes, 5, 0.1);
    }
}
