//! Verification after construction (Soria-Comas et al., TKDE 2015, §5: a class above t is
//! merged): while some class is farther than t from the file, the class with the largest
//! EMD joins the class whose key centroid is nearest. Also the whole of the "merge"
//! algorithm, applied to a k-anonymous partition. Ends at the latest with one class, the
//! job's records, which the caller has checked to be t-close.

use super::budget::Budget;
use super::confidential::{Confidential, Profile};
use super::pool::{dist2, row};

/// A class counts as t-close up to this rounding slack on its EMD.
pub const SLACK: f64 = 1e-12;

/// Merges classes of `labels` (0..g over the records of `rows`, n × d) until every class is
/// within `t` (plus [`SLACK`]); returns the labels 0..g′ of the merged classes (in the order
/// of their lowest original label) and the number of merges, or `None` once the merges
/// have added more (weighted) SSE than `budget` allows.
pub fn merge_until_close(
    rows: &[f64],
    d: usize,
    labels: &[u32],
    conf: &Confidential,
    t: f64,
    budget: &mut Budget,
) -> Option<(Vec<u32>, usize)> {
    let g = labels.iter().map(|&l| l as usize + 1).max().unwrap_or(0);
    let mut profiles: Vec<Profile> = vec![conf.empty(); g];
    let mut sums = vec![vec![0.0; d]; g];
    let mut sizes = vec![0usize; g];
    // Mass-weighted sums and masses, for the SSE each merge adds.
    let mut weighted = vec![vec![0.0; d]; g];
    let mut masses = vec![0.0; g];
    for (i, &l) in labels.iter().enumerate() {
        let l = l as usize;
        conf.add(&mut profiles[l], i);
        sums[l].iter_mut().zip(row(rows, d, i)).for_each(|(s, v)| *s += v);
        sizes[l] += 1;
        let m = conf.mass[i];
        weighted[l].iter_mut().zip(row(rows, d, i)).for_each(|(s, v)| *s += m * v);
        masses[l] += m;
    }
    let mut emd: Vec<f64> = profiles.iter().map(|p| conf.emd(p)).collect();
    // Centroids kept up to date (row-major g × d), so the nearest search only subtracts.
    let mut centroids: Vec<f64> = (0..g * d)
        .map(|c| if sizes[c / d] > 0 { sums[c / d][c % d] / sizes[c / d] as f64 } else { 0.0 })
        .collect();
    let mut into: Vec<usize> = (0..g).collect();
    let mut alive: Vec<usize> = (0..g).collect();
    let mut merges = 0;
    while alive.len() > 1 {
        let (mut at, mut worst) = (0, alive[0]);
        for (p, &a) in alive.iter().enumerate() {
            if emd[a] > emd[worst] {
                (at, worst) = (p, a);
            }
        }
        if emd[worst] <= t + SLACK {
            break;
        }
        alive.swap_remove(at);
        let c = row(&centroids, d, worst).to_vec();
        let mut target = (f64::INFINITY, usize::MAX);
        for &a in &alive {
            let e = dist2(&c, row(&centroids, d, a));
            if e < target.0 || (e == target.0 && a < target.1) {
                target = (e, a);
            }
        }
        let target = target.1;
        if !budget.charge(added_sse(&weighted, &masses, worst, target)) {
            return None;
        }
        let moved = std::mem::take(&mut weighted[worst]);
        weighted[target].iter_mut().zip(&moved).for_each(|(s, v)| *s += v);
        masses[target] += masses[worst];
        let moved = std::mem::take(&mut profiles[worst]);
        profiles[target].absorb(&moved);
        let moved = std::mem::take(&mut sums[worst]);
        sums[target].iter_mut().zip(&moved).for_each(|(s, v)| *s += v);
        sizes[target] += sizes[worst];
        for (j, s) in sums[target].iter().enumerate() {
            centroids[target * d + j] = s / sizes[target] as f64;
        }
        emd[target] = conf.emd(&profiles[target]);
        into[worst] = target;
        merges += 1;
    }
    alive.sort_unstable();
    let mut compact = vec![u32::MAX; g];
    for (new, &a) in alive.iter().enumerate() {
        compact[a] = new as u32;
    }
    let root = |mut l: usize| {
        while into[l] != l {
            l = into[l];
        }
        l
    };
    Some((labels.iter().map(|&l| compact[root(l as usize)]).collect(), merges))
}

/// The weighted SSE that merging classes `a` and `b` adds, W_a·W_b/(W_a + W_b)·‖μ_a − μ_b‖²
/// from their mass-weighted key sums and masses (0 when either has no mass: its records
/// count nothing in the SSE, as in the release).
fn added_sse(weighted: &[Vec<f64>], masses: &[f64], a: usize, b: usize) -> f64 {
    let (wa, wb) = (masses[a], masses[b]);
    if wa <= 0.0 || wb <= 0.0 {
        return 0.0;
    }
    let gap = weighted[a].iter().zip(&weighted[b]).map(|(x, y)| x / wa - y / wb);
    wa * wb / (wa + wb) * gap.map(|g| g * g).sum::<f64>()
}
