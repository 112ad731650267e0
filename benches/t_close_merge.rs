//! `cargo bench --bench t_close_merge [-- N ... dD ...]`: verification's merging loop
//! (`verify::merge_until_close`, Soria-Comas et al., TKDE 2015, §5) at growing n, the
//! whole of the "merge" t-close method after MDAV. Gaussian keys (N records, default
//! 10⁴, 10⁵ and 3·10⁵; dimensions D, default 3 and 8; seed 42), one nominal confidential
//! attribute of 4 values drawn with shares 0.4, 0.3, 0.2, 0.1 independently of the keys, MDAV
//! classes of k = 5, t = 0.05: a class of 5 such records is at least 0.1 from the file, so nearly
//! every class merges. Prints a markdown table: the classes MDAV made, the merges, the classes
//! left, and the seconds of the merging loop alone (one run; MDAV not counted).

use microagg::Progress;
use microagg::engine::{
    Budget, Confidential, Dense, Exec, MdavOptions, Reference, Scaling, WorkingSet, mdav, verify,
};
use ndarray::Array2;
use rand::SeedableRng;
use rand::rngs::StdRng;
use rand_distr::{Distribution, StandardNormal, StandardUniform};
use std::time::Instant;

fn main() {
    let args: Vec<String> = std::env::args().skip(1).filter(|a| !a.starts_with('-')).collect();
    let (dims, sizes): (Vec<&String>, Vec<&String>) = args.iter().partition(|a| a.starts_with('d'));
    let parse = |a: &str| a.parse::<usize>().expect("N or dD, N and D counts");
    let sizes: Vec<usize> = sizes.iter().map(|a| parse(a)).collect();
    let sizes = if sizes.is_empty() { vec![10_000, 100_000, 300_000] } else { sizes };
    let dims: Vec<usize> = dims.iter().map(|a| parse(&a[1..])).collect();
    let dims = if dims.is_empty() { vec![3, 8] } else { dims };
    let (k, t) = (5, 0.05);
    println!("| n | d | MDAV classes | merges | classes left | merging s |");
    println!("|---:|---:|---:|---:|---:|---:|");
    for &n in &sizes {
        for &d in &dims {
            let mut rng = StdRng::seed_from_u64(42);
            let x = Array2::from_shape_simple_fn((n, d), || StandardNormal.sample(&mut rng));
            let codes: Vec<u32> = (0..n)
                .map(|_| match Distribution::<f64>::sample(&StandardUniform, &mut rng) {
                    u if u < 0.4 => 0,
                    u if u < 0.7 => 1,
                    u if u < 0.9 => 2,
                    _ => 3,
                })
                .collect();
            let scaling = Scaling::fit(x.view(), true);
            let rows = scaling.rows_of::<f64, f64>(x.view()).expect("finite keys");
            let ws = WorkingSet::<f64>::new(x.view(), &scaling).expect("finite keys");
            let mdav = mdav(ws, k, MdavOptions::default(), Exec::SEQUENTIAL, &Progress::new());
            let built = mdav.labels().to_vec();
            let mass = vec![1.0; n];
            let refs = [Reference::new(&codes, 4, &mass, false)];
            let conf = Confidential { codes: vec![codes], mass, references: &refs };
            let start = Instant::now();
            let (labels, merges) = verify::merge_until_close(
                &Dense::new(&rows, d),
                &built,
                &conf,
                t,
                &mut Budget::unlimited(),
            )
            .expect("no limit");
            let seconds = start.elapsed().as_secs_f64();
            let (before, after) = (classes(&built), classes(&labels));
            println!("| {n} | {d} | {before} | {merges} | {after} | {seconds:.3} |");
        }
    }
}

/// Number of classes of labels 0..g.
fn classes(labels: &[u32]) -> usize {
    labels.iter().map(|&l| l as usize + 1).max().unwrap_or(0)
}
