//! MONA and MONA-2D (papers/scalable-microaggregation-ona-mona.txt §5, Alg. 6): Mondrian-V
//! (or V2D) cuts for the coarse structure, ONA* for the fine one.
//!
//! With limit n^ρ: a part of at most n^ρ records is clustered by ONA*; a larger part of at
//! most 2k records stays one group (the Mondrian rule); any other part is cut as in
//! [`super::mondrian`]. So ρ = 0 is Mondrian-V(2D) and ρ = 1 is ONA*. (Algorithm 6 sends
//! parts of fewer than n^ρ records to ONA*; the two readings differ only for a part of
//! exactly n^ρ records.) The parts are independent and run on the rayon pool; groups are
//! labelled part by part, left to right, so the thread count does not change the result.
//!
//! Cost: O(n·d·log n) for the cuts plus ONA* on n^(1−ρ) parts of about n^ρ records each,
//! O(n^(1+ρ)·d) per ONA* round in total.

use super::clustering::Rows;
use super::mondrian::{CutRule, cut_into_parts, label_runs};
use super::ona_star::ona_star_groups;
use crate::parallel::Exec;
use crate::partition::Partition;
use crate::progress::Progress;
use rayon::prelude::*;

/// MONA's settings.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct MonaOptions {
    /// Mondrian-V (`Variance`) or MONA-2D's 45° pair cuts (`Variance2DScaled`).
    pub rule: CutRule,
    /// Parts of at most n^rho records go to ONA*; rho in [0, 1].
    pub rho: f64,
    /// ONA*'s round limit.
    pub max_rounds: usize,
}

/// Runs MONA on records given row-major (n × d, by id), `1 ≤ k ≤ n`.
pub fn mona(
    values: Vec<f64>,
    d: usize,
    k: usize,
    opts: MonaOptions,
    exec: Exec,
    progress: &Progress,
) -> Partition {
    let limit = ((values.len() / d) as f64).powf(opts.rho);
    let fine = |m: usize| m as f64 <= limit;
    let rows = Rows::from_row_major(values.clone(), d);
    // Parts are counted in the progress once clustered (below), not when cut.
    let (order, sizes) = cut_into_parts(
        values,
        d,
        opts.rule,
        &|m| !fine(m) && m > 2 * k,
        true,
        exec,
        &Progress::new(),
    );
    let mut parts = Vec::with_capacity(sizes.len());
    let mut start = 0;
    for &s in &sizes {
        parts.push(&order[start..start + s]);
        start += s;
    }
    let cluster = |part: &&[u32]| -> Vec<Vec<u32>> {
        let groups = if fine(part.len()) {
            ona_star_groups(&rows, part, k, opts.max_rounds)
        } else {
            vec![part.to_vec()]
        };
        progress.add(part.len());
        groups
    };
    let groups: Vec<Vec<u32>> = if exec.is_parallel() {
        parts.par_iter().flat_map_iter(cluster).collect()
    } else {
        parts.iter().flat_map(cluster).collect()
    };
    let order: Vec<u32> = groups.iter().flatten().copied().collect();
    let sizes: Vec<usize> = groups.iter().map(Vec::len).collect();
    label_runs(&order, &sizes)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::algorithms::mondrian::mondrian;
    use crate::algorithms::ona_star::ona_star;
    use crate::dataset::{Scaling, WorkingSet};
    use ndarray::Array2;
    use rand::SeedableRng;
    use rand::rngs::StdRng;
    use rand_distr::{Distribution, StandardNormal};

    fn ws(n: usize) -> WorkingSet<f64> {
        let mut rng = StdRng::seed_from_u64(5);
        let x: Array2<f64> =
            Array2::from_shape_simple_fn((n, 2), || StandardNormal.sample(&mut rng));
        WorkingSet::new(x.view(), &Scaling::fit(x.view(), true)).unwrap()
    }

    fn run(w: &WorkingSet<f64>, k: usize, rho: f64) -> Partition {
        run_with(w, k, rho, CutRule::Variance)
    }

    fn run_with(w: &WorkingSet<f64>, k: usize, rho: f64, rule: CutRule) -> Partition {
        let opts = MonaOptions { rule, rho, max_rounds: 30 };
        mona(w.rows_by_id(), w.d(), k, opts, Exec::SEQUENTIAL, &Progress::new())
    }

    #[test]
    fn rho_zero_is_mondrian_v_and_rho_one_is_ona_star() {
        let w = ws(500);
        for rule in [CutRule::Variance, CutRule::Variance2DScaled] {
            let mv = mondrian(w.rows_by_id(), 2, 3, rule, Exec::SEQUENTIAL, &Progress::new());
            assert_eq!(run_with(&w, 3, 0.0, rule), mv, "{rule:?}");
        }
        let os = ona_star(w.clone(), 3, 30, Exec::SEQUENTIAL, &Progress::new());
        assert_eq!(run(&w, 3, 1.0).labels(), os.labels());
    }

    #[test]
    fn intermediate_rho_gives_valid_groups() {
        let w = ws(2000);
        for rho in [0.3, 0.5, 0.8] {
            run(&w, 4, rho).check(4, Some(8)).unwrap();
        }
    }
}
