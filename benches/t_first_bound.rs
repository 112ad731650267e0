//! `cargo bench --bench t_first_bound`: t-first's classes before verification and merging
//! on Census (1080 × 13, from `$MICROAGG_SHARED/datasets/census.csv`), the last or the first
//! attribute confidential (ordered EMD), the other 12 the standardized keys; k in {2, 5, 10},
//! t in {0.25, 0.15, 0.05}. With distinct confidential values every class of t-first holds
//! one record of each of its k′ runs and is within (n − k′)/(2k′(n − 1)) ≤ t (Soria-Comas et
//! al., TKDE 2015, Proposition 3); tied values can put a class above it, which verification
//! then merges. Prints a markdown table (benches/t_closeness.py copies it into
//! bench-results/t_closeness.md): k′, that bound, the largest class EMD as built, how many
//! classes were above t and how many merges verification made.

use microagg::engine::{Budget, Confidential, Dense, Reference, Scaling, t_first, verify};
use ndarray::{Array2, Axis};

fn census() -> Array2<f64> {
    let shared = std::env::var("MICROAGG_SHARED").unwrap_or_else(|_| "../shared".into());
    let text = std::fs::read_to_string(format!("{shared}/datasets/census.csv"))
        .expect("census.csv under $MICROAGG_SHARED/datasets");
    let rows: Vec<Vec<f64>> = text
        .lines()
        .skip(1)
        .filter(|l| !l.trim().is_empty())
        .map(|l| l.split(',').map(|v| v.trim().parse().expect("a number")).collect())
        .collect();
    Array2::from_shape_fn((rows.len(), rows[0].len()), |(i, j)| rows[i][j])
}

/// Rank of each value among the distinct values of `column`.
fn ranks(column: &[f64]) -> (Vec<u32>, usize) {
    let mut distinct = column.to_vec();
    distinct.sort_by(f64::total_cmp);
    distinct.dedup();
    let codes = column.iter().map(|v| distinct.partition_point(|d| d < v) as u32).collect();
    (codes, distinct.len())
}

fn main() {
    let data = census();
    let n = data.nrows();
    println!(
        "| confidential | k | t | k′ | bound | largest EMD as built | classes above t | merges |"
    );
    println!("|---|---|---|---|---|---|---|---|");
    for (which, col) in [("last", data.ncols() - 1), ("first", 0)] {
        let keys =
            data.select(Axis(1), &(0..data.ncols()).filter(|&j| j != col).collect::<Vec<_>>());
        let rows = Scaling::fit(keys.view(), true).rows_of::<f64, f64>(keys.view()).expect("rows");
        let d = keys.ncols();
        let (codes, m) = ranks(&data.column(col).to_vec());
        let mass = vec![1.0; n];
        let refs = [Reference::new(&codes, m, &mass, true)];
        let conf = Confidential { codes: vec![codes], mass, references: &refs };
        for k in [2, 5, 10] {
            for t in [0.25, 0.15, 0.05] {
                let runs = t_first::run_count(n, k, t);
                let bound = (n - runs) as f64 / (2.0 * runs as f64 * (n - 1) as f64);
                let free = &mut Budget::unlimited();
                let built = t_first::t_first(&Dense::new(&rows, d), k, &conf, t, false, free)
                    .expect("no limit");
                let g = built.iter().map(|&l| l as usize + 1).max().unwrap_or(0);
                let emd: Vec<f64> = (0..g)
                    .map(|c| conf.emd(&conf.profile((0..n).filter(|&i| built[i] as usize == c))))
                    .collect();
                let largest = emd.iter().fold(0.0f64, |a, &b| a.max(b));
                let above = emd.iter().filter(|&&e| e > t + verify::SLACK).count();
                let (_, merges) =
                    verify::merge_until_close(&Dense::new(&rows, d), &built, &conf, t, free)
                        .expect("no limit");
                println!(
                    "| {which} | {k} | {t} | {runs} | {bound:.3} | {largest:.3} | {above} of {g} | {merges} |"
                );
            }
        }
    }
}
